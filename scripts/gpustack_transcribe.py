#!/usr/bin/env python3
"""Transcribes GPUStack's performance-lab pages into validation/gpustack/ (offline, run by hand).

Reads the pages from a git checkout of gpustack/gpustack (`--repo`, default the mirror that
`fetch github:gpustack/gpustack` leaves) at commit COMMIT, and writes one log per page:
a header (URL, commit, licence, hardware, engine versions, the page's client commands), then,
for every result block of an SGLang or vLLM server, the page's section and label, the server
command of that block verbatim, the client command (verbatim where the page gives it for that
case, else rebuilt and marked so) and the block verbatim. TensorRT-LLM blocks are skipped and
listed. It also writes the entries of manifest.yaml for the blocks servesim can replay
(random or ShareGPT dataset, bundled model, modelled flags; UNREPLAYABLE says why the others
are left out); the rest are listed in README.md.
Nothing here is fitted: the script only copies text and records what each page states.
Usage: scripts/gpustack_transcribe.py [--repo DIR]
"""
import os
import re
import subprocess
import sys

COMMIT = "47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d"
COMMIT_DATE = "2026-08-21"
URL = "https://github.com/gpustack/gpustack/blob/{commit}/docs/performance-lab/{page}.md"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation", "gpustack")

# page -> (log name, bundled model, model reason (kind, text), hardware profile, GPU line kind)
Q235 = ("assumed", "the page serves Qwen3-235B-A22B-Instruct-2507, the architecture of Qwen3-235B-A22B (94 layers, 128 experts, top-8); only the context length differs")
PAGES = {
    "qwen3-32b/h100": ("qwen3-32b-h100.txt", "qwen3-32b", ("stated", "Model: Qwen3-32B (Qwen/Qwen3-32B in the commands)"), "h100-sxm5-80gb"),
    "qwen3-32b/a100": ("qwen3-32b-a100.txt", "qwen3-32b", ("stated", "Model: Qwen3-32B (Qwen/Qwen3-32B in the commands)"), "a100-sxm4-80gb"),
    "qwen3-235b-a22b/h100": ("qwen3-235b-h100.txt", "qwen3-235b-a22b", Q235, "h100-sxm5-80gb"),
    "qwen3-235b-a22b/a100": ("qwen3-235b-a100.txt", "qwen3-235b-a22b", Q235, "a100-sxm4-80gb"),
    "gpt-oss-120b/h100": ("gpt-oss-120b-h100.txt", "gpt-oss-120b", ("stated", "openai/gpt-oss-120b in the commands"), "h100-sxm5-80gb"),
    "gpt-oss-120b/a100": ("gpt-oss-120b-a100.txt", "gpt-oss-120b", ("stated", "openai/gpt-oss-120b in the commands"), "a100-sxm4-80gb"),
    "gpt-oss-20b/h100": ("gpt-oss-20b-h100.txt", "gpt-oss-20b", ("stated", "openai/gpt-oss-20b in the commands"), "h100-sxm5-80gb"),
    "gpt-oss-20b/a100": ("gpt-oss-20b-a100.txt", "gpt-oss-20b", ("stated", "openai/gpt-oss-20b in the commands"), "a100-sxm4-80gb"),
    "deepseek-r1/h200": ("deepseek-r1-h200.txt", "deepseek-v3", ("assumed", "DeepSeek-R1-0528 has DeepSeek-V3's architecture (61 layers, MLA, 256 experts top-8, FP8 weights)"), "h200-sxm-141gb"),
    "qwen3-8b/h100-latency": ("qwen3-8b-h100-latency.txt", "qwen3-8b", ("stated", "Qwen/Qwen3-8B in the commands"), "h100-sxm5-80gb"),
}
# Pages not transcribed, and why.
SKIPPED_PAGES = {
    "qwen3-14b/{a100,h100}": "Qwen3-14B is not a bundled model",
    "glm-4.5-air/{a100,h100}, glm-4.x/{a100,h100,h200}, glm-5.2/h200": "GLM models are not bundled",
    "deepseek-v3.2/h200": "DeepSeek-V3.2's sparse attention (DSA) is not modelled",
    "qwen3.5-9b/{h100,h100-latency}, qwen3.5-35b-a3b/{h200,h200-latency}": "Qwen3.5 models are not bundled",
    "qwen3-8b/910b, qwen3-30b-a3b/910b": "vLLM-Ascend and MindIE on Ascend 910B: engines not modelled",
}
# The random cases of "Other Benchmark Cases", from each page's "Benchmark Dataset" list.
RANDOM_CASES = {"32K": (32000, 100), "4K": (4000, 200), "2K": (2000, 100), "128": (128, 4)}


def git_show(repo, page):
    return subprocess.run(["git", "show", f"{COMMIT}:docs/performance-lab/{page}.md"], cwd=repo,
                          check=True, capture_output=True, text=True).stdout


def section_after(lines, title):
    """Lines of the `### title` section (up to the next heading)."""
    out, inside = [], False
    for l in lines:
        if l.startswith("#"):
            if inside:
                break
            inside = l.strip() == f"### {title}"
            continue
        if inside and l.strip():
            out.append(l.strip())
    return out


def code_blocks(lines):
    """(start line index, [lines]) of every fenced code block, dedented."""
    out, cur, start = [], None, 0
    for i, l in enumerate(lines):
        s = l.strip()
        if s.startswith("```"):
            if cur is None:
                cur, start = [], i
            else:
                out.append((start, cur))
                cur = None
        elif cur is not None:
            cur.append(l[4:] if l.startswith("    ") else l)
    return out


def command_of(block):
    """The first server command of a code block, continuation lines kept."""
    for i, l in enumerate(block):
        s = l.strip()
        if s.startswith(("vllm serve", "python3 -m sglang", "python -m sglang", "trtllm-serve")):
            cmd = [s]
            j = i
            while cmd[-1].endswith("\\") and j + 1 < len(block):
                j += 1
                cmd.append(block[j].strip())
            return cmd
    return None


def engine_of(cmd):
    if cmd is None:
        return None
    if "sglang.launch_server" in cmd[0]:
        return "sglang"
    if cmd[0].startswith("vllm serve"):
        return "vllm"
    return "trt"


def parse_page(text):
    lines = text.split("\n")
    bench = [l.strip() for l in lines if l.strip().startswith("vllm bench serve")]
    sharegpt_cmd = next((b for b in bench if "sharegpt" in b), None)
    random_cmd = next((b for b in bench if "--dataset-name random" in b), None)
    heading, label, server = None, None, None
    blocks = []
    for start, body in code_blocks(lines):
        # the heading and the plain-text label (engine name) nearest above the block
        for l in reversed(lines[:start]):
            if l.startswith("### "):
                heading = l[4:].strip()
                break
        cmd = command_of(body)
        if cmd is not None:
            server = cmd
            # the admonition's title, and the engine label right above it (section 1's style)
            title = lines[start - 1].strip()
            m = re.match(r'\?\?\?\+? info "(.*)"', title)
            label = m.group(1) if m else ""
            above = lines[start - 2].strip() if start >= 2 else ""
            if above and not above.startswith(("???", "```", "#", "|", "!!!", "Result")):
                label = f"{above} ({label})" if label else above
            continue
        comment = None
        i = 0
        while i < len(body):
            s = body[i].strip()
            if s.startswith("#"):
                comment = s
            if "Serving Benchmark Result" in s:
                j = i
                while j + 1 < len(body) and not body[j + 1].strip().startswith("====="):
                    j += 1
                block = [b.rstrip() for b in body[i:j + 2]]
                blocks.append(dict(heading=heading, label=label, server=server, comment=comment,
                                   block=block, line=start + 2 + i))
                comment = None
                i = j + 2
                continue
            i += 1
    return dict(lines=lines, sharegpt_cmd=sharegpt_cmd, random_cmd=random_cmd, blocks=blocks)


def value(block, label):
    for l in block:
        if l.strip().startswith(label + ":"):
            return l.split(":", 1)[1].strip()
    return None


def workload(b, page):
    """(dataset, client command, how the command was obtained) of a block."""
    n = int(value(b["block"], "Successful requests"))
    conc = value(b["block"], "Maximum request concurrency")
    c = b["comment"] or ""
    m = re.match(r"# random (\w+) input", c)
    if m and m.group(1) in RANDOM_CASES:
        i, o = RANDOM_CASES[m.group(1)]
        base = page["random_cmd"]
        cmd = re.sub(r"--random-input-len \d+", f"--random-input-len {i}", base)
        cmd = re.sub(r"--random-output-len \d+", f"--random-output-len {o}", cmd)
        cmd = re.sub(r"--num-prompts \d+", f"--num-prompts {n}", cmd)
        how = "verbatim" if cmd == base else (
            f"rebuilt: the page's random command with {i}/{o} from its dataset list "
            f"(\"{m.group(1)}\" case) and --num-prompts {n} from `Successful requests`; --seed 42 kept")
        return "random", cmd, how
    base = page["sharegpt_cmd"]
    cmd = re.sub(r"--num-prompts \d+", f"--num-prompts {n}", base)
    if conc and "--max-concurrency" not in cmd:
        cmd += f" --max-concurrency {conc}"
    elif conc:
        cmd = re.sub(r"--max-concurrency \d+", f"--max-concurrency {conc}", cmd)
    how = "verbatim" if cmd == base else (
        "rebuilt: the page's ShareGPT command with --num-prompts and --max-concurrency from the block")
    return "sharegpt", cmd, how


def header(page, text, meta, skipped):
    lines = text.split("\n")
    title = lines[0].lstrip("# ").strip()
    hw = " ".join(section_after(lines, "Hardware"))
    ver = "; ".join(l.lstrip("- ") for l in section_after(lines, "Engine Version"))
    out = [
        f"# Source: {URL.format(commit=COMMIT, page=page)}",
        f"# Page: \"{title}\" (gpustack/gpustack, docs/performance-lab/{page}.md)",
        f"# Commit {COMMIT} ({COMMIT_DATE}); transcribed 2026-11-24 by scripts/gpustack_transcribe.py.",
        "# Licence: Apache License 2.0 (the repository's LICENSE; the docs carry no other licence).",
        f"# Hardware (page, \"Hardware\"): {hw}",
        f"# Engine versions (page, \"Engine Version\"): {ver}",
        "# Client (page, \"Benchmark Script\"), verbatim:",
    ]
    for cmd in (meta["sharegpt_cmd"], meta["random_cmd"]):
        if cmd:
            out.append(f"#   {cmd}")
    out += [
        "# Below, one section per result block of an SGLang or vLLM server, in page order: the page's",
        "# heading and label, the block's server command (verbatim), its client command (verbatim, or",
        "# rebuilt as the `client:` note says), then the block verbatim.",
    ]
    if skipped:
        out.append("# Not transcribed (engine not modelled by servesim): " + "; ".join(skipped))
    return out


def main():
    repo = "/work/.mirror/gpustack+gpustack/repo"
    if "--repo" in sys.argv:
        repo = sys.argv[sys.argv.index("--repo") + 1]
    inventory = []
    for page, (name, model, model_why, hw) in PAGES.items():
        text = git_show(repo, page)
        meta = parse_page(text)
        kept, skipped = [], []
        for b in meta["blocks"]:
            eng = engine_of(b["server"])
            where = f"{b['heading']} / {b['label']}" + (f" / {b['comment']}" if b["comment"] else "")
            if eng in ("sglang", "vllm"):
                kept.append((eng, b))
            else:
                skipped.append(f"page line {b['line']} ({where}: {' '.join(b['server'] or ['?'])})")
        out = header(page, text, meta, skipped)
        for k, (eng, b) in enumerate(kept):
            dataset, cmd, how = workload(b, meta)
            where = f"{b['heading']} / {b['label']}" + (f" / {b['comment']}" if b["comment"] else "")
            out += ["", f"## block {k} (page line {b['line']}): {where}", f"## engine: {eng}; dataset: {dataset}; client: {how}"]
            out += ["$ " + b["server"][0]] + b["server"][1:]
            out += ["$ " + cmd]
            out += b["block"]
            inventory.append(dict(page=page, file=name, run=k, engine=eng, dataset=dataset, how=how,
                                  client=cmd, block=b["block"],
                                  server=" ".join(x.rstrip("\\").strip() for x in b["server"]),
                                  where=where, model=model, model_why=model_why, hw=hw,
                                  text=text, line=b["line"]))
        with open(os.path.join(OUT, name), "w") as f:
            f.write("\n".join(out) + "\n")
        print(f"{name}: {len(kept)} blocks, {len(skipped)} skipped")
    with open(os.path.join(OUT, "inventory.tsv"), "w") as f:
        f.write("file\trun\tengine\tdataset\tpage line\tserver command\twhere\n")
        for e in inventory:
            f.write(f"{e['file']}\t{e['run']}\t{e['engine']}\t{e['dataset']}\t{e['line']}\t{e['server']}\t{e['where']}\n")
    with open(os.path.join(OUT, "manifest.yaml"), "w") as f:
        f.write(MANIFEST_HEAD)
        for e in inventory:
            f.write(manifest_entry(e))


MANIFEST_HEAD = """\
# servesim GPUSTACK validation manifest (issues 12 and 17): real SGLang and vLLM servers on
# A100 / H100 / H200 measured with vLLM's client (`vllm bench serve`), transcribed from GPUStack's
# performance-lab pages (gpustack/gpustack @47277d79, Apache-2.0; each log's header has the URL).
# Generated by scripts/gpustack_transcribe.py; the judgement calls are in that script, one line
# each, and every selection below is `stated:` (the page says so) or `assumed:` (why).
#
# OUT OF SAMPLE: nothing in servesim may be fitted or tuned on these runs. `servesim validate
# --manifest validation/gpustack/manifest.yaml` replays them; RESULTS.md has both cost models.
# Random and ShareGPT blocks of SGLang and vLLM servers with modelled settings are listed
# (README.md lists every block left out and why); ShareGPT runs use vLLM's selection over the
# bundled ShareGPT sample tables (`[sampled]`). `run` is the block's index in its log; the client and server
# commands are read from the log; `log.client` repeats the client's settings (checked by
# tests/validate.rs). `out-of-medians` keeps a run in the table but out of the error medians.
entries:
"""


def engine_version(text, engine):
    lines = text.split("\n")
    for l in section_after(lines, "Engine Version"):
        m = re.match(r"-?\s*" + engine + r":?\s+v?([0-9][0-9a-z.]*)", l.lstrip("- "))
        if m:
            return m.group(1).rstrip("."), l.lstrip("- ")
    raise SystemExit(f"no {engine} version")


def q(x):
    return '"' + x.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ShareGPT blocks servesim cannot replay, by a substring of the server command, and why.
UNREPLAYABLE = [
    ("--speculative-algorithm", "speculative decoding (EAGLE/EAGLE3) is not modelled for these servers"),
    ("--enable-torch-compile", "torch.compile's effect on step times is not modelled"),
    ("-pp 2", "pipeline parallelism is not modelled"),
    ("--enable-expert-parallel", "vLLM expert parallelism is not modelled"),
    ("Qwen3-32B-AWQ", "AWQ weights are not modelled"),
]


def unreplayable(e):
    """Why a block is left out of the manifest, or None."""
    if e["dataset"] == "sharegpt" and e["model"] == "deepseek-v3":
        return "no bundled ShareGPT length table for DeepSeek's tokenizer"
    for key, why in UNREPLAYABLE:
        if key in e["server"]:
            return why
    served = re.search(r"(?:vllm serve|--model-path|--model) (\S+)", e["server"]).group(1)
    bench = re.search(r"--model (\S+)", e["client"]).group(1)
    if served.split("/")[-1].replace("-FP8", "") != bench.split("/")[-1]:
        return f"the server serves {served} but the client names {bench}: the page is ambiguous"
    return None


def manifest_entry(e):
    if unreplayable(e):
        return ""
    server = e["server"]
    engine = e["engine"]
    n = int(value(e["block"], "Successful requests"))
    sharegpt = e["dataset"] == "sharegpt"
    vver, _ = engine_version(e["text"], "vLLM")
    ver, ver_line = engine_version(e["text"], "vLLM" if engine == "vllm" else "SGLang")
    bench_model = re.search(r"--model (\S+)", e["client"]).group(1)
    hw_line = " ".join(section_after(e["text"].split("\n"), "Hardware"))
    model_kind, model_why = e["model_why"]
    conc = value(e["block"], "Maximum request concurrency")
    cap = f"max-concurrency {conc}" if conc else "no cap"
    if sharegpt:
        # `vllm bench serve --seed` defaults to 0 (the ShareGPT commands do not pass it).
        client = f"sharegpt, {n} prompts, rate inf, {cap}, seed 0, vllm bench serve {vver}"
    else:
        i = int(re.search(r"--random-input-len (\d+)", e["client"]).group(1))
        o = int(re.search(r"--random-output-len (\d+)", e["client"]).group(1))
        client = f"random {i}/{o} ratio 0, {n} prompts, rate inf, {cap}, seed 42, vllm bench serve {vver}"
    if engine == "vllm":
        m = re.search(r"(?:-tp|--tensor-parallel-size) (\d+)", server)
        tp = (int(m.group(1)), f"-tp {m.group(1)} in the server command") if m else (
            1, "no -tp in the server command: vLLM's default, one GPU")
        launch = "`vllm serve` is the block's server command"
    else:
        m = re.search(r"(?:--tp-size|--tp) (\d+)", server)
        tp = (int(m.group(1)), f"--tp-size {m.group(1)} in the server command") if m else (
            1, "no --tp-size in the server command: SGLang's default, one GPU")
        launch = "`python3 -m sglang.launch_server` is the block's server command"
    out = [
        f"  # --- {e['file']} block {e['run']} (page line {e['line']}): {e['where']}",
        f"  - id: {q(e['file'][:-4] + '/' + str(e['run']))}",
        f"    file: {e['file']}",
        f"    run: {e['run']}",
        "    log:",
        f"      model: {q(bench_model)}",
        f"      client: {q(client)}",
        f"    hardware: {{value: {e['hw']}, stated: {q('Hardware: ' + hw_line)}}}",
        f"    model: {{value: {e['model']}, {model_kind}: {q(model_why)}}}",
        "    server:",
        f"      engine: {{value: {engine}, stated: {q(launch)}}}",
        f"      tp: {{value: {tp[0]}, stated: {q(tp[1])}}}",
        f"      {engine}-version: {{value: {q(ver)}, stated: {q('Engine Version: ' + ver_line)}}}",
    ]
    if "-FP8" in server:
        out.append("      quantization: {value: fp8, stated: \"the server serves the -FP8 checkpoint (block-wise FP8 weights)\"}")
    if engine == "vllm" and e["model"] == "qwen3-32b" and e["hw"] == "h100-sxm5-80gb" and "--max-model-len" not in server:
        out.append("      max-model-len: {value: 32768, assumed: \"servesim's vLLM memory profile leaves KV for 35,504 tokens, under the model's 40,960, and refuses to start; the real server started. 32768 only lets it start: every request here is at most 32,100 tokens\"}")
    rest = "vLLM's" if engine == "vllm" else "SGLang's"
    out.append(f"    other-server-flags: {{stated: \"every other flag is read from the block's server command; the rest are {rest} defaults for the version\"}}")
    out.append(f"    bench-version: {{value: {q(vver)}, assumed: {q('the page benchmarks with `vllm bench serve` and names vLLM ' + vver + '; the block layout (Peak lines, Total Token throughput) is that CLI')}}}")
    why = None
    if "-FP8" in server and e["hw"].startswith("a100"):
        why = "FP8 checkpoint on A100 (no FP8 tensor cores): vLLM runs it with weight-only Marlin kernels, which servesim does not price"
    elif not sharegpt and n not in (100, 500, 1000):
        why = f"{n} successful requests where the case sends 1000 and the block has no Failed line: the prompt count is uncertain"
    if why:
        out.append(f"    out-of-medians: {q(why)}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
