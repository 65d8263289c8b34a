#!/usr/bin/env python3
"""File-level import graph of a Rust crate's src/ (from `use crate::...` and `crate::a::b` paths).

Usage: rust_imports.py [SRC_DIR] [--cycles] [--upward LAYER_ORDER] [--strict]
  --cycles          print strongly connected components of more than one file
  --upward a,b,c    layers from bottom to top (top-level module names); print imports from a lower
                    layer to a higher one
  --strict          exit 1 when a cycle or an upward import is printed (for CI)
Exit 0 otherwise; prints counts on the last line.

Origin: a copy of the servesim team's shared checker (tools/rust_imports.py beside the
repository), kept here so CI does not depend on anything outside the clone; the only change
is `--strict`.
"""
import os, re, sys
from collections import defaultdict

src = next((a for a in sys.argv[1:] if not a.startswith("--") and os.path.isdir(a)), "src")
files = []
for d, _, fs in os.walk(src):
    for f in fs:
        if f.endswith(".rs"): files.append(os.path.join(d, f))

def mod_path(f):
    rel = os.path.relpath(f, src)[:-3].split(os.sep)
    if rel[-1] == "mod": rel = rel[:-1]
    if rel in (["lib"], ["main"]): return []
    return rel

by_path = {tuple(mod_path(f)): f for f in files}

def resolve(parts):
    # longest prefix of parts that names a file
    for n in range(len(parts), 0, -1):
        if tuple(parts[:n]) in by_path: return by_path[tuple(parts[:n])]
    return None

PAT = re.compile(r"crate::((?:\w+::)*\w+)")
USE = re.compile(r"use\s+crate::([^;]+);", re.S)
graph = defaultdict(set)
for f in files:
    text = open(f, encoding="utf-8", errors="replace").read()
    text = re.sub(r"//[^\n]*", "", text)
    paths = set(PAT.findall(text))
    for u in USE.findall(text):
        # expand simple groups: a::{b, c::d}
        m = re.match(r"(\w+(?:::\w+)*)::\{(.*)\}$", u.strip().replace("\n", " "), re.S)
        if m:
            for item in m.group(2).split(","):
                item = item.strip().split(" as ")[0].strip()
                if item and item != "self": paths.add(m.group(1) + "::" + item.replace("{", "").replace("}", ""))
    here = mod_path(f)
    parent = here[:-1] if not f.endswith(("mod.rs", "lib.rs", "main.rs")) else here[:-1]
    for sup in re.findall(r"super::((?:\w+::)*\w+)", text):
        base = (here[:-1] if not f.endswith("mod.rs") else here[:-1])
        paths.add("::".join(base + sup.split("::")))
    for u in re.findall(r"use\s+super::\{([^;]+)\};", text, re.S):
        base = here[:-1]
        for item in u.split(","):
            item = item.strip().split(" as ")[0].split("::")[0].strip()
            if item and item != "self": paths.add("::".join(base + [item]))
    for p in paths:
        t = resolve([x for x in p.split("::") if x])
        if not t or t == f: continue
        tp = mod_path(t)
        if t.endswith("mod.rs") and tp == here[:len(tp)]: continue   # a child using its parent module
        graph[f].add(t)

def sccs():
    index, low, stack, on, out, i = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
        for w in graph[v]:
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in files:
        if v not in index: visit(v)
    return out

cyc = sccs()
if "--cycles" in sys.argv:
    for c in cyc: print("cycle:", " <-> ".join(os.path.relpath(x, src) for x in c))
up = []
if "--upward" in sys.argv:
    order = sys.argv[sys.argv.index("--upward") + 1].split(",")
    rank = {m: k for k, m in enumerate(order)}
    top = lambda f: (mod_path(f) or ["lib"])[0]
    for f, ts in sorted(graph.items()):
        for t in sorted(ts):
            a, b = top(f), top(t)
            if a in rank and b in rank and rank[b] > rank[a]:
                up.append((f, t)); print("upward:", os.path.relpath(f, src), "->", os.path.relpath(t, src))
print(f"{len(files)} files, {sum(len(v) for v in graph.values())} imports, {len(cyc)} cycles, {len(up)} upward imports")
if "--strict" in sys.argv and ((cyc and "--cycles" in sys.argv) or up):
    sys.exit(1)
