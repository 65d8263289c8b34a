#!/usr/bin/env python3
"""Replays public runs published only as bench_serving `--output-file` summary lines (JSON, one per run).

Such sources cannot enter validation/public/manifest.yaml: the summary line lacks metrics `validate`
requires (mean/P99 TTFT, mean/P99 ITL). This offline check reads a quote file with the verbatim jsonl
records and its `replay ID QUOTE RECORD -- FLAGS` table (e.g. validation/public/009_datacrunch-h200-llama.txt),
runs `servesim run FLAGS --output-file` for each line, and prints the signed error of every metric the
real line has (sim / real - 1). Nothing is fitted; this only reports.

Usage: scripts/public_jsonl_check.py QUOTE_FILE [--bin target/release/servesim] [--cost-model M] [--json OUT]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

# Metrics compared, in print order: (jsonl key, column title).
METRICS = [
    ("output_throughput", "out tok/s"),
    ("median_ttft_ms", "med TTFT"),
    ("median_itl_ms", "med ITL"),
    ("mean_e2e_latency_ms", "mean E2E"),
    ("median_e2e_latency_ms", "med E2E"),
    ("duration", "duration"),
]
TOTALS = ["completed", "total_input_tokens", "total_output_tokens"]


def read_quote(path):
    """Returns (list of jsonl quotes, each a list of records; list of replay rows)."""
    quotes, rows, current = [], [], None
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("# ----") and "verbatim quote" in line:
                current = [] if ".jsonl" in line else None
                if current is not None:
                    quotes.append(current)
            elif line.startswith("# ----"):
                current = None
            elif line.startswith("{") and current is not None:
                current.append(json.loads(line))
            elif line.startswith("replay "):
                head, _, flags = line.partition(" -- ")
                parts = head.split()
                if len(parts) != 4 or not flags:
                    sys.exit(f"{path}:{line_no}: replay line must be `replay ID QUOTE RECORD -- FLAGS`")
                rows.append((parts[1], int(parts[2]), int(parts[3]), shlex.split(flags), line_no))
    return quotes, rows


def simulate(binary, flags, cost_model):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.jsonl")
        cmd = [binary, "run", *flags, "--output-file", out]
        if cost_model:
            cmd += ["--cost-model", cost_model]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"servesim failed ({' '.join(cmd)}):\n{done.stderr}")
        with open(out, encoding="utf-8") as f:
            return json.loads(f.readline())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("quote")
    ap.add_argument("--bin", default="target/release/servesim")
    ap.add_argument("--cost-model", default=None)
    ap.add_argument("--json", default=None, help="also write every row (real, sim, errors) to this file")
    args = ap.parse_args()
    quotes, rows = read_quote(args.quote)
    table = []
    head = f"{'id':9} " + " ".join(f"{t:>22}" for _, t in METRICS)
    print(head + "   totals")
    print(f"{'':9} " + " ".join(f"{'real / sim / err':>22}" for _ in METRICS))
    for rid, q, r, flags, line_no in rows:
        if q < 1 or q > len(quotes) or r < 0 or r >= len(quotes[q - 1]):
            sys.exit(f"{args.quote}:{line_no}: no record {r} in jsonl quote {q}")
        real = quotes[q - 1][r]
        sim = simulate(args.bin, flags, args.cost_model)
        cells, errs = [], {}
        for key, _ in METRICS:
            e = sim[key] / real[key] - 1.0
            errs[key] = e
            cells.append(f"{real[key]:>8.4g} {sim[key]:>6.4g} {e * 100:+6.1f}%")
        tot = "same" if all(sim[k] == real[k] for k in TOTALS) else "in/out " + " ".join(
            f"{sim[k] / real[k] - 1:+.1%}" for k in TOTALS[1:])
        print(f"{rid:9} " + " ".join(f"{c:>22}" for c in cells) + f"   {tot}")
        table.append({"id": rid, "real": real, "sim": {k: sim[k] for k, _ in METRICS + [(t, t) for t in TOTALS]}, "err": errs})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
