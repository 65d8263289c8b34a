#!/usr/bin/env python3
"""Compare NVIDIA AIConfigurator's predictions with servesim's recorded validation runs.

Offline script (not used by servesim at build, test or run time). It reads
validation/manifest.yaml and the bench_serving result blocks of the logs it names, runs
AIConfigurator's aggregated (in-flight batching) estimate for every run it can express, and
writes validation/aiconfigurator.json: per run the exact CLI invocation, AIConfigurator's
predictions mapped onto bench_serving's metrics, the recorded values, signed relative errors,
and per-metric medians. validation/AICONFIGURATOR.md explains the choices.

Run with (versions this file was last run with; pin them to reproduce byte-identical numbers):
    python3 -m venv .venv && .venv/bin/pip install aiconfigurator==0.12.0   # aiconfigurator-core==0.12.0
    .venv/bin/python scripts/aiconfigurator_compare.py
Optional: --servesim-json FILE (output of `servesim validate --output-format json`) adds
servesim's own errors on the same runs to the medians table.

Mapping (AIConfigurator agg `EstimateResult` -> bench_serving):
    seq/s x OSL -> "Output token throughput (tok/s)". AIC's own "tokens/s" is seq/s x (OSL-1):
                 it leaves out each request's first token (made by the prefill step), which
                 bench_serving counts; the two differ by 1/OSL (14% for seed 001's OSL 8).
    ttft      -> "Mean TTFT (ms)" and "Median TTFT (ms)" (AIC gives one steady-state value)
    tpot      -> "Mean TPOT", "Median TPOT", "Mean ITL", "Median ITL" (ms) (AIC gives one
                 steady-state decode-iteration time; bench's ITL is the same gap per token)
Runs:
    * hardware: manifest profile -> AIC system (a100_sxm, h100_sxm, h200_sxm, b200_sxm);
      Ascend profiles have no AIC system (not expressible). Seed 004 is 8xB200 (issue 12,
      item 1), whatever the manifest says, so it maps to b200_sxm.
    * model: the manifest model's hf_id (models/<name>.yaml). AIC ships its config for every
      model here except Qwen2.5-0.5B; for that one the script writes a config.json with the
      HF config values recorded in models/qwen2.5-0.5b.yaml (architecture Qwen2ForCausalLM,
      which AIC supports) and passes its directory.
    * ISL/OSL: mean input and generated tokens per successful request, from the log's totals
      (exact for random ratio-1 runs; the mean for ShareGPT and ratio-0 random runs).
    * batch size: `--max-concurrency C` -> C. No cap and rate inf (all requests sent at
      once) -> min(num prompts, the largest batch AIC itself says fits its KV cache
      estimate, i.e. no kv_cache_warning and no OOM), found by bisection. In such a burst
      run every request arrives at t=0, so the recorded TTFT (and E2E) is dominated by
      waiting behind the other requests' prefills and, beyond the KV-cache-limited batch,
      in the queue. AIC's agg mode is a steady state at a fixed concurrency and does not
      express that: its TTFT/E2E for burst runs are recorded but flagged and kept out of
      the primary TTFT/E2E medians (a median including them is given too).
    * MoE models: --moe-tp-size TP --moe-ep-size 1 (SGLang's default: experts sharded by
      TP, no expert parallelism). Attention backend passed when the log states one.
    * Database: SILICON (AIC's default); when it lacks a kernel the run is retried in
      HYBRID mode (AIC's recommendation for missing data) and marked so.
    * Backend version: AIC's default ("current") SGLang slot for the system; older slots
      are not queryable. Recorded per run next to the version that actually ran.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

AIC_VERSION_PIN = "aiconfigurator==0.12.0"
REPO = Path(__file__).resolve().parent.parent
VALIDATION = REPO / "validation"

SYSTEM_OF_PROFILE = {
    "a100-sxm4-80gb": "a100_sxm",
    "h100-sxm5-80gb": "h100_sxm",
    "h200-sxm-141gb": "h200_sxm",
    "b200-sxm-180gb": "b200_sxm",
}
# Corrections to the manifest's hardware, with the evidence (issue 12, item 1).
HARDWARE_OVERRIDE = {
    "004": (
        "b200-sxm-180gb",
        "issue 12: launch/client commands and the triton c16 result match SGLang PR #6939 "
        "(8xB200, SGLang ~0.4.7, untuned fused-MoE config); SGLANG_ENABLE_FLASHINFER_GEMM acts on sm100 only",
    )
}
SGLANG_VERSION_OVERRIDE = {"004": "0.4.7 (issue 12: date of SGLang PR #6939)"}

METRICS = {
    # name: (bench_serving label, AIC raw key)
    "output_throughput_tok_s": ("Output token throughput (tok/s)", "seq/s x osl"),
    "mean_ttft_ms": ("Mean TTFT (ms)", "ttft"),
    "median_ttft_ms": ("Median TTFT (ms)", "ttft"),
    "mean_tpot_ms": ("Mean TPOT (ms)", "tpot"),
    "median_tpot_ms": ("Median TPOT (ms)", "tpot"),
    "mean_itl_ms": ("Mean ITL (ms)", "tpot"),
    "median_itl_ms": ("Median ITL (ms)", "tpot"),
    # servesim's "median TPOT/ITL" cell: median TPOT, or median ITL where the log has no TPOT.
    "median_tpot_itl_ms": ("Median TPOT (ms)|Median ITL (ms)", "tpot"),
    "mean_e2e_ms": ("Mean E2E Latency (ms)", "request_latency"),
}
# Metrics that include the wait of a request behind the others of a burst (see the docstring).
BURST_METRICS = ("mean_ttft_ms", "median_ttft_ms", "mean_e2e_ms")
# servesim validate's cell names for the metrics it reports.
SERVESIM_CELL = {
    "output_throughput_tok_s": "output_throughput",
    "mean_ttft_ms": "mean_ttft",
    "median_ttft_ms": "median_ttft",
    "median_tpot_itl_ms": "median_tpot",
    "mean_e2e_ms": "mean_e2e",
}
RESULT_HEADER = "============ Serving Benchmark Result ============"


def parse_result_blocks(log_text: str) -> list[dict[str, str]]:
    """Every bench_serving result block of a log, as {label: value string}."""
    blocks = []
    lines = log_text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == RESULT_HEADER:
            block: dict[str, str] = {}
            i += 1
            while i < len(lines) and not lines[i].startswith("=" * 10):
                m = re.match(r"^([^:]+):\s+(\S+)\s*$", lines[i])
                if m:
                    # Normalise "Inter-token" / "Inter-Token" headers' key spelling.
                    block[m.group(1).strip()] = m.group(2)
                i += 1
            blocks.append(block)
        i += 1
    return blocks


def real_metrics(block: dict[str, str]) -> dict[str, float]:
    out = {}
    for name, (labels, _) in METRICS.items():
        for label in labels.split("|"):
            if label in block:
                out[name] = float(block[label])
                break
    return out


def client_of(summary: str) -> dict:
    """Concurrency cap and rate from the manifest's one-line client summary."""
    cap = re.search(r"max-concurrency (\d+)", summary)
    rate = re.search(r"rate (\S+?),", summary)
    return {
        "max_concurrency": int(cap.group(1)) if cap else None,
        "request_rate": rate.group(1) if rate else None,
        "dataset": summary.split(",")[0].split(" ")[0],
    }


def model_yaml(name: str) -> dict:
    return yaml.safe_load((REPO / "models" / f"{name}.yaml").read_text())


def aic_bundled_models() -> set[str]:
    import aiconfigurator_core

    d = Path(aiconfigurator_core.__file__).parent / "model_configs"
    return {p.name[: -len("_config.json")].replace("--", "/") for p in d.glob("*_config.json")}


def local_config_dir(name: str, spec: dict, root: Path) -> Path:
    """A HF-style config.json from the values servesim's model file records."""
    cfg = {
        "architectures": [spec["architecture"]],
        "model_type": "qwen2" if spec["architecture"] == "Qwen2ForCausalLM" else spec["architecture"],
        "hidden_size": spec["hidden_size"],
        "intermediate_size": spec["intermediate_size"],
        "num_hidden_layers": spec["num_layers"],
        "num_attention_heads": spec["num_attention_heads"],
        "num_key_value_heads": spec["num_kv_heads"],
        "head_dim": spec["head_dim"],
        "vocab_size": spec["vocab_size"],
        "max_position_embeddings": spec["context_length"],
        "tie_word_embeddings": spec.get("tie_word_embeddings", False),
        "torch_dtype": "bfloat16",
    }
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True))
    return d


def quiet_estimate(**kw):
    """cli_estimate with AIC's log output silenced; returns (result or None, error or None)."""
    from aiconfigurator.cli.api import cli_estimate

    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            return cli_estimate(**kw), None
    except Exception as e:  # AIC raises RuntimeError/ValueError/its own errors
        return None, f"{type(e).__name__}: {e}".splitlines()[0]


def fits(kw: dict, bs: int) -> bool:
    r, err = quiet_estimate(**{**kw, "batch_size": bs})
    return r is not None and r.kv_cache_warning is None


def max_fitting_batch(kw: dict, upper: int) -> int | None:
    """Largest batch in [1, upper] AIC accepts without OOM or KV-cache warning (monotone)."""
    if fits(kw, upper):
        return upper
    if not fits(kw, 1):
        return None
    lo, hi = 1, upper
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(kw, mid):
            lo = mid
        else:
            hi = mid
    return lo


def cli_args(kw: dict) -> list[str]:
    a = [
        "aiconfigurator", "cli", "estimate",
        "--model-path", str(kw["model_path"]),
        "--system", kw["system_name"],
        "--backend", kw["backend_name"],
        "--estimate-mode", kw["mode"],
        "--database-mode", kw["database_mode"],
        "--isl", str(kw["isl"]),
        "--osl", str(kw["osl"]),
        "--batch-size", str(kw["batch_size"]),
        "--tp", str(kw["tp_size"]),
    ]
    if kw.get("moe_tp_size") is not None:
        a += ["--moe-tp-size", str(kw["moe_tp_size"]), "--moe-ep-size", str(kw["moe_ep_size"])]
    if kw.get("attention_backend"):
        a += ["--attention-backend", kw["attention_backend"]]
    return a


def run_cli(args: list[str], aic_bin: Path) -> dict:
    """Run the exact CLI invocation and read the numbers from its summary box."""
    p = subprocess.run([str(aic_bin)] + args[1:], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    out = p.stdout + p.stderr
    vals = {}
    for key, label in (("ttft", "TTFT"), ("tpot", "TPOT"), ("tokens/s", "tokens/s"), ("tokens/s/gpu", "tokens/s/gpu"), ("tokens/s/user", "tokens/s/user")):
        m = re.search(rf"^\s*{re.escape(label)}:\s+([\d,\.]+)", out, re.M)
        if m:
            vals[key] = float(m.group(1).replace(",", ""))
    vals["returncode"] = p.returncode
    if p.returncode != 0 or "tokens/s" not in vals:
        vals["error"] = [l for l in out.splitlines() if "Error" in l][-1:] or out.splitlines()[-1:]
    return vals


def rel_err_pct(pred: float, real: float) -> float:
    return round((pred - real) / real * 100.0, 2)


def median_table(runs: list[dict], key: str, include) -> dict:
    out = {}
    for metric in METRICS:
        errs = []
        for r in runs:
            if not include(r):
                continue
            e = r.get(key, {}).get(metric)
            if e is None:
                continue
            if metric in BURST_METRICS and r.get("burst_arrivals"):
                continue
            errs.append(abs(e))
        out[metric] = {"median_abs_error_pct": median_abs(errs), "runs": len(errs)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(VALIDATION / "aiconfigurator.json"))
    ap.add_argument("--servesim-json", default=None, help="output of `servesim validate --output-format json`")
    ap.add_argument("--render", default=None, metavar="JSON",
                    help="only print the markdown tables of an existing aiconfigurator.json (no AIC run)")
    ap.add_argument("--reuse", default=None, metavar="JSON",
                    help="take AIC's results from an existing aiconfigurator.json instead of running AIC "
                         "(to redo only the servesim comparison)")
    ap.add_argument("--servesim-commit", default="(commit not stated)", metavar="TEXT",
                    help="which servesim build wrote --servesim-json, e.g. 'commit 04d4f8e' (recorded in the JSON)")
    ap.add_argument("--servesim-crossval", default=None, metavar="JSON",
                    help="validation/crossval.json: adds servesim's leave-one-model-out errors on the same runs")
    ap.add_argument("--servesim-cost-model", default=None, metavar="NAME",
                    help="with --servesim-crossval: use only the fits made with this backend (crossval.json's "
                         "`cost_model`: roofline or kernels; fits without one count for any)")
    ap.add_argument("--only", default=None, help="comma-separated run ids (for a quick check; medians then cover those only)")
    args = ap.parse_args()
    if args.render:
        print(render_markdown(json.loads(Path(args.render).read_text())))
        return 0
    logging.disable(logging.CRITICAL)
    aic_bin = Path(sys.executable).parent / "aiconfigurator"
    if args.reuse:  # AIC's results and versions come from the JSON: AIC need not be installed
        versions, bundled = {}, set()
    else:
        from importlib.metadata import version

        versions = {"aiconfigurator": version("aiconfigurator"), "aiconfigurator-core": version("aiconfigurator-core")}
        bundled = aic_bundled_models()
    manifest = yaml.safe_load((VALIDATION / "manifest.yaml").read_text())
    os.chdir(REPO)  # model paths below are repo-relative, so the recorded invocations are stable
    tmp = Path("target") / "aic_models"  # git-ignored
    logs: dict[str, list] = {}
    runs = []
    only = set(args.only.split(",")) if args.only else None
    reused = json.loads(Path(args.reuse).read_text()) if args.reuse else None
    if reused is not None:
        versions, runs = reused["versions"], reused["runs"]
        manifest = {"entries": []}
    for e in manifest["entries"]:
        rid = e["id"]
        if only is not None and rid not in only:
            continue
        seed = rid.split("-")[0]
        if e["file"] not in logs:
            logs[e["file"]] = parse_result_blocks((VALIDATION / e["file"]).read_text())
        block = logs[e["file"]][e["run"]]
        real = real_metrics(block)
        n_req = int(block["Successful requests"])
        isl = round(int(block["Total input tokens"]) / n_req)
        osl = round(int(block["Total generated tokens"]) / n_req)
        client = client_of(e["log"]["client"])
        profile = e["hardware"]["value"]
        hw_note = None
        if seed in HARDWARE_OVERRIDE:
            profile, hw_note = HARDWARE_OVERRIDE[seed]
        model = e["model"]["value"]
        tp = e["server"]["tp"]["value"]
        sgl = SGLANG_VERSION_OVERRIDE.get(seed, e["server"]["sglang-version"]["value"])
        rec = {
            "id": rid,
            "log": f"{e['file']} result block {e['run']}",
            "hardware_profile": profile,
            "hardware_note": hw_note,
            "model": model,
            "tp": tp,
            "sglang_version_of_run": sgl,
            "client": e["log"]["client"],
            "isl_osl_from_log": {"isl": isl, "osl": osl, "successful_requests": n_req,
                                 "how": "mean tokens per request: Total input tokens / Successful requests, Total generated tokens / Successful requests"},
            "gpt_oss_on_a100": model.startswith("gpt-oss") and profile.startswith("a100"),
            "real": real,
        }
        runs.append(rec)
        system = SYSTEM_OF_PROFILE.get(profile)
        if system is None:
            rec["expressible"] = False
            rec["reason"] = f"hardware profile {profile} (Huawei Ascend) has no AIConfigurator system: AIC models NVIDIA (and Intel) GPUs only"
            continue
        spec = model_yaml(model)
        hf = spec["hf_id"]
        if hf in bundled:
            model_path, model_note = hf, f"AIC's bundled config for {hf}"
        else:
            model_path = local_config_dir(model, spec, tmp)
            model_note = (f"{hf} is not bundled with AIC and HF is not reachable: config.json written from "
                          f"models/{model}.yaml (the HF config values); architecture {spec['architecture']} is supported by AIC")
        kw = dict(model_path=str(model_path), system_name=system, mode="agg", backend_name="sglang",
                  database_mode="SILICON", isl=isl, osl=osl, tp_size=tp)
        if spec.get("moe"):
            kw.update(moe_tp_size=tp, moe_ep_size=1)
        ab = e["server"].get("attention-backend", {}).get("value")
        if ab:
            kw["attention_backend"] = ab
        r1, err = quiet_estimate(**{**kw, "batch_size": 1})
        if r1 is None:
            kw["database_mode"] = "HYBRID"
            r1, err2 = quiet_estimate(**{**kw, "batch_size": 1})
            if r1 is None:
                rec["expressible"] = False
                rec["reason"] = f"AIC fails even at batch 1: SILICON: {err}; HYBRID: {err2}"
                continue
            rec["database_mode_note"] = f"SILICON failed ({err}); HYBRID used"
        cap = client["max_concurrency"]
        if cap is not None:
            bs = cap
            bs_note = f"--max-concurrency {cap}"
            capacity = max_fitting_batch(kw, cap)
            if capacity is not None and capacity < cap:
                bs_note += f" (AIC says only {capacity} fit its KV-cache estimate; it still estimates at {cap})"
        else:
            capacity = max_fitting_batch(kw, n_req)
            if capacity is None:
                rec["expressible"] = False
                rec["reason"] = "AIC reports OOM / KV cache overflow even at batch 1"
                continue
            bs = capacity
            bs_note = (f"rate inf, no cap: all {n_req} requests at once; batch = min(num prompts, largest batch that fits AIC's "
                       f"own KV-cache estimate) = {bs}")
        rec["burst_arrivals"] = cap is None and client["request_rate"] == "inf"
        kw["batch_size"] = bs
        r, err = quiet_estimate(**kw)
        args_cli = cli_args(kw)
        cli = run_cli(args_cli, aic_bin)
        if r is None or "error" in cli:
            rec["expressible"] = False
            rec["reason"] = f"AIC failed at batch {bs}: {err or cli.get('error')}"
            continue
        raw = r.raw
        pred_raw = {k: float(raw[k]) for k in ("ttft", "tpot", "seq/s", "tokens/s", "tokens/s/gpu", "tokens/s/user", "request_latency")}
        pred_raw["seq/s x osl"] = pred_raw["seq/s"] * osl
        # The CLI's printed summary (3 decimals) must agree with the API call it wraps.
        for k in ("ttft", "tpot", "tokens/s"):
            if abs(cli[k] - pred_raw[k]) > 0.01 * max(1.0, abs(pred_raw[k])):
                raise SystemExit(f"{rid}: CLI printed {k}={cli[k]} but the API returned {pred_raw[k]}")
        pred = {m: round(pred_raw[key], 3) for m, (_, key) in METRICS.items()}
        rec.update(
            expressible=True,
            aic_invocation=" ".join(shlex.quote(a) for a in args_cli),
            model_config=model_note,
            batch_size=bs,
            batch_size_note=bs_note,
            aic_kv_capacity_batch=capacity,
            aic_backend_version=r.backend_version,
            aic_raw={k: round(v, 4) for k, v in pred_raw.items()},
            aic_kv_cache_warning=r.kv_cache_warning,
            predicted=pred,
            signed_rel_error_pct={m: rel_err_pct(pred[m], real[m]) for m in METRICS if m in real},
        )
        if rec["burst_arrivals"]:
            rec["burst_note"] = ("burst run (rate inf, no cap): recorded TTFT/E2E include waiting behind the other requests "
                                 "sent at t=0; AIC's steady-state TTFT/E2E do not model it (kept out of the primary medians)")
        print(f"{rid}: bs={bs} ttft={pred['mean_ttft_ms']:.1f} tpot={pred['mean_tpot_ms']:.2f} tok/s={pred['output_throughput_tok_s']:.0f} "
              f"errors={rec['signed_rel_error_pct']}", file=sys.stderr)

    expressible = [r for r in runs if r.get("expressible")]
    groups = {
        "all_expressible": lambda r: True,
        "excluding_gpt_oss_on_a100": lambda r: not r["gpt_oss_on_a100"],
    }
    medians = {g: median_table(expressible, "signed_rel_error_pct", f) for g, f in groups.items()}
    medians_incl_burst_ttft = {}
    for g, f in groups.items():
        errs = {}
        for m in BURST_METRICS:
            v = [abs(r["signed_rel_error_pct"][m]) for r in expressible if f(r) and m in r["signed_rel_error_pct"]]
            errs[m] = {"median_abs_error_pct": round(statistics.median(v), 2) if v else None, "runs": len(v)}
        medians_incl_burst_ttft[g] = errs
    doc = {
        "note": "written by scripts/aiconfigurator_compare.py; see validation/AICONFIGURATOR.md",
        "versions": versions,
        "pin": AIC_VERSION_PIN,
        "mapping": {m: {"bench_serving": lab, "aiconfigurator": key} for m, (lab, key) in METRICS.items()},
        "error_definition": "signed relative error % = (AIC - real) / real * 100; medians are of |error| over the runs listed",
        "medians": medians,
        "medians_ttft_e2e_including_burst_runs": medians_incl_burst_ttft,
        "not_expressible": {r["id"]: r["reason"] for r in runs if not r.get("expressible")},
        "runs": runs,
    }
    if args.servesim_json:
        doc["servesim"] = servesim_medians(Path(args.servesim_json), expressible, groups, args.servesim_commit)
    if args.servesim_crossval:
        doc["servesim_out_of_sample"] = servesim_crossval_medians(
            Path(args.servesim_crossval), Path(args.servesim_json) if args.servesim_json else None, expressible, groups,
            args.servesim_cost_model)
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["medians"], indent=1))
    return 0


def median_abs(errs: list[float]) -> float | None:
    """Median of the absolute errors (already absolute), 2 decimals; None without runs."""
    return round(statistics.median(errs), 2) if errs else None


def median_pair(sim_errs: list[float], aic_errs: list[float]) -> dict:
    """One metric of a servesim-vs-AIConfigurator group: runs and both median absolute errors."""
    return {
        "runs": len(sim_errs),
        "servesim_median_abs_error_pct": median_abs(sim_errs),
        "aiconfigurator_median_abs_error_pct": median_abs(aic_errs),
    }


def servesim_medians(path: Path, expressible: list[dict], groups: dict, built_from: str) -> dict:
    """servesim's median |error| on exactly the runs and metrics AIC expresses (same exclusions)."""
    sim = json.loads(path.read_text())
    cells = {r["id"]: {c["metric"]: c for c in r["cells"]} for r in sim["runs"]}
    for r in expressible:  # both parsers must read the same recorded values
        for metric, cell in SERVESIM_CELL.items():
            c = cells.get(r["id"], {}).get(cell)
            if c is not None and metric in r["real"] and abs(c["real"] - r["real"][metric]) > 1e-6 * max(1.0, c["real"]):
                raise SystemExit(f"{r['id']} {metric}: servesim read {c['real']} from the log, this script {r['real'][metric]}")
    out = {"source": f"`servesim validate --format json` of servesim {built_from}; rerun after any cost-model change",
           "groups": {}}
    for g, f in groups.items():
        table = {}
        for metric, cell in SERVESIM_CELL.items():
            sim_errs, aic_errs = [], []
            for r in expressible:
                if not f(r) or metric not in r["signed_rel_error_pct"]:
                    continue
                if metric in BURST_METRICS and r.get("burst_arrivals"):
                    continue
                c = cells.get(r["id"], {}).get(cell)
                if c is None:
                    continue
                sim_errs.append(abs(c["err_pct"]))
                aic_errs.append(abs(r["signed_rel_error_pct"][metric]))
            table[metric] = median_pair(sim_errs, aic_errs)
        out["groups"][g] = table
    return out


CROSSVAL_CELL = {"output_throughput_tok_s": "out_tok_s", "median_tpot_itl_ms": "med_tpot_itl", "mean_ttft_ms": "mean_ttft"}


def servesim_crossval_medians(crossval: Path, validate_json: Path | None, expressible: list[dict], groups: dict,
                              cost_model: str | None = None) -> dict:
    """servesim's out-of-sample median |error| on the runs AIC expresses.

    A run fitted by `servesim calibrate` contributes its leave-one-model-out error (crossval.json);
    a run whose profile was not fitted (datasheet defaults) contributes its plain validate error;
    a run fitted with no leave-one-model-out value (a profile with one model) contributes nothing.
    With a cost model named, only the fits made with that backend count.
    """
    cv = json.loads(crossval.read_text())
    lomo, fitted = {}, set()
    for f in cv["fits"]:
        if cost_model is not None and f.get("cost_model", cost_model) != cost_model:
            continue
        for r in f["runs"]:
            fitted.add(r["id"])
            if r.get("leave_one_model_out"):
                lomo[r["id"]] = r["leave_one_model_out"]
    plain = {}
    if validate_json is not None:
        for r in json.loads(validate_json.read_text())["runs"]:
            plain[r["id"]] = {c["metric"]: c["err_pct"] for c in r["cells"]}
    out = {"how": servesim_crossval_medians.__doc__.split("\n\n")[1].strip().replace("\n    ", " "), "groups": {}}
    if cost_model is not None:
        out["cost_model"] = cost_model
    for g, f in groups.items():
        table = {}
        for metric, key in CROSSVAL_CELL.items():
            sim_errs, aic_errs, ids = [], [], []
            for r in expressible:
                if not f(r) or metric not in r["signed_rel_error_pct"]:
                    continue
                if metric in BURST_METRICS and r.get("burst_arrivals"):
                    continue
                if r["id"] in lomo:
                    e = lomo[r["id"]][key]
                elif r["id"] not in fitted and r["id"] in plain:
                    e = plain[r["id"]].get(SERVESIM_CELL[metric])
                else:
                    e = None
                if e is None:
                    continue
                sim_errs.append(abs(e))
                aic_errs.append(abs(r["signed_rel_error_pct"][metric]))
                ids.append(r["id"])
            table[metric] = median_pair(sim_errs, aic_errs)
        out["groups"][g] = table
    return out


LABELS = {
    "output_throughput_tok_s": "out tok/s",
    "mean_ttft_ms": "mean TTFT",
    "median_ttft_ms": "median TTFT",
    "mean_tpot_ms": "mean TPOT",
    "median_tpot_ms": "median TPOT",
    "mean_itl_ms": "mean ITL",
    "median_itl_ms": "median ITL",
    "median_tpot_itl_ms": "median TPOT/ITL",
    "mean_e2e_ms": "mean E2E",
}


def fmt(v) -> str:
    return "n/a" if v is None else f"{v:.1f}%"


def pair_row(label: str, a: dict, b: dict) -> str:
    """A markdown row of two [`median_pair`] cells (all runs, then without gpt-oss on A100)."""
    return (f"| {label} | {a['runs']} | {fmt(a['servesim_median_abs_error_pct'])} | {fmt(a['aiconfigurator_median_abs_error_pct'])} "
            f"| {b['runs']} | {fmt(b['servesim_median_abs_error_pct'])} | {fmt(b['aiconfigurator_median_abs_error_pct'])} |")


def render_markdown(doc: dict) -> str:
    """The tables of validation/AICONFIGURATOR.md, from aiconfigurator.json."""
    lines = []
    if "servesim" in doc:
        lines += ["| metric | runs | servesim median abs err | AIConfigurator median abs err | runs (excl. gpt-oss/A100) | servesim | AIConfigurator |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        g = doc["servesim"]["groups"]
        for m in SERVESIM_CELL:
            a, b = g["all_expressible"][m], g["excluding_gpt_oss_on_a100"][m]
            lines.append(pair_row(LABELS[m], a, b))
        lines.append("")
    if "servesim_out_of_sample" in doc:
        lines += ["servesim out of sample (leave-one-model-out where fitted; unfitted profiles as is), same runs:", "",
                  "| metric | runs | servesim median abs err | AIConfigurator median abs err | runs (excl. gpt-oss/A100) | servesim | AIConfigurator |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        g = doc["servesim_out_of_sample"]["groups"]
        for m in CROSSVAL_CELL:
            a, b = g["all_expressible"][m], g["excluding_gpt_oss_on_a100"][m]
            lines.append(pair_row(LABELS[m], a, b))
        lines.append("")
    lines += ["| metric (AIConfigurator only) | runs | median abs err | runs (excl. gpt-oss/A100) | median abs err |", "| --- | ---: | ---: | ---: | ---: |"]
    for m in METRICS:
        a, b = doc["medians"]["all_expressible"][m], doc["medians"]["excluding_gpt_oss_on_a100"][m]
        lines.append(f"| {LABELS[m]} | {a['runs']} | {fmt(a['median_abs_error_pct'])} | {b['runs']} | {fmt(b['median_abs_error_pct'])} |")
    lines += ["", "Including the burst runs' TTFT/E2E (which AIConfigurator does not model):", "",
              "| metric | runs | median abs err | runs (excl. gpt-oss/A100) | median abs err |", "| --- | ---: | ---: | ---: | ---: |"]
    for m in BURST_METRICS:
        a, b = doc["medians_ttft_e2e_including_burst_runs"]["all_expressible"][m], doc["medians_ttft_e2e_including_burst_runs"]["excluding_gpt_oss_on_a100"][m]
        lines.append(f"| {LABELS[m]} | {a['runs']} | {fmt(a['median_abs_error_pct'])} | {b['runs']} | {fmt(b['median_abs_error_pct'])} |")
    lines += ["", "| id | system | model | TP | ISL/OSL | batch | AIC tok/s | real | err | AIC TPOT ms | real med TPOT/ITL | err | AIC TTFT ms | real mean TTFT | err | note |",
              "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in doc["runs"]:
        if not r.get("expressible"):
            lines.append(f"| {r['id']} | {r['hardware_profile']} | {r['model']} | {r['tp']} | | | | | | | | | | | | not expressible: {r['reason']} |")
            continue
        p, real, e = r["predicted"], r["real"], r["signed_rel_error_pct"]
        note = []
        if r.get("burst_arrivals"):
            note.append("burst")
        if r.get("database_mode_note"):
            note.append("HYBRID db")
        if r.get("hardware_note"):
            note.append("B200 (issue 12)")
        lines.append(
            f"| {r['id']} | {r['aic_invocation'].split('--system ')[1].split()[0]} | {r['model']} | {r['tp']} | {r['isl_osl_from_log']['isl']}/{r['isl_osl_from_log']['osl']} "
            f"| {r['batch_size']} | {p['output_throughput_tok_s']:.0f} | {real['output_throughput_tok_s']:.0f} | {e['output_throughput_tok_s']:+.1f}% "
            f"| {p['median_tpot_itl_ms']:.2f} | {real['median_tpot_itl_ms']:.2f} | {e['median_tpot_itl_ms']:+.1f}% "
            f"| {p['mean_ttft_ms']:.0f} | {real['mean_ttft_ms']:.0f} | {e['mean_ttft_ms']:+.1f}% | {', '.join(note)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
