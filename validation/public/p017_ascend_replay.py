#!/usr/bin/env python3
"""Replays the SGLang Ascend best-practice runs quoted in 017_ascend-best-practice-qwen3-a2-a3.txt.

These runs cannot enter manifest.yaml: their result blocks were edited by hand before publication
(section rulers rewritten, lines dropped or mislabelled, some commands disagree with the totals), so
`validate` cannot parse them as printed blocks. This offline check runs `servesim run FLAGS
--output-file` for each run below and prints the signed error (sim / real - 1) of every metric the
source states for it. The real values are copied from the quote file (block line, or the summary
table where the block is wrong; each row's comment says which). Nothing is fitted; this only reports.
Why each flag and length is what it is: p017-ascend-notes.md. Each run passes its recipe's
`--cuda-graph-bs` list (before servesim modelled the list, its largest size as --cuda-graph-max-bs).

Usage: validation/public/p017_ascend_replay.py [--bin target/release/servesim] [--json OUT]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

# Columns: (output-file key, title).
METRICS = [
    ("output_throughput", "out tok/s"),
    ("mean_tpot_ms", "mean TPOT"),
    ("median_tpot_ms", "med TPOT"),
    ("mean_ttft_ms", "mean TTFT"),
    ("median_ttft_ms", "med TTFT"),
    ("mean_e2e_latency_ms", "mean E2E"),
    ("duration", "duration"),
]

COMMON = "--sglang-version 0.5.6.post2 --bench-version 0.5.6.post2 --dataset-name random --random-range-ratio 1 --disable-radix-cache"
A3 = "--hardware ascend-a3"
A2 = "--hardware ascend-910b2"
DRAFTS = "validation/public/models"


def eagle3(draft, steps, tokens, accept):
    return (
        f"--speculative-algorithm EAGLE3 --speculative-draft-model-path {DRAFTS}/{draft}.yaml "
        f"--speculative-num-steps {steps} --speculative-eagle-topk 1 "
        f"--speculative-num-draft-tokens {tokens} --speculative-accept-length {accept} "
        # Every EAGLE3 recipe exports SGLANG_ENABLE_SPEC_V2=1 (p017-ascend-notes.md section 5).
        f"--sglang-enable-spec-v2 true"
    )


def client(n, conc, inp, out, rate=None):
    s = f"--num-prompts {n} --max-concurrency {conc} --random-input-len {inp} --random-output-len {out}"
    return s + (f" --request-rate {rate}" if rate else "")


Q480 = "--model qwen3-coder-480b-a35b --quantization w8a8_int8 --enable-dp-attention --moe-a2a-backend deepep --deepep-mode auto --mem-fraction-static 0.7"
Q235 = "--model qwen3-235b-a22b --quantization w8a8_int8 --tp 16 --dp 16 --enable-dp-attention --moe-a2a-backend deepep --deepep-mode auto"

# (id, flags, {metric: real}); the section of the quote file is named in the comment.
RUNS = [
    # "Qwen3 480B High Throughput 50ms 3" (A3 8 cards = 16 dies). The block's "Output token
    # throughput" 3501.16 is the input rate (1120000 / 319.89); the output rate is the summary
    # table's 187.500 per card x 8 cards (= 480000 / 319.89).
    ("P17-480B-16d", f"{A3} {Q480} --tp 16 --dp 4 --chunked-prefill-size 28672 --max-prefill-tokens 458880 --max-running-requests 80 --cuda-graph-bs 16 20 24 {client(320, 80, 3500, 1500, 8)}",
     {"output_throughput": 1500.0, "mean_tpot_ms": 48.20, "median_tpot_ms": 48.10, "duration": 319.89}),
    # "Qwen3 480B High Throughput 50ms 2" (A3 16 cards = 32 dies over 2 nodes).
    ("P17-480B-32d", f"{A3} {Q480} --tp 32 --dp 4 --chunked-prefill-size 114688 --max-prefill-tokens 458880 --max-running-requests 288 --cuda-graph-bs 56 64 72 {client(1152, 288, 3500, 1500, 20)}",
     {"output_throughput": 4637.95, "mean_tpot_ms": 50.34, "median_tpot_ms": 49.91, "duration": 372.58}),
    # "Qwen3 235B High Throughput 50ms 2" (A3 8 cards): the block says max concurrency 272, the command 288.
    ("P17-235B-3.5k", f"{A3} {Q235} --max-running-requests 272 --chunked-prefill-size 32768 --max-prefill-tokens 32768 --mem-fraction-static 0.8 --cuda-graph-bs 3 4 6 8 10 12 13 14 15 16 17 {eagle3('qwen3-235b-a22b-eagle3', 3, 4, 2.83)} {client(1088, 272, 3500, 1500)}",
     {"output_throughput": 3821.64, "mean_tpot_ms": 51.51, "median_tpot_ms": 48.14, "mean_ttft_ms": 16721.52, "median_ttft_ms": 15137.02, "mean_e2e_latency_ms": 93931.66, "duration": 427.04}),
    # "Qwen3-235B Atlas 800I A3-8Card PD Mixed 2K-2K 100ms".
    ("P17-235B-2k", f"{A3} {Q235} --max-running-requests 576 --chunked-prefill-size 32768 --max-prefill-tokens 458880 --mem-fraction-static 0.81 --cuda-graph-bs 8 16 20 24 32 36 {eagle3('qwen3-235b-a22b-eagle3', 3, 4, 2.94)} {client(576, 576, 2000, 2000)}",
     {"output_throughput": 6320.57, "mean_tpot_ms": 54.78, "median_tpot_ms": 54.67, "mean_ttft_ms": 4049.94, "median_ttft_ms": 4004.61, "mean_e2e_latency_ms": 113557.20, "duration": 182.26}),
    # "Qwen3 235B High Throughput 50ms 3" (A3 8 cards); TPOT lines mislabelled ("Mean Time per Output Token", "Median TPOt").
    ("P17-235B-2048", f"{A3} {Q235} --max-running-requests 480 --chunked-prefill-size -1 --max-prefill-tokens 4096 --mem-fraction-static 0.75 --cuda-graph-bs 6 8 10 12 15 18 28 30 {eagle3('qwen3-235b-a22b-eagle3', 3, 4, 2.95)} {client(480, 480, 2048, 2048)}",
     {"output_throughput": 5903.96, "mean_tpot_ms": 48.19, "median_tpot_ms": 47.40, "mean_ttft_ms": 4457.97, "median_ttft_ms": 4381.36, "mean_e2e_latency_ms": 103105.60, "duration": 166.51}),
    # "Qwen3 30B High Throughput 50ms 3" (A3 1 card = 2 dies).
    ("P17-30B-2d", f"{A3} --model qwen3-30b-a3b --quantization w8a8_int8 --tp 2 --max-running-requests 192 --chunked-prefill-size -1 --max-prefill-tokens 32768 --mem-fraction-static 0.86 --cuda-graph-bs 42 88 96 132 144 156 172 178 192 {eagle3('qwen3-30b-a3b-eagle3', 3, 4, 3.17)} {client(624, 156, 3500, 1500)}",
     {"output_throughput": 3166.03, "mean_tpot_ms": 44.35, "median_tpot_ms": 44.46, "duration": 295.64}),
    # "Qwen3 32B High Throughput 50ms 1" (A3 2 cards = 4 dies); lengths fixed (totals 312 x 3500 / 1500).
    ("P17-32B-A3-c78", f"{A3} --model qwen3-32b --quantization w8a8_int8 --tp 4 --max-running-requests 78 --chunked-prefill-size -1 --max-prefill-tokens 49152 --mem-fraction-static 0.7 --cuda-graph-bs 16 32 64 68 72 78 {eagle3('qwen3-32b-eagle3', 3, 4, 2.05)} {client(312, 78, 3500, 1500)}",
     {"output_throughput": 1415.63, "mean_tpot_ms": 49.24, "median_tpot_ms": 49.50, "mean_ttft_ms": 5371.45, "median_ttft_ms": 485.89, "mean_e2e_latency_ms": 79188.24, "duration": 330.60}),
    # "Qwen3 32B High Throughput 50ms 2" (A3 2 cards); lengths fixed (totals 120 x 2000 / 2000).
    ("P17-32B-A3-c120", f"{A3} --model qwen3-32b --quantization w8a8_int8 --tp 4 --max-running-requests 120 --chunked-prefill-size -1 --max-prefill-tokens 49152 --mem-fraction-static 0.7 --cuda-graph-bs 54 60 66 72 78 84 90 108 114 120 {eagle3('qwen3-32b-eagle3', 3, 4, 1.69)} {client(120, 120, 2000, 2000)}",
     {"output_throughput": 1972.30, "mean_tpot_ms": 48.34, "median_tpot_ms": 48.06, "mean_ttft_ms": 16144.60, "median_ttft_ms": 17229.95, "mean_e2e_latency_ms": 112785.77, "duration": 121.69}),
    # "Qwen3 32B Low Latency 18ms" (A3 4 cards = 8 dies); lengths fixed (generated 48000 = 32 x 1500;
    # the block's input total 199000 disagrees with its text total 192000 = 32 x 6000).
    ("P17-32B-A3-c32", f"{A3} --model qwen3-32b --quantization w8a8_int8 --tp 8 --max-running-requests 32 --chunked-prefill-size 32768 --max-prefill-tokens 65536 --mem-fraction-static 0.72 --cuda-graph-bs 8 16 24 32 {eagle3('qwen3-32b-eagle3', 4, 5, 2.15)} {client(32, 32, 6000, 1500)}",
     {"output_throughput": 1247.24, "mean_tpot_ms": 16.87, "median_tpot_ms": 16.75, "mean_ttft_ms": 8908.53, "median_ttft_ms": 8557.18, "mean_e2e_latency_ms": 34202.32, "duration": 38.48}),
    # "Qwen3 32B Low Latency 11ms" (A3 4 cards, BF16): totals 16000 / 6000 over 4 requests (the
    # command says 4096 in); the block's "Successful requests: 58.03" is the duration.
    ("P17-32B-A3-c1", f"{A3} --model qwen3-32b --tp 8 --max-running-requests 32 --chunked-prefill-size -1 --max-prefill-tokens 65536 --mem-fraction-static 0.72 --cuda-graph-bs 1 4 6 12 18 24 30 32 {eagle3('qwen3-32b-eagle3', 4, 5, 2.03)} {client(4, 1, 4000, 1500)}",
     {"output_throughput": 103.40, "mean_tpot_ms": 9.46, "median_tpot_ms": 9.63, "mean_ttft_ms": 317.68, "median_ttft_ms": 315.90, "mean_e2e_latency_ms": 14502.58, "duration": 58.03}),
    # "Qwen3 32B Low Latency 12ms" (A3 8 cards = 16 dies, BF16): one request of 18000 in / 4000 out
    # (the block's totals; the command swaps the two lengths).
    ("P17-32B-A3-18k", f"{A3} --model qwen3-32b --tp 16 --max-running-requests 1 --chunked-prefill-size -1 --max-prefill-tokens 65536 --mem-fraction-static 0.72 --cuda-graph-bs 1 {eagle3('qwen3-32b-eagle3', 4, 5, 2.15)} {client(1, 1, 18000, 4000)}",
     {"output_throughput": 79.64, "mean_tpot_ms": 12.27, "median_tpot_ms": 12.27, "mean_ttft_ms": 1132.62, "median_ttft_ms": 1132.62, "mean_e2e_latency_ms": 50204.39, "duration": 50.22}),
    # "Qwen3 32B A2 Low Latency 18ms" (A2, 8 NPUs); lengths fixed (totals 32 x 6000 / 1500).
    ("P17-32B-A2-c32", f"{A2} --model qwen3-32b --quantization w8a8_int8 --tp 8 --max-running-requests 32 --chunked-prefill-size -1 --max-prefill-tokens 135168 --mem-fraction-static 0.72 --cuda-graph-bs 1 4 8 16 24 28 32 {eagle3('qwen3-32b-eagle3', 4, 5, 2.11)} {client(32, 32, 6000, 1500)}",
     {"output_throughput": 1184.62, "mean_tpot_ms": 16.46, "median_tpot_ms": 16.50, "duration": 40.52}),
    # "Qwen3 32B A2 Low Latency 11ms" (A2, 8 NPUs, BF16): totals 16000 / 6000 over 4 requests.
    ("P17-32B-A2-c1", f"{A2} --model qwen3-32b --tp 8 --max-running-requests 32 --chunked-prefill-size -1 --max-prefill-tokens 65536 --mem-fraction-static 0.72 --cuda-graph-bs 1 4 6 12 18 24 30 32 {eagle3('qwen3-32b-eagle3', 4, 5, 2.04)} {client(4, 1, 4000, 1500)}",
     {"output_throughput": 96.26, "mean_tpot_ms": 10.18, "median_tpot_ms": 10.44, "duration": 62.33}),
    # "Qwen3 32B A2 High Throughput 50ms 1" (A2, 4 of 8 NPUs); lengths fixed (totals 312 x 3500 / 1500).
    ("P17-32B-A2-c78", f"{A2} --model qwen3-32b --quantization w8a8_int8 --tp 4 --max-running-requests 78 --chunked-prefill-size -1 --max-prefill-tokens 65536 --mem-fraction-static 0.72 --cuda-graph-bs 1 4 8 16 32 64 68 72 78 {eagle3('qwen3-32b-eagle3', 3, 4, 2.05)} {client(312, 78, 3500, 1500)}",
     {"output_throughput": 1395.33, "mean_tpot_ms": 48.97, "median_tpot_ms": 49.06, "mean_ttft_ms": 5786.98, "median_ttft_ms": 645.64, "mean_e2e_latency_ms": 79186.66, "duration": 335.40}),
    # "Qwen3 32B A2 High Throughput 50ms 2" (A2, 4 of 8 NPUs): 120 x 2000 / 2000 (the block's
    # "2400000" totals are 10x its own text total 240000 and its throughput x duration).
    ("P17-32B-A2-c120", f"{A2} --model qwen3-32b --quantization w8a8_int8 --tp 4 --max-running-requests 120 --chunked-prefill-size -1 --max-prefill-tokens 49152 --mem-fraction-static 0.7 --cuda-graph-bs 54 60 66 72 78 84 90 108 114 120 {eagle3('qwen3-32b-eagle3', 3, 4, 1.69)} {client(120, 120, 2000, 2000)}",
     {"output_throughput": 2048.10, "mean_tpot_ms": 45.88, "median_tpot_ms": 45.71, "mean_ttft_ms": 17096.53, "median_ttft_ms": 18159.44, "mean_e2e_latency_ms": 108815.31, "duration": 117.18}),
]


def simulate(binary, flags):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.jsonl")
        cmd = [binary, "run", *shlex.split(COMMON), *shlex.split(flags), "--output-file", out]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
        with open(out, encoding="utf-8") as f:
            return json.loads(f.readline()), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release/servesim")
    ap.add_argument("--json", help="write every run's real, sim and err here")
    args = ap.parse_args()
    rows, errs = [], {k: [] for k, _ in METRICS}
    print(f"{'run':<18}" + "".join(f"{t:>11}" for _, t in METRICS))
    for run_id, flags, real in RUNS:
        sim, err = simulate(args.bin, flags)
        if sim is None:
            print(f"{run_id:<18} error: {err}")
            rows.append({"id": run_id, "error": err})
            continue
        cells, line = {}, f"{run_id:<18}"
        for key, _ in METRICS:
            if key in real:
                e = sim[key] / real[key] - 1.0
                errs[key].append(e)
                cells[key] = {"real": real[key], "sim": sim[key], "err": e}
                line += f"{100 * e:>+10.1f}%"
            else:
                line += f"{'-':>11}"
        print(line)
        rows.append({"id": run_id, "flags": f"{COMMON} {flags}", "cells": cells})
    print(f"{'median signed':<18}" + "".join(
        f"{100 * statistics.median(v):>+10.1f}%" if v else f"{'-':>11}" for v in errs.values()))
    print(f"{'median |err|':<18}" + "".join(
        f"{100 * statistics.median(abs(x) for x in v):>10.1f}%" if v else f"{'-':>11}" for v in errs.values()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
