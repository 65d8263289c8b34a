//! One call from a scenario to bench_serving's metrics: resolve the scenario, draw the
//! workload as bench_serving would, run the event loop priced by the roofline, compute the
//! metrics. Everything the CLI's `run`, `replay` and `validate` share.
pub mod estimate;
pub mod explain;
pub mod sanity;

use crate::client::arrivals::dispatch_times;
use crate::client::dataset::{build_rows, DatasetRow};
use crate::client::flavour::Flavour;
use crate::client::rng::NumpyRandomState;
use crate::client::send::client_bound_note;
use crate::cost::{CostChoice, CostModel, StepCost};
use crate::engine::router::Router;
use crate::engine::scheduler::Scheduler;
use crate::engine::sim::{simulate_replicas, ClientRequest, SimInput, SimStats};
use crate::error::{Error, Result};
use crate::metrics::record::RunRecord;
use crate::metrics::{compute, BenchMetrics};
use crate::report::ReportHeader;
use crate::spec::bundled::{load_hardware, load_model};
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::ModelSpec;

use crate::spec::server::{ServerConfig, ServerFlags};
use crate::spec::version::Version;
use crate::spec::workload::{ClientConfig, ClientFlags, ScenarioFile, ScenarioFlags};

/// Default safety budget of events per simulation.
pub const DEFAULT_MAX_EVENTS: u64 = 200_000_000;

/// A fully resolved scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub hardware: HardwareProfile,
    pub model: ModelSpec,
    pub server: ServerConfig,
    pub client: ClientConfig,
    /// Explicit per-request (prompt, output) lengths; `None` draws them from the dataset flags.
    pub lengths: Option<Vec<(u64, u64)>>,
    pub max_events: u64,
    /// Check scheduler invariants after every step (slower; tests).
    pub check_invariants: bool,
    /// Wall-clock budget: stop with an error after this many seconds (`--max-wall-seconds`).
    /// Only ever turns a run into an error; results never depend on wall time.
    pub max_wall_seconds: Option<f64>,
    /// Keep one timeline sample per scheduler iteration in `RunOutput::timeline`.
    pub record_timeline: bool,
    /// Use the straightforward per-token ITL bookkeeping (tests: must match the fast path).
    pub reference_itl: bool,
    /// Step-cost backend (`--cost-model`, `--kernel-db`).
    pub cost: CostChoice,
}

impl Scenario {
    /// Resolves a scenario file overlaid with command-line flags.
    pub fn resolve(
        file: &ScenarioFile,
        hardware: Option<&str>,
        model: Option<&str>,
        server: &ServerFlags,
        client: &ClientFlags,
    ) -> Result<Scenario> {
        let hw_name = hardware.or(file.hardware.as_deref()).ok_or_else(|| {
            Error::invalid(
                "scenario",
                "hardware",
                "no hardware given (--hardware or `hardware:` in the scenario file)",
            )
        })?;
        let model_name = model.or(file.model.as_deref()).ok_or_else(|| {
            Error::invalid(
                "scenario",
                "model",
                "no model given (--model or `model:` in the scenario file)",
            )
        })?;
        let hardware = load_hardware(hw_name)?;
        let model = load_model(model_name)?;
        let server_flags = file.server.merged(server);
        let server = ServerConfig::resolve(&server_flags, &hardware, &model)?;
        let client = ClientConfig::resolve(&file.client.merged(client), server.version)?;
        let cost = CostChoice {
            model: server_flags
                .cost_model
                .as_deref()
                .map(CostModel::parse)
                .transpose()?,
            kernel_db: server_flags.kernel_db.clone(),
        };
        Ok(Scenario {
            hardware,
            model,
            server,
            client,
            lengths: None,
            max_events: DEFAULT_MAX_EVENTS,
            check_invariants: false,
            max_wall_seconds: None,
            record_timeline: false,
            reference_itl: false,
            cost,
        })
    }

    /// [`Scenario::resolve`] with the command-line flag group.
    pub fn from_flags(file: &ScenarioFile, flags: &ScenarioFlags) -> Result<Scenario> {
        Scenario::resolve(
            file,
            flags.hardware.as_deref(),
            flags.model.as_deref(),
            &flags.server,
            &flags.client,
        )
    }

    /// The client's behaviour for this scenario's bench version and backend.
    pub fn flavour(&self) -> Flavour {
        Flavour::new(
            self.client.bench_version,
            &self.client.backend,
            self.client.flush_cache,
        )
    }

    /// The client's CPU time per request send, ns (0 for an ideal client).
    pub fn client_send_ns(&self) -> f64 {
        crate::client::send::send_ns(
            self.client.client_model,
            self.client.client_send_us,
            self.client.bench_version,
        )
    }

    /// The step-cost backend that prices this scenario: the one constructor `run` and the
    /// physics tests (tests/physics.rs) share, so every backend it can return is held to the
    /// same laws.
    pub fn step_cost(&self) -> Result<Box<dyn StepCost>> {
        crate::cost::build(&self.hardware, &self.model, &self.server, &self.cost)
    }

    /// The report header bench_serving would print.
    pub fn header(&self) -> ReportHeader {
        ReportHeader {
            backend: self.client.backend.clone(),
            request_rate: self.client.request_rate,
            max_concurrency: self.client.max_concurrency,
            bench_version: self.client.bench_version,
        }
    }
}

/// What one simulation produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub metrics: BenchMetrics,
    pub stats: SimStats,
    /// Notes for the user about the inputs (requests reported failed and why), one line each.
    pub notes: Vec<String>,
    /// Per-iteration samples when `Scenario::record_timeline` is set.
    pub timeline: Vec<crate::engine::timeline::Sample>,
}

/// Draws the workload, simulates it and computes bench_serving's metrics.
pub fn run(sc: &Scenario) -> Result<RunOutput> {
    run_with_record(sc).map(|(out, _)| out)
}

/// [`run`], also returning what the client observed of every request (for per-request
/// checks; [`run`] drops it to keep its memory).
pub fn run_with_record(sc: &Scenario) -> Result<(RunOutput, RunRecord)> {
    sanity::check_scenario(sc)?;
    let c = &sc.client;
    let flavour = sc.flavour();
    let mut rng = NumpyRandomState::new(c.seed as u32);
    let rows: Vec<DatasetRow> = match &sc.lengths {
        Some(l) => l.iter().map(|&(p, o)| DatasetRow::lengths(p, o)).collect(),
        None => build_rows(c, &sc.model, flavour.output_min_one, &mut rng)?,
    };
    if rows.is_empty() {
        return Err(Error::invalid(
            "--num-prompts",
            "num_prompts",
            "no requests to simulate",
        ));
    }
    let notes = sanity::check(sc, &rows)?;
    let (mut dispatch_ns, mut dispatch_end_ns) =
        dispatch_times(rows.len(), c.request_rate, &mut rng);
    if rows.iter().any(|r| r.dispatch_ns.is_some()) {
        // Trace timestamps replace the Poisson process.
        dispatch_ns = rows.iter().map(|r| r.dispatch_ns.unwrap_or(0)).collect();
        dispatch_end_ns = dispatch_ns.iter().copied().max().unwrap_or(0);
    }
    // The warm-up sends request 0's prompt; unless the cache is flushed afterwards, the radix
    // cache still holds it when request 0 arrives.
    let warm_cached = c.warmup_requests > 0 && sc.server.radix_cache && !flavour.flush_after_warmup;
    // The rows are dropped here: a fresh vector (not an in-place collect, which would keep the
    // rows' larger allocation for the whole run).
    let mut requests = Vec::with_capacity(rows.len());
    requests.extend(rows.into_iter().enumerate().map(|(i, r)| ClientRequest {
        prompt_len: r.prompt_len,
        output_len: r.output_len,
        cached_prefix: if i == 0 && warm_cached {
            r.prompt_len
        } else {
            0
        },
        prefix_group: r.prefix_group,
        prefix_len: r.prefix_len.min(r.prompt_len),
    }));
    let input = SimInput {
        requests,
        dispatch_ns,
        dispatch_end_ns,
        max_concurrency: c.max_concurrency,
        server_info_at_end: flavour.server_info_at_end,
        overheads: sc.hardware.overheads.clone(),
        client_send_ns: sc.client_send_ns(),
        max_events: estimate::event_cap(sc),
        check_invariants: sc.check_invariants,
        deadline: sc.max_wall_seconds.map(|s| (std::time::Instant::now(), s)),
        record_timeline: sc.record_timeline,
        reference_itl: sc.reference_itl,
    };
    let window = sc.model.sliding_window.as_ref().map(|w| w.window_tokens);
    let scheds = (0..sc.server.dp)
        .map(|_| Scheduler::new(&sc.server, window))
        .collect();
    let cost = sc.step_cost()?;
    let out = simulate_replicas(
        &input,
        scheds,
        Router::new(sc.server.router),
        sc.server.dp_attention,
        cost.as_ref(),
    )?;
    let metrics = compute(&out.record);
    let mut notes = notes;
    notes.extend(sc.server.notes.iter().cloned());
    notes.extend(client_bound_note(
        sc.client_send_ns(),
        input.requests.len() as u64,
        metrics.duration_s,
    ));
    let output = RunOutput {
        metrics,
        stats: out.stats,
        timeline: out.timeline,
        notes,
    };
    Ok((output, out.record))
}

/// The newest SGLang version, for defaults.
pub fn newest() -> Version {
    Version::NEWEST
}
