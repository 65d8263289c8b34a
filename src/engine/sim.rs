//! The discrete-event simulation of one benchmark run: bench_serving's client (dispatch,
//! semaphore, single-threaded sends, observation of streamed tokens) against SGLang (the
//! tokenizer, a router over data-parallel replicas, and each replica's scheduler iterations
//! priced by a [`StepCost`]). Produces the [`RunRecord`] the metrics are computed from.
use super::admission::{admit, AdmissionLimits};
use super::dispatch::EngineScheduler;
use super::event::{DispatchOrder, Event, EventQueue};
use super::request::Phase;
use super::router::Router;
use super::scheduler::{Batch, SchedStats};
use super::stream::{ClientLoop, Streams};
use super::timeline::Sample;
use crate::cost::{BatchShape, StepCost};
use crate::error::{Error, Result};
use crate::metrics::record::{RequestOutcome, RunRecord};
use crate::spec::hardware::Overheads;
use std::collections::VecDeque;

/// One request as the client sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientRequest {
    pub prompt_len: u64,
    pub output_len: u64,
    /// Prompt tokens already in the radix cache when it arrives (e.g. the warm-up's prompt).
    pub cached_prefix: u64,
    /// Shared-prefix group (system prompt, or earlier turns of a conversation).
    pub prefix_group: Option<u64>,
    /// Leading prompt tokens shared within the group.
    pub prefix_len: u64,
}

/// Everything the event loop needs besides the scheduler and the cost model.
#[derive(Debug, Clone)]
pub struct SimInput {
    pub requests: Vec<ClientRequest>,
    /// Dispatch time of each request (ns).
    pub dispatch_ns: Vec<u64>,
    /// When bench_serving's dispatch loop ends (after its last sleep), ns.
    pub dispatch_end_ns: u64,
    pub max_concurrency: Option<u64>,
    /// Closing `/get_server_info` round trip, if the client makes one.
    pub server_info_at_end: bool,
    pub overheads: Overheads,
    /// CPU time of the client's loop per request send, ns (0 for an ideal client).
    pub client_send_ns: f64,
    /// Safety budget: stop with an error after this many events.
    pub max_events: u64,
    /// Check the scheduler's invariants after every step (O(n) per step; for tests).
    pub check_invariants: bool,
    /// Wall-clock budget (start, seconds): the run stops with an error once it is exceeded.
    /// Checked every 4096 events; it never changes a result, only turns a run into an error.
    pub deadline: Option<(std::time::Instant, f64)>,
    /// Record one timeline sample per scheduler iteration.
    pub record_timeline: bool,
    /// Track every request's ITLs one token at a time (the straightforward O(batch) per step
    /// path) instead of by cohort; results must be identical. For tests.
    pub reference_itl: bool,
}

/// The simulation's own counters.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct SimStats {
    pub events: u64,
    pub steps: u64,
    pub simulated_ns: u64,
    pub sched: SchedStats,
    pub failed: u64,
}

/// Output of one simulation.
#[derive(Debug, Clone)]
pub struct SimOutput {
    pub record: RunRecord,
    pub stats: SimStats,
    /// Per-iteration samples (empty unless `record_timeline`).
    pub timeline: Vec<Sample>,
    /// Speculative decoding: the first replica's (DP rank's) `avg_spec_accept_length`, the
    /// value bench_serving reads from `/get_server_info` (`internal_states[0]`).
    pub accept_length: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct ClientState {
    start_ns: u64,
    first_obs: Option<u64>,
    /// (observation time of its prefill token, decode steps seen then): its cohort while no
    /// decode step has run since it joined the running batch.
    joined: Option<(u64, u64)>,
    /// Observation time of its last token, kept while retracted.
    last_obs: u64,
    done_obs: Option<u64>,
    failed: bool,
    /// `max_new_tokens` after the server's clip: the output length it will report.
    out_len: u64,
    /// Replica serving it.
    replica: u32,
}

/// One data-parallel replica: its scheduler, the batch in flight and its token streams.
struct Replica {
    sched: EngineScheduler,
    batch: Option<Batch>,
    streams: Streams,
    /// Local request id → global request index.
    globals: Vec<usize>,
}

struct Sim<'a> {
    input: &'a SimInput,
    replicas: Vec<Replica>,
    router: Router,
    cost: &'a dyn StepCost,
    q: EventQueue,
    client: Vec<ClientState>,
    client_loop: ClientLoop,
    waiters: VecDeque<usize>,
    in_flight: u64,
    tokenizer_free_ns: u64,
    /// Requests whose send is queued in the client's busy event loop.
    pending_sends: Vec<usize>,
    flush_at: Option<u64>,
    steps: u64,
    timeline: Vec<Sample>,
    /// DP attention: the replicas are attention ranks that step together.
    lockstep: bool,
    /// Lockstep mode: a group step is in flight.
    group_busy: bool,
    /// The server's admission rules (every replica runs the same configuration).
    limits: AdmissionLimits,
}

/// Latest simulated time (2^62 ns ≈ 146 years); later means the inputs are absurd, and it
/// leaves headroom so latencies added to any event time cannot overflow.
const MAX_CLOCK_NS: u64 = 1 << 62;

/// Runs the simulation of one server replica to completion.
pub fn simulate(
    input: &SimInput,
    sched: impl Into<EngineScheduler>,
    cost: &dyn StepCost,
) -> Result<SimOutput> {
    simulate_replicas(input, vec![sched], Router::RoundRobin, false, cost)
}

/// Runs the simulation of `scheds.len()` data-parallel replicas behind `router`; with
/// `lockstep` they are the attention ranks of one DP-attention server and step together.
pub fn simulate_replicas<S: Into<EngineScheduler>>(
    input: &SimInput,
    scheds: Vec<S>,
    router: Router,
    lockstep: bool,
    cost: &dyn StepCost,
) -> Result<SimOutput> {
    let n = input.requests.len();
    if input.dispatch_ns.len() != n || scheds.is_empty() {
        return Err(Error::Msg(
            "internal: dispatch times and requests differ in length, or no replica".into(),
        ));
    }
    let scheds: Vec<EngineScheduler> = scheds.into_iter().map(Into::into).collect();
    let limits = *scheds[0].limits();
    let mut sim = Sim {
        input,
        limits,
        replicas: scheds
            .into_iter()
            .map(|sched| Replica {
                sched,
                batch: None,
                streams: Streams::default(),
                globals: Vec::new(),
            })
            .collect(),
        router,
        cost,
        q: EventQueue::default(),
        client: vec![ClientState::default(); n],
        client_loop: ClientLoop::new(input.client_send_ns.round() as u64),
        waiters: VecDeque::new(),
        in_flight: 0,
        tokenizer_free_ns: 0,
        pending_sends: Vec::new(),
        flush_at: None,
        steps: 0,
        timeline: Vec::new(),
        lockstep,
        group_busy: false,
    };
    // One dispatch in the queue at a time, pushed when the previous one is popped.
    let mut dispatches = DispatchOrder::new(&input.dispatch_ns);
    if let Some(i) = dispatches.next() {
        sim.q.push(input.dispatch_ns[i], Event::Dispatch(i));
    }
    let mut now = 0;
    while let Some((t, ev)) = sim.q.pop() {
        if t < now {
            return Err(Error::Msg(format!(
                "internal: clock went backwards from {now} to {t}"
            )));
        }
        now = t;
        if sim.q.processed > input.max_events {
            return Err(Error::Budget(format!(
                "more than {} events (raise --max-events if the run is really this large)",
                input.max_events
            )));
        }
        if let Some((start, secs)) = input.deadline {
            if sim.q.processed % 4096 == 0 && start.elapsed().as_secs_f64() > secs {
                return Err(Error::Budget(format!(
                    "more than {secs} s of wall-clock time at {:.1} s of simulated time (raise --max-wall-seconds)",
                    t as f64 / 1e9
                )));
            }
        }
        match ev {
            Event::Dispatch(i) => {
                if let Some(j) = dispatches.next() {
                    sim.q.push(input.dispatch_ns[j], Event::Dispatch(j));
                }
                sim.dispatch(i, t)
            }
            Event::ClientDone(i) => sim.client_done(i, t),
            Event::ClientFlush => sim.flush_sends(t),
            Event::ServerArrival(i) => {
                let r = sim.route(i);
                let idle = if sim.lockstep {
                    !sim.group_busy
                } else {
                    sim.replicas[r].batch.is_none()
                };
                if idle {
                    sim.run_next(r, t)?;
                }
            }
            Event::StepEnd(r) if sim.lockstep => {
                for k in 0..sim.replicas.len() {
                    sim.step_end(k, t)?;
                }
                sim.run_next(r, t)?;
            }
            Event::StepEnd(r) => {
                sim.step_end(r, t)?;
                sim.run_next(r, t)?;
            }
        }
    }
    sim.finish(now)
}

impl Sim<'_> {
    fn dispatch(&mut self, i: usize, t: u64) {
        match self.input.max_concurrency {
            Some(cap) if self.in_flight >= cap => self.waiters.push_back(i),
            _ => self.start(i, t),
        }
    }

    fn start(&mut self, i: usize, t: u64) {
        self.in_flight += 1;
        self.client[i].start_ns = t;
        let sent = self.client_loop.send(t);
        self.pending_sends.push(i);
        if self.flush_at.is_none() {
            self.flush_at = Some(sent);
            self.q.push(sent, Event::ClientFlush);
        }
    }

    /// The client's loop is done with its burst of sends (a burst keeps growing while new
    /// sends join it): every queued request goes out now, in send order.
    fn flush_sends(&mut self, t: u64) {
        let end = self.client_loop.busy_end();
        if end > t {
            self.flush_at = Some(end);
            self.q.push(end, Event::ClientFlush);
            return;
        }
        self.flush_at = None;
        for i in std::mem::take(&mut self.pending_sends) {
            self.send_to_server(i, t);
        }
    }

    fn send_to_server(&mut self, i: usize, sent: u64) {
        let o = &self.input.overheads;
        let at_server = sent + o.request_latency_ns.round() as u64;
        let r = &self.input.requests[i];
        match admit(&self.limits, r.prompt_len, r.output_len) {
            Ok(max_new) => self.client[i].out_len = max_new,
            Err(_) => {
                self.client[i].failed = true;
                let back = at_server + o.request_latency_ns.round() as u64;
                self.client[i].done_obs = Some(back);
                self.q.push(back, Event::ClientDone(i));
                return;
            }
        }
        let tok = (r.prompt_len as f64 * o.tokenize_per_token_ns).round() as u64;
        let arrive = at_server.max(self.tokenizer_free_ns) + tok;
        self.tokenizer_free_ns = arrive;
        self.q.push(arrive, Event::ServerArrival(i));
    }

    /// The router hands request `i` to a replica's waiting queue; returns the replica.
    fn route(&mut self, i: usize) -> usize {
        let replicas = &self.replicas;
        let r = self
            .router
            .pick(replicas.len(), |k| replicas[k].sched.load());
        let rep = &mut self.replicas[r];
        let req = &self.input.requests[i];
        let local = rep
            .sched
            .add_request(req.prompt_len, self.client[i].out_len);
        rep.sched.set_cached_prefix(local, req.cached_prefix);
        if let Some(g) = req.prefix_group {
            rep.sched.set_prefix_group(local, g, req.prefix_len);
        }
        rep.globals.push(i);
        rep.sched.arrive(local);
        self.client[i].replica = r as u32;
        r
    }

    fn client_done(&mut self, _i: usize, t: u64) {
        self.in_flight -= 1;
        if let Some(w) = self.waiters.pop_front() {
            self.start(w, t);
        }
    }

    /// Replica `r`'s next batch, with the streams of requests it retracted settled; `None`
    /// (and the scheduler told it is idle) when it has nothing to run.
    fn form(&mut self, r: usize) -> Option<Batch> {
        let rep = &mut self.replicas[r];
        let Some(b) = rep.sched.next_batch() else {
            rep.sched.on_idle();
            return None;
        };
        for &local in &b.retracted {
            if self.input.reference_itl {
                continue; // `last_obs` is always current in the reference path
            }
            let id = rep.globals[local];
            let joined = self.client[id].joined.take();
            let pending = joined
                .filter(|j| j.1 == rep.streams.decode_steps())
                .map(|j| j.0);
            self.client[id].last_obs = rep.streams.leave(pending);
        }
        Some(b)
    }

    /// Error unless nothing can ever wake replica `r` (no event pending) while it has work.
    fn check_not_stuck(&self, r: usize) -> Result<()> {
        let sched = &self.replicas[r].sched;
        if sched.has_work() && self.q.is_empty() {
            return Err(Error::Impossible(format!(
                "the scheduler is stuck with {} waiting and {} running requests: a request cannot fit the KV pool of {} tokens",
                sched.waiting_len(),
                sched.running_len(),
                sched.kv_pool_tokens()
            )));
        }
        Ok(())
    }

    /// Forms and launches replica `r`'s next batch at `t`, or lets it go idle.
    fn run_next(&mut self, r: usize, t: u64) -> Result<()> {
        if self.lockstep {
            return self.run_group(t);
        }
        let Some(b) = self.form(r) else {
            self.check_not_stuck(r)?;
            self.replicas[r].batch = None;
            return Ok(());
        };
        let st = self.cost.step_time(&b.shape);
        let end = self.step_end_time(t, st.total_ns, &b.shape)?;
        self.sample(r, t, end - t, &b.shape);
        self.q.push(end, Event::StepEnd(r));
        self.replicas[r].batch = Some(b);
        self.steps += 1;
        Ok(())
    }

    /// DP attention: every rank forms its batch and they step together (an idle rank runs an
    /// empty batch); the group's step ends as one event.
    fn run_group(&mut self, t: u64) -> Result<()> {
        let n = self.replicas.len();
        let batches: Vec<Option<Batch>> = (0..n).map(|r| self.form(r)).collect();
        if batches.iter().all(Option::is_none) {
            self.group_busy = false;
            return (0..n).try_for_each(|r| self.check_not_stuck(r));
        }
        let shapes: Vec<BatchShape> = batches
            .iter()
            .map(|b| b.as_ref().map(|b| b.shape).unwrap_or_default())
            .collect();
        let st = self.cost.group_step_time(&shapes);
        let end = self.step_end_time(t, st.total_ns, &shapes)?;
        for (r, b) in batches.into_iter().enumerate() {
            if let Some(b) = &b {
                self.sample(r, t, end - t, &b.shape);
            }
            self.replicas[r].batch = b;
        }
        self.q.push(end, Event::StepEnd(0));
        self.group_busy = true;
        self.steps += 1;
        Ok(())
    }

    /// When a step of `total_ns` launched at `t` ends, or an error for a broken cost model or
    /// an absurd profile (which must error, not overflow the clock); `shape` (the batch, or
    /// the group's batches) only names the step in the error.
    fn step_end_time(&self, t: u64, total_ns: f64, shape: &dyn std::fmt::Debug) -> Result<u64> {
        if !(total_ns.is_finite() && total_ns >= 0.0) {
            return Err(Error::Msg(format!(
                "cost model returned {total_ns} ns for {shape:?}"
            )));
        }
        let dur = (total_ns.round() as u64).max(1);
        t.checked_add(dur)
            .filter(|&e| e <= MAX_CLOCK_NS)
            .ok_or_else(|| {
                Error::Impossible(format!(
                    "simulated time would pass {} years (a step of {:.3e} s at {:.3e} s): \
                 the hardware profile or model numbers are implausible",
                    MAX_CLOCK_NS / (365 * 86_400 * 1_000_000_000),
                    total_ns / 1e9,
                    t as f64 / 1e9
                ))
            })
    }

    fn sample(&mut self, r: usize, t: u64, dur: u64, shape: &BatchShape) {
        if !self.input.record_timeline {
            return;
        }
        let sched = &self.replicas[r].sched;
        self.timeline.push(Sample {
            time_ns: t,
            duration_ns: dur,
            replica: r as u32,
            running: sched.running_len(),
            waiting: sched.waiting_len() as u64,
            prefill_tokens: shape.prefill_tokens,
            decode_tokens: shape.decode_reqs,
            kv_used_tokens: sched.kv_used(),
            kv_capacity_tokens: sched.kv_pool_tokens(),
        });
    }

    fn step_end(&mut self, r: usize, t: u64) -> Result<()> {
        let rep = &mut self.replicas[r];
        let Some(batch) = rep.batch.take() else {
            return Ok(());
        };
        let res = rep.sched.complete(&batch);
        if self.input.check_invariants {
            rep.sched
                .check_invariants()
                .map_err(|e| Error::Msg(format!("invariant violated at t={t} ns: {e}")))?;
        }
        let emit = t + self.input.overheads.stream_latency_ns.round() as u64;
        let obs = self.client_loop.observe(emit);
        if batch.decode {
            if self.input.reference_itl {
                // Members still running, plus those that just finished, got a token.
                let ids: Vec<usize> = rep
                    .sched
                    .running_ids()
                    .chain(res.finished.iter().copied())
                    .collect();
                let mut tokens = 0;
                for local in ids {
                    if res.prefill_tokens.contains(&local) {
                        continue; // a mixed batch's new request: its first token, not a decode one
                    }
                    let got = res
                        .clipped
                        .iter()
                        .find(|c| c.0 == local)
                        .map_or(res.gain, |c| c.1);
                    let c = &mut self.client[rep.globals[local]];
                    rep.streams.chunk_itl(obs.saturating_sub(c.last_obs), got);
                    c.last_obs = obs;
                    tokens += got;
                }
                rep.streams.emit(obs, tokens);
            } else if res.gain <= 1 {
                rep.streams.decode_tokens(res.decoded, obs);
            } else {
                let steps = rep.streams.decode_steps();
                let clipped: Vec<(Option<u64>, u64)> = res
                    .clipped
                    .iter()
                    .map(|&(local, got)| {
                        let joined = self.client[rep.globals[local]].joined;
                        (joined.filter(|j| j.1 == steps).map(|j| j.0), got)
                    })
                    .collect();
                rep.streams
                    .decode_tokens_by(res.decoded, res.gain, &clipped, obs);
            }
        }
        let mut joined = 0;
        for &local in &res.prefill_tokens {
            let c = &mut self.client[rep.globals[local]];
            match c.first_obs {
                None => c.first_obs = Some(obs),
                Some(_) => rep.streams.single_itl(obs.saturating_sub(c.last_obs)),
            }
            if self.input.reference_itl {
                c.last_obs = obs;
                continue;
            }
            if rep.sched.phase(local) == Phase::Running {
                c.joined = Some((obs, rep.streams.decode_steps()));
                c.last_obs = obs;
                joined += 1;
            }
        }
        rep.streams
            .prefill_tokens(res.prefill_tokens.len() as u64, joined, obs);
        for &local in &res.finished {
            let id = rep.globals[local];
            self.client[id].done_obs = Some(obs);
            self.q.push(obs, Event::ClientDone(id));
        }
        Ok(())
    }

    fn finish(self, now: u64) -> Result<SimOutput> {
        let mut requests = Vec::with_capacity(self.client.len());
        let mut end = self.input.dispatch_end_ns;
        let mut failed = 0;
        for (i, c) in self.client.iter().enumerate() {
            let r = &self.input.requests[i];
            let Some(done) = c.done_obs else {
                return Err(Error::Msg(format!("internal: request {i} never finished")));
            };
            end = end.max(done);
            let success = !c.failed;
            failed += c.failed as u64;
            requests.push(RequestOutcome {
                prompt_len: r.prompt_len,
                output_len: if success { c.out_len } else { 0 },
                success,
                start_ns: c.start_ns,
                ttft_ns: c.first_obs.map_or(0, |f| f - c.start_ns),
                latency_ns: done - c.start_ns,
            });
        }
        if self.input.server_info_at_end {
            end += 2 * self.input.overheads.request_latency_ns.round() as u64;
        }
        let accept_length = self.replicas[0].sched.spec_accept_length();
        let mut sched = SchedStats::default();
        let (mut itl, mut emissions) = (Vec::new(), Vec::new());
        for rep in self.replicas {
            sched.absorb(rep.sched.stats());
            itl.extend(rep.streams.itl);
            emissions.extend(rep.streams.emissions);
        }
        let stats = SimStats {
            events: self.q.processed,
            steps: self.steps,
            simulated_ns: now,
            sched,
            failed,
        };
        Ok(SimOutput {
            record: RunRecord {
                requests,
                itl,
                emissions,
                duration_ns: end,
            },
            stats,
            timeline: self.timeline,
            accept_length,
        })
    }
}
