#!/usr/bin/env python3
"""Median-ITL errors of the GPUStack runs (validation/gpustack/manifest.yaml), which the
`validate` table does not show (it shows median TPOT): each entry is replayed with
`servesim replay LOG --run N` and the manifest's hardware, model and flags; prints one row per
run and the median |error| per engine × GPU profile (SGLang servers first), as markdown. Used by scripts/gpustack_results.sh.
Usage: scripts/gpustack_itl.py SERVESIM COST_MODEL
"""
import json
import statistics
import subprocess
import sys

import yaml

bin_, cost = sys.argv[1], sys.argv[2]
d = "validation/gpustack"
m = yaml.safe_load(open(f"{d}/manifest.yaml"))
rows, groups, itl = [], {}, {}
for e in m["entries"]:
    args = [bin_, "replay", f"{d}/{e['file']}", "--run", str(e["run"]), "--cost-model", cost,
            "--hardware", e["hardware"]["value"], "--model", e["model"]["value"],
            "--bench-version", str(e["bench-version"]["value"])]
    for k, v in e["server"].items():
        args += [f"--{k}", str(v["value"])]
    out = subprocess.run(args, capture_output=True, text=True)
    line = next((l.split() for l in out.stdout.splitlines() if l.startswith("median_itl_ms")), None)
    if line is None:
        rows.append(f"| {e['id']} | - | - | {out.stderr.strip()[:80]} |")
        continue
    real, sim, err = line[1], line[2], line[3]
    rows.append(f"| {e['id']} | {real} | {sim} | {err} |")
    itl[e["id"]] = float(err.rstrip("%"))
    if "out-of-medians" not in e:
        key = (e["server"]["engine"]["value"] != "sglang", e["server"]["engine"]["value"], e["hardware"]["value"])
        groups.setdefault(key, []).append(abs(float(err.rstrip("%"))))
print("| run | median ITL real ms | simulated | error |")
print("|---|---:|---:|---:|")
print("\n".join(rows))
print()
print("| server engine | GPU | runs | median \\|error\\| of median ITL |")
print("|---|---|---:|---:|")
everything = [x for v in groups.values() for x in v]
print(f"| all | all | {len(everything)} | {statistics.median(everything):.1f}% |")
for (_, engine, g), v in sorted(groups.items()):
    print(f"| {engine} | {g} | {len(v)} | {statistics.median(v):.1f}% |")

# Signed medians per engine x GPU (SGLang servers first) of the four headline metrics.
runs = json.loads(subprocess.run([bin_, "validate", "--manifest", f"{d}/manifest.yaml", "--cost-model", cost,
                                  "--format", "json"], capture_output=True, text=True, check=True).stdout)["runs"]
skip = {e["id"] for e in m["entries"] if "out-of-medians" in e}
by = {}
for r in runs:
    if r["id"] not in skip:
        by.setdefault((r["engine"] != "sglang", r["engine"], r["hardware"]), []).append(r)


def med(v):
    if not v:
        return "-"
    return f"{statistics.median(v):+.1f}% ({statistics.median([abs(x) for x in v]):.1f}%)"


print()
print("Median signed error (median |error|) per server engine × GPU, out-of-medians runs left out:")
print()
print("| server engine | GPU | runs | output tok/s | mean TTFT | median TPOT | median ITL |")
print("|---|---|---:|---:|---:|---:|---:|")
for (_, engine, hw), rs in sorted(by.items()):
    cell = lambda k: med([c["err_pct"] for r in rs for c in r["cells"] if c["metric"] == k and c["err_pct"] is not None])
    print(f"| {engine} | {hw} | {len(rs)} | {cell('output_throughput')} | {cell('mean_ttft')} | {cell('median_tpot')} | "
          f"{med([itl[r['id']] for r in rs if r['id'] in itl])} |")
