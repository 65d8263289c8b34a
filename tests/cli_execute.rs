//! `servesim::cli::execute` (the library entry point the Python package calls) returns exactly
//! what the binary prints on stdout, and on failure the binary's one stderr line and exit code.
mod common;

use common::servesim;
use servesim::cli::{execute, CliError};

fn exec(args: &[&str]) -> Result<String, CliError> {
    execute(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn output_equals_the_binary_stdout() {
    for args in [
        &["run", "--num-prompts", "200", "--output-format", "json"][..],
        &[
            "run",
            "--tp",
            "2",
            "--max-concurrency",
            "8",
            "--num-prompts",
            "100",
        ],
        &["profiles"],
        &[
            "replay",
            "validation/001_60470e8ed6145649.txt",
            "--format",
            "json",
        ],
    ] {
        let (code, out, _) = servesim(args);
        assert_eq!(code, 0, "{args:?}");
        assert_eq!(exec(args).expect("succeeds"), out, "{args:?}");
    }
    let help = exec(&["run", "--help"]).expect("help is not an error");
    assert!(help.contains("--max-concurrency"));
}

#[test]
fn errors_equal_the_binary_stderr_line_and_code() {
    for args in [
        &["run", "--hardware", "mi300x"][..],
        &["run", "--tp", "0"],
        &["run", "--no-such-flag"],
        &["run", "--num-prompts", "many"],
        &["sweep", "-o", "target/never", "--tp", "4:1"],
        &["frobnicate"],
    ] {
        let (code, _, err) = servesim(args);
        let e = exec(args).expect_err("fails");
        assert_eq!(
            (e.message.as_str(), e.code),
            (err.trim_end(), code),
            "{args:?}"
        );
        assert!(e.message.starts_with("error: ") && !e.message.contains('\n'));
    }
}

/// The line bench_serving prints for the concurrency cap (`{:<40} {:<10}`).
fn cap_line(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("Max request concurrency:"))
        .map_or("", str::trim_end)
}

#[test]
fn a_client_flag_overrides_one_field_of_the_bundled_default() {
    // Issue 14: `run --seed 1` used to drop the whole client section, and with it the bundled
    // `--max-concurrency 64` (mean TTFT 57 ms → 16 s). One flag now changes one field.
    let out = exec(&["run", "--seed", "1", "--num-prompts", "80"]).expect("runs");
    assert_eq!(
        cap_line(&out),
        "Max request concurrency:                 64"
    );
    // A finite rate is an open-loop benchmark: bench_serving has no cap unless one is given.
    let out = exec(&["run", "--request-rate", "8", "--num-prompts", "80"]).expect("runs");
    assert_eq!(
        cap_line(&out),
        "Max request concurrency:                 not set"
    );
    let out = exec(&[
        "run",
        "--request-rate",
        "8",
        "--max-concurrency",
        "4",
        "--num-prompts",
        "80",
    ])
    .expect("runs");
    assert_eq!(cap_line(&out), "Max request concurrency:                 4");
    // bench_serving: `Semaphore(max_concurrency) if max_concurrency else None`: 0 is no cap.
    let out = exec(&["run", "--max-concurrency", "0", "--num-prompts", "80"]).expect("runs");
    assert_eq!(
        cap_line(&out),
        "Max request concurrency:                 not set"
    );
}

/// The keys of a JSONL line in their written order (top level only: each key is followed by
/// `": "` and preceded by `{"` or `, "`).
fn top_level_keys(line: &str, candidates: &[&str]) -> Vec<String> {
    let mut found: Vec<(usize, String)> = candidates
        .iter()
        .filter_map(|k| {
            let pos = [format!("{{\"{k}\": "), format!(", \"{k}\": ")]
                .iter()
                .filter_map(|p| line.find(p.as_str()))
                .min()?;
            Some((pos, k.to_string()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, k)| k).collect()
}

#[test]
fn output_file_appends_bench_servings_keys_per_version() {
    // Transcribed from sglang's python/sglang/bench_serving.py, `benchmark()`, the
    // `result = {...}` dict written by `file.write(json.dumps(result_for_dump) + "\n")`:
    // 0.5.6+ (the version with `max_output_tokens_per_s`, `tag`, `server_info`):
    let since_056 = "tag backend dataset_name request_rate max_concurrency sharegpt_output_len \
        random_input_len random_output_len random_range_ratio server_info duration completed \
        total_input_tokens total_input_text_tokens total_input_vision_tokens total_output_tokens \
        total_output_tokens_retokenized request_throughput input_throughput output_throughput \
        total_throughput mean_e2e_latency_ms median_e2e_latency_ms std_e2e_latency_ms \
        p90_e2e_latency_ms p99_e2e_latency_ms mean_ttft_ms median_ttft_ms std_ttft_ms p99_ttft_ms \
        mean_tpot_ms median_tpot_ms std_tpot_ms p99_tpot_ms mean_itl_ms median_itl_ms std_itl_ms \
        p95_itl_ms p99_itl_ms concurrency accept_length max_output_tokens_per_s \
        max_concurrent_requests";
    // The 0.4.x line (commit 0033168f, no tag/server_info/peaks/total_throughput):
    let before_056 = "backend dataset_name request_rate max_concurrency sharegpt_output_len \
        random_input_len random_output_len random_range_ratio duration completed \
        total_input_tokens total_output_tokens total_output_tokens_retokenized request_throughput \
        input_throughput output_throughput mean_e2e_latency_ms median_e2e_latency_ms \
        std_e2e_latency_ms p99_e2e_latency_ms mean_ttft_ms median_ttft_ms std_ttft_ms p99_ttft_ms \
        mean_tpot_ms median_tpot_ms std_tpot_ms p99_tpot_ms mean_itl_ms median_itl_ms std_itl_ms \
        p95_itl_ms p99_itl_ms concurrency accept_length";
    // `--output-details` adds `result_details` after them (`result | result_details`); servesim
    // has no per-request ITLs (pooled), so `itls` is left out.
    let details = "input_lens output_lens ttfts generated_texts errors";
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("h14-output-file.jsonl");
    let _ = std::fs::remove_file(&path);
    let file = path.to_str().expect("utf-8 path");
    exec(&[
        "run",
        "--num-prompts",
        "5",
        "--output-file",
        file,
        "--tag",
        "a",
    ])
    .expect("runs");
    exec(&[
        "run",
        "--num-prompts",
        "5",
        "--bench-version",
        "0.5.1",
        "--request-rate",
        "4",
        "--output-file",
        file,
        "--output-details",
    ])
    .expect("runs");
    let text = std::fs::read_to_string(&path).expect("written");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "one line appended per run");
    let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    let all: Vec<String> = [since_056, details].iter().flat_map(|s| words(s)).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    assert_eq!(top_level_keys(lines[0], &all), words(since_056));
    // Python's json.dumps: `", "`/`": "` separators and a bare Infinity for rate inf.
    assert!(lines[0].starts_with("{\"tag\": \"a\", \"backend\": \"sglang\", "));
    assert!(lines[0].contains("\"request_rate\": Infinity, \"max_concurrency\": 64,"));
    let expected: Vec<String> = words(before_056)
        .into_iter()
        .chain(words(details))
        .collect();
    assert_eq!(top_level_keys(lines[1], &all), expected);
    let v: serde_json::Value = serde_json::from_str(lines[1]).expect("finite rate: strict JSON");
    assert_eq!(v["input_lens"].as_array().map(Vec::len), Some(5));
    assert_eq!(v["request_rate"], 4.0);
}

#[test]
fn a_pasted_bench_serving_command_runs_with_bench_servings_defaults() {
    // Every flag of this line used to be refused (exit 2) or ignored; the server flags come
    // from the launch_server half, the model from a Hugging Face id.
    let pasted = "SGLANG_USE_MODELSCOPE=false python3 -m sglang.launch_server \
        --model-path Qwen/Qwen3-8B --tp-size 2 --host 0.0.0.0 --port 30000 --trust-remote-code &\n\
        python -m sglang.bench_serving --backend sglang --host 127.0.0.1 --port 30000 \\\n\
        --model Qwen/Qwen3-8B --tokenizer Qwen/Qwen3-8B --num-prompt 30 --disable-tqdm \
        --apply-chat-template --extra-request-body '{\"temperature\": 0}' --lora-name a b";
    let out = exec(&["run", "--", pasted]).expect("runs");
    assert!(
        out.starts_with("servesim: qwen3-8b on 2 × h100-sxm5-80gb (tp 2)"),
        "{out}"
    );
    // No --max-concurrency and no --dataset-name in the paste: bench_serving's defaults
    // (no cap, sharegpt), not the bundled scenario's (64, random).
    assert_eq!(
        cap_line(&out),
        "Max request concurrency:                 not set"
    );
    let sharegpt = exec(&[
        "run",
        "--model",
        "qwen3-8b",
        "--tp",
        "2",
        "--dataset-name",
        "sharegpt",
        "--max-concurrency",
        "0",
        "--num-prompts",
        "30",
    ])
    .expect("runs");
    assert_eq!(out, sharegpt, "the paste means exactly these flags");
    // Flags before `--` override the pasted ones.
    let capped = exec(&["run", "--max-concurrency", "4", "--", pasted]).expect("runs");
    assert_eq!(
        cap_line(&capped),
        "Max request concurrency:                 4"
    );
    // A command that is neither program, and flags that change the measurement, are refused.
    let e = exec(&["run", "--", "ls -la"]).expect_err("refused");
    assert_eq!(e.code, 2);
    assert!(
        e.message
            .contains("runs none of `python -m sglang.bench_serving`"),
        "{e}"
    );
    let e = exec(&[
        "run",
        "--",
        "python -m sglang.bench_serving --disable-stream",
    ])
    .expect_err("refused");
    assert_eq!(
        e.message,
        "error: --disable-stream: field `disable_stream`: changes what bench_serving measures \
         in a way servesim does not model; remove it (or give the client's default)"
    );
    // bench_serving's `--backend vllm` drives a vLLM server: the vLLM engine is simulated.
    let out = exec(&["run", "--backend", "vllm", "--num-prompts", "8"]).expect("runs");
    assert!(out.contains("vLLM 0.33.0 (V1)"), "{out}");
    let e = exec(&["run", "--backend", "lmdeploy"]).expect_err("refused");
    assert!(e.message.contains("drives another server"), "{e}");
}

#[test]
fn profiles_show_the_facts_of_each_profile_and_model() {
    let out = exec(&["profiles"]).expect("runs");
    let row = |name: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name} in\n{out}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    // H100 SXM5 datasheet: 3.35 TB/s HBM3, 989 dense bf16 TFLOP/s, 1979 fp8.
    assert_eq!(row("h100-sxm5-80gb")[2..5], ["3.35", "989", "1979"]);
    // Qwen3-8B config.json: 36 layers, 8 KV heads of 128: 36 × 8 × 128 × 2 (K, V) × 2 bytes.
    let q = row("qwen3-8b");
    assert_eq!((q[1].as_str(), q[4].as_str()), ("36", "147456"));
    // DeepSeek-V3: 671 B parameters; MLA caches 512 + 64 values a layer: 61 × 576 × 2 bytes.
    let d = row("deepseek-v3");
    assert_eq!((d[2].as_str(), d[4].as_str()), ("671.0", "70272"));
    let json: serde_json::Value =
        serde_json::from_str(&exec(&["profiles", "--output-format", "json"]).expect("runs"))
            .expect("json");
    let models = servesim::spec::bundled::model_names().len()
        + servesim::spec::bundled_hf::bundled_hf().count();
    assert_eq!(json["models"].as_array().map(Vec::len), Some(models));
}

/// bench_serving writes `accept_length` (`avg_spec_accept_length` of `/get_server_info`) into
/// its output-file record; with speculative decoding it is the value the block prints on its
/// "Accept length:" line, without it `null`.
#[test]
fn output_file_carries_the_accept_length_the_block_prints() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("accept-length.jsonl");
    let _ = std::fs::remove_file(&path);
    let file = path.to_str().expect("utf-8 path");
    let common = [
        "run",
        "--model",
        "qwen3-8b",
        "--dataset-name",
        "random",
        "--random-input-len",
        "100",
        "--random-output-len",
        "400",
        "--num-prompts",
        "8",
        // A finite rate: `inf` is written as Python's bare `Infinity`, not JSON.
        "--request-rate",
        "100",
        "--output-file",
        file,
    ];
    let spec = [
        "--speculative-algorithm",
        "EAGLE3",
        "--speculative-draft-model-path",
        "qwen3-8b-eagle3",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
    ];
    let block = exec(&[&common[..], &spec[..]].concat()).expect("runs");
    exec(&common).expect("runs");
    let printed: f64 = block
        .lines()
        .find_map(|l| l.strip_prefix("Accept length:"))
        .expect("the block prints an accept length")
        .trim()
        .parse()
        .unwrap();
    let text = std::fs::read_to_string(&path).expect("written");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let written = lines[0]["accept_length"].as_f64().expect("a number");
    assert!((written - printed).abs() < 0.005, "{written} vs {printed}");
    assert!(lines[1]["accept_length"].is_null());
}

/// Under DP attention `--explain` adds the lockstep step the engine prices: every rank at the
/// representative batch, MLP / MoE and collectives over the ranks' gathered tokens. Gathering
/// eight ranks' tokens can never make the step cheaper than one rank alone, and the line is
/// absent without DP attention.
#[test]
fn explain_prices_the_dp_attention_lockstep_over_the_gathered_tokens() {
    let args = |dp: bool| {
        let mut a = vec![
            "run",
            "--hardware",
            "h200-sxm-141gb",
            "--model",
            "deepseek-v3",
            "--tp",
            "8",
            "--sglang-version",
            "0.4.1",
            "--random-input-len",
            "64",
            "--random-output-len",
            "32",
            "--random-range-ratio",
            "1",
            "--num-prompts",
            "32",
            "--explain",
        ];
        if dp {
            a.push("--enable-dp-attention");
        }
        a
    };
    let out = exec(&args(true)).expect("runs");
    let number_after = |line: &str, key: &str| -> f64 {
        let rest = &line[line.find(key).expect(key) + key.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let decode = out
        .lines()
        .find(|l| l.starts_with("decode step:"))
        .expect("a decode step");
    let reqs = number_after(decode, "decode step:");
    let lines: Vec<&str> = out.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("decode step:"))
        .unwrap();
    let one_rank_ms = number_after(lines[i + 1], "step");
    let lockstep = out
        .lines()
        .find(|l| l.contains("lockstep of 8 DP-attention ranks"))
        .expect("a lockstep line");
    assert_eq!(number_after(lockstep, "over the"), 8.0 * reqs, "{lockstep}");
    let group_ms = number_after(lockstep, "): step");
    assert!(group_ms > one_rank_ms, "{group_ms} vs {one_rank_ms}");
    assert!(!exec(&args(false)).expect("runs").contains("lockstep of"));
}
