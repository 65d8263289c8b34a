"""Calling the engine from Python costs no more than the CLI: a 64-point sweep through
`servesim.sweep` takes at most 1.5x the time of `servesim sweep` on the same grid (each the
best of 5 interleaved runs, so a busy machine slows both rather than one), and the simulation
runs with the GIL released, so other Python threads keep running."""
import subprocess
import threading
import time

import servesim
from servesim import _native

GRID = dict(
    max_concurrency=[1, 2, 4, 8, 16, 32, 64, 128],
    random_input_len=[128, 256, 512, 1024, 2048, 4096, 8192, 16384],
    num_prompts=1000,
)
CLI_GRID = [
    "--max-concurrency", "1,2,4,8,16,32,64,128",
    "--random-input-len", "128,256,512,1024,2048,4096,8192,16384",
    "--num-prompts", "1000",
]


def elapsed(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def best_of(n, f):
    return min(elapsed(f) for _ in range(n))


def test_64_point_sweep_within_1_5x_of_the_cli(servesim_bin, tmp_path):
    cli = [str(servesim_bin), "sweep", "-o", str(tmp_path), "--quiet", "--no-charts", *CLI_GRID]
    result = servesim.sweep(GRID)
    assert len(result) == 64 and all(r["error"] is None for r in result)
    # Interleaved, so a change in the machine's load hits both sides alike.
    cli_times, py_times = [], []
    for _ in range(5):
        cli_times.append(elapsed(lambda: subprocess.run(cli, check=True, capture_output=True)))
        py_times.append(elapsed(lambda: servesim.sweep(GRID)))
    cli_s, py_s = min(cli_times), min(py_times)
    print(f"64-point sweep: CLI {cli_s:.3f} s, Python {py_s:.3f} s, ratio {py_s / cli_s:.2f}")
    assert py_s <= 1.5 * cli_s, f"Python {py_s:.3f} s vs CLI {cli_s:.3f} s"


def test_gil_is_released_while_simulating():
    """While one thread is inside the engine, another thread's Python code runs: the longest
    pause of a counting loop is far shorter than the call (holding the GIL would stall the loop
    for the whole call)."""
    args = ["run", "--num-prompts", "200000", "--output-format", "json"]
    call_s = best_of(1, lambda: _native.execute(args))
    done = threading.Event()

    def work():
        _native.execute(args)
        done.set()

    worker = threading.Thread(target=work)
    last = time.perf_counter()
    longest = 0.0
    worker.start()
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    worker.join()
    assert call_s > 0.05, f"the call ({call_s:.3f} s) is too short to tell"
    assert longest < call_s / 2, f"main thread stalled {longest:.3f} s during a {call_s:.3f} s call"
