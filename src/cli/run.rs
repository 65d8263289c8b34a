//! `servesim run`: one scenario (the bundled default, a scenario file, flags) → the report
//! bench_serving would print, as text or JSON; `--stats` adds the simulation's own cost.
use crate::error::Result;
use crate::report::{json, text};
use crate::simulation::{run as simulate, RunOutput, Scenario};
use crate::spec::load::from_yaml_str;
use crate::spec::server::ServerFlags;
use crate::spec::workload::{ClientFlags, ScenarioFile};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The bundled default scenario, embedded so the binary runs from anywhere.
pub const DEFAULT_SCENARIO: &str = include_str!("../../workloads/default.yaml");

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Scenario file (default: the bundled workloads/default.yaml; its client section applies
    /// only when no client flag is given, otherwise bench_serving's defaults do).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Hardware profile: a bundled name or a YAML path.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Model: a bundled name, a model YAML, or a Hugging Face config.json.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub server: ServerFlags,
    #[command(flatten)]
    pub client: ClientFlags,
    /// text (bench_serving's layout) or json (bench_serving's output-file keys).
    #[arg(long, default_value = "text")]
    pub output_format: String,
    /// Print the simulation's own cost (wall time, events, steps) to stderr.
    #[arg(long)]
    pub stats: bool,
    /// Stop with an error after this many events.
    #[arg(long)]
    pub max_events: Option<u64>,
    /// Stop with an error after this many seconds of wall-clock time (never changes results).
    #[arg(long)]
    pub max_wall_seconds: Option<f64>,
    /// Write the per-iteration time series (running, queued, batch tokens, KV) as CSV.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Draw the time series as SVG charts into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// After the report, print one representative decode step and one prefill step of the run
    /// (decode at the run's mean batch and mean context, prefill one chunk of mean-length
    /// prompts) broken into GEMM, attention, MoE, all-reduce, LM head, overheads and CPU, with
    /// the cost backend and the tables or constants that priced each.
    #[arg(long)]
    pub explain: bool,
}

/// Loads the scenario named by `--scenario`, or the bundled default.
pub fn load_scenario_file(path: Option<&Path>) -> Result<ScenarioFile> {
    match path {
        Some(p) => ScenarioFile::load(p),
        None => from_yaml_str(DEFAULT_SCENARIO, Path::new("workloads/default.yaml")),
    }
}

/// The base scenario file: `path`, or the bundled default, whose client section applies
/// only when no client flag is given (`client_given`); bench_serving's defaults apply then.
pub fn base_scenario(path: Option<&Path>, client_given: bool) -> Result<ScenarioFile> {
    let mut file = load_scenario_file(path)?;
    if path.is_none() && client_given {
        file.client = ClientFlags::default();
    }
    Ok(file)
}

/// The scenario `run` simulates for these arguments.
pub fn scenario(a: &RunArgs) -> Result<Scenario> {
    let file = base_scenario(a.scenario.as_deref(), a.client != ClientFlags::default())?;
    let mut sc = Scenario::resolve(
        &file,
        a.hardware.as_deref(),
        a.model.as_deref(),
        &a.server,
        &a.client,
    )?;
    if let Some(m) = a.max_events {
        sc.max_events = m;
    }
    if let Some(w) = a.max_wall_seconds {
        if !(w.is_finite() && w > 0.0) {
            return Err(crate::error::Error::invalid(
                "--max-wall-seconds",
                "max_wall_seconds",
                format!("must be a finite number > 0, got {w}"),
            ));
        }
        sc.max_wall_seconds = Some(w);
    }
    sc.record_timeline = a.timeline.is_some() || a.plot.is_some();
    Ok(sc)
}

pub fn run(a: &RunArgs) -> Result<()> {
    let sc = scenario(a)?;
    if !["text", "json"].contains(&a.output_format.as_str()) {
        return Err(crate::error::Error::Unknown {
            kind: "output format",
            name: a.output_format.clone(),
            available: "text, json".into(),
        });
    }
    let wall = Instant::now();
    let out = simulate(&sc)?;
    for note in &out.notes {
        eprintln!("note: {note}");
    }
    let wall_s = wall.elapsed().as_secs_f64();
    crate::report::timeline::write(&out.timeline, a.timeline.as_deref(), a.plot.as_deref())?;
    if a.output_format == "json" {
        println!(
            "{}",
            json::render(&out.metrics, &sc.header(), &extra(&sc, &out))
        );
    } else {
        print!("{}", preamble(&sc, &out));
        println!("{}", text::render(&out.metrics, &sc.header()).trim_end());
    }
    if a.explain {
        print!("{}", super::explain::explain_text(&sc, &out)?);
    }
    if a.stats {
        eprint!("{}", stats_text(&out, wall_s));
    }
    Ok(())
}

/// servesim's own derived facts, for the JSON report.
pub fn extra(sc: &Scenario, out: &RunOutput) -> serde_json::Value {
    serde_json::json!({
        "hardware": sc.hardware.name,
        "model": sc.model.name,
        "server": sc.server,
        "stats": out.stats,
    })
}

/// What SGLang's start-up log and bench_serving print before the result block.
pub fn preamble(sc: &Scenario, out: &RunOutput) -> String {
    let s = &sc.server;
    format!(
        "servesim: {} on {} × {} (tp {}{}), SGLang {} defaults, bench_serving {}\n\
         server: max_total_num_tokens={}, max_running_requests={}, chunked_prefill_size={}, mem_fraction_static={}, cuda_graph_max_bs={}, attention_backend={}, page_size={}\n\
         sim: {} steps ({} prefill, {} decode), {} retractions, peak running {}, radix cache hit rate {:.1}%\n\n\
         #Input tokens: {}\n#Output tokens: {}\n",
        sc.model.name,
        s.devices(),
        sc.hardware.name,
        s.tp,
        match (s.dp, s.dp_attention) {
            (1, _) => String::new(),
            (d, true) => format!(", DP attention: {d} ranks of attn_tp {}", s.attn_tp),
            (d, false) => format!(", dp {d} replicas"),
        },
        s.version,
        sc.client.bench_version,
        s.kv_pool_tokens,
        s.max_running_requests,
        s.chunked_prefill_size.map_or("-1".to_string(), |c| c.to_string()),
        s.mem_fraction_static,
        s.cuda_graph_max_bs(),
        s.attention_backend,
        s.page_size,
        out.stats.steps,
        out.stats.sched.prefill_steps,
        out.stats.sched.decode_steps,
        out.stats.sched.retractions,
        out.stats.sched.max_running,
        100.0 * out.stats.sched.prefix_hit_tokens as f64 / out.stats.sched.prompt_tokens.max(1) as f64,
        out.metrics.total_input_tokens,
        out.metrics.total_output_tokens,
    )
}

pub(crate) fn stats_text(out: &RunOutput, wall_s: f64) -> String {
    let sim_s = out.stats.simulated_ns as f64 / 1e9;
    format!(
        "stats: wall {:.3} s, simulated {:.1} s, ratio {:.0}x, {} events, {} steps, peak RSS {} MiB\n",
        wall_s,
        sim_s,
        if wall_s > 0.0 { sim_s / wall_s } else { f64::INFINITY },
        out.stats.events,
        out.stats.steps,
        peak_rss_mib().map_or("?".into(), |m| m.to_string())
    )
}

/// Peak resident memory of this process (Linux `VmHWM`), MiB.
pub fn peak_rss_mib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}
