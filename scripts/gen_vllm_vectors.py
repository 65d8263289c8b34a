#!/usr/bin/env python3
"""Test vectors for vLLM's benchmark client (tests/vllm_client.rs), from REAL numpy.

Run from the crate root (needs numpy only; the Rust tests never run Python):
    python3 scripts/gen_vllm_vectors.py > tests/vectors/vllm_vectors.json

The draws below are vLLM's own lines, transcribed from its released sources (see
DESIGN.md, "vLLM's client"): `sample_random_requests` (legacy benchmark_serving.py <=0.8.3,
vllm/benchmarks/serve.py 0.8.0-0.9.x), `RandomDataset.sample` (benchmark_dataset.py
0.8.4-0.10.1, vllm/benchmarks/datasets.py 0.9.2-0.33.0) and `get_request` (serve.py).
Every random number comes from numpy itself: the legacy global RandomState
(np.random.seed / randint / gamma / exponential) and np.random.default_rng (PCG64).
Generated with numpy 2.4.6, CPython 3.11, x86_64 Linux.
"""
import json
import math
import sys

import numpy as np


def pcg64_vectors():
    out = []
    ranges = [(1024, 1025, 5), (512, 1537, 200), (64, 193, 200), (0, 128000, 200),
              (0, 151643, 7), (0, 1 << 40, 50), (-(1 << 62), 1 << 62, 20)]
    for seed in (0, 1, 42, (1 << 40) + 3):
        g = np.random.default_rng(seed)
        draws = [[lo, hi, g.integers(lo, hi, size=n).tolist()] for (lo, hi, n) in ranges]
        out.append({"seed": seed, "draws": draws})
    return out


def gamma_vectors():
    out = []
    for seed in (0, 7):
        np.random.seed(seed)
        ints = np.random.randint(102, 1025, size=100).tolist()
        gammas = []
        for shape in (1.0, 0.5, 2.0, 1.0, 0.25, 7.5):
            gammas.append([shape, [float(np.random.gamma(shape=shape, scale=0.25)) for _ in range(60)]])
        exps = [float(np.random.exponential(0.1)) for _ in range(20)]
        out.append({"seed": seed, "randint_102_1025": ints, "gammas": gammas, "exponential_0_1": exps})
    return out


# ---- the random dataset, per era (lengths and offsets; prompt text needs a tokenizer) ----

def era_lower_fraction(seed, n, I, O, P, r, V):
    """legacy sample_random_requests / serve.py 0.8.0-0.9.x: global state, [int(L*r), L]."""
    np.random.seed(seed)
    np.random.randint(0, V, size=P)
    ins = np.random.randint(int(I * r), I + 1, size=n)
    outs = np.random.randint(int(O * r), O + 1, size=n)
    offsets = np.random.randint(0, V, size=n)
    return ins, outs, offsets


def era_symmetric(seed, n, I, O, P, r, S, V, subtract, out_min_one):
    """RandomDataset.sample, legacy 0.8.4-0.10.1 / CLI 0.9.2-0.10.1: global state."""
    np.random.seed(seed)
    real = I - S if subtract else I
    if P > 0:
        np.random.randint(0, V, size=P)
    in_lo, in_hi = int(real * (1 - r)), int(real * (1 + r))
    out_lo, out_hi = int(O * (1 - r)), int(O * (1 + r))
    if out_min_one:
        out_lo = max(out_lo, 1)
    ins = np.random.randint(in_lo, in_hi + 1, size=n)
    outs = np.random.randint(out_lo, out_hi + 1, size=n)
    offsets = np.random.randint(0, V, size=n)
    return ins, outs, offsets


def era_pcg64(seed, n, I, O, P, r, S, V):
    """RandomDataset, CLI 0.10.2+: a private default_rng(seed); prefix drawn after the lengths."""
    rng = np.random.default_rng(seed)
    real = max(0, I - S)
    in_lo, in_hi = math.floor(real * (1 - r)), math.ceil(real * (1 + r))
    out_lo = max(math.floor(O * (1 - r)), 1)
    out_hi = max(math.ceil(O * (1 + r)), 1)
    ins = rng.integers(in_lo, in_hi + 1, size=n)
    outs = rng.integers(out_lo, out_hi + 1, size=n)
    offsets = rng.integers(0, V, size=n)
    if P > 0:
        rng.integers(0, V, size=P)
    return ins, outs, offsets


def lengths_case(script, version, seed, n, I, O, P, r, S, V):
    v = tuple(int(x) for x in version.split("."))
    if (script == "legacy" and v < (0, 8, 4)) or (script == "cli" and v < (0, 9, 2)):
        ins, outs, offs = era_lower_fraction(seed, n, I, O, P, r, V)
    elif script == "legacy" or v < (0, 10, 2):
        ins, outs, offs = era_symmetric(seed, n, I, O, P, r, S, V,
                                        subtract=v >= (0, 9, 0), out_min_one=v >= (0, 10, 0))
    else:
        ins, outs, offs = era_pcg64(seed, n, I, O, P, r, S, V)
    ins, outs, offs = [np.broadcast_to(x, (n,)).tolist() for x in (ins, outs, offs)]
    return {"script": script, "version": version, "seed": seed, "num_prompts": n,
            "input_len": I, "output_len": O, "prefix_len": P, "range_ratio": r,
            "special_tokens": S, "vocab_size": V,
            "sum_input": sum(ins), "sum_output": sum(outs),
            "inputs": ins[:60], "outputs": outs[:60], "offsets": offs[:20]}


def lengths_vectors():
    return [
        lengths_case("cli", "0.11.2", 0, 1000, 1024, 128, 0, 0.5, 1, 128000),
        lengths_case("cli", "0.33.0", 0, 1000, 1024, 128, 0, 0.0, 1, 128000),
        lengths_case("cli", "0.33.0", 0, 1000, 1024, 1024, 0, 0.5, 0, 151643),
        lengths_case("cli", "0.10.2", 42, 300, 2000, 300, 16, 0.3, 0, 151643),
        lengths_case("legacy", "0.8.4", 0, 1000, 1024, 128, 0, 0.5, 1, 128000),
        lengths_case("legacy", "0.9.0", 3, 300, 512, 64, 0, 0.25, 1, 128000),
        lengths_case("cli", "0.10.1", 0, 300, 1024, 2, 8, 0.9, 1, 128000),
        lengths_case("legacy", "0.6.3", 0, 1000, 1024, 128, 0, 0.5, 1, 128000),
        lengths_case("cli", "0.8.0", 0, 1000, 1024, 128, 0, 1.0, 1, 128000),
    ]


# ---- send times (get_request); each request is sent at the cumulative delay ----

def rate_at(i, n, rate, ramp):
    if ramp is None:
        return rate
    kind, a, b = ramp
    p = i / max(n - 1, 1)
    return a + (b - a) * p if kind == "linear" else a * (b / a) ** p


def sends_normalized(n, rate, burstiness, ramp):
    """serve.py 0.10.0+: n gaps up front, cumulated, rescaled to end at n/rate."""
    delay_ts = []
    for i in range(n):
        cur = rate_at(i, n, rate, ramp)
        if cur == float("inf"):
            delay_ts.append(0)
        elif burstiness == float("inf"):
            delay_ts.append(1.0 / cur)
        else:
            theta = 1.0 / (cur * burstiness)
            delay_ts.append(np.random.gamma(shape=burstiness, scale=theta))
    for i in range(1, len(delay_ts)):
        delay_ts[i] += delay_ts[i - 1]
    if ramp is None and delay_ts[-1] != 0:
        target_total_delay_s = n / rate
        normalize_factor = target_total_delay_s / delay_ts[-1]
        delay_ts = [delay * normalize_factor for delay in delay_ts]
    return [float(d) for d in delay_ts], float(delay_ts[-1])


def sends_after_each(n, rate, burstiness, exponential):
    """<=0.9.x: yield, then sleep one gap (also after the last request)."""
    t, out = 0.0, []
    for _ in range(n):
        out.append(t)
        if exponential:
            t += np.random.exponential(1.0 / rate)
        else:
            t += np.random.gamma(shape=burstiness, scale=1.0 / (rate * burstiness))
    return out, float(t)


def arrival_vectors():
    cases = []

    def add(name, script, version, n, rate, burstiness, ramp, dataset, sends, end):
        cases.append({"name": name, "script": script, "version": version, "num_prompts": n,
                      "request_rate": rate, "burstiness": burstiness, "ramp_up": ramp,
                      "dataset": dataset, "sends_s": sends, "end_s": end})

    # CLI 0.10.2+: the dataset has its own PCG64; the gaps are a fresh RandomState(seed).
    for b in (1.0, 0.5, 3.0):
        np.random.seed(0)
        s, e = sends_normalized(200, 10.0, b, None)
        add(f"cli-0.33.0-b{b}", "cli", "0.33.0", 200, 10.0, b, None, dataset_default(), s, e)
    np.random.seed(0)
    s, e = sends_normalized(100, float("inf"), 1.0, ("linear", 2.0, 20.0))
    add("cli-0.33.0-ramp-linear", "cli", "0.33.0", 100, "inf", 1.0, ["linear", 2.0, 20.0],
        dataset_default(), s, e)
    np.random.seed(0)
    s, e = sends_normalized(100, float("inf"), 1.0, ("exponential", 1.0, 50.0))
    add("cli-0.33.0-ramp-exp", "cli", "0.33.0", 100, "inf", 1.0, ["exponential", 1.0, 50.0],
        dataset_default(), s, e)
    # CLI 0.10.1: global state continues after the symmetric-era dataset draws.
    d = {"input_len": 1024, "output_len": 128, "range_ratio": 0.5}
    era_symmetric(0, 100, 1024, 128, 0, 0.5, 1, 128000, subtract=True, out_min_one=True)
    s, e = sends_normalized(100, 4.0, 1.0, None)
    add("cli-0.10.1-after-dataset", "cli", "0.10.1", 100, 4.0, 1.0, None, d, s, e)
    # legacy 0.9.0: gamma after each request, after the dataset draws.
    era_symmetric(0, 100, 1024, 128, 0, 0.5, 1, 128000, subtract=True, out_min_one=False)
    s, e = sends_after_each(100, 4.0, 2.0, exponential=False)
    add("legacy-0.9.0-after-each", "legacy", "0.9.0", 100, 4.0, 2.0, None, d, s, e)
    # legacy 0.6.3: exponential after each, after the lower-fraction draws.
    era_lower_fraction(0, 100, 1024, 128, 0, 0.5, 128000)
    s, e = sends_after_each(100, 4.0, 1.0, exponential=True)
    add("legacy-0.6.3-exponential", "legacy", "0.6.3", 100, 4.0, 1.0, None, d, s, e)
    return cases


def dataset_default():
    # r = 0 in CLI 0.33.0 draws nothing from the global state either way.
    return {"input_len": 1024, "output_len": 128, "range_ratio": 0.0}


def main():
    doc = {
        "generator": "scripts/gen_vllm_vectors.py",
        "numpy": np.__version__,
        "pcg64_integers": pcg64_vectors(),
        "legacy_gamma": gamma_vectors(),
        "random_lengths": lengths_vectors(),
        "arrivals": arrival_vectors(),
    }
    json.dump(doc, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
