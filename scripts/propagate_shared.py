#!/usr/bin/env python3
"""Copies the joint fit's shared host constants (step_cpu_ns, eager_layer_ns, request_latency_ns)
from the fitted H100 profile into every bundled profile outside the fit (all of hardware-profiles/
except the three the joint fit writes),
keeping each line's comment. The host, not the accelerator, decides these constants, and a stale
copy breaks the physics tests (a newer GPU priced slower on the same step).
Usage (repo root): python3 scripts/propagate_shared.py"""
import glob
import os
import re

SHARED = ["step_cpu_ns", "eager_layer_ns", "request_latency_ns"]
SOURCE = "hardware-profiles/h100-sxm5-80gb.yaml"
FITTED = {"a100-sxm4-80gb", "h100-sxm5-80gb", "ascend-a3"}
TARGETS = sorted(
    os.path.basename(p)[:-5]
    for p in glob.glob("hardware-profiles/*.yaml")
    if os.path.basename(p)[:-5] not in FITTED
)


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
                if not m.group(3):  # no comment after the value
                    return head
                return head.ljust(width) if len(head) < width else head + " "

            text, n = re.subn(r"^(  " + key + r": )(\S+)([ \t]*)", repl, text, flags=re.M)
            if n != 1:
                raise SystemExit(f"{path}: expected one `{key}:` line, found {n}")
        open(path, "w").write(text)
    print("propagated", values)


if __name__ == "__main__":
    main()
