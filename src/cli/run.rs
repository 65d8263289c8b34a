//! `servesim run`: one scenario (the bundled default, a scenario file, flags) → the report
//! bench_serving would print, as text or JSON; `--stats` adds the simulation's own cost.
use super::print::{preamble, stats_text};
use crate::error::Result;
use crate::metrics::record::RunRecord;
use crate::report::jsonl::{self, LineFacts, RequestDetails};
use crate::report::{json, text};
use crate::simulation::explain::{explain_text, steps_text, StepSpec};
use crate::simulation::{run as simulate, run_with_record, RunOutput, Scenario};
use crate::spec::workload::ScenarioFlags;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "A pasted command line runs as is: `servesim run [FLAGS] -- python -m \
sglang.bench_serving ...` (and/or `python -m sglang.launch_server ...`, joined by && or newlines, \
quoted as one argument if it holds them). Its flags take bench_serving's defaults (sharegpt, no \
concurrency cap), hardware is the default profile unless FLAGS give --hardware, and FLAGS \
override the pasted values."
)]
pub struct RunArgs {
    /// Scenario file (default: the bundled workloads/default.yaml, random 1024/1024, 1000
    /// prompts, --max-concurrency 64). Flags override it field by field; a finite
    /// --request-rate also drops the bundled default's concurrency cap (bench_serving has none
    /// unless --max-concurrency is given).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags,
    /// text (bench_serving's layout) or json (bench_serving's output-file keys).
    #[arg(long, default_value = "text")]
    pub output_format: String,
    /// Print the simulation's own cost (wall time, events, steps) to stderr.
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub sim: super::SimArgs,
    /// After the report, print one representative decode step and one prefill step of the run
    /// (decode at the run's mean batch and mean context, prefill one chunk of mean-length
    /// prompts) broken into GEMM, attention, MoE, all-reduce, LM head, overheads and CPU, with
    /// the cost backend and the tables or constants that priced each.
    #[arg(long)]
    pub explain: bool,
    /// Price named steps instead of running: `decode:BxL` (B requests decoding over L context
    /// tokens each, CUDA-graph padded) or `prefill:BxL` (one unchunked extend of B prompts of
    /// L tokens, as `sglang.bench_one_batch` runs it); repeatable. Prints each step's
    /// breakdown as --explain does, and simulates nothing.
    #[arg(long, value_name = "STEP")]
    pub explain_step: Vec<StepSpec>,
    #[command(flatten)]
    pub output_file: OutputFileArgs,
    #[command(flatten)]
    pub ignored: super::bench_compat::IgnoredBenchFlags,
    #[command(flatten)]
    pub refused: super::bench_compat::RefusedBenchFlags,
    #[command(flatten)]
    pub vllm_bench: super::vllm_bench_compat::VllmBenchFlags,
    /// A pasted `python -m sglang.bench_serving ...` and/or `sglang.launch_server ...`
    /// command line (expanded before parsing; see below).
    #[arg(last = true, value_name = "COMMAND")]
    pub pasted: Vec<String>,
}

/// bench_serving's result file.
#[derive(clap::Args, Debug, Default)]
pub struct OutputFileArgs {
    /// Append one JSON line per run to FILE with bench_serving's keys (its `--output-file`).
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// With --output-file: add the per-request arrays (input_lens, output_lens, ttfts, itls,
    /// generated_texts, errors), as bench_serving's `--output-details`.
    #[arg(long)]
    pub output_details: bool,
    /// A tag written to the output file's `tag` key (bench_serving 0.5.x).
    #[arg(long)]
    pub tag: Option<String>,
}

pub fn run(a: &RunArgs, out_w: &mut dyn Write) -> Result<()> {
    a.refused.check()?;
    // Output paths are checked before the simulation, not after it.
    if let Some(p) = &a.output_file.output_file {
        super::print::check_output_file("--output-file", p)?;
    }
    if let Some(p) = &a.sim.timeline {
        super::print::check_output_file("--timeline", p)?;
    }
    let sc = super::scenario(a.scenario.as_deref(), &a.flags, &a.sim)?;
    if !["text", "json"].contains(&a.output_format.as_str()) {
        return Err(crate::error::Error::Unknown {
            kind: "output format",
            name: a.output_format.clone(),
            available: "text, json".into(),
        });
    }
    if !a.explain_step.is_empty() {
        return super::print::emit(out_w, &steps_text(&sc, &a.explain_step)?);
    }
    a.vllm_bench.check(sc.client.kind.is_vllm())?;
    let wall = Instant::now();
    if sc.client.kind.is_vllm() {
        return run_vllm_client(a, &sc, out_w, wall);
    }
    let pb = super::print::spinner(a.output_format == "json", "simulating");
    let result = if a.output_file.output_details {
        run_with_record(&sc).map(|(out, record)| (out, Some(request_details(&record))))
    } else {
        simulate(&sc).map(|out| (out, None))
    };
    pb.finish_and_clear();
    let (out, details) = result?;
    print_notes(None, &sc, &out);
    let wall_s = wall.elapsed().as_secs_f64();
    crate::report::timeline::write(
        &out.timeline,
        a.sim.timeline.as_deref(),
        a.sim.plot.as_deref(),
    )?;
    let report = if a.output_format == "json" {
        format!(
            "{}\n",
            json::render(&out.metrics, &sc.header(), &extra(&sc, &out))
        )
    } else {
        format!(
            "{}{}{}\n",
            sc.pd.as_ref().map_or(String::new(), |pd| pd.summary()),
            preamble(&sc, &out),
            text::render(&out.metrics, &sc.header()).trim_end()
        )
    };
    super::print::emit(out_w, &report)?;
    if let Some(path) = &a.output_file.output_file {
        let facts = LineFacts {
            header: &sc.header(),
            client: &sc.client,
            tag: a.output_file.tag.as_deref(),
            // In place of SGLang's /get_server_info: the simulated deployment.
            server_info: serde_json::json!({
                "hardware": sc.hardware.name,
                "model": sc.model.name,
                "server": sc.server,
            }),
        };
        append(path, &jsonl::line(&out.metrics, &facts, details.as_ref()))?;
    }
    if a.explain {
        super::print::emit(out_w, &explain_text(&sc, &out)?)?;
    }
    if a.stats {
        eprint!("{}", stats_text(&out, wall_s));
        if let Some(pd) = &out.pd {
            eprint!("{}", pd.text());
        }
    }
    Ok(())
}

/// The run's `note:` lines on stderr: the client's own (`lead`), the simulation's, and whether
/// its typical steps left the measured kernel tables (priced once, after the run).
fn print_notes(lead: Option<&str>, sc: &Scenario, out: &RunOutput) {
    let beyond = crate::simulation::caveats::beyond_tables(sc, out);
    let notes = out.notes.iter().chain(&beyond).map(String::as_str);
    for note in lead.into_iter().chain(notes) {
        eprintln!("note: {note}");
    }
}

/// `run` with vLLM's client: its block (after servesim's preamble) or its `--save-result` JSON.
fn run_vllm_client(a: &RunArgs, sc: &Scenario, out_w: &mut dyn Write, wall: Instant) -> Result<()> {
    let v = crate::simulation::vllm::run_vllm(sc)?;
    print_notes(a.vllm_bench.eos_note(), sc, &v.output);
    let wall_s = wall.elapsed().as_secs_f64();
    crate::report::timeline::write(
        &v.output.timeline,
        a.sim.timeline.as_deref(),
        a.sim.plot.as_deref(),
    )?;
    let report = if a.output_format == "json" {
        let extra = extra(sc, &v.output);
        format!(
            "{}\n",
            crate::report::vllm::render_json(&v.metrics, &v.header, &v.flavour, &extra)
        )
    } else {
        // servesim's own lines of the preamble (not bench_serving's token counts), naming the
        // vLLM client instead of bench_serving.
        let pre = preamble(sc, &v.output);
        let ours = pre.split("\n\n").next().unwrap_or_default().replace(
            &format!("bench_serving {}", sc.client.bench_version),
            &format!(
                "{} {}",
                crate::client::vllm::script_name(&v.flavour),
                sc.client.bench_version
            ),
        );
        format!(
            "{ours}\n\n{}{}",
            crate::report::vllm::render_pre_block(&v.header, &v.flavour),
            crate::report::vllm::render_text(&v.metrics, &v.header, &v.flavour)
        )
    };
    super::print::emit(out_w, &report)?;
    if a.explain {
        super::print::emit(out_w, &explain_text(sc, &v.output)?)?;
    }
    if a.stats {
        eprint!("{}", stats_text(&v.output, wall_s));
    }
    Ok(())
}

/// bench_serving's per-request arrays of a run.
fn request_details(r: &RunRecord) -> RequestDetails {
    let q = &r.requests;
    RequestDetails {
        input_lens: q.iter().map(|o| o.prompt_len).collect(),
        output_lens: q.iter().map(|o| o.output_len).collect(),
        ttfts_s: q.iter().map(|o| o.ttft_ns as f64 / 1e9).collect(),
        errors: q
            .iter()
            .map(|o| match o.success {
                true => String::new(),
                false => "rejected by the simulated server (see the notes on stderr)".into(),
            })
            .collect(),
    }
}

/// Appends `line` to `path` (created if missing), as bench_serving's `open(f, "a")`.
fn append(path: &std::path::Path, line: &str) -> Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| crate::error::Error::io_write(path, e))
}

/// servesim's own derived facts, for the JSON report.
pub fn extra(sc: &Scenario, out: &RunOutput) -> serde_json::Value {
    let mut v = serde_json::json!({
        "hardware": sc.hardware.name,
        "model": sc.model.name,
        "server": sc.server,
        "stats": out.stats,
    });
    if let (Some(cfg), Some(pd)) = (&sc.pd, &out.pd) {
        v["pd"] = serde_json::json!({ "deployment": cfg.name(), "link": cfg.link, "stages": pd });
    }
    v
}
