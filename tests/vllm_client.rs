//! vLLM's benchmark client (`--client vllm`): the numpy ports, the random dataset per era and
//! the send times against vectors real numpy printed (scripts/gen_vllm_vectors.py →
//! tests/vectors/vllm_vectors.json, vLLM's own draw lines transcribed), then the printed block
//! and `--save-result` JSON, and the parsers of vLLM's logs and `vllm serve` command lines.
use serde_json::Value;
use servesim::client::rng::{NumpyRandomState, Pcg64};
use servesim::client::vllm::arrivals::{send_times_s, ArrivalParams};
use servesim::client::vllm::flavour::{Script, VllmFlavour};
use servesim::client::vllm::random::{draw, RandomParams};
use servesim::spec::version::Version;
use servesim::spec::vllm_client::RampUp;

fn vectors() -> Value {
    serde_json::from_str(include_str!("vectors/vllm_vectors.json")).unwrap()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn flavour(script: &str, version: &str) -> VllmFlavour {
    let script = if script == "legacy" {
        Script::Legacy
    } else {
        Script::Cli
    };
    VllmFlavour::new(script, version.parse::<Version>().unwrap())
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
