//! The held-out sets replayed (never fitted): the public SGLang runs (validation/public) with
//! their radix-cache `prior-runs:`, and GPUStack's performance-lab runs (validation/gpustack)
//! measured with vLLM's client against SGLang and vLLM servers.
use super::*;

/// The public, held-out runs (validation/public): published by others, never fitted on.
fn public_manifest() -> Manifest {
    Manifest::load(&root().join("validation/public/manifest.yaml"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn public_manifest_parses_agrees_with_its_logs_and_every_entry_replays() {
    let m = public_manifest();
    assert!(m.entries.len() >= 20, "{} entries", m.entries.len());
    let mut covered = BTreeSet::new();
    for e in &m.entries {
        let log = parse_log_file(&m.log_path(e)).unwrap_or_else(|x| panic!("{}: {x}", e.id));
        let run = log
            .runs
            .get(e.run)
            .unwrap_or_else(|| panic!("{}: no run {} in {}", e.id, e.run, e.file));
        covered.insert((e.file.clone(), e.run));
        assert_eq!(
            run.args.model.as_deref().unwrap_or(""),
            e.log.model,
            "{}",
            e.id
        );
        assert_eq!(workload_summary(&run.args), e.log.client, "{}", e.id);
        // The manifest's client version prints exactly the lines the source printed.
        let real = labels_of_log(run);
        assert_eq!(labels_of_render(e, run), real, "{}", e.id);
        if let Some(cmd) = &run.server_command {
            let stated = server_flags_from_command(cmd);
            let flags = e.server_flags().unwrap();
            assert_eq!(stated.flags.merged(&flags), flags, "{}: `{cmd}`", e.id);
        }
    }
    // Every result block of every public log has exactly one entry.
    let files: BTreeSet<&str> = m.entries.iter().map(|e| e.file.as_str()).collect();
    let blocks: usize = files
        .iter()
        .map(|f| parse_log_file(&m.dir.join(f)).unwrap().runs.len())
        .sum();
    assert_eq!(covered.len(), blocks);
    assert_eq!(m.entries.len(), blocks);
    // Every entry replays and simulates; accuracy is reported (RESULTS.md), never asserted.
    let v = validate(&m);
    for (r, e) in v.runs.iter().zip(&m.entries) {
        assert_eq!(r.error, None, "{}", r.id);
        assert!(
            r.cells.iter().all(|c| c.real.is_some() && c.sim.is_some()),
            "{}",
            r.id
        );
        // Random lengths are drawn as that client drew them: the source's own totals.
        if r.lengths == Some(LengthSource::Random) {
            assert_eq!(
                r.totals_exact,
                Some(true),
                "{} ({})",
                r.id,
                e.bench_version.value
            );
        }
    }
}

#[test]
fn a_quoted_result_takes_its_arguments_from_the_client_command() {
    let block =
        std::fs::read_to_string(root().join("validation/public/001_cookbook-qwen3-235b-b200.txt"))
            .unwrap();
    let first = block.split("============ Serving").nth(1).unwrap();
    let result = format!("============ Serving{}", first.split("```").next().unwrap());
    let text = format!(
        "python3 -m sglang.launch_server --model x --tp 4\n\
         python3 -m sglang.bench_serving \\\n  --random-input 300 --dataset-name random \\\n  --num-prompt 10 --max-concurrency 1 --seed 7\n\n{result}\n{result}"
    );
    let log = parse_log(&text, "quoted.txt").unwrap();
    assert_eq!(log.runs.len(), 2);
    for run in &log.runs {
        // Both blocks use the one command above them (argparse prefixes, defaults filled in).
        assert_eq!(run.namespace_line, 2);
        assert_eq!(
            workload_summary(&run.args),
            "random 300/1024 ratio 0, 10 prompts, rate inf, max-concurrency 1, seed 7, backend sglang"
        );
        assert_eq!(run.args.warmup_requests, Some(1));
        assert_eq!(
            run.server_command.as_deref(),
            Some("python3 -m sglang.launch_server --model x --tp 4")
        );
    }
    let bad = format!("python3 -m sglang.bench_serving --max-concurrency $C\n{result}");
    let e = parse_log(&bad, "bad.txt").unwrap_err().to_string();
    assert!(
        e.contains("bad.txt") && e.contains("--max-concurrency $C"),
        "{e}"
    );
    let none = parse_log(&result, "none.txt").unwrap_err().to_string();
    assert!(none.contains("sglang.bench_serving"), "{none}");
}

/// GPUStack's performance-lab runs (validation/gpustack): vLLM's client against vLLM (and
/// SGLang) servers on A100 / H100 / H200, published by others, never fitted on.
#[test]
fn gpustack_manifest_parses_agrees_with_its_logs_and_every_entry_replays() {
    use servesim::simulation::vllm::run_vllm;
    use servesim::validate::vllm::entry::{parse_vllm_log, scenario_for_entry, ServerKind};
    let m = Manifest::load(&root().join("validation/gpustack/manifest.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(m.entries.len() >= 50, "{} entries", m.entries.len());
    let mut logs = BTreeMap::new();
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for e in &m.entries {
        let log = logs.entry(e.file.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(m.log_path(e)).unwrap();
            parse_vllm_log(&text, &e.file)
                .unwrap()
                .expect("vLLM blocks")
        });
        let run = &log.runs[e.run];
        let bench = run.bench_command.as_deref().unwrap();
        assert!(
            bench.contains(&format!("--model {} ", e.log.model)),
            "{}: {bench}",
            e.id
        );
        // The block's server command starts the engine the entry selects.
        let kind = log.servers[e.run].as_ref().map(|(k, _)| *k);
        let want = if e.engine() == "vllm" {
            ServerKind::Vllm
        } else {
            ServerKind::Sglang
        };
        assert_eq!(kind, Some(want), "{}", e.id);
        let sc = scenario_for_entry(log, e.run, e, &Overrides::default(), &e.file)
            .unwrap_or_else(|x| panic!("{}: {x}", e.id));
        assert_eq!(
            servesim::validate::vllm::entry::workload_summary(&sc.client),
            e.log.client,
            "{}",
            e.id
        );
        // Simulated with the page's own counts: every request completes; the page's prompts
        // total is at most 1% under the requested one (vLLM re-encodes the random text and may
        // drop a special token), and its output total at most the requested one (a real
        // server may stop early at EOS).
        let sim = run_vllm(&sc).unwrap_or_else(|x| panic!("{}: {x}", e.id));
        let real = |k: &str| run.get(k).unwrap();
        assert_eq!(sim.metrics.completed as f64, real("completed"), "{}", e.id);
        *counts
            .entry((e.engine().to_string(), sc.client.dataset_name.clone()))
            .or_insert(0) += 1;
        if sc.client.dataset_name == "sharegpt" {
            // Lengths from the bundled sample tables: totals are not the log's.
            assert!(bench.contains("--dataset-name sharegpt"), "{}", e.id);
            continue;
        }
        let input = sim.metrics.total_input as f64;
        assert!(
            real("total_input_tokens") <= input && real("total_input_tokens") >= 0.99 * input,
            "{}: {input} vs {}",
            e.id,
            real("total_input_tokens")
        );
        assert_eq!(
            sim.metrics.total_output,
            sc.client.num_prompts * sc.client.random_output_len,
            "{}",
            e.id
        );
        assert!(real("total_output_tokens") <= sim.metrics.total_output as f64);
    }
    // Every random-dataset block of a vLLM server has its entry.
    let random_vllm: usize = logs
        .values()
        .map(|l| {
            l.runs
                .iter()
                .zip(&l.servers)
                .filter(|(r, s)| {
                    r.bench_command
                        .as_deref()
                        .is_some_and(|b| b.contains("--dataset-name random"))
                        && matches!(s, Some((ServerKind::Vllm, _)))
                })
                .count()
        })
        .sum();
    let count = |engine: &str, dataset: &str| counts[&(engine.to_string(), dataset.to_string())];
    assert_eq!(count("vllm", "random"), random_vllm);
    // README.md: the 4 SGLang random blocks (DeepSeek-R1, --enable-dp-attention with dp 1)
    // and the ShareGPT blocks of modelled settings (35 vLLM, 14 SGLang servers).
    assert_eq!(count("sglang", "random"), 4);
    assert_eq!(count("vllm", "sharegpt"), 35);
    assert_eq!(count("sglang", "sharegpt"), 14);
    assert_eq!(m.entries.len(), 60 + 4 + 35 + 14);
    // `validate` replays every entry; accuracy is reported (RESULTS.md), never asserted.
    let v = validate(&m);
    for r in &v.runs {
        assert_eq!(r.error, None, "{}", r.id);
        let e = m.entries.iter().find(|e| e.id == r.id).unwrap();
        assert_eq!(r.engine, e.engine(), "{}", r.id);
        // ShareGPT rows are labelled [sampled].
        assert_eq!(
            r.lengths == Some(LengthSource::Sampled),
            e.log.client.starts_with("sharegpt"),
            "{}",
            r.id
        );
        let with_values = r
            .cells
            .iter()
            .filter(|c| c.real.is_some() && c.sim.is_some())
            .count();
        // vLLM's block prints no E2E latency; the five other headline metrics it does.
        assert_eq!(with_values, 5, "{}", r.id);
    }
}

/// A GPUStack entry's mistakes are caught: the vLLM engine's version is required, an empty
/// `out-of-medians` reason is refused, and an entry selecting the other engine than the
/// block's server command keeps its row with the error.
#[test]
fn gpustack_entries_refuse_missing_versions_and_the_wrong_engine() {
    let text = std::fs::read_to_string(root().join("validation/gpustack/manifest.yaml")).unwrap();
    let start = text.find("  - id: \"qwen3-32b-a100/5\"").unwrap();
    let end = start + 4 + text[start + 4..].find("  # ---").unwrap();
    let entry = format!("entries:\n{}", &text[start..end]);
    let dir = root().join("validation/gpustack");
    let parse = |t: &str| Manifest::parse(t, Path::new("g.yaml"), &dir).map_err(|e| e.to_string());
    let ok = parse(&entry).unwrap();
    assert_eq!(validate(&ok).runs[0].error, None);
    let no_version: String = entry
        .lines()
        .filter(|l| !l.contains("vllm-version:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let e = parse(&no_version).unwrap_err();
    assert!(e.contains("`vllm-version` must be given"), "{e}");
    let empty = entry.replace(
        "    bench-version:",
        "    out-of-medians: \" \"\n    bench-version:",
    );
    let e = parse(&empty).unwrap_err();
    assert!(e.contains("out-of-medians"), "{e}");
    let sglang: String = entry
        .lines()
        .filter(|l| !l.contains("engine: {value: vllm"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace(
            "vllm-version: {value: \"0.11.0\"",
            "sglang-version: {value: \"0.5.5\"",
        );
    let v = validate(&parse(&sglang).unwrap());
    let err = v.runs[0].error.as_deref().unwrap_or("");
    assert!(
        err.contains("starts vLLM but the entry selects sglang"),
        "{err}"
    );
}

/// `prior-runs:` (the cookbook's runs on one server, same seed, no flush): the 10 prompts of
/// P004-00 are the first 10 of P004-01 (numpy draws are sequential; both logs total the same
/// 6101 input tokens over them), so replaying P004-01 after P004-00 finds exactly those 10
/// prompts cached (each but its last token; request 0 is cached by the warm-up either way) and
/// nothing else; its first requests then skip most of the start-up burst's prefill, so the
/// mean TTFT drops.
#[test]
fn prior_runs_make_the_same_index_prompts_of_earlier_runs_cache_hits() {
    use servesim::client::dataset::random::sample_random_lengths;
    use servesim::validate::replay::{scenario_for, with_prior_runs};
    let m = public_manifest();
    let args_of = |id: &str| {
        let e = m.entry(id)?;
        let log = parse_log_file(&m.log_path(e)).ok()?;
        log.runs.get(e.run).map(|r| r.args.clone())
    };
    let first_log = parse_log_file(&m.log_path(m.entry("P004-00").unwrap())).unwrap();
    assert_eq!(first_log.runs[0].metrics.total_input_tokens, 6101);
    let e = m.entry("P004-01").unwrap();
    assert_eq!(
        e.prior_runs.as_ref().map(|p| p.value.clone()),
        Some(vec!["P004-00".to_string()])
    );
    let log = parse_log_file(&m.log_path(e)).unwrap();
    let run = &log.runs[e.run];
    let cold = Overrides::default();
    let warm = with_prior_runs(&cold, e, &run.args, args_of).unwrap();
    assert_eq!(warm.client.prior_runs.as_deref(), Some("10:1000:1000:0"));
    let simulate = |ov: &Overrides| {
        let mut sc = scenario_for(run, Some(e), ov, &e.file).unwrap().scenario;
        sc.record_timeline = true;
        let out = servesim::simulation::run(&sc).unwrap();
        let computed: u64 = out.timeline.iter().map(|s| s.prefill_tokens).sum();
        (computed, out.metrics.ttft_ms.mean)
    };
    let (cold_tokens, cold_ttft) = simulate(&cold);
    let (warm_tokens, warm_ttft) = simulate(&warm);
    let first_len = sample_random_lengths(1, 1, 1000, 1000, 0.0, false)[0].0;
    assert_eq!(cold_tokens - warm_tokens, 6101 - first_len - 9);
    assert!(warm_ttft < cold_ttft, "{warm_ttft} vs {cold_ttft}");
    // A listed entry that is not a `random` run with this run's seed is refused by name.
    let mut bad = e.clone();
    bad.prior_runs.as_mut().unwrap().value = vec!["P003-00".into()];
    let err = with_prior_runs(&cold, &bad, &run.args, args_of)
        .unwrap_err()
        .to_string();
    assert!(err.contains("P004-01") && err.contains("P003-00"), "{err}");
}

/// `servesim replay` of a vLLM-client block measured on an SGLang server reads that server's
/// own launch command (not a `vllm serve` command further up the log): Qwen3-8B blocks with
/// `--cuda-graph-max-bs 8` and `--attention-backend triton`, and a Qwen3-32B SGLang block
/// below `vllm serve ... --max-model-len 32768`, which SGLang has no flag for.
#[test]
fn gpustack_replay_of_an_sglang_block_uses_its_launch_command() {
    use servesim::validate::vllm::block::parse_vllm_blocks;
    use servesim::validate::vllm::replay::{scenario_for, VllmOverrides};
    let blocks = |file: &str| {
        let path = root().join("validation/gpustack").join(file);
        parse_vllm_blocks(&std::fs::read_to_string(path).unwrap(), file).unwrap()
    };
    let ov = |hw: &str, model: &str| VllmOverrides {
        hardware: Some(hw.into()),
        model: Some(model.into()),
        ..Default::default()
    };
    let q8 = blocks("qwen3-8b-h100-latency.txt");
    let sc = |run: usize| scenario_for(&q8[run], &ov("h100-sxm5-80gb", "qwen3-8b")).unwrap();
    let vllm = sc(0);
    assert!(vllm.server.vllm.is_some());
    let graphs = sc(2);
    assert!(graphs.server.vllm.is_none());
    assert_eq!(graphs.server.cuda_graph_max_bs(), 8);
    assert_ne!(sc(1).server.cuda_graph_max_bs(), 8);
    assert_eq!(sc(4).server.attention_backend, "triton");
    assert_eq!(sc(4).client.dataset_name, "sharegpt");
    assert_eq!(sc(4).client.dataset_path, None);
    let q32 = blocks("qwen3-32b-a100.txt");
    let s = scenario_for(&q32[1], &ov("a100-sxm4-80gb", "qwen3-32b")).unwrap();
    assert!(s.server.vllm.is_none());
}

/// DataCrunch's H200 runs (validation/public/009_datacrunch-h200-llama.txt) kept only the
/// client's `--output-file` summary line, so they are checked outside the manifest
/// (scripts/public_jsonl_check.py). Their replay table must stay runnable: the replayed random
/// runs draw the real runs' exact token totals (an independent check of the 0.4.0 client's random
/// lengths, and of the 405B model YAML loading), and servesim's summary line carries every key the
/// real 0.4.0 line has.
#[test]
fn jsonl_summary_check_replays_the_real_totals_and_keys() {
    let text =
        std::fs::read_to_string(root().join("validation/public/009_datacrunch-h200-llama.txt"))
            .unwrap();
    // The jsonl quotes, in order, each a list of records.
    let mut quotes: Vec<Vec<serde_json::Value>> = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("# ----") {
            inside = line.contains("verbatim quote") && line.contains(".jsonl");
            if inside {
                quotes.push(Vec::new());
            }
        } else if inside && line.starts_with('{') {
            quotes
                .last_mut()
                .unwrap()
                .push(serde_json::from_str(line).unwrap());
        }
    }
    assert_eq!(quotes.iter().map(Vec::len).collect::<Vec<_>>(), [7, 6, 5]);
    let out_dir = std::env::temp_dir().join(format!("servesim-jsonl-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    for id in ["D70-r1", "D405-r1"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("replay {id} ")))
            .unwrap_or_else(|| panic!("no replay line {id}"));
        let (head, flags) = line.split_once(" -- ").unwrap();
        let pos: Vec<usize> = head
            .split_whitespace()
            .skip(2)
            .map(|x| x.parse().unwrap())
            .collect();
        let real = &quotes[pos[0] - 1][pos[1]];
        let file = out_dir.join(format!("{id}.jsonl"));
        let _ = std::fs::remove_file(&file);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_servesim"))
            .current_dir(root())
            .arg("run")
            .args(flags.split_whitespace())
            .arg("--output-file")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sim: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&file).unwrap().trim()).unwrap();
        for (key, _) in real.as_object().unwrap() {
            assert!(
                sim.get(key).is_some(),
                "{id}: servesim's line lacks `{key}`"
            );
        }
        for key in ["completed", "total_input_tokens", "total_output_tokens"] {
            assert_eq!(sim[key], real[key], "{id}: {key}");
        }
    }
}

/// Round-robin data parallelism (benchmaq's Llama-3.1-70B TP4×DP2, SGLang 0.5.9): the DP
/// controller hands every generate request, warm-ups included, to the next rank, and each rank
/// has its own radix cache. A run is 1 warm-up + 100 requests, so (p010-benchmaq-notes §2):
/// request 0 lands on the other rank than its warm-up (P011-00 prefills every prompt token, as
/// its log's total), the run just before sits on the other rank (P011-01 finds nothing of
/// P011-00), and two runs back is the same rank (P011-02 finds P011-00's 1024-token prompts,
/// each but its last token, and none of P011-01's longer ones).
#[test]
fn under_dp_round_robin_prior_prompts_are_hits_only_on_their_own_rank() {
    use servesim::client::dataset::random::sample_random_lengths;
    use servesim::validate::replay::{scenario_for, with_prior_runs};
    let m = public_manifest();
    let args_of = |id: &str| {
        let e = m.entry(id)?;
        let log = parse_log_file(&m.log_path(e)).ok()?;
        log.runs.get(e.run).map(|r| r.args.clone())
    };
    let prefilled = |id: &str, with_prior: bool| {
        let e = m.entry(id).unwrap();
        let log = parse_log_file(&m.log_path(e)).unwrap();
        let run = &log.runs[e.run];
        let cold = Overrides::default();
        let ov = match with_prior {
            true => with_prior_runs(&cold, e, &run.args, args_of).unwrap(),
            false => cold,
        };
        let mut sc = scenario_for(run, Some(e), &ov, &e.file).unwrap().scenario;
        assert_eq!((sc.server.dp, sc.server.page_size), (2, 1), "{id}");
        sc.record_timeline = true;
        let out = servesim::simulation::run(&sc).unwrap();
        let computed: u64 = out.timeline.iter().map(|s| s.prefill_tokens).sum();
        (computed, run.metrics.total_input_tokens)
    };
    let (computed, total) = prefilled("P011-00", false);
    assert_eq!(computed, total, "the warm-up's rank is not request 0's");
    assert_eq!(prefilled("P011-01", true).0, prefilled("P011-01", false).0);
    let (warm, _) = prefilled("P011-02", true);
    let (cold, _) = prefilled("P011-02", false);
    // By hand: prompt i of P011-02 (4096-token draws) shares min(L, P) tokens with P011-00's
    // (1024-token draws), less the re-tokenized cut where the lengths differ; bench_serving
    // 0.5.9 counts each Llama prompt one token (the BOS) under its draw, in both runs; and the
    // server computes at least one token of every prompt (a whole-prompt hit recomputes one).
    let p00 = sample_random_lengths(1, 100, 1024, 128, 0.0, false);
    let p02 = sample_random_lengths(1, 100, 4096, 128, 0.0, false);
    let shared: u64 = p00
        .iter()
        .zip(&p02)
        .map(|(a, b)| ((a.0 - 1).min(b.0 - 1) - u64::from(a.0 != b.0)).min(b.0 - 2))
        .sum();
    assert_eq!(cold - warm, shared);
}
