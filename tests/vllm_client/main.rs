//! vLLM's benchmark client (`--client vllm`): the numpy ports, the random dataset per era and
//! the send times against vectors real numpy printed (scripts/gen_vllm_vectors.py →
//! tests/vectors/vllm_vectors.json, vLLM's own draw lines transcribed), then the printed block
//! and `--save-result` JSON (`report.rs`), and the parsers of vLLM's logs and `vllm serve` command lines.
use serde_json::Value;
use servesim::client::rng::{NumpyRandomState, Pcg64};
use servesim::client::vllm::arrivals::{send_times_s, ArrivalParams};
use servesim::client::vllm::flavour::VllmFlavour;
use servesim::client::vllm::random::{draw, RandomParams};
use servesim::spec::vllm_client::RampUp;

mod frontend;
mod report;
use report::{header, sample_metrics};

fn vectors() -> Value {
    serde_json::from_str(include_str!("../vectors/vllm_vectors.json")).unwrap()
}

fn ints(v: &Value) -> Vec<i64> {
    common::json_vec(v, Value::as_i64)
}

fn floats(v: &Value) -> Vec<f64> {
    common::json_vec(v, Value::as_f64)
}

fn flavour(script: &str, version: &str) -> VllmFlavour {
    common::vllm_flavour(script, version)
}

#[test]
fn pcg64_integers_match_numpy_default_rng() {
    let doc = vectors();
    for case in doc["pcg64_integers"].as_array().unwrap() {
        let seed = case["seed"].as_u64().unwrap();
        let mut rng = Pcg64::new(seed);
        for d in case["draws"].as_array().unwrap() {
            let (lo, hi) = (d[0].as_i64().unwrap(), d[1].as_i64().unwrap());
            let want = ints(&d[2]);
            let got = rng.integers(lo, hi, want.len()).unwrap();
            assert_eq!(got, want, "seed {seed} range [{lo}, {hi})");
        }
    }
}

#[test]
fn legacy_gamma_matches_numpy_randomstate() {
    let doc = vectors();
    for case in doc["legacy_gamma"].as_array().unwrap() {
        let seed = case["seed"].as_u64().unwrap() as u32;
        let mut rng = NumpyRandomState::new(seed);
        let want = ints(&case["randint_102_1025"]);
        assert_eq!(rng.randint_n(102, 1025, want.len()), want);
        for g in case["gammas"].as_array().unwrap() {
            let shape = g[0].as_f64().unwrap();
            for (k, want) in floats(&g[1]).into_iter().enumerate() {
                let got = rng.gamma(shape, 0.25);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "seed {seed} shape {shape} #{k}"
                );
            }
        }
        for want in floats(&case["exponential_0_1"]) {
            assert_eq!(rng.exponential(0.1).to_bits(), want.to_bits());
        }
    }
}

#[test]
fn random_lengths_match_vllm_per_era() {
    let doc = vectors();
    let cases = doc["random_lengths"].as_array().unwrap();
    assert!(cases.len() >= 8);
    for c in cases {
        let f = flavour(
            c["script"].as_str().unwrap(),
            c["version"].as_str().unwrap(),
        );
        let p = RandomParams {
            seed: c["seed"].as_u64().unwrap() as u32,
            num_prompts: c["num_prompts"].as_u64().unwrap(),
            input_len: c["input_len"].as_u64().unwrap(),
            output_len: c["output_len"].as_u64().unwrap(),
            prefix_len: c["prefix_len"].as_u64().unwrap(),
            range_ratio: c["range_ratio"].as_f64().unwrap(),
            special_tokens: c["special_tokens"].as_u64().unwrap(),
            vocab_size: c["vocab_size"].as_u64().unwrap(),
        };
        let mut global = NumpyRandomState::new(p.seed);
        let got = draw(&f, &p, &mut global);
        let label = format!("{} {} r={}", c["script"], c["version"], p.range_ratio);
        let ins: Vec<i64> = got
            .lengths
            .iter()
            .map(|&(i, _)| (i - p.prefix_len) as i64)
            .collect();
        let outs: Vec<i64> = got.lengths.iter().map(|&(_, o)| o as i64).collect();
        assert_eq!(ins[..60], ints(&c["inputs"])[..], "{label} inputs");
        assert_eq!(outs[..60], ints(&c["outputs"])[..], "{label} outputs");
        assert_eq!(
            got.offsets[..20],
            ints(&c["offsets"])[..],
            "{label} offsets"
        );
        assert_eq!(
            ins.iter().sum::<i64>(),
            c["sum_input"].as_i64().unwrap(),
            "{label}"
        );
        assert_eq!(
            outs.iter().sum::<i64>(),
            c["sum_output"].as_i64().unwrap(),
            "{label}"
        );
    }
}

#[test]
fn random_lengths_hand_checked_defaults() {
    // vllm-behaviour B.1: CLI 0.33.0 with the defaults (r = 0) and a BOS tokenizer sends
    // 1024 − 1 = 1023 client tokens and exactly 128 output tokens; CLI 0.8.0's default r = 1
    // gives the full 1024.
    let p = RandomParams {
        seed: 0,
        num_prompts: 4,
        input_len: 1024,
        output_len: 128,
        prefix_len: 0,
        range_ratio: 0.0,
        special_tokens: 1,
        vocab_size: 128_000,
    };
    let new = draw(&flavour("cli", "0.33.0"), &p, &mut NumpyRandomState::new(0));
    assert_eq!(new.lengths, vec![(1023, 128); 4]);
    let old = draw(
        &flavour("cli", "0.8.0"),
        &RandomParams {
            range_ratio: 1.0,
            ..p
        },
        &mut NumpyRandomState::new(0),
    );
    assert_eq!(old.lengths, vec![(1024, 128); 4]);
}

#[test]
fn send_times_match_vllm_get_request() {
    let doc = vectors();
    for c in doc["arrivals"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let f = flavour(
            c["script"].as_str().unwrap(),
            c["version"].as_str().unwrap(),
        );
        let n = c["num_prompts"].as_u64().unwrap() as usize;
        let rate = match &c["request_rate"] {
            Value::String(_) => f64::INFINITY,
            v => v.as_f64().unwrap(),
        };
        let ramp_up = c["ramp_up"].as_array().map(|r| {
            let kind = if r[0] == "linear" {
                RampUp::Linear
            } else {
                RampUp::Exponential
            };
            (kind, r[1].as_f64().unwrap(), r[2].as_f64().unwrap())
        });
        let params = ArrivalParams {
            request_rate: rate,
            burstiness: c["burstiness"].as_f64().unwrap(),
            ramp_up,
        };
        // The global state first serves the dataset draws of the eras that share it.
        let d = &c["dataset"];
        let mut global = NumpyRandomState::new(0);
        let p = RandomParams {
            seed: 0,
            num_prompts: n as u64,
            input_len: d["input_len"].as_u64().unwrap(),
            output_len: d["output_len"].as_u64().unwrap(),
            prefix_len: 0,
            range_ratio: d["range_ratio"].as_f64().unwrap(),
            special_tokens: 1,
            vocab_size: 128_000,
        };
        draw(&f, &p, &mut global);
        if f.random_era == servesim::client::vllm::flavour::RandomEra::Pcg64 {
            global = NumpyRandomState::new(0);
        }
        let (sends, end) = send_times_s(&f, n, &params, &mut global).unwrap();
        let want = floats(&c["sends_s"]);
        assert_eq!(sends.len(), want.len(), "{name}");
        for (k, (g, w)) in sends.iter().zip(&want).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "{name} send {k}: {g} vs {w}");
        }
        assert_eq!(
            end.to_bits(),
            c["end_s"].as_f64().unwrap().to_bits(),
            "{name}"
        );
    }
}

#[test]
fn normalised_sends_end_at_n_over_rate() {
    // 0.10.0+: without a ramp-up the last send is at exactly N / rate, and the first request
    // waits its own gap (it is not sent at 0).
    let f = flavour("cli", "0.33.0");
    let p = ArrivalParams {
        request_rate: 8.0,
        burstiness: 1.0,
        ramp_up: None,
    };
    let (sends, end) = send_times_s(&f, 40, &p, &mut NumpyRandomState::new(5)).unwrap();
    assert!((end - 5.0).abs() < 1e-12, "{end}");
    assert!(sends[0] > 0.0);
    assert!(sends.windows(2).all(|w| w[0] <= w[1]));
    // 0.9.x: first at 0; --burstiness inf is refused before 0.11.2.
    let old = flavour("cli", "0.9.2");
    let (sends, _) = send_times_s(&old, 3, &p, &mut NumpyRandomState::new(5)).unwrap();
    assert_eq!(sends[0], 0.0);
    let inf = ArrivalParams {
        burstiness: f64::INFINITY,
        ..p
    };
    assert!(send_times_s(&old, 3, &inf, &mut NumpyRandomState::new(5)).is_err());
    let (sends, _) = send_times_s(&f, 4, &inf, &mut NumpyRandomState::new(5)).unwrap();
    assert_eq!(sends, vec![0.125, 0.25, 0.375, 0.5]);
}

// ---- reading vLLM's logs, saved JSON and command lines ----

use servesim::validate::vllm::block::parse_vllm_blocks;
use servesim::validate::vllm::command::{bench_client_flags, parse_serve_command};
use servesim::validate::vllm::result_json::parse_result_json;

fn validation_file(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/validation/vllm/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn recorded_vllm_logs_parse_with_their_commands() {
    let runs = parse_vllm_blocks(
        &validation_file("v001_pr33743_gemma3_27b_random.txt"),
        "v001",
    )
    .unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!(r.get("completed"), Some(16.0));
    assert_eq!(r.get("failed"), Some(0.0));
    assert_eq!(r.get("total_input_tokens"), Some(16368.0));
    assert_eq!(r.get("max_concurrent_requests"), Some(16.0));
    assert_eq!(r.get("p99_itl_ms"), Some(258.31));
    assert_eq!(r.get("median_tpot_ms"), Some(51.75));
    let cmd = r.bench_command.as_deref().unwrap();
    let parsed = bench_client_flags(cmd);
    assert_eq!(parsed.flags.random_input_len, Some(1024));
    assert_eq!(parsed.flags.random_output_len, Some(350));
    assert_eq!(parsed.flags.num_prompts, Some(16));
    assert_eq!(parsed.model.as_deref(), Some("google/gemma-3-27b-it"));
    assert_eq!(parsed.ignored, vec!["--base-url http://localhost:8000"]);
    // Its totals are what the client draws for these flags with a BOS tokenizer (S = 1):
    // 16 × (1024 − 1) input, 16 × 350 output tokens (CLI 0.14+, r = 0: fixed lengths).
    let d = draw(
        &flavour("cli", "0.15.0"),
        &RandomParams {
            seed: 0,
            num_prompts: 16,
            input_len: 1024,
            output_len: 350,
            prefix_len: 0,
            range_ratio: 0.0,
            special_tokens: 1,
            vocab_size: 262_144,
        },
        &mut NumpyRandomState::new(0),
    );
    let sum_in: u64 = d.lengths.iter().map(|l| l.0).sum();
    let sum_out: u64 = d.lengths.iter().map(|l| l.1).sum();
    assert_eq!((sum_in, sum_out), (16368, 5600));

    let runs = parse_vllm_blocks(
        &validation_file("v000_pr18566_llama31_8b_sharegpt_hf.txt"),
        "v000",
    )
    .unwrap();
    assert_eq!(runs[0].get("total_token_throughput"), Some(14029.44));
    assert_eq!(runs[0].get("failed"), None);
    let serve = parse_serve_command(runs[0].serve_command.as_deref().unwrap());
    assert_eq!(
        serve.model.as_deref(),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );
    assert_eq!(serve.ignored, vec!["--disable-log-requests"]);
    let runs = parse_vllm_blocks(
        &validation_file("v002_ascend1605_qwen3_32b_sharegpt_qps1.txt"),
        "v002",
    )
    .unwrap();
    assert_eq!(runs[0].get("mean_ttft_ms"), Some(297.70));
}

#[test]
fn sglang_blocks_are_not_read_as_vllm_and_bad_numbers_name_the_line() {
    let sglang = "============ Serving Benchmark Result ============\n\
                  Backend:                                 sglang\n\
                  Successful requests:                     3\n\
                  ==================================================\n";
    assert!(parse_vllm_blocks(sglang, "x").unwrap().is_empty());
    let bad = "============ Serving Benchmark Result ============\n\
               Successful requests:                     3\n\
               Benchmark duration (s):                  abc\n";
    let err = parse_vllm_blocks(bad, "log.txt").unwrap_err().to_string();
    assert!(err.contains("log.txt:3") && err.contains("abc"), "{err}");
    let short = "============ Serving Benchmark Result ============\n\
                 Successful requests:                     3\n\
                 ==================================================\n";
    let err = parse_vllm_blocks(short, "log.txt").unwrap_err().to_string();
    assert!(err.contains("duration"), "{err}");
}

#[test]
fn saved_json_reads_back_including_legacy_goodput_key() {
    let m = sample_metrics(&[99.0]);
    let text = servesim::report::vllm::render_json(
        &m,
        &header(f64::INFINITY, Some(4)),
        &flavour("cli", "0.33.0"),
        &Value::Null,
    );
    let runs = parse_result_json(&text, "out.json").unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].get("completed"), Some(16.0));
    assert_eq!(runs[0].get("p99_ttft_ms"), Some(2643.4500000000003));
    assert_eq!(runs[0].request_rate, Some(f64::INFINITY));
    assert_eq!(runs[0].max_concurrency, Some(4));
    // The key order of the rendered object is vLLM's.
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v.is_object());
    let first_keys: Vec<&str> = text
        .lines()
        .skip(1)
        .take(3)
        .map(|l| l.trim().split('"').nth(1).unwrap())
        .collect();
    assert_eq!(first_keys, ["endpoint_type", "backend", "model_id"]);
    let legacy = r#"{"backend": "vllm", "request_rate": 4.0, "duration": 10.0, "completed": 5,
        "total_input_tokens": 50, "total_output_tokens": 20, "request_throughput": 0.5,
        "request_goodput:": 0.4, "output_throughput": 2.0, "total_token_throughput": 7.0,
        "ttfts": [0.1, 0.2]}
{"backend": "vllm", "request_rate": "inf", "duration": 1.0, "completed": 1,
 "total_input_tokens": 5, "total_output_tokens": 2, "request_throughput": 1.0,
 "output_throughput": 2.0, "total_token_throughput": 7.0}"#;
    // Two objects, but the second spans lines: an --append-result file has one per line.
    assert!(parse_result_json(legacy, "r.json").is_err());
    let one_per_line = legacy.replace(",\n        ", ", ").replace(",\n ", ", ");
    let runs = parse_result_json(&one_per_line, "r.json").unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].get("request_goodput"), Some(0.4));
    assert_eq!(runs[1].request_rate, Some(f64::INFINITY));
}

#[test]
fn vllm_serve_command_maps_to_engine_and_sglang_flags() {
    let cmd = "CUDA_VISIBLE_DEVICES=0,1 vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 \
               --max-num-seqs 128 --max-num-batched-tokens=4096 --gpu-memory-utilization 0.85 \
               --no-enable-prefix-caching --enforce-eager --kv-cache-dtype fp8 --block-size 32 \
               --max-model-len 8192 --swap-space 16";
    let s = parse_serve_command(cmd);
    assert_eq!(
        s.model.as_deref(),
        Some("meta-llama/Llama-3.1-70B-Instruct")
    );
    assert_eq!(s.tensor_parallel_size, Some(2));
    assert_eq!(s.max_num_seqs, Some(128));
    assert_eq!(s.max_num_batched_tokens, Some(4096));
    assert_eq!(s.gpu_memory_utilization, Some(0.85));
    assert_eq!(s.enable_prefix_caching, Some(false));
    assert!(s.enforce_eager);
    assert_eq!(s.ignored, vec!["--swap-space 16"]);
    assert_eq!(
        s.engine_args().join(" "),
        "--engine vllm --tp 2 --max-num-seqs 128 --max-num-batched-tokens 4096 \
         --gpu-memory-utilization 0.85 --block-size 32 --max-model-len 8192 \
         --kv-cache-dtype fp8 --no-enable-prefix-caching --enforce-eager"
    );
    let (sglang, unmapped) = s.sglang_args();
    assert_eq!(
        sglang.join(" "),
        "--tp 2 --max-running-requests 128 --chunked-prefill-size 4096 --kv-cache-dtype fp8 \
         --disable-radix-cache --disable-cuda-graph"
    );
    assert_eq!(unmapped.len(), 3);
    let api = parse_serve_command(
        "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B --tensor-parallel-size 4 --max-num-seqs x",
    );
    assert_eq!(api.model.as_deref(), Some("Qwen/Qwen3-8B"));
    assert_eq!(api.tensor_parallel_size, Some(4));
    assert_eq!(api.bad.get("max-num-seqs").map(String::as_str), Some("x"));
}

// ---- the client driving a simulated server ----

#[path = "../common/mod.rs"]
mod common;
use servesim::simulation::vllm::run_vllm;
use servesim::simulation::Scenario;
use servesim::spec::workload::ClientFlags;

fn vllm_scenario(version: &str, extra: impl FnOnce(&mut ClientFlags)) -> Scenario {
    common::vllm_client_scenario(version, |c| {
        c.random_input_len = Some(256);
        c.random_output_len = Some(32);
        extra(c)
    })
}

#[test]
fn vllm_client_totals_and_test_request_by_version() {
    // r = 0: I − S = 255 client tokens and 32 output tokens each; the server sees 256, and
    // CLI 0.20+ reports the server's count (with the BOS).
    let v = run_vllm(&vllm_scenario("0.33.0", |_| {})).unwrap();
    assert_eq!(v.metrics.completed, 16);
    assert_eq!(v.metrics.total_input, 16 * 256);
    assert_eq!(v.metrics.total_output, 16 * 32);
    // 0.14+ sends no test request; 0.13 sends prompt 0 once before the run, which leaves it
    // cached, so the first prefill batch (all 16 arrive at once) is shorter and TTFT drops.
    // Nothing else differs between the two runs (same draws, same send times).
    let old = run_vllm(&vllm_scenario("0.13.0", |_| {})).unwrap();
    let mean_ttft = |r: &servesim::simulation::vllm::VllmRun| r.metrics.summaries[0].mean_ms;
    assert!(
        mean_ttft(&old) < mean_ttft(&v),
        "{} vs {}",
        mean_ttft(&old),
        mean_ttft(&v)
    );
    // Up to 0.19 the client's own count (without the BOS).
    let client_count = run_vllm(&vllm_scenario("0.19.0", |_| {})).unwrap();
    assert_eq!(client_count.metrics.total_input, 16 * 255);
    // Default metrics: TTFT, TPOT, ITL at P99.
    let keys: Vec<&str> = v.metrics.summaries.iter().map(|s| s.key).collect();
    assert_eq!(keys, ["ttft", "tpot", "itl"]);
}

#[test]
fn normalised_arrivals_reach_the_event_loop() {
    // rate 4, 16 requests: the last request is sent at exactly 16/4 = 4 s (0.10+), so the run
    // lasts longer than 4 s; the 0.9.x client sends its first request at 0.
    let v = run_vllm(&vllm_scenario("0.33.0", |c| c.request_rate = Some(4.0))).unwrap();
    assert!(v.metrics.duration_s > 4.0, "{}", v.metrics.duration_s);
    let goodput = run_vllm(&vllm_scenario("0.33.0", |c| {
        c.request_rate = Some(4.0);
        c.vllm.goodput = Some(vec!["ttft:0".into()]);
    }))
    .unwrap();
    assert_eq!(goodput.metrics.request_goodput, Some(0.0));
}

#[test]
fn vllm_client_golden_report() {
    // The golden's SGLang server is 0.5.13.post1 (the default when it was recorded).
    let (code, out, err) = common::servesim(&common::small_h100_run_args(&[
        "--sglang-version",
        "0.5.13.post1",
        "--client",
        "vllm",
        "--bench-version",
        "0.33.0",
        "--num-prompts",
        "64",
        "--random-input-len",
        "128",
        "--random-output-len",
        "16",
        "--request-rate",
        "32",
        "--percentile-metrics",
        "ttft,tpot,itl,e2el",
        "--metric-percentiles",
        "50,99",
    ]));
    assert_eq!(code, 0, "{err}");
    let block = &out[out.find("============ Serving").unwrap()..];
    let golden = include_str!("../golden/vllm-qwen2.5-0.5b-h100-random-64.txt");
    assert_eq!(block, golden);
}

#[test]
fn bad_vllm_client_flags_fail_with_one_line() {
    let run = |extra: &[&str], needles: &[&str]| {
        common::fails_with(&common::vllm_client_run_args(extra), needles);
    };
    run(&["--bench-version", "0.5.0"], &["--bench-version", "0.6.2"]);
    run(&["--burstiness", "0"], &["--burstiness"]);
    run(&["--goodput", "latency:5"], &["--goodput", "latency:5"]);
    run(&["--percentile-metrics", "ttft,foo"], &["foo"]);
    run(&["--metric-percentiles", "101"], &["--metric-percentiles"]);
    run(
        &["--random-range-ratio", "1.0"],
        &["--random-range-ratio", "< 1"],
    );
    common::fails_with(
        &common::small_h100_run_args(&["--client", "vllm-legacy", "--bench-version", "0.11.0"]),
        &["deprecation stub"],
    );
    run(
        &["--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1"],
        &["--ramp-up-end-rps"],
    );
    run(&["--dataset-name", "hf"], &["not modelled"]);
    // vLLM-only flags with the default (sglang) client.
    common::fails_with(
        &common::small_h100_run_args(&["--burstiness", "2"]),
        &["--burstiness", "--client vllm"],
    );
}

#[test]
fn replay_reads_a_vllm_log_and_compares_under_vllms_keys() {
    // v001 states random 1024/350 × 16 at rate inf; with a BOS tokenizer (Llama-3) and the
    // version its manifest entry assumes (client-side input count, before 0.20) the totals are
    // exact: 16368 input, 5600 output tokens.
    let (code, out, err) = common::servesim(&[
        "replay",
        "validation/vllm/v001_pr33743_gemma3_27b_random.txt",
        "--hardware",
        "h100-sxm5-80gb",
        "--model",
        "llama-3.1-8b",
        "--bench-version",
        "0.15.0",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let rows = doc["runs"][0]["metrics"].as_array().unwrap();
    let row = |k: &str| rows.iter().find(|r| r["label"] == k).unwrap();
    assert_eq!(row("total_input_tokens")["sim"], 16368.0);
    assert_eq!(row("total_output_tokens")["sim"], 5600.0);
    assert_eq!(row("completed")["sim"], 16.0);
    assert!(row("p99_itl_ms")["sim"].as_f64().unwrap() > 0.0);
    // Without --hardware: one line naming the flag.
    common::fails_with(
        &[
            "replay",
            "validation/vllm/v001_pr33743_gemma3_27b_random.txt",
            "--model",
            "llama-3.1-8b",
        ],
        &["--hardware"],
    );
}
