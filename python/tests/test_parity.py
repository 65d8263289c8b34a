"""`servesim.run(...)` returns exactly what `servesim run --output-format json` prints for the
same flags. The CLI arguments here are written out by hand, not produced by the package's own
keyword conversion, so a wrong conversion (name, switch, negative value, float) fails."""
import json

import pytest

import servesim

SCENARIOS = [
    pytest.param({}, [], 1000, id="bundled-default"),
    pytest.param(
        dict(
            hardware="a100-sxm4-80gb",
            model="llama-3.1-8b",
            tp=2,
            max_concurrency=32,
            num_prompts=300,
            random_input_len=1024,
            random_output_len=256,
            request_rate=8.0,
            seed=7,
        ),
        [
            "--hardware", "a100-sxm4-80gb", "--model", "llama-3.1-8b", "--tp", "2",
            "--max-concurrency", "32", "--num-prompts", "300", "--random-input-len", "1024",
            "--random-output-len", "256", "--request-rate", "8.0", "--seed", "7",
        ],
        300,
        id="a100-llama-tp2-rate8",
    ),
    pytest.param(
        dict(
            hardware="h100-sxm5-80gb",
            model="qwen3-30b-a3b",
            tp=2,
            dp=2,
            disable_radix_cache=True,
            enable_mixed_chunk=False,
            chunked_prefill_size=-1,
            schedule_policy="lpm",
            dataset_name="sharegpt",
            num_prompts=200,
        ),
        [
            "--hardware", "h100-sxm5-80gb", "--model", "qwen3-30b-a3b", "--tp", "2", "--dp", "2",
            "--disable-radix-cache", "--chunked-prefill-size", "-1", "--schedule-policy", "lpm",
            "--dataset-name", "sharegpt", "--num-prompts", "200",
        ],
        200,
        id="h100-moe-dp2-switch-negative",
    ),
]


@pytest.mark.parametrize("kwargs,argv,requests", SCENARIOS)
def test_run_equals_cli_json(kwargs, argv, requests, cli_run):
    code, out, err = cli_run("run", *argv, "--output-format", "json")
    assert code == 0, err
    expected = json.loads(out)
    got = servesim.run(**kwargs)
    assert json.dumps(got) == json.dumps(expected)
    assert got["completed"] == requests
    assert got["output_throughput"] > 0


def test_flags_change_the_result():
    """The keyword arguments reach the engine (a parity test alone would pass if both sides
    ignored them): a switch and a value each change the numbers."""
    base = dict(hardware="h100-sxm5-80gb", model="qwen3-8b", num_prompts=200, max_concurrency=8)
    plain = servesim.run(**base)
    assert servesim.run(**base, disable_cuda_graph=True)["mean_tpot_ms"] > plain["mean_tpot_ms"]
    assert servesim.run(**{**base, "max_concurrency": 64})["output_throughput"] > plain["output_throughput"]
    assert servesim.run(**base, disable_cuda_graph=False) == plain


def test_sweep_rows_equal_cli_sweep_json(cli_run, tmp_path):
    grid = dict(max_concurrency=[1, 8, 64], random_input_len=range(512, 1537, 512), num_prompts=100)
    code, _, err = cli_run(
        "sweep", "-o", str(tmp_path), "--quiet", "--no-charts", "--max-concurrency", "1,8,64",
        "--random-input-len", "512,1024,1536", "--num-prompts", "100",
    )
    assert code == 0, err
    doc = json.loads((tmp_path / "sweep.json").read_text())
    got = servesim.sweep(grid)
    assert got.rows_json == doc["rows"]
    assert got.meta["points"] == 9 and len(got) == 9
    assert [(r["max_concurrency"], r["random_input_len"]) for r in got[:4]] == [
        (1, 512), (1, 1024), (1, 1536), (8, 512)
    ]
    for flat, row in zip(got, doc["rows"]):
        assert flat["output_throughput"] == row["metrics"]["output_throughput"]
        assert flat["tp"] == row["deployment"]["tp"] == 1


def test_sweep_to_pandas():
    pd = pytest.importorskip("pandas")
    df = servesim.sweep(max_concurrency=[1, 4, 16], num_prompts=100).to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df["max_concurrency"]) == [1, 4, 16]
    assert df["output_throughput"].is_monotonic_increasing


def test_replay_plan_validate_profiles_equal_cli(cli_json, in_repo):
    log = "validation/001_60470e8ed6145649.txt"
    assert servesim.replay(log) == cli_json("replay", log, "--format", "json")
    assert servesim.replay(log, run=0) == cli_json("replay", log, "--run", "0", "--format", "json")
    plan_args = dict(target_rate=2.0, slo_tpot_p99=50.0, tp=[1, 2], num_prompts=100)
    expected = cli_json(
        "plan", "--target-rate", "2.0", "--slo-tpot-p99", "50.0", "--tp", "1,2",
        "--num-prompts", "100", "--quiet", "--format", "json",
    )
    assert servesim.plan(**plan_args) == expected
    assert servesim.validate() == cli_json("validate", "--format", "json")
    names = servesim.profiles()
    assert "h100-sxm5-80gb" in names["hardware"] and "qwen3-8b" in names["models"]
