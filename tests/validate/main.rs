//! Validation against the recorded runs: the manifest covers all 31 results and agrees with
//! the logs, replays reproduce the logs' token totals exactly (seed 001, every fixed-length
//! run, the labelled ShareGPT stand-in), `validate` keeps going past broken entries and is
//! deterministic, malformed logs given to `replay` are errors and never panics, and the
//! README's accuracy section is the current output of `servesim validate --format markdown`.
//! The held-out sets (public SGLang runs, GPUStack) in `public.rs`.
use servesim::calibrate::report::readme_markdown;
use servesim::metrics::BenchMetrics;
use servesim::report::{text, ReportHeader};
use servesim::validate::compare::{simulate_run, validate, Validation};
use servesim::validate::logparse::{parse_log, parse_log_file, ParsedLog};
use servesim::validate::manifest::Manifest;
use servesim::validate::render::{
    readme_section, validation_json, validation_text, README_COMMAND,
};
use servesim::validate::replay::{
    infer_bench_version, model_from_path, server_flags_from_command, workload_summary,
    LengthSource, Overrides,
};
use servesim::validate::sampled;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod public;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifest() -> &'static Manifest {
    static M: OnceLock<Manifest> = OnceLock::new();
    M.get_or_init(|| {
        Manifest::load(&root().join("validation/manifest.yaml")).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn logs() -> &'static BTreeMap<String, ParsedLog> {
    static L: OnceLock<BTreeMap<String, ParsedLog>> = OnceLock::new();
    L.get_or_init(|| {
        let files: BTreeSet<&str> = manifest().entries.iter().map(|e| e.file.as_str()).collect();
        files
            .into_iter()
            .map(|f| {
                (
                    f.to_string(),
                    parse_log_file(&root().join("validation").join(f)).unwrap(),
                )
            })
            .collect()
    })
}

fn validation() -> &'static Validation {
    static V: OnceLock<Validation> = OnceLock::new();
    V.get_or_init(|| validate(manifest()))
}

fn hardware(name: &str) -> Overrides {
    Overrides {
        hardware: Some(name.into()),
        ..Overrides::default()
    }
}

#[test]
fn manifest_covers_every_result_once_and_agrees_with_the_logs() {
    let m = manifest();
    assert_eq!(m.entries.len(), 31);
    let total: usize = logs().values().map(|l| l.runs.len()).sum();
    assert_eq!(total, 31, "the five logs hold 31 results");
    let covered: BTreeSet<(String, usize)> =
        m.entries.iter().map(|e| (e.file.clone(), e.run)).collect();
    assert_eq!(covered.len(), 31);
    for e in &m.entries {
        let run = logs()[&e.file]
            .runs
            .get(e.run)
            .unwrap_or_else(|| panic!("{}: no run {} in {}", e.id, e.run, e.file));
        assert_eq!(
            run.args.model.as_deref(),
            Some(e.log.model.as_str()),
            "{}",
            e.id
        );
        assert_eq!(workload_summary(&run.args), e.log.client, "{}", e.id);
        // The flags the log's launch command states are in the manifest with the same value.
        let flags = e.server_flags().unwrap();
        if let Some(cmd) = &run.server_command {
            let stated = server_flags_from_command(cmd);
            assert!(stated.bad.is_empty(), "{}: {:?}", e.id, stated.bad);
            assert_eq!(
                stated.flags.merged(&flags),
                flags,
                "{}: manifest disagrees with `{cmd}`",
                e.id
            );
        }
        assert!(
            flags.tp.is_some() && flags.sglang_version.is_some(),
            "{}",
            e.id
        );
        // The manifest's client version is the one the printed layout points to.
        let (inferred, why) = infer_bench_version(&run.metrics, run.client_style, &run.args);
        assert_eq!(
            inferred, e.bench_version.value,
            "{}: layout says {inferred} ({why})",
            e.id
        );
        // Nothing here states the GPU, except 002's image tag.
        assert_eq!(e.hardware.assumed.is_some(), e.id != "002", "{}", e.id);
    }
}

/// Labels of a rendered or recorded result block, lower-cased.
/// The metric labels the real tool printed in a log (lower-cased).
fn labels_of_log(run: &servesim::validate::logparse::ParsedRun) -> BTreeSet<String> {
    run.metrics
        .all
        .keys()
        .chain(run.metrics.text.keys())
        .map(|k| k.to_lowercase())
        .collect()
}

fn labels_of_render(
    bench: &servesim::validate::manifest::Entry,
    run: &servesim::validate::logparse::ParsedRun,
) -> BTreeSet<String> {
    let header = ReportHeader {
        backend: run.args.backend.clone(),
        request_rate: run.args.request_rate,
        max_concurrency: run.args.max_concurrency,
        bench_version: bench.bench_version.value,
    };
    text::render(&BenchMetrics::default(), &header)
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(l, _)| l.trim().to_lowercase())
        .filter(|l| !l.starts_with('='))
        .collect()
}

#[test]
fn bench_version_prints_the_same_lines_as_the_log() {
    for e in &manifest().entries {
        let run = &logs()[&e.file].runs[e.run];
        let real = labels_of_log(run);
        assert_eq!(
            labels_of_render(e, run),
            real,
            "{}: bench version {}",
            e.id,
            e.bench_version.value
        );
    }
}

#[test]
fn seed_001_replays_to_the_token() {
    let e = manifest().entries.iter().find(|e| e.id == "001").unwrap();
    let run = &logs()[&e.file].runs[0];
    let (replay, out) = simulate_run(run, Some(e), &Overrides::default(), &e.file).unwrap();
    assert_eq!(replay.lengths, LengthSource::Random);
    assert_eq!(
        (
            out.metrics.total_input_tokens,
            out.metrics.total_output_tokens
        ),
        (5661, 1653)
    );
    assert_eq!(out.metrics.completed, 200);
}

#[test]
fn every_random_run_reproduces_its_totals() {
    let v = validation();
    let mut fixed = 0;
    for (r, e) in v.runs.iter().zip(&manifest().entries) {
        let args = &logs()[&e.file].runs[e.run].args;
        if args.dataset_name == "random" {
            assert_eq!(r.lengths, Some(LengthSource::Random), "{}", r.id);
            assert_eq!(r.totals_exact, Some(true), "{}: {:?}", r.id, r.error);
            fixed += usize::from(args.random_range_ratio == Some(1.0));
        }
    }
    assert_eq!(
        fixed, 24,
        "000, 002, 18 runs of 003 and 4 of 004 have fixed lengths"
    );
}

#[test]
fn sharegpt_runs_use_the_bundled_sample_and_are_labelled() {
    let v = validation();
    let sampled: Vec<_> = v
        .runs
        .iter()
        .filter(|r| r.lengths == Some(LengthSource::Sampled))
        .collect();
    assert_eq!(
        sampled.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ["003-00", "003-04", "003-08", "003-12", "003-16", "003-20"]
    );
    let tag = format!("[{}]", sampled::LABEL);
    for out in [validation_text(v), readme_markdown(v)] {
        for r in &v.runs {
            let line = out
                .lines()
                .find(|l| {
                    l.contains(&format!(" {} ", r.id)) || l.starts_with(&format!("{} ", r.id))
                })
                .unwrap_or_else(|| panic!("no line for {}", r.id));
            assert_eq!(
                line.contains(&tag),
                r.lengths == Some(LengthSource::Sampled),
                "{line}"
            );
        }
    }
    assert!(validation_json(v).contains("\"sampled\""));
}

#[test]
fn every_entry_simulates_in_manifest_order() {
    let v = validation();
    let ids: Vec<&str> = manifest().entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        v.runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ids
    );
    for r in &v.runs {
        assert_eq!(r.error, None, "{}", r.id);
        assert!(
            r.cells.iter().all(|c| c.real.is_some() && c.sim.is_some()),
            "{}",
            r.id
        );
    }
    let groups: Vec<&str> = v.summary.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(groups, ["all", "ampere", "ascend", "blackwell", "hopper"]);
    assert_eq!(v.summary[0].runs, 31);
}

#[test]
fn validate_is_deterministic() {
    let again = validate(manifest());
    assert_eq!(validation_text(&again), validation_text(validation()));
    assert_eq!(validation_json(&again), validation_json(validation()));
}

/// The manifest text of entry `id`, with `edit` applied, as a one-entry manifest.
fn one_entry(id: &str, edit: impl Fn(String) -> String) -> String {
    let text = std::fs::read_to_string(root().join("validation/manifest.yaml")).unwrap();
    let start = text.find(&format!("  - id: \"{id}\"")).unwrap();
    let end = text[start + 4..]
        .find("  - id: ")
        .map_or(text.len(), |k| start + 4 + k);
    format!("entries:\n{}", edit(text[start..end].to_string()))
}

fn parse_manifest(text: &str) -> Result<Manifest, String> {
    Manifest::parse(text, Path::new("m.yaml"), &root().join("validation"))
        .map_err(|e| e.to_string())
}

#[test]
fn validate_keeps_rows_that_fail() {
    let ok = one_entry("001", |s| s);
    let bad_run = one_entry("001", |s| {
        s.replace("id: \"001\"", "id: \"x1\"")
            .replace("run: 0", "run: 7")
    });
    let impossible = one_entry("003-00", |s| {
        s.replace("id: \"003-00\"", "id: \"x2\"")
            .replace("value: qwen3-8b", "value: qwen3-coder-480b-a35b")
    });
    let missing = one_entry("001", |s| {
        s.replace("id: \"001\"", "id: \"x3\"")
            .replace("001_60470e8ed6145649.txt", "nope.txt")
    });
    let strip = |s: String| s.trim_start_matches("entries:\n").to_string();
    let text = format!(
        "{ok}{}{}{}",
        strip(bad_run),
        strip(impossible),
        strip(missing)
    );
    let v = validate(&parse_manifest(&text).unwrap());
    let errors: Vec<Option<&str>> = v.runs.iter().map(|r| r.error.as_deref()).collect();
    assert_eq!(errors[0], None);
    assert!(errors[1].unwrap().contains("no run 7"), "{errors:?}");
    assert!(errors[2].unwrap().contains("weights"), "{errors:?}");
    assert!(errors[3].unwrap().contains("nope.txt"), "{errors:?}");
    let out = validation_text(&v);
    assert!(out.contains("x2: error: "), "{out}");
    assert_eq!(v.summary[0].metrics[0].n, 1);
}

#[test]
fn manifest_errors_name_the_entry_and_field() {
    let cases = [
        (
            one_entry("001", |s| {
                s.replace("    run: 0\n", "    run: 0\n    fudge: 1.2\n")
            }),
            "fudge",
        ),
        (
            one_entry("001", |s| {
                s.replace(
                    "assumed: \"not recorded; a 0.5B",
                    "stated: \"x\", assumed: \"not recorded; a 0.5B",
                )
            }),
            "both",
        ),
        (
            one_entry("001", |s| {
                s.replace("      tp: {value: 1, assumed: \"not recorded; a 0.5B model is served on one GPU\"}\n", "")
            }),
            "`tp` must be given",
        ),
        (
            one_entry("001", |s| {
                s.replace(
                    "    server:\n",
                    "    server:\n      speed-up: {value: 2, assumed: \"no\"}\n",
                )
            }),
            "speed-up",
        ),
        (
            one_entry("001", |s| {
                s.replace(
                    "{assumed: \"server flags not recorded: SGLang defaults\"}",
                    "{}",
                )
            }),
            "one-line reason",
        ),
        (
            format!(
                "{}{}",
                one_entry("001", |s| s),
                one_entry("001", |s| s.replace("id: \"001\"", "id: \"dup\""))
                    .trim_start_matches("entries:\n")
            ),
            "listed twice",
        ),
        ("entries: 3\n".to_string(), "m.yaml"),
    ];
    for (text, want) in cases {
        let e = parse_manifest(&text).expect_err(want);
        assert!(e.contains(want) && e.contains("m.yaml"), "{want}: {e}");
    }
    // Semantic errors carry the entry's line.
    let e = parse_manifest(&cases_line_text()).unwrap_err();
    assert!(e.starts_with("m.yaml:2:"), "{e}");
}

fn cases_line_text() -> String {
    one_entry("001", |s| {
        s.replace(
            "assumed: \"not recorded; a 0.5B",
            "stated: \"x\", assumed: \"not recorded; a 0.5B",
        )
    })
}

/// Runs the binary; returns (exit code, stderr).
fn servesim(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_servesim"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("servesim-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn malformed_logs_are_errors_not_panics() {
    let seed = std::fs::read_to_string(root().join("validation/001_60470e8ed6145649.txt")).unwrap();
    let cut = &seed[..seed.find("Mean ITL (ms)").unwrap()];
    let only_unknown = seed
        .lines()
        .map(|l| {
            if l.starts_with("Namespace(") {
                "Namespace(brand_new=1, other={'a': [1]})"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .replace("benchmark_args=Namespace(", "x=(");
    let foreign_dataset = seed.replace("dataset_name='random'", "dataset_name='mooncake'");
    let binary: Vec<u8> = (0..2048u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let cases: [(&str, &[u8], &str); 5] = [
        ("cut.txt", cut.as_bytes(), "closing"),
        ("unknown.txt", only_unknown.as_bytes(), "Namespace"),
        ("dataset.txt", foreign_dataset.as_bytes(), "mooncake"),
        ("empty.txt", b"", "no bench_serving result block"),
        ("binary.bin", &binary, "binary"),
    ];
    for (name, bytes, want) in cases {
        let p = temp(name, bytes);
        let (code, err) = servesim(&[
            "replay",
            p.to_str().unwrap(),
            "--hardware",
            "h100-sxm5-80gb",
        ]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(
            err.starts_with("error:") && err.contains(want),
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(temp("x", b"").parent().unwrap());
    // Extra fields next to the known ones are kept aside and do not stop a replay.
    let extra = seed.replace(
        "Namespace(backend=",
        "Namespace(brand_new_flag={'a': (1, 2)}, backend=",
    );
    let log = parse_log(&extra, "extra").unwrap();
    assert!(log.runs[0].args.other.contains_key("brand_new_flag"));
    assert!(simulate_run(&log.runs[0], None, &hardware("h100-sxm5-80gb"), "extra").is_ok());
}

#[test]
fn a_users_log_needs_hardware_and_maps_obvious_models() {
    let seed = std::fs::read_to_string(root().join("validation/001_60470e8ed6145649.txt")).unwrap();
    let log = parse_log(&seed, "mine.txt").unwrap();
    let e = simulate_run(&log.runs[0], None, &Overrides::default(), "mine.txt")
        .unwrap_err()
        .to_string();
    assert!(e.contains("--hardware") && e.contains("mine.txt"), "{e}");
    let (replay, out) =
        simulate_run(&log.runs[0], None, &hardware("h100-sxm5-80gb"), "mine.txt").unwrap();
    assert_eq!(replay.scenario.model.name, "qwen2.5-0.5b");
    assert_eq!(replay.scenario.client.bench_version.to_string(), "0.5.8");
    assert_eq!(out.metrics.total_input_tokens, 5661);
    let renamed = parse_log(
        &seed.replace("models/qwen2.5-0.5b", "models/my-finetune"),
        "mine.txt",
    )
    .unwrap();
    let e = simulate_run(
        &renamed.runs[0],
        None,
        &hardware("h100-sxm5-80gb"),
        "mine.txt",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--model") && e.contains("my-finetune"), "{e}");
    // Command-line flags win over the manifest.
    let m = manifest()
        .entries
        .iter()
        .find(|e| e.id == "004-02")
        .unwrap();
    let server = servesim::spec::server::ServerFlags {
        max_running_requests: Some(8),
        mem_fraction_static: Some(0.93),
        ..Default::default()
    };
    let ov = Overrides {
        server,
        ..hardware("h20-96gb")
    };
    let (replay, _) = simulate_run(&logs()[&m.file].runs[2], Some(m), &ov, &m.file).unwrap();
    assert_eq!(
        (
            replay.scenario.hardware.name.as_str(),
            replay.scenario.server.max_running_requests
        ),
        ("h20-96gb", 8)
    );
}

#[test]
fn launch_commands_and_model_paths() {
    let c = server_flags_from_command("python3 -m sglang.launch_server --model-path /m/ --tp 8 --trust-remote --attention-backend flashinfer --disable-radix --mem-fraction-static=0.85 --chunked-prefill-size -1 --dp 2");
    assert_eq!(c.flags.tp, Some(8));
    assert_eq!(c.flags.attention_backend.as_deref(), Some("flashinfer"));
    assert!(c.flags.disable_radix_cache);
    assert_eq!(c.flags.mem_fraction_static, Some(0.85));
    assert_eq!(c.flags.chunked_prefill_size, Some(-1));
    assert_eq!(c.ignored, ["--model-path /m/", "--trust-remote", "--dp 2"]);
    let bad = server_flags_from_command("python3 -m sglang.launch_server --tp ${TP} --disable");
    assert!(
        bad.bad.contains_key("tp") && bad.ignored == ["--disable"],
        "{bad:?}"
    );
    assert_eq!(
        server_flags_from_command("--tp-size 4 --max-running-requests 64")
            .flags
            .max_running_requests,
        Some(64)
    );
    for (path, want) in [
        ("Qwen/Qwen3-8B", Some("qwen3-8b")),
        ("openai/gpt-oss-120b", Some("gpt-oss-120b")),
        ("/dev/shm/DeepSeek-V3-0324/", Some("deepseek-v3")),
        (
            "/root/models/Qwen3-Coder-480B-A35B-Instruct-w8a8-QuaRot",
            Some("qwen3-coder-480b-a35b"),
        ),
        (
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            Some("llama-3.1-8b"),
        ),
        ("Qwen/Qwen3-80B", None),
        ("", None),
    ] {
        assert_eq!(model_from_path(path), want, "{path}");
    }
}

#[test]
fn readme_accuracy_section_is_current() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let committed = readme_section(&readme).unwrap();
    let current = readme_markdown(validation());
    assert!(
        committed == current,
        "README.md's accuracy section is stale; regenerate it with `{README_COMMAND}`"
    );
}
