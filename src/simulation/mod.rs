//! One call from a scenario to bench_serving's metrics: resolve the scenario, draw the
//! workload as bench_serving would, run the event loop priced by the roofline, compute the
//! metrics. Everything the CLI's `run`, `replay` and `validate` share.
pub mod caveats;
pub mod estimate;
pub mod explain;
pub mod pd;
pub mod sanity;
pub mod vllm;

use crate::client::arrivals::dispatch_times;
use crate::client::dataset::{build_rows, DatasetRow};
use crate::client::flavour::Flavour;
use crate::client::rng::NumpyRandomState;
use crate::client::send::client_bound_note;
use crate::cost::{CostChoice, CostModel, StepCost};
use crate::engine::dispatch::EngineScheduler;
use crate::engine::router::Router;
use crate::engine::sim::{simulate_replicas, ClientRequest, SimInput, SimStats};
use crate::error::{Error, Result};
use crate::metrics::record::RunRecord;
use crate::metrics::{compute, BenchMetrics};
use crate::report::ReportHeader;
use crate::spec::bundled::{load_hardware, load_model};
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::ModelSpec;
use crate::spec::pd::{PdConfig, PdFlags};

use crate::spec::engine;
use crate::spec::provenance;
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
    /// Prefill/decode disaggregation (`--disaggregation`, the scenario's `pd:` section).
    pub pd: Option<PdConfig>,
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
        Scenario::resolve_merged(file, hardware, model, server, client)
            .map_err(|e| provenance::attribute(e, file, server, client, &PdFlags::default()))
    }

    fn resolve_merged(
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
        let client_flags = file.client_base(client).merged(client);
        let engine = engine::engine_for(&server_flags, client_flags.backend.as_deref())?;
        let model = engine::model_as_built(engine, model);
        let mut server = engine::resolve(engine, &server_flags, &hardware, &model)?;
        let pd = PdConfig::resolve(&file.pd, &server_flags, &hardware, &model)?;
        if pd.is_some() && engine == engine::Engine::Vllm {
            return Err(Error::invalid(
                "--disaggregation",
                "disaggregation",
                "PD disaggregation is modelled for SGLang's servers only; drop --engine vllm",
            ));
        }
        let client = ClientConfig::resolve(&client_flags, server.version)?;
        if let Some(spec) = server.speculative.as_mut() {
            spec.set_default_acceptance(&client.dataset_name);
        }
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
            pd,
        })
    }

    /// [`Scenario::resolve`] with the command-line flag group.
    pub fn from_flags(file: &ScenarioFile, flags: &ScenarioFlags) -> Result<Scenario> {
        let mut sc = Scenario::resolve(
            file,
            flags.hardware.as_deref(),
            flags.model.as_deref(),
            &flags.server,
            &flags.client,
        )?;
        if flags.pd != PdFlags::default() {
            let server = file.server.merged(&flags.server);
            sc.pd = PdConfig::resolve(&file.pd.merged(&flags.pd), &server, &sc.hardware, &sc.model)
                .map_err(|e| {
                    provenance::attribute(e, file, &flags.server, &flags.client, &flags.pd)
                })?;
        }
        Ok(sc)
    }

    /// The client's behaviour for this scenario's bench version and backend.
    pub fn flavour(&self) -> Flavour {
        Flavour::new(
            self.client.bench_version,
            &self.client.backend,
            self.client.flush_cache,
        )
    }

    /// The profile's overheads for the backend pricing this scenario's steps
    /// (`kernels_overheads:` over `overheads:` for the measured kernels). With
    /// `--tokenize-prompt` an SGLang server receives `input_ids` and its TokenizerManager
    /// encodes nothing, so the tokenization cost is 0.
    pub fn overheads(&self) -> crate::spec::hardware::Overheads {
        let mut o = self
            .hardware
            .overheads_for(self.cost.resolve(&self.hardware) == crate::cost::CostModel::Kernels);
        if self.client.tokenize_prompt && self.server.vllm.is_none() {
            o.tokenize_per_token_ns = 0.0;
        }
        o
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
    /// Per-stage times and per-side load of a PD deployment.
    pub pd: Option<crate::engine::pd::PdStats>,
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
    let plan = client_plan(sc)?;
    let rows = plan.rows;
    if rows.is_empty() {
        return Err(Error::invalid(
            "--num-prompts",
            "num_prompts",
            "no requests to simulate",
        ));
    }
    let notes = sanity::check(sc, &rows)?;
    let (mut dispatch_ns, mut dispatch_end_ns) = (plan.dispatch_ns, plan.dispatch_end_ns);
    sanity::arrival_span(rows.len(), c.request_rate, dispatch_end_ns)?;
    if rows.iter().any(|r| r.dispatch_ns.is_some()) {
        // Trace timestamps replace the Poisson process.
        dispatch_ns = rows.iter().map(|r| r.dispatch_ns.unwrap_or(0)).collect();
        dispatch_end_ns = dispatch_ns.iter().copied().max().unwrap_or(0);
    }
    let ranks = round_robin_ranks(sc);
    let warm_cached =
        plan.warm_first && sc.server.radix_cache && ranks.warmup_shares_rank_of_request_0();
    let held = prior_held(sc, rows.len(), ranks);
    // Under round-robin DP a prior run's prompt is held on one rank only: the rank this run's
    // request of the same index is routed to (`client::prior`), which the router then follows.
    let start = ranks.counter_after(&sc.client.prior_runs);
    let held_rank = |i: usize| (ranks.dp > 1).then(|| ranks.rank_of(start, i));
    // The rows are dropped here: a fresh vector (not an in-place collect, which would keep the
    // rows' larger allocation for the whole run).
    let mut requests = Vec::with_capacity(rows.len());
    requests.extend(rows.into_iter().enumerate().map(|(i, r)| ClientRequest {
        prompt_len: r.prompt_len,
        output_len: r.output_len,
        cached_prefix: if i == 0 && warm_cached {
            r.prompt_len
        } else {
            held.get(i).map_or(0, |&h| {
                let page = sc.server.page_size.max(1);
                crate::client::prior::cached_prefix(r.prompt_len, h) / page * page
            })
        },
        cached_rank: held_rank(i),
        prefix_group: r.prefix_group,
        prefix_len: r.prefix_len.min(r.prompt_len),
    }));
    let input = SimInput {
        requests,
        dispatch_ns,
        dispatch_end_ns,
        max_concurrency: c.max_concurrency,
        server_info_at_end: plan.server_info_at_end,
        // The overheads of the backend pricing the steps (`kernels_overheads:` for the kernels).
        overheads: sc.overheads(),
        client_send_ns: sc.client_send_ns(),
        frontend: vllm::frontend_costs(sc).unwrap_or_default(),
        max_events: estimate::event_cap(sc),
        check_invariants: sc.check_invariants,
        deadline: sc.max_wall_seconds.map(|s| (std::time::Instant::now(), s)),
        record_timeline: sc.record_timeline,
        reference_itl: sc.reference_itl,
    };
    let (out, pd) = match &sc.pd {
        Some(pd) => {
            let o = pd::simulate(sc, pd, &input)?;
            (o.sim, Some(o.pd))
        }
        None => (unified(sc, &input)?, None),
    };
    let mut metrics = compute(&out.record);
    metrics.accept_length = out.accept_length;
    let mut notes = notes;
    notes.extend(plan.notes);
    notes.extend(sc.server.notes.iter().cloned());
    notes.extend(crate::cost::select::table_version_note(
        &sc.hardware,
        &sc.server,
        &sc.cost,
    ));
    notes.extend(caveats::uncalibrated_profile(&sc.hardware));
    notes.extend(caveats::assumed_accept_length(&sc.server));
    notes.extend(caveats::multi_node_group(&sc.hardware, &sc.server));
    notes.extend(caveats::early_mla_decode(sc));
    notes.extend(caveats::mxfp4_on_sglang(sc));
    notes.extend(caveats::unpriced_moe_default(sc));
    notes.extend(caveats::closed_loop_first_wave(sc, &metrics));
    notes.extend(client_bound_note(
        sc.client_send_ns(),
        input.requests.len() as u64,
        metrics.duration_s,
    ));
    if sc.server.vllm.is_some() {
        notes.extend(crate::spec::vllm::frontend::frontend_bound_note(
            out.frontend_busy_ns as f64,
            metrics.duration_s,
        ));
    }
    let output = RunOutput {
        metrics,
        stats: out.stats,
        timeline: out.timeline,
        notes,
        pd,
    };
    Ok((output, out.record))
}

/// `--prior-runs`: the longest earlier prompt of each index still in the radix cache (empty
/// when there is none: no radix cache, a flush after the warm-up, or a dataset whose prompts
/// differ between runs; `random-ids` draws its offsets after the lengths, per run).
/// How SGLang's DP controller spreads this run's requests over its data-parallel ranks, when
/// that is fixed in advance: round robin (the default) over `dp` > 1 SGLang ranks, counting the
/// run's warm-ups; a single rank otherwise (shortest-queue routing depends on the load, and
/// vLLM's engine balances its own way, so their hits stay rank-agnostic).
fn round_robin_ranks(sc: &Scenario) -> crate::client::prior::RoundRobinRanks {
    use crate::client::prior::RoundRobinRanks;
    let round_robin = sc.server.router == crate::spec::server::LoadBalanceMethod::RoundRobin;
    match sc.server.dp > 1 && round_robin && sc.server.vllm.is_none() && sc.pd.is_none() {
        true => RoundRobinRanks {
            dp: sc.server.dp as usize,
            warmups: sc.client.warmup_requests,
        },
        false => RoundRobinRanks::SINGLE,
    }
}

fn prior_held(sc: &Scenario, n: usize, ranks: crate::client::prior::RoundRobinRanks) -> Vec<u64> {
    let c = &sc.client;
    if c.prior_runs.is_empty()
        || !sc.server.radix_cache
        || c.flush_cache
        || c.kind.is_vllm()
        || c.dataset_name != "random"
        || sc.lengths.is_some()
    {
        return Vec::new();
    }
    let draws = crate::client::prior::PriorDraws {
        seed: c.seed as u32,
        output_min_one: sc.flavour().output_min_one,
        less_special: crate::client::dataset::random_special_tokens(c.bench_version, &sc.model),
    };
    crate::client::prior::held_prompt_lens(&c.prior_runs, draws, n, sc.server.kv_pool_tokens, ranks)
}

/// The requests and send times of the emulated client.
struct ClientPlan {
    rows: Vec<DatasetRow>,
    dispatch_ns: Vec<u64>,
    dispatch_end_ns: u64,
    /// Request 0's prompt is in the cache when it arrives (warm-up or test request, no flush).
    warm_first: bool,
    server_info_at_end: bool,
    /// The client's notes on its dataset (vLLM's client: nominal lengths, sample tables).
    notes: Vec<String>,
}

/// bench_serving's workload (numpy's global state shared by the dataset and the Poisson gaps),
/// or vLLM's client's (`client::vllm`).
fn client_plan(sc: &Scenario) -> Result<ClientPlan> {
    let c = &sc.client;
    if c.kind.is_vllm() && sc.lengths.is_none() {
        let w = crate::client::vllm::workload(c, &sc.model)?;
        return Ok(ClientPlan {
            rows: w.rows,
            dispatch_ns: w.dispatch_ns,
            dispatch_end_ns: w.dispatch_end_ns,
            warm_first: w.warm_first,
            server_info_at_end: false,
            notes: w.notes,
        });
    }
    let flavour = sc.flavour();
    let mut rng = NumpyRandomState::new(c.seed as u32);
    let rows: Vec<DatasetRow> = match &sc.lengths {
        Some(l) => l.iter().map(|&(p, o)| DatasetRow::lengths(p, o)).collect(),
        None => build_rows(c, &sc.model, flavour.output_min_one, &mut rng)?,
    };
    let (dispatch_ns, dispatch_end_ns) = dispatch_times(rows.len(), c.request_rate, &mut rng);
    // A trace shorter than --num-prompts sends what it has.
    let borrowed =
        (sc.lengths.is_none() && c.dataset_name == "sharegpt" && c.dataset_path.is_none())
            .then(|| crate::client::dataset::sharegpt_table::borrowed_table_note(&sc.model))
            .flatten();
    let notes =
        (sc.lengths.is_none() && c.dataset_name == "trace" && (rows.len() as u64) < c.num_prompts)
            .then(|| {
                format!(
                    "the trace has {} rows, fewer than --num-prompts {}: {} requests are sent",
                    rows.len(),
                    c.num_prompts,
                    rows.len()
                )
            })
            .into_iter()
            .chain(borrowed)
            .collect();
    Ok(ClientPlan {
        rows,
        dispatch_ns,
        dispatch_end_ns,
        // The warm-up sends request 0's prompt; unless the cache is flushed afterwards, the
        // radix cache still holds it when request 0 arrives.
        warm_first: c.warmup_requests > 0 && !flavour.flush_after_warmup,
        server_info_at_end: flavour.server_info_at_end,
        notes,
    })
}

/// One unified (colocated) server: `dp` replicas behind the router, or DP-attention ranks.
fn unified(sc: &Scenario, input: &SimInput) -> Result<crate::engine::sim::SimOutput> {
    let window = crate::cost::window::applied_tokens(&sc.model, &sc.server);
    let scheds = (0..sc.server.dp)
        .map(|r| {
            let mut s = EngineScheduler::new(&sc.server, window);
            // Speculative gains: one stream per replica, from the benchmark seed.
            s.seed_acceptance(sc.client.seed ^ (r + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            s
        })
        .collect();
    let cost = sc.step_cost()?;
    simulate_replicas(
        input,
        scheds,
        // Round robin resumes where the earlier runs and this run's warm-ups left the counter.
        Router::starting_at(
            sc.server.router,
            round_robin_ranks(sc).first_rank(&sc.client.prior_runs),
        ),
        sc.server.dp_attention,
        cost.as_ref(),
    )
}

/// The newest SGLang version, for defaults.
pub fn newest() -> Version {
    Version::NEWEST
}
