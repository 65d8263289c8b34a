//! vLLM's client datasets beyond `random`: the ShareGPT selection per era and the
//! `prefix_repetition` order against vectors real CPython printed
//! (scripts/gen_vllm_sharegpt_vectors.py → tests/vectors/vllm_sharegpt_vectors.json, vLLM's
//! selection re-stated from its sources over the bundled length tables), runs with each
//! dataset, the notes that say which lengths are nominal, and the one-line refusals.
mod common;

use serde_json::Value;
use servesim::client::dataset::sharegpt_table::TokenizerFamily;
use servesim::client::vllm::flavour::VllmFlavour;
use servesim::client::vllm::prefix_repetition;
use servesim::client::vllm::sharegpt::{oversample_of, VllmShareGpt};
use servesim::simulation::vllm::run_vllm;
use servesim::simulation::Scenario;
use servesim::spec::vllm_client::{ClientKind, PrefixRepetition};
use servesim::spec::workload::ClientFlags;

fn vectors() -> Value {
    serde_json::from_str(include_str!("vectors/vllm_sharegpt_vectors.json")).unwrap()
}

fn u64s(v: &Value) -> Vec<u64> {
    common::json_vec(v, Value::as_u64)
}

fn table(name: &str) -> Vec<(u32, u32)> {
    let family = TokenizerFamily::ALL
        .into_iter()
        .find(|f| f.name() == name)
        .unwrap();
    family.table().unwrap().pairs
}

fn flavour(script: &str, version: &str) -> VllmFlavour {
    common::vllm_flavour(script, version)
}

#[test]
fn sharegpt_selection_matches_cpython_per_era() {
    let doc = vectors();
    let cases = doc["sharegpt"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let label = case["label"].as_str().unwrap();
        let f = flavour(
            case["script"].as_str().unwrap(),
            case["version"].as_str().unwrap(),
        );
        let sel = VllmShareGpt {
            num_prompts: case["num_prompts"].as_u64().unwrap(),
            seed: case["seed"].as_u64().unwrap(),
            fixed_output_len: case["sharegpt_output_len"].as_u64(),
            shuffle: !case["disable_shuffle"].as_bool().unwrap(),
            // The era decides the oversampling (none, random.choices, random.choice).
            oversample: oversample_of(&f),
        };
        let rows = sel.select(&table(case["table"].as_str().unwrap()));
        let prompts: Vec<u64> = rows.iter().map(|r| r.0).collect();
        let outputs: Vec<u64> = rows.iter().map(|r| r.1).collect();
        assert_eq!(
            prompts,
            u64s(&case["prompt_lens"]),
            "{label}: prompt lengths"
        );
        assert_eq!(
            outputs,
            u64s(&case["output_lens"]),
            "{label}: output lengths"
        );
    }
    // The two oversampled cases differ only by era (random.choices before 0.11.2, one
    // random.choice per row after): same 880 valid rows, different repeats.
    let (a, b) = (&cases[2], &cases[3]);
    assert_eq!(a["valid"], 880);
    let (pa, pb) = (u64s(&a["prompt_lens"]), u64s(&b["prompt_lens"]));
    assert_eq!(pa[..880], pb[..880]);
    assert_ne!(pa, pb);
}

#[test]
fn prefix_repetition_order_matches_cpython_shuffle() {
    let doc = vectors();
    for case in doc["prefix_repetition"].as_array().unwrap() {
        let p = PrefixRepetition {
            prefix_len: 64,
            suffix_len: 16,
            num_prefixes: case["num_prefixes"].as_u64().unwrap(),
            output_len: 8,
        };
        let n = case["num_prompts"].as_u64().unwrap();
        let seed = case["seed"].as_u64().unwrap();
        let rows = prefix_repetition::rows(&p, n, seed, true, 1, 128_000, None).unwrap();
        let groups: Vec<u64> = rows.iter().map(|r| r.prefix_group.unwrap()).collect();
        assert_eq!(groups, u64s(&case["groups"]), "n={n} seed={seed}");
        // BOS + 64 prefix tokens shared, 16 more per prompt, as the server counts them.
        assert!(rows
            .iter()
            .all(|r| r.prompt_len == 81 && r.prefix_len == 65 && r.output_len == 8));
    }
}

fn scenario(version: &str, extra: impl FnOnce(&mut ClientFlags)) -> Scenario {
    common::vllm_client_scenario(version, extra)
}

#[test]
fn sharegpt_run_sends_the_selected_rows() {
    // Legacy 0.6.3, seed 0, llama3 table: the walk for 16 prompts is the first 16 rows of the
    // vector's 1000 (no oversampling); the counts include the BOS, the client reports them as
    // they are, and every row completes with its own output length.
    let doc = vectors();
    let case = &doc["sharegpt"][0];
    assert_eq!(case["version"], "0.6.3");
    let want_in: u64 = u64s(&case["prompt_lens"])[..16].iter().sum();
    let want_out: u64 = u64s(&case["output_lens"])[..16].iter().sum();
    let v = run_vllm(&scenario("0.6.3", |c| {
        c.dataset_name = Some("sharegpt".into());
        c.vllm.client = Some(ClientKind::VllmLegacy);
    }))
    .unwrap();
    assert_eq!(v.metrics.completed, 16);
    assert_eq!(v.metrics.total_input, want_in);
    assert_eq!(v.metrics.total_output, want_out);
    // CLI 0.33.0 with a fixed output: every request asks for exactly 64 tokens.
    let fixed = run_vllm(&scenario("0.33.0", |c| {
        c.dataset_name = Some("sharegpt".into());
        c.sharegpt_output_len = Some(64);
    }))
    .unwrap();
    assert_eq!(fixed.metrics.total_output, 16 * 64);
    assert!(fixed
        .output
        .notes
        .iter()
        .any(|n| n.contains("SAMPLE of ShareGPT")));
}

#[test]
fn prefix_repetition_run_has_floor_n_over_prefixes_requests() {
    // 22 prompts over 4 prefixes: vLLM builds 4 × (22 // 4) = 20 requests of 64 + 16 tokens.
    let set = |c: &mut ClientFlags| {
        c.num_prompts = Some(22);
        c.dataset_name = Some("prefix_repetition".into());
        c.vllm.prefix_repetition_prefix_len = Some(64);
        c.vllm.prefix_repetition_suffix_len = Some(16);
        c.vllm.prefix_repetition_num_prefixes = Some(4);
        c.vllm.prefix_repetition_output_len = Some(8);
        c.request_rate = Some(50.0);
    };
    let v = run_vllm(&scenario("0.33.0", set)).unwrap();
    assert_eq!(v.metrics.completed, 20);
    // 0.20+ reports the server's count (with the BOS), 0.19 the client's own.
    assert_eq!(v.metrics.total_input, 20 * 81);
    assert_eq!(v.metrics.total_output, 20 * 8);
    let old = run_vllm(&scenario("0.19.0", set)).unwrap();
    assert_eq!(old.metrics.total_input, 20 * 80);
}

#[test]
fn random_runs_say_their_lengths_are_nominal() {
    let note = |version: &str| -> String {
        let v = run_vllm(&scenario(version, |c| {
            c.random_input_len = Some(64);
            c.random_output_len = Some(4);
        }))
        .unwrap();
        v.output
            .notes
            .iter()
            .find(|n| n.starts_with("random dataset"))
            .cloned()
            .unwrap()
    };
    assert!(note("0.33.0").contains("pads or trims"));
    assert!(note("0.11.0").contains("without padding"));
    assert!(note("0.8.0").contains("without re-encoding"));
    let (code, _, err) = common::servesim(&common::vllm_client_run_args(&[
        "--random-input-len",
        "32",
        "--random-output-len",
        "4",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: random dataset") && err.contains("nominal"),
        "{err}"
    );
}

#[test]
fn unmodelled_datasets_and_flags_fail_with_one_line() {
    let run = |extra: &[&str], needles: &[&str]| {
        common::fails_with(&common::vllm_client_run_args(extra), needles);
    };
    run(
        &["--dataset-name", "hf"],
        &[
            "`hf` is not modelled",
            "random, sharegpt, prefix_repetition, trace",
        ],
    );
    run(
        &["--dataset-name", "sonnet"],
        &["`sonnet`", "chat template"],
    );
    run(&["--dataset-name", "nope"], &["nope", "prefix_repetition"]);
    run(
        &["--dataset-name", "sharegpt", "--bench-version", "0.9.0"],
        &["accepts only --dataset-name random"],
    );
    run(
        &[
            "--dataset-name",
            "prefix_repetition",
            "--bench-version",
            "0.10.0",
        ],
        &["0.10.1"],
    );
    run(
        &["--dataset-name", "prefix_repetition"],
        &["num_prefixes (10)"],
    );
    run(
        &[
            "--dataset-name",
            "sharegpt",
            "--disable-shuffle",
            "--bench-version",
            "0.11.0",
        ],
        &["--disable-shuffle", "0.11.2"],
    );
    run(
        &["--no-oversample", "--bench-version", "0.10.1"],
        &["--no-oversample", "0.11.0"],
    );
    // The SGLang client has no such flags.
    common::fails_with(
        &common::small_h100_run_args(&["--disable-shuffle"]),
        &["--disable-shuffle", "--client vllm"],
    );
}

#[test]
fn bench_commands_with_the_new_dataset_flags_replay() {
    use servesim::validate::vllm::command::bench_client_flags;
    let b = bench_client_flags(
        "vllm bench serve --model m --dataset-name prefix_repetition \
         --prefix-repetition-prefix-len 512 --prefix-repetition-suffix-len 64 \
         --prefix-repetition-num-prefixes 5 --prefix-repetition-output-len 32 \
         --disable-shuffle --no-oversample --num-prompts 50",
    );
    assert!(
        b.bad.is_empty() && b.ignored.is_empty(),
        "{:?} {:?}",
        b.bad,
        b.ignored
    );
    let v = &b.flags.vllm;
    assert_eq!(v.prefix_repetition_prefix_len, Some(512));
    assert_eq!(v.prefix_repetition_suffix_len, Some(64));
    assert_eq!(v.prefix_repetition_num_prefixes, Some(5));
    assert_eq!(v.prefix_repetition_output_len, Some(32));
    assert!(v.disable_shuffle && v.no_oversample);
    assert_eq!(b.flags.num_prompts, Some(50));
}

#[test]
fn oversampled_repeats_share_their_prompt_with_the_original() {
    // The vector's CLI 0.33.0 case: 880 pairs pass with --sharegpt-output-len 2040 and 120
    // are drawn again by random.choice. A repeat is the same prompt text, so it and its
    // original form one prefix group over the whole prompt (a prefix cache serves it).
    let doc = vectors();
    let case = &doc["sharegpt"][3];
    assert_eq!(case["version"], "0.33.0");
    let sc = scenario("0.33.0", |c| {
        c.dataset_name = Some("sharegpt".into());
        c.num_prompts = Some(1000);
        c.seed = Some(42);
        c.sharegpt_output_len = Some(2040);
    });
    let w = servesim::client::vllm::workload(&sc.client, &sc.model).unwrap();
    let prompts: Vec<u64> = w.rows.iter().map(|r| r.prompt_len).collect();
    assert_eq!(prompts, u64s(&case["prompt_lens"]));
    for r in &w.rows[880..] {
        let g = r.prefix_group.expect("a repeat has a group") as usize;
        assert!(g < 880);
        assert_eq!(w.rows[g].prefix_group, r.prefix_group);
        assert_eq!(
            (r.prefix_len, w.rows[g].prompt_len),
            (r.prompt_len, r.prompt_len)
        );
    }
    // Rows never drawn again have no group.
    let grouped = w.rows[..880]
        .iter()
        .filter(|r| r.prefix_group.is_some())
        .count();
    assert!(grouped > 0 && grouped <= 120, "{grouped}");
    assert!(w
        .notes
        .iter()
        .any(|n| n.contains("only 880 pairs") && n.contains("120 repeats")));
}
