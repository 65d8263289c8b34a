//! Before a big run: how many steps and events it will take, how much memory it will hold and
//! roughly how long it will run, from the scenario alone (no simulation), and the event cap
//! scaled to the workload.
//!
//! What grows: the client's record keeps one ITL run and one token emission per scheduler
//! step (16 bytes each, `metrics::record`), so memory grows with *steps*, plus a fixed record
//! per request. At `--max-concurrency 1` every decode step carries one request's one token, so
//! steps = output tokens: 1M prompts of ≈ 515 output tokens are ≈ 515M steps, ≈ 25 GB at the
//! measured ≈ 48 bytes per step (the 16 + 16 bytes above, plus vector growth slack) — and the
//! old fixed cap of 200M events fired at ≈ 6.4 GB, which is what issue 14 saw. Batching
//! divides the steps by the batch size, so the same prompts at concurrency 256 hold ≈ 1/256
//! of that.
use super::{Scenario, DEFAULT_MAX_EVENTS};

/// Bytes held per scheduler step (ITL run + emission + growth slack), measured: 2,000 and
/// 20,000 random prompts at concurrency 1 peak at 53 and 482 MiB for 1.0M and 10.4M steps.
pub const BYTES_PER_STEP: f64 = 48.0;
/// Bytes held per request (outcome record, engine state, dataset row), a generous bound.
pub const BYTES_PER_REQUEST: f64 = 1024.0;
/// Extra bytes per step when the per-iteration timeline is kept (`--timeline`, `--plot`).
pub const TIMELINE_BYTES_PER_STEP: f64 = 64.0;
/// Rough simulation speed on one core, events per second (≈ 0.8–1.2M measured).
pub const EVENTS_PER_S: f64 = 1e6;
/// Runs estimated above this many bytes are refused unless `--force` is given.
pub const MEMORY_LIMIT_BYTES: f64 = 4.0 * (1u64 << 30) as f64;
/// Runs estimated above this many events get the one-line estimate on stderr.
pub const BIG_RUN_EVENTS: f64 = 20e6;

/// What a run will cost, estimated up front.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub requests: u64,
    /// Σ output tokens expected.
    pub output_tokens: f64,
    /// Scheduler steps (decode steps at the expected batch, plus prefill chunks).
    pub steps: f64,
    /// Events (steps plus a handful per request).
    pub events: f64,
    pub memory_bytes: f64,
    pub wall_s: f64,
    /// An upper bound of the steps whatever the batching: one token of one request per step.
    pub max_steps: f64,
}

/// (requests, Σ prompt, Σ output, Σ largest output) of `sc`: exact with explicit lengths;
/// otherwise the random datasets' expected lengths (uniform over [ratio · len, len]) and
/// maxima, and for ShareGPT its `--sharegpt-output-len`, else an assumed 1024.
fn lengths(sc: &Scenario) -> (f64, f64, f64, f64) {
    let c = &sc.client;
    if let Some(l) = &sc.lengths {
        let (i, o) = l
            .iter()
            .fold((0.0, 0.0), |(i, o), (p, q)| (i + *p as f64, o + *q as f64));
        return (l.len() as f64, i, o, o);
    }
    let n = c.num_prompts as f64;
    let (i, o) = match c.dataset_name.as_str() {
        "generated-shared-prefix" => (
            (c.gsp.system_prompt_len + c.gsp.question_len) as f64,
            c.gsp.output_len as f64,
        ),
        "sharegpt" | "trace" => (1024.0, c.sharegpt_output_len.unwrap_or(1024) as f64),
        _ => {
            let mean = (1.0 + c.random_range_ratio.clamp(0.0, 1.0)) / 2.0;
            // A request past the context length is refused before it runs (`sanity`): it
            // costs no steps, so its lengths count only up to the context.
            let ctx = sc.server.context_length as f64;
            let i = (c.random_input_len as f64).min(ctx);
            let o = (c.random_output_len as f64).min(ctx - i);
            return (n, n * i * mean, n * o * mean, n * o);
        }
    };
    (n, n * i, n * o, n * o)
}

/// The estimate of `sc`.
pub fn estimate(sc: &Scenario) -> Estimate {
    let (n, input, output, max_output) = lengths(sc);
    let s = &sc.server;
    let chunk = s
        .chunked_prefill_size
        .unwrap_or(s.max_prefill_tokens)
        .max(1) as f64;
    let replicas = if s.dp_attention { 1 } else { s.dp.max(1) } as f64;
    let cap = sc
        .client
        .max_concurrency
        .map_or(f64::INFINITY, |c| c as f64);
    let batch = cap
        .min(s.max_running_requests as f64 * replicas)
        .min(n)
        .max(1.0);
    // Prefill: one step per chunk, at least one per admitted cohort.
    let steps = output / batch + (input / chunk).max(n / batch);
    let max_steps = max_output + input / chunk + n;
    let events = steps + 4.0 * n;
    let per_step = BYTES_PER_STEP
        + if sc.record_timeline {
            TIMELINE_BYTES_PER_STEP
        } else {
            0.0
        };
    Estimate {
        requests: n as u64,
        output_tokens: output,
        steps,
        events,
        memory_bytes: steps * per_step + n * BYTES_PER_REQUEST,
        wall_s: events / EVENTS_PER_S,
        max_steps,
    }
}

impl Estimate {
    pub fn is_big(&self) -> bool {
        self.events > BIG_RUN_EVENTS || self.memory_bytes > MEMORY_LIMIT_BYTES / 8.0
    }

    pub fn over_memory_limit(&self) -> bool {
        self.memory_bytes > MEMORY_LIMIT_BYTES
    }

    /// `estimate: 1000000 requests, ≈ 5.2e8 steps / 5.2e8 events, ≈ 24.9 GB memory, ≈ 9 min`.
    pub fn line(&self) -> String {
        format!(
            "estimate: {} requests, ≈ {:.2e} output tokens, ≈ {:.2e} steps / {:.2e} events, ≈ {} memory, ≈ {} wall",
            self.requests,
            self.output_tokens,
            self.steps,
            self.events,
            bytes(self.memory_bytes),
            duration(self.wall_s)
        )
    }

    /// The refusal of a run over [`MEMORY_LIMIT_BYTES`].
    pub fn refusal(&self) -> String {
        format!(
            "this run would hold ≈ {} (limit {}: ≈ {BYTES_PER_STEP} bytes per scheduler step, {:.2e} steps); pass --force to run it anyway, or fewer --num-prompts / a larger --max-concurrency",
            bytes(self.memory_bytes),
            bytes(MEMORY_LIMIT_BYTES),
            self.steps
        )
    }
}

fn bytes(b: f64) -> String {
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.0} MB", b / 1e6)
    }
}

fn duration(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 60.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

/// The event cap of `sc`: its own when set below the default (`--max-events`), else the
/// default or 4 × the workload's upper bound of events (one token per step), whichever is
/// larger — a cap that fires only on a runaway loop, never on a legitimately long workload.
pub fn event_cap(sc: &Scenario) -> u64 {
    if sc.max_events != DEFAULT_MAX_EVENTS {
        return sc.max_events;
    }
    let e = estimate(sc);
    let bound = 4.0 * (e.max_steps + 4.0 * e.requests as f64);
    (bound.min(u64::MAX as f64 / 2.0) as u64).max(DEFAULT_MAX_EVENTS)
}
