#!/usr/bin/env python3
"""Test vectors for vLLM's ShareGPT and prefix_repetition selection (tests/vllm_client_datasets.rs),
from REAL CPython `random` (MT19937: random.seed, random.shuffle, random.choices, random.choice).

Run from the crate root (standard library only; the Rust tests never run Python):
    python3 scripts/gen_vllm_sharegpt_vectors.py > tests/vectors/vllm_sharegpt_vectors.json

The token counts are servesim's bundled ShareGPT length tables (workloads/sharegpt/*.lens,
written by scripts/make_sharegpt_tables.py: a SAMPLE of ShareGPT, 17,400 conversations with
two or more turns, in file order). vLLM's selection only ever sees the list's length (for the
shuffle) and each pair's two token counts (for the filter), so running it on the table's rows
instead of the conversations' text selects exactly what vLLM would select from that sample.

The selection steps below re-state vLLM's released sources (see DESIGN.md, "vLLM's client"):
  * legacy benchmark_serving.py 0.6.x-0.7.x `sample_sharegpt_requests`: random.seed(seed) in
    main, random.shuffle, walk with the filter, no oversampling;
  * `ShareGPTDataset` (legacy benchmark_dataset.py 0.8.0+, CLI datasets.py 0.9.2+):
    random.seed(seed); random.shuffle (unless --disable-shuffle, 0.11.2+); walk with
    `is_valid_sequence`; `maybe_oversample_requests` (legacy 0.8.5+): random.seed(seed) then
    random.choices(k=missing) (<= 0.11.0) or random.choice per missing row (0.11.2+);
  * `PrefixRepetitionRandomDataset` (CLI 0.10.1+): random.seed(seed) in __init__, requests
    built prefix by prefix, then random.shuffle(requests).
Generated with CPython 3.11.7.
"""
import json
import random
import struct
import sys

MAGIC = b"SSGPTLN1"


def read_table(name):
    with open(f"workloads/sharegpt/{name}.lens", "rb") as f:
        raw = f.read()
    assert raw[:8] == MAGIC
    (n,) = struct.unpack_from("<I", raw, 8)
    return [struct.unpack_from("<II", raw, 16 + 8 * i) for i in range(n)]


def is_valid_sequence(prompt_len, output_len, skip_min_output_len_check):
    too_short = prompt_len < 4 or ((not skip_min_output_len_check) and output_len < 4)
    too_long = prompt_len > 1024 or prompt_len + output_len > 2048
    return not (too_short or too_long)


def select(pairs, n, seed, fixed, shuffle, oversample):
    """oversample: None, "choices" or "choice"."""
    data = list(pairs)
    random.seed(seed)
    if shuffle:
        random.shuffle(data)
    out = []
    for p, c in data:
        if len(out) >= n:
            break
        o = c if fixed is None else fixed
        if not is_valid_sequence(p, o, fixed is not None):
            continue
        out.append((p, o))
    valid = len(out)
    if len(out) < n and oversample is not None:
        random.seed(seed)
        if oversample == "choices":
            out.extend(random.choices(out, k=n - len(out)))
        else:
            add = [random.choice(out) for _ in range(n - len(out))]
            out.extend(add)
    return out, valid


def sharegpt_cases():
    cases = [
        # (label, table, script, version, n, seed, fixed, shuffle, oversample)
        ("legacy 0.6.3", "llama3", "legacy", "0.6.3", 1000, 0, None, True, None),
        ("CLI 0.11.0, fixed 256", "qwen", "cli", "0.11.0", 1000, 0, 256, True, "choices"),
        ("legacy 0.10.1.1, oversampled", "llama3", "legacy", "0.10.1.1", 1000, 42, 2040, True, "choices"),
        ("CLI 0.33.0, oversampled", "llama3", "cli", "0.33.0", 1000, 42, 2040, True, "choice"),
        ("CLI 0.33.0 defaults", "qwen", "cli", "0.33.0", 1000, 0, None, True, "choice"),
        ("CLI 0.33.0, --disable-shuffle", "llama3", "cli", "0.33.0", 40, 0, None, False, "choice"),
    ]
    tables = {}
    out = []
    for label, table, script, version, n, seed, fixed, shuffle, over in cases:
        pairs = tables.setdefault(table, read_table(table))
        rows, valid = select(pairs, n, seed, fixed, shuffle, over)
        out.append({
            "label": label, "table": table, "script": script, "version": version,
            "num_prompts": n, "seed": seed, "sharegpt_output_len": fixed,
            "disable_shuffle": not shuffle, "valid": valid,
            "prompt_lens": [p for p, _ in rows], "output_lens": [o for _, o in rows],
        })
    return out


def prefix_repetition_cases():
    out = []
    for n, num_prefixes, seed in ((100, 7, 0), (40, 4, 3)):
        random.seed(seed)
        per = n // num_prefixes
        requests = [k for k in range(num_prefixes) for _ in range(per)]
        random.shuffle(requests)
        out.append({"num_prompts": n, "num_prefixes": num_prefixes, "seed": seed,
                    "groups": requests})
    return out


def main():
    doc = {
        "generator": "scripts/gen_vllm_sharegpt_vectors.py (CPython %d.%d.%d)" % sys.version_info[:3],
        "sharegpt": sharegpt_cases(),
        "prefix_repetition": prefix_repetition_cases(),
    }
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
