"""Bad input raises `servesim.ServesimError` carrying the line the CLI prints on stderr and its
exit code, and the interpreter goes on (no abort, no panic escaping into Python)."""
import json
import subprocess
import sys

import pytest

import servesim

CASES = [
    pytest.param(dict(hardware="tpu-v9"), ["--hardware", "tpu-v9"], id="unknown-hardware"),
    pytest.param(dict(tp=0), ["--tp", "0"], id="zero-tp"),
    pytest.param(dict(num_prompts="many"), ["--num-prompts", "many"], id="not-a-number"),
    pytest.param(dict(no_such_flag=1), ["--no-such-flag", "1"], id="unknown-flag"),
    pytest.param(dict(scenario="/nonexistent/s.yaml"), ["--scenario", "/nonexistent/s.yaml"], id="missing-file"),
    pytest.param(
        dict(model="llama-3.1-70b", hardware="a100-sxm4-80gb", tp=1),
        ["--model", "llama-3.1-70b", "--hardware", "a100-sxm4-80gb", "--tp", "1"],
        id="weights-do-not-fit",
    ),
    pytest.param(dict(request_rate=-1.0), ["--request-rate=-1.0"], id="negative-rate"),
]


@pytest.mark.parametrize("kwargs,argv", CASES)
def test_run_error_is_the_cli_message(kwargs, argv, cli_run):
    code, out, err = cli_run("run", *argv, "--output-format", "json")
    assert code != 0 and out == ""
    line = err.strip()
    assert line.startswith("error: ") and "\n" not in line
    with pytest.raises(servesim.ServesimError) as info:
        servesim.run(**kwargs)
    assert str(info.value) == line
    assert info.value.exit_code == code


def test_other_commands_raise_the_cli_message(cli_run, tmp_path):
    code, _, err = cli_run("replay", str(tmp_path / "missing.txt"), "--format", "json")
    with pytest.raises(servesim.ServesimError) as info:
        servesim.replay(tmp_path / "missing.txt")
    assert (str(info.value), info.value.exit_code) == (err.strip(), code)

    code, _, err = cli_run("sweep", "-o", str(tmp_path), "--tp", "4:1")
    with pytest.raises(servesim.ServesimError) as info:
        servesim.sweep(tp="4:1")
    assert (str(info.value), info.value.exit_code) == (err.strip(), code)

    code, _, err = cli_run("plan", "--target-rate", "1", "--tp", "1,2", "--format", "json")
    assert code == 1 and "SLO" in err
    with pytest.raises(servesim.ServesimError) as info:
        servesim.plan(target_rate=1, tp=[1, 2])
    assert (str(info.value), info.value.exit_code) == (err.strip(), code)

    # No qualifying candidate is an answer, not an error: the CLI prints it and exits 3, the
    # API returns it (a 0.5 ms P99 TTFT is below any prefill, so nothing can meet it).
    args = dict(target_rate=2, slo_ttft_p99=0.5, num_prompts=50, random_input_len=256)
    code, out, _ = cli_run(
        "plan", "--target-rate", "2", "--slo-ttft-p99", "0.5", "--num-prompts", "50",
        "--random-input-len", "256", "--quiet", "--format", "json",
    )
    assert code == servesim.NO_ANSWER == 3
    got = servesim.plan(**args)
    assert got == json.loads(out) and got["recommended"] is None and got["candidates"]

    code, _, err = cli_run("plan", "--slo-tpot-p99", "50", "--tp", "1,2")
    assert code == 2
    with pytest.raises(servesim.ServesimError) as info:
        servesim.plan(slo_tpot_p99=50, tp=[1, 2])
    assert (str(info.value), info.value.exit_code) == (err.strip().splitlines()[0], code)


def test_python_side_errors_are_servesim_errors():
    with pytest.raises(servesim.ServesimError, match="--tp: `run` takes one value"):
        servesim.run(tp=[1, 2])
    with pytest.raises(servesim.ServesimError, match="--output-format"):
        servesim.run(output_format="text")


def test_interpreter_survives_bad_input():
    """Every kind of bad input in a fresh interpreter, which then still simulates."""
    code = """
import servesim
bad = [dict(hardware="nope"), dict(tp=0), dict(max_events=1), dict(dp=0),
       dict(max_total_tokens=1), dict(mem_fraction_static=float("nan")), dict(tp=[1]),
       dict(model="/nonexistent/config.json"), dict(max_wall_seconds=-1.0)]
for kw in bad:
    try:
        servesim.run(**kw)
    except servesim.ServesimError as e:
        assert str(e).startswith("error: "), e
    else:
        raise SystemExit(f"no error for {kw}")
print(servesim.run(num_prompts=10)["completed"])
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "10"
