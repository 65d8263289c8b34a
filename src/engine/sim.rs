//! The discrete-event simulation of one benchmark run: bench_serving's client (dispatch,
//! semaphore, single-threaded sends, observation of streamed tokens) against SGLang (the
//! tokenizer, a router over data-parallel replicas, and each replica's scheduler iterations
//! priced by a [`StepCost`]). Produces the [`RunRecord`] the metrics are computed from.
use super::admission::{admit, AdmissionLimits, Refusal};
use super::client_loop::{run_events, BenchClient, ServerSide};
use super::dispatch::EngineScheduler;
use super::event::{step_end_time, Event, EventQueue};
pub use super::input::{ClientRequest, SimInput};
use super::request::Phase;
use super::router::Router;
use super::scheduler::{Batch, SchedStats};
use super::stream::Streams;
use super::timeline::Sample;
use crate::cost::{BatchShape, StepCost};
use crate::error::{Error, Result};
use crate::metrics::record::RunRecord;

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
    /// Serial work of the server's front-end process (tokenizer queue, vLLM's API server), ns.
    pub frontend_busy_ns: u64,
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
    client: BenchClient,
    steps: u64,
    timeline: Vec<Sample>,
    /// DP attention: the replicas are attention ranks that step together.
    lockstep: bool,
    /// Lockstep mode: a group step is in flight.
    group_busy: bool,
    /// The server's admission rules (every replica runs the same configuration).
    limits: AdmissionLimits,
}

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
        client: BenchClient::new(input),
        steps: 0,
        timeline: Vec::new(),
        lockstep,
        group_busy: false,
    };
    let now = run_events(input, &mut sim)?;
    // No event left: a replica still holding requests can never run them (e.g. a retracted
    // request SGLang re-admits only with its whole max_new_tokens charged again).
    (0..sim.replicas.len()).try_for_each(|r| sim.check_not_stuck(r))?;
    sim.finish(now)
}

impl ServerSide for Sim<'_> {
    fn admit(&self, r: &ClientRequest) -> std::result::Result<u64, Refusal> {
        admit(&self.limits, r.prompt_len, r.output_len)
    }

    fn client_and_queue(&mut self) -> (&mut BenchClient, &mut EventQueue) {
        (&mut self.client, &mut self.q)
    }

    fn server_event(&mut self, ev: Event, t: u64) -> Result<()> {
        match ev {
            Event::ServerArrival(i) => {
                let r = self.route(i);
                let idle = if self.lockstep {
                    !self.group_busy
                } else {
                    self.replicas[r].batch.is_none()
                };
                if idle {
                    self.run_next(r, t)?;
                }
            }
            Event::StepEnd(r) if self.lockstep => {
                for k in 0..self.replicas.len() {
                    self.step_end(k, t)?;
                }
                self.run_next(r, t)?;
            }
            Event::StepEnd(r) => {
                self.step_end(r, t)?;
                self.run_next(r, t)?;
            }
            _ => {}
        }
        Ok(())
    }
}

impl Sim<'_> {
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
        let cached = match req.cached_rank {
            Some(rank) if rank != r => 0,
            _ => req.cached_prefix,
        };
        rep.sched.set_cached_prefix(local, cached);
        if let Some(g) = req.prefix_group {
            rep.sched.set_prefix_group(local, g, req.prefix_len);
        }
        rep.globals.push(i);
        rep.sched.arrive(local);
        r
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
            self.client[rep.globals[local]].retract(&mut rep.streams);
        }
        Some(b)
    }

    /// Error unless nothing can ever wake replica `r` (no event pending) while it has work.
    fn check_not_stuck(&self, r: usize) -> Result<()> {
        let sched = &self.replicas[r].sched;
        if sched.has_work() && self.q.is_empty() {
            return Err(Error::Impossible(format!(
                "the scheduler is stuck with {} waiting and {} running requests: a waiting request cannot fit the KV pool of {} tokens, so the real server would wait for ever too (before SGLang 0.5.4 a retracted request is charged its prompt, the tokens it already generated and its whole max_new_tokens again); raise --max-total-tokens or shorten the outputs",
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
        let end = step_end_time(t, st.total_ns, &b.shape)?;
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
        let end = step_end_time(t, st.total_ns, &shapes)?;
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
        let chunks = res.decoded + res.prefill_tokens.len() as u64;
        let obs = self.client.stream(emit, chunks);
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
            self.client.finished(rep.globals[local], obs, &mut self.q);
        }
        Ok(())
    }

    fn finish(self, now: u64) -> Result<SimOutput> {
        let (requests, end, failed) = self.client.outcomes(self.input, |i| {
            Error::Msg(format!("internal: request {i} never finished"))
        })?;
        let accept_length = self.replicas[0].sched.spec_accept_length();
        let frontend_busy_ns = self.client.frontend_busy_ns();
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
            frontend_busy_ns,
        })
    }
}
