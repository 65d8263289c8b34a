#!/usr/bin/env python3
"""Copies the joint fit's shared host constants (step_cpu_ns, eager_layer_ns, request_latency_ns)
from the fitted H100 profile into the profiles outside the fit (H200, B200, H20, Ascend 910B2),
keeping each line's comment. The host, not the accelerator, decides these constants, and a stale
copy breaks the physics tests (a newer GPU priced slower on the same step).
Usage (repo root): python3 scripts/propagate_shared.py"""
import re

SHARED = ["step_cpu_ns", "eager_layer_ns", "request_latency_ns"]
SOURCE = "hardware-profiles/h100-sxm5-80gb.yaml"
TARGETS = ["h200-sxm-141gb", "b200-sxm-180gb", "h20-96gb", "ascend-910b2"]


def main() -> None:
    src = open(SOURCE).read()
    values = {}
    for key in SHARED:
        m = re.search(r"^  " + key + r": (\S+)", src, re.M)
        if not m:
            raise SystemExit(f"{SOURCE}: no `{key}:` line")
        values[key] = m.group(1)
    for name in TARGETS:
        path = f"hardware-profiles/{name}.yaml"
        text = open(path).read()
        for key, value in values.items():
            def repl(m: re.Match) -> str:
                head = m.group(1) + value
                width = len(m.group(1) + m.group(2) + m.group(3))
                return head.ljust(width) if len(head) < width else head + " "

            text, n = re.subn(r"^(  " + key + r": )(\S+)(\s+)", repl, text, flags=re.M)
            if n != 1:
                raise SystemExit(f"{path}: expected one `{key}:` line, found {n}")
        open(path, "w").write(text)
    print("propagated", values)


if __name__ == "__main__":
    main()
