#!/usr/bin/env python3
"""Copy the Hugging Face config.json files servesim can price out of NVIDIA AIConfigurator's wheel.

Source: PyPI `aiconfigurator-core==0.12.0` (Apache-2.0), directory
`aiconfigurator_core/model_configs/<org>--<name>_config.json` (verbatim Hugging Face
`config.json` files). Output: `<out>/<org>--<name>.json`, byte-identical to the wheel's file, for
each entry of CONFIGS below: the configs whose architecture servesim's reader accepts
(src/spec/hf_config.rs) and whose Hugging Face id does not already resolve to a bundled YAML
model (models/*.yaml keep priority). The binary embeds them (src/spec/bundled_hf.rs), so
`--model moonshotai/Kimi-K2-Instruct` or `--model kimi-k2-instruct` needs no file.

Usage (deterministic: the same wheel gives the same bytes):
    pip download --no-deps aiconfigurator-core==0.12.0 -d /tmp/aic
    python3 scripts/import_model_configs.py --wheel /tmp/aic/aiconfigurator_core-0.12.0-*.whl \
        --out models/hf
"""
import argparse
import hashlib
import os
import sys
import zipfile

WHEEL_VERSION = "0.12.0"
WHEEL_SHA256 = "aadc4aad0a00bf8a61c477c62bef43de479849c3aa0b1c3078068e08309eccc4"
PREFIX = "aiconfigurator_core/model_configs/"

# <org>--<name>, as the wheel names them. Not copied: models a bundled YAML already covers
# (Qwen3-8B/32B/30B-A3B/235B-A22B/Coder-480B and their FP8 builds, Llama-3.1-8B/70B, gpt-oss,
# DeepSeek-V3), architectures servesim refuses (hybrid linear attention, Mamba, DSA, ...), and
# checkpoints in a weight format servesim does not price (NVFP4 `modelopt`; Kimi-K2.5's int4
# W4A16 compressed-tensors experts).
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
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheel", required=True, help="aiconfigurator_core-0.12.0 wheel (checked against its pinned sha256)")
    ap.add_argument("--out", required=True, help="output directory (models/hf)")
    a = ap.parse_args()
    with open(a.wheel, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f"{a.wheel}: sha256 {digest} is not the pinned aiconfigurator-core {WHEEL_VERSION} wheel")
    os.makedirs(a.out, exist_ok=True)
    with zipfile.ZipFile(a.wheel) as z:
        for name in CONFIGS:
            data = z.read(f"{PREFIX}{name}_config.json")
            with open(os.path.join(a.out, f"{name}.json"), "wb") as f:
                f.write(data)
            print(f"{name}.json  {len(data)} bytes  sha256 {hashlib.sha256(data).hexdigest()[:16]}")


if __name__ == "__main__":
    main()
