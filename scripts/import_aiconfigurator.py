#!/usr/bin/env python3
"""Convert NVIDIA AIConfigurator's measured SGLang (or vLLM) kernel tables into servesim's compact tables.

Source: PyPI `aiconfigurator-core==0.12.0` (Apache-2.0), directory
`aiconfigurator_core/systems/data/<system>/<op>/sglang/<version>/*.parquet` (latencies in ms per
call). Output: `<out>/<system>/<sglang version>/<op>.txt`, one small text table per op family and
SGLang version, read by `src/cost/kernels/table.rs` (servesim picks the version per run and op:
`src/cost/kernels/versions.rs`):

    #! servesim-kernels 1
    #! op gemm
    #! system h100_sxm
    #! sglang 0.5.14
    #! source aiconfigurator-core 0.12.0 systems/data/h100_sxm/gemm/sglang/0.5.14/gemm_perf.parquet
    #! keys dtype n k
    #! axis m
    #! unit us
    #! grid 1 2 4 ...
    bf16 4096 4096 2.41 2.5 - ...

Each data line is the key values, then the latency in microseconds (4 significant digits) at each
grid point of the axis, `-` where the source has no row. Rows are sorted, so the output is
byte-identical for the same input.

Every SGLang version directory of a system that holds an op servesim reads is converted (the
wheel holds several per system: h100_sxm 0.5.6.post2 GEMM, 0.5.10 fused MoE, 0.5.9/0.5.10/0.5.14
custom all-reduce, 0.5.14 everything; 0.5.12 and 0.5.16 hold only DeepEP / KDA / MSA / MegaMoE
module tables servesim does not read, so nothing is written for them). Custom all-reduce rows
without a `backend` column (0.5.6.post2: TensorRT-LLM's all-reduce kernel, `implementation
trtllm`, not SGLang's) are skipped. NCCL is not an SGLang kernel: it is written once per system,
into the directory of AIConfigurator's own version slot (`SYSTEMS`).

Gated delta-net (Qwen3.5 / Qwen3-Next linear attention, `linear_attention/sglang/<v>/gdn_perf.parquet`)
becomes two tables: `context_gdn` (keys kernel d_conv head_k head_v v_heads k_heads d_model batch, axis
seq_len: one varlen call over `batch` equal sequences) and `generation_gdn` (same keys without batch,
axis batch: one decode token per request). Each row is one kernel call (causal conv1d, or the gated
delta rule) for one layer at one rank's head counts.

Usage (reproducible bundled tables; needs pyarrow, e.g. in a venv outside the repo):
    pip download --no-deps aiconfigurator-core==0.12.0 -d /tmp/aic
    python3 scripts/import_aiconfigurator.py --wheel /tmp/aic/aiconfigurator_core-0.12.0-*.whl \
        --out hardware-profiles/kernels --vectors tests/data/kernel_vectors.txt
Your own AIConfigurator data directory (same layout as the wheel's `systems/data`):
    python3 scripts/import_aiconfigurator.py --data-dir THEIR/systems/data --out DIR \
        [--systems h100_sxm] [--sglang-version 0.5.14]
then `servesim run --kernel-db DIR ...` (DIR/<system>/<version>/<op>.txt, or one version's
DIR/<system>/<op>.txt or DIR/<op>.txt).

SGLang's triton fused-MoE lane on sm100 (`moe_triton` tables, b200_sxm / b300_sxm / gb200, 0.5.9 from
PyPI `aiconfigurator==0.10.0`, 0.5.14 from 0.12.0's triton rows; servesim picks the lane per release:
src/cost/moe_lane.rs):
    pip download --no-deps aiconfigurator==0.10.0 -d /tmp/aic10
    python3 scripts/import_aiconfigurator.py --wheel /tmp/aic/aiconfigurator_core-0.12.0-*.whl \
        --triton-lane-wheel /tmp/aic10/aiconfigurator-0.10.0-*.whl --out hardware-profiles/kernels

vLLM's kernels (`--framework vllm`: `systems/data/<system>/<op>/vllm/<version>/`, AIConfigurator's
vLLM slots 0.24.0, 0.14.0 on a100_sxm) go to `<out>/<system>_vllm/` with a `#! vllm <version>`
header; `servesim --engine vllm --cost-model kernels` reads them. Their lanes are renamed to
servesim's (`vllm_flash_attn_fa3` -> `fa3`, all-reduce `vllm_graph` -> `graph`); MLA has only
module-level vLLM rows, so no MLA tables are written for vLLM.
    python3 scripts/import_aiconfigurator.py --wheel /tmp/aic/aiconfigurator_core-0.12.0-*.whl \
        --out hardware-profiles/kernels --framework vllm
"""
import argparse
import collections
import hashlib
import io
import os
import sys
import zipfile

import pyarrow.parquet as pq

WHEEL_VERSION = "0.12.0"
WHEEL_SHA256 = "aadc4aad0a00bf8a61c477c62bef43de479849c3aa0b1c3078068e08309eccc4"
# The SGLang version slot AIConfigurator 0.12.0 queries per system (systems/query_versions.yaml:
# default sglang current 0.5.14, override a100_sxm 0.5.10; b300_sxm, gb200, l40s and
# rtx_pro_6000_server take the default): where the NCCL table goes.
SYSTEMS = {"a100_sxm": "0.5.10", "h100_sxm": "0.5.14", "h200_sxm": "0.5.14", "b200_sxm": "0.5.14",
           "b300_sxm": "0.5.14", "gb200": "0.5.14", "l40s": "0.5.14", "rtx_pro_6000_server": "0.5.14"}
# The vLLM version slot per system (systems/query_versions.yaml: default vllm 0.24.0, override
# a100_sxm 0.14.0; b300_sxm, gb200, l40s and rtx_pro_6000_server take the default).
VLLM_SYSTEMS = {"a100_sxm": "0.14.0", "h100_sxm": "0.24.0", "h200_sxm": "0.24.0", "b200_sxm": "0.24.0",
                "b300_sxm": "0.24.0", "gb200": "0.24.0", "l40s": "0.24.0", "rtx_pro_6000_server": "0.24.0"}
# SGLang's triton fused-MoE rows on sm100 (`moe_triton` tables, --triton-lane-wheel): PyPI
# `aiconfigurator==0.10.0` (Apache-2.0), systems/data/<system>/sglang/0.5.9/moe_perf.parquet.
TRITON_WHEEL_VERSION = "0.10.0"
TRITON_WHEEL_SHA256 = "4abed631f3a6eef9b74cefb8f0a23f90bce467c2e2fc52ae76519a2b27bcdce3"
TRITON_LANE_SYSTEMS = ["b200_sxm", "b300_sxm", "gb200"]
# The router load model of the MoE rows kept (AIConfigurator's MoE models use power-law alpha 1.2).
MOE_DISTRIBUTION = "power_law_1.2"
GEMM_DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block"}
MOE_DTYPES = {"bfloat16": "bf16", "fp8_block": "fp8_block", "w4a16_mxfp4": "mxfp4"}
# SGLang only: MXFP4 experts with MXFP8 activations, the kernel SGLang serves gpt-oss with on
# sm100 (flashinfer_mxfp4 at the default precision quantizes activations with mxfp8_quantize:
# sglang 0.5.6 layers/quantization/mxfp4.py:636-637), kept from its Mxfp4MoEMethod lane only
# (the other lane, sglang_mxfp4_flashinfer_trtllm_moe, is DeepSeek-V4's FP4-expert method).
# int4 weight-only experts (group 32, bf16 scales) from the lane that measured SGLang's
# flashinfer trtllm_mxint4_block_scale_moe (CompressedTensorsMxInt4MoE), the kernel SGLang 0.5.10+
# serves Kimi-K2 / K2.5 thinking int4 with on sm100 (server_args.py `is_kimi_k2_k25_thinking_int4`
# -> moe_runner_backend flashinfer_trtllm); the Marlin lanes (sm80/sm90) are not kept.
SGLANG_MOE_EXTRA = {"w4a8_mxfp4_mxfp8": ("mxfp4_mxfp8", "sglang_flashinfer_trtllm_moe"),
                    "int4_wo": ("int4_wo", "sglang_flashinfer_trtllm_moe")}
# SGLang only: NVFP4 (e2m1 weights and activations in groups of 16 with E4M3 scales, ModelOpt
# checkpoints: sglang 0.5.9 layers/quantization/modelopt_quant.py ModelOptFp4Config), measured
# with the one kernel each system's table holds (0.12.0: GEMM sglang_flashinfer_cutedsl_nvfp4 on
# b200/b300/gb200/gb300, sglang_flashinfer_cutlass_nvfp4 on rtx_pro_6000_server; MoE
# sglang_flashinfer_trtllm_moe, sglang_flashinfer_cutlass_moe on rtx_pro_6000_server). None
# (any lane) as in MOE_DTYPES.
SGLANG_GEMM_EXTRA = {"nvfp4": "nvfp4"}
SGLANG_MOE_EXTRA_ANY_LANE = {"nvfp4": "nvfp4"}
KV_DTYPES = {"bfloat16": "bf16", "fp8": "fp8"}
# Key fields of the gated delta-net tables (SGLang only: linear_attention/sglang/<v>/gdn_perf.parquet).
GDN_KEYS = ["kernel", "d_conv", "head_k", "head_v", "v_heads", "k_heads", "d_model"]
VALUE_FMT = "{:.4g}"
# Reference points written to the test vectors: (system, SGLang version, op, key, axis value).
VECTORS = [
    ("h100_sxm", "0.5.14", "gemm", ("bf16", 4096, 4096), 64),
    ("h100_sxm", "0.5.14", "gemm", ("fp8_block", 7168, 2048), 128),
    ("a100_sxm", "0.5.10", "gemm", ("bf16", 8192, 8192), 1024),
    ("h200_sxm", "0.5.14", "generation_attention", ("fa3", "bf16", 8, 1, 128, 0, 32), 1024),
    ("h100_sxm", "0.5.14", "context_attention", ("fa3", "bf16", 32, 8, 128, 0, 1), 4096),
    ("h200_sxm", "0.5.14", "moe", ("bf16", 2048, 768, 8, 128, 1, 1), 64),
    ("h100_sxm", "0.5.14", "custom_allreduce", (8, "graph"), 1048576),
    ("b200_sxm", "0.5.14", "nccl_allreduce", (8,), 33554432),
    ("h100_sxm", "0.5.14", "generation_mla", ("bf16", 16, 4, 64), 4096),
    ("h100_sxm", "0.5.6.post2", "gemm", ("bf16", 4096, 4096), 64),
    ("h200_sxm", "0.5.10", "moe", ("bf16", 2048, 768, 8, 128, 1, 1), 64),
    ("b200_sxm", "0.5.9", "custom_allreduce", (8, "eager"), 1048576),
    ("b200_sxm", "0.5.14", "moe", ("mxfp4_mxfp8", 2880, 2880, 4, 128, 8, 1), 64),
    ("h100_sxm", "0.5.14", "context_gdn", ("chunk_gated_delta_rule", 4, 128, 128, 48, 16, 5120, 1), 8192),
    ("h100_sxm", "0.5.14", "generation_gdn", ("fused_recurrent_gated_delta_rule_packed_decode", 4, 128, 128, 48, 16,
                                              5120), 1),
]


class Source:
    """Reads parquet files from the wheel (zip) or from a data directory."""

    def __init__(self, wheel=None, data_dir=None, prefix="aiconfigurator_core/systems/data/"):
        self.zip = zipfile.ZipFile(wheel) if wheel else None
        self.data_dir = data_dir
        self.prefix = prefix

    def path(self, rel):
        return (self.prefix + rel) if self.zip else os.path.join(self.data_dir, rel)

    def exists(self, rel):
        if self.zip:
            return self.path(rel) in self.zip.namelist()
        return os.path.exists(self.path(rel))

    def listdir(self, rel):
        if self.zip:
            pre = self.path(rel).rstrip("/") + "/"
            return sorted({n[len(pre):].split("/")[0] for n in self.zip.namelist() if n.startswith(pre)})
        p = self.path(rel)
        return sorted(os.listdir(p)) if os.path.isdir(p) else []

    def rows(self, rel):
        if self.zip:
            return pq.read_table(io.BytesIO(self.zip.read(self.path(rel)))).to_pylist()
        return pq.read_table(self.path(rel)).to_pylist()


def version_key(v):
    """Orders SGLang versions as servesim does: 0.5.6 < 0.5.6.post2 < 0.5.9 < 0.5.10."""
    parts = v.split(".")
    nums = [int(p) if p.isdigit() else 0 for p in parts[:3]]
    post = parts[3][4:] if len(parts) > 3 and parts[3].startswith("post") else None
    return nums + [2 + int(post) if post is not None else 1]


def us(ms):
    return VALUE_FMT.format(ms * 1000.0)


def lane(framework, name):
    """servesim's lane name of a kernel source / all-reduce backend."""
    for prefix in ("vllm_flash_attn_", "vllm_", "sglang_"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def write_table_fw(out, system, version, op, source_rel, keys, axis, rows, framework="sglang", dir_version=None,
                   source=f"aiconfigurator-core {WHEEL_VERSION}"):
    """rows: iterable of (key tuple, axis value, latency ms). Duplicates are averaged. SGLang
    tables go to `<out>/<system>/<dir_version>/`, vLLM's to `<out>/<system>_vllm/`."""
    dir_version = dir_version or version
    acc = collections.defaultdict(list)
    for key, x, ms in rows:
        acc[(key, x)].append(ms)
    if not acc:
        return None
    grid = sorted({x for (_, x) in acc})
    by_key = collections.defaultdict(dict)
    for (key, x), v in acc.items():
        by_key[key][x] = sum(v) / len(v)
    folder = system if framework == "sglang" else f"{system}_{framework}"
    subdir = os.path.join(folder, dir_version) if framework == "sglang" else folder
    lines = [
        "#! servesim-kernels 1",
        f"#! op {op}",
        f"#! system {folder}",
        f"#! {framework} {version}",
        f"#! source {source} systems/data/{source_rel}",
        "#! keys " + " ".join(keys),
        f"#! axis {axis}",
        "#! unit us",
        "#! grid " + " ".join(str(x) for x in grid),
    ]
    for key in sorted(by_key, key=lambda k: tuple((0, v) if isinstance(v, int) else (1, v) for v in k)):
        vals = by_key[key]
        lines.append(" ".join(str(k) for k in key) + " " + " ".join(us(vals[x]) if x in vals else "-" for x in grid))
    os.makedirs(os.path.join(out, subdir), exist_ok=True)
    path = os.path.join(out, subdir, op + ".txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, by_key


def convert(src, out, system, version, fw="sglang", nccl=True):
    """The tables of one (system, version) servesim reads; NCCL only when `nccl`."""
    v = version
    tables = {}

    def write_table(*args):
        return write_table_fw(*args, framework=fw, dir_version=v)

    rel = f"{system}/gemm/{fw}/{v}/gemm_perf.parquet"
    if src.exists(rel):
        gemm_dtypes = {**GEMM_DTYPES, **(SGLANG_GEMM_EXTRA if fw == "sglang" else {})}
        rows = [((gemm_dtypes[r["gemm_dtype"]], r["n"], r["k"]), r["m"], r["latency"])
                for r in src.rows(rel) if r["gemm_dtype"] in gemm_dtypes]
        tables["gemm"] = write_table(out, system, v, "gemm", rel, ["dtype", "n", "k"], "m", rows)
    for op in ["generation_attention", "context_attention"]:
        rel = f"{system}/attention/{fw}/{v}/{op}_perf.parquet"
        if not src.exists(rel):
            continue
        rows = []
        for r in src.rows(rel):
            if r["kv_cache_dtype"] not in KV_DTYPES or r.get("beam_width", 1) != 1:
                continue
            if op == "context_attention" and r["attn_dtype"] != r["kv_cache_dtype"] and r["attn_dtype"] != "bfloat16":
                continue
            if op == "context_attention" and r["attn_dtype"] != "bfloat16" and r["kv_cache_dtype"] == "bfloat16":
                continue
            if op == "context_attention" and r["attn_dtype"] == "fp8":
                continue  # fp8 attention compute: servesim models bf16 attention math only
            key = (lane(fw, r["kernel_source"]), KV_DTYPES[r["kv_cache_dtype"]], r["num_heads"], r["num_key_value_heads"],
                   r["head_dim"], r.get("window_size", 0) or 0, r["batch_size"])
            x = r["isl"] + r["step"]  # generation: KV length attended; context: prompt length
            rows.append((key, x, r["latency"]))
        tables[op] = write_table(out, system, v, op, rel,
                                 ["lane", "kv_dtype", "heads", "kv_heads", "head_dim", "window", "batch"],
                                 "kv_len" if op.startswith("generation") else "isl", rows)
    for op in ["generation_mla", "context_mla"]:
        rel = f"{system}/mla/{fw}/{v}/{op}_perf.parquet"
        if not src.exists(rel):
            continue
        rows = [((KV_DTYPES[r["kv_cache_dtype"]], r["num_heads"], r["tp_size"], r["batch_size"]), r["isl"] + r["step"],
                 r["latency"]) for r in src.rows(rel) if r["kv_cache_dtype"] in KV_DTYPES and r["mla_dtype"] == "bfloat16"]
        tables[op] = write_table(out, system, v, op, rel, ["kv_dtype", "heads", "tp", "batch"],
                                 "kv_len" if op.startswith("generation") else "isl", rows)
    rel = f"{system}/moe/{fw}/{v}/moe_perf.parquet"
    if src.exists(rel):
        extra = SGLANG_MOE_EXTRA if fw == "sglang" else {}
        moe_dtypes = {**MOE_DTYPES, **(SGLANG_MOE_EXTRA_ANY_LANE if fw == "sglang" else {})}

        def moe_name(r):
            if r["moe_dtype"] in moe_dtypes:
                return moe_dtypes[r["moe_dtype"]]
            name, source = extra.get(r["moe_dtype"], (None, None))
            return name if r["kernel_source"] == source else None

        rows = [((moe_name(r), r["hidden_size"], r["inter_size"], r["topk"], r["num_experts"],
                  r["moe_tp_size"], r["moe_ep_size"]), r["num_tokens"], r["latency"])
                for r in src.rows(rel) if moe_name(r) and r["distribution"] == MOE_DISTRIBUTION]
        tables["moe"] = write_table(out, system, v, "moe", rel,
                                    ["dtype", "hidden", "inter", "topk", "experts", "moe_tp", "moe_ep"], "tokens", rows)
    rel = f"{system}/linear_attention/{fw}/{v}/gdn_perf.parquet"
    if fw == "sglang" and src.exists(rel):
        # Gated delta-net kernels, one row = one call for one layer at the rank's head counts
        # (AIConfigurator sdk/models/qwen35.py passes num heads // tp). d_model only labels the
        # model the shape came from (collector/sglang/collect_gdn.py sizes every tensor from the
        # head counts), kept as a key so each row stays one measurement.
        gdn = [r for r in src.rows(rel) if r["op_name"] == "gdn"]

        def gdn_key(r):
            return (r["kernel_source"], r["d_conv"], r["head_k_dim"], r["head_v_dim"], r["num_v_heads"],
                    r["num_k_heads"], r["d_model"])

        rows = [(gdn_key(r) + (r["batch_size"],), r["seq_len"], r["latency"]) for r in gdn if r["phase"] == "context"]
        tables["context_gdn"] = write_table(out, system, v, "context_gdn", rel, GDN_KEYS + ["batch"], "seq_len", rows)
        rows = [(gdn_key(r), r["batch_size"], r["latency"]) for r in gdn if r["phase"] == "generation"]
        tables["generation_gdn"] = write_table(out, system, v, "generation_gdn", rel, GDN_KEYS, "batch", rows)
    rel = f"{system}/comm/{fw}/{v}/custom_allreduce_perf.parquet"
    if src.exists(rel):
        # Rows without a backend (0.5.6.post2) measure TensorRT-LLM's all-reduce, not SGLang's.
        rows = [((r["num_gpus"], lane(fw, r["backend"])), r["message_size"], r["latency"])
                for r in src.rows(rel) if r["allreduce_dtype"] == "bfloat16" and r.get("backend")]
        tables["custom_allreduce"] = write_table(out, system, v, "custom_allreduce", rel, ["gpus", "lane"],
                                                 "elements", rows)
    # NCCL: the newest version directory holding all_reduce rows.
    for nv in [] if not nccl else sorted(src.listdir(f"{system}/comm/nccl"), key=lambda s: [int(p) for p in s.split(".") if p.isdigit()],
                     reverse=True):
        rel = f"{system}/comm/nccl/{nv}/nccl_perf.parquet"
        if not src.exists(rel):
            continue
        rows = [((r["num_gpus"],), r["message_size"], r["latency"]) for r in src.rows(rel)
                if r["op_name"] == "all_reduce" and r["nccl_dtype"] == "half"]
        if rows:
            tables["nccl_allreduce"] = write_table(out, system, f"{v} (nccl {nv})", "nccl_allreduce", rel, ["gpus"],
                                                   "elements", rows)
            break
    return {k: t for k, t in tables.items() if t}


def triton_lane(src10, src12, out):
    """The `moe_triton` tables: SGLang's triton fused-MoE rows only (kernel_source
    sglang_fused_moe_triton, bf16 and block FP8), kept apart from `moe` because which runner
    SGLang picks on sm100 depends on its release and the model (src/cost/moe_lane.rs). 0.5.9 from
    aiconfigurator 0.10.0 (`<system>/sglang/0.5.9/moe_perf.parquet`, the only release it
    measured triton on these GPUs for every shape), 0.5.14 from 0.12.0's triton rows (the shapes
    AIConfigurator ran with triton there; `moe` holds the same rows among the TRT-LLM ones)."""
    keys = ["dtype", "hidden", "inter", "topk", "experts", "moe_tp", "moe_ep"]
    for system in TRITON_LANE_SYSTEMS:
        for src, version, rel, label in [
            (src10, "0.5.9", f"{system}/sglang/0.5.9/moe_perf.parquet", f"aiconfigurator {TRITON_WHEEL_VERSION}"),
            (src12, "0.5.14", f"{system}/moe/sglang/0.5.14/moe_perf.parquet", f"aiconfigurator-core {WHEEL_VERSION}"),
        ]:
            rows = [((MOE_DTYPES[r["moe_dtype"]], r["hidden_size"], r["inter_size"], r["topk"], r["num_experts"],
                      r["moe_tp_size"], r["moe_ep_size"]), r["num_tokens"], r["latency"])
                    for r in src.rows(rel)
                    if r["kernel_source"] == "sglang_fused_moe_triton" and r["moe_dtype"] in ("bfloat16", "fp8_block")
                    and r["distribution"] == MOE_DISTRIBUTION]
            t = write_table_fw(out, system, version, "moe_triton", rel, keys, "tokens", rows, source=label)
            if t:
                print(f"{t[0]}: {os.path.getsize(t[0])} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", help="aiconfigurator_core-0.12.0 wheel (checked against its pinned sha256)")
    ap.add_argument("--data-dir", help="an AIConfigurator systems/data directory instead of the wheel")
    ap.add_argument("--out", required=True)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--sglang-version", help="version directory to read (default: AIConfigurator's slot)")
    ap.add_argument("--framework", choices=["sglang", "vllm"], default="sglang",
                    help="whose kernels to convert (vllm: into <out>/<system>_vllm/)")
    ap.add_argument("--vectors", help="also write reference test vectors to this file")
    ap.add_argument("--triton-lane-wheel", help=f"aiconfigurator-{TRITON_WHEEL_VERSION} wheel: write only the "
                    "moe_triton tables (with --wheel, the 0.12.0 wheel)")
    a = ap.parse_args()
    if a.triton_lane_wheel:
        for w, want, ver in [(a.triton_lane_wheel, TRITON_WHEEL_SHA256, TRITON_WHEEL_VERSION),
                             (a.wheel, WHEEL_SHA256, WHEEL_VERSION)]:
            if not w or hashlib.sha256(open(w, "rb").read()).hexdigest() != want:
                sys.exit(f"{w}: not the pinned aiconfigurator {ver} wheel")
        triton_lane(Source(a.triton_lane_wheel, prefix="aiconfigurator/systems/data/"), Source(a.wheel), a.out)
        return
    if bool(a.wheel) == bool(a.data_dir):
        sys.exit("give exactly one of --wheel or --data-dir")
    if a.wheel:
        digest = hashlib.sha256(open(a.wheel, "rb").read()).hexdigest()
        if digest != WHEEL_SHA256:
            sys.exit(f"{a.wheel}: sha256 {digest} is not the pinned aiconfigurator-core {WHEEL_VERSION} wheel")
    src = Source(a.wheel, a.data_dir)
    vectors = []
    for system in a.systems.split(","):
        slots = SYSTEMS if a.framework == "sglang" else VLLM_SYSTEMS
        slot = slots.get(system, "0.5.14" if a.framework == "sglang" else "0.24.0")
        if a.sglang_version or a.framework != "sglang":
            versions = [a.sglang_version or slot]
        else:
            # Every SGLang version directory of the system (any op), oldest first.
            dirs = {v for op in src.listdir(system) for v in src.listdir(f"{system}/{op}/sglang")}
            versions = sorted(dirs, key=version_key)
        for version in versions:
            tables = convert(src, a.out, system, version, a.framework,
                             nccl=version == (a.sglang_version or slot))
            if not tables:
                print(f"{system}: no {a.framework} {version} tables servesim reads", file=sys.stderr)
            for op, (path, _) in sorted(tables.items()):
                print(f"{path}: {os.path.getsize(path)} bytes")
            for vs, vv, vop, key, x in VECTORS if a.framework == "sglang" else []:
                if (vs, vv) == (system, version) and vop in tables:
                    val = tables[vop][1].get(key, {}).get(x)
                    if val is not None:
                        vectors.append(f"{vs}/{vv} {vop} {' '.join(str(k) for k in key)} @ {x} = {val!r} ms")
    if a.vectors:
        os.makedirs(os.path.dirname(a.vectors) or ".", exist_ok=True)
        with open(a.vectors, "w") as f:
            f.write("# system op key... @ axis = latency ms, read from the parquet by scripts/import_aiconfigurator.py\n")
            f.write("\n".join(vectors) + "\n")


if __name__ == "__main__":
    main()
