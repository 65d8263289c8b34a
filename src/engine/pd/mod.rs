//! The discrete-event simulation of a prefill/decode-disaggregated (PD) deployment: the same
//! bench_serving client as `engine::sim` against a PD router, `x` prefill servers and `y`
//! decode servers, each an ordinary [`Scheduler`] priced by its own [`StepCost`], as SGLang
//! v0.5.6 runs them (`disaggregation/{prefill,decode}.py`):
//!
//! 1. the router picks a prefill and a decode server independently and sends the request to
//!    both; on the decode server it enters the **pre-allocation queue**;
//! 2. each decode loop pre-allocates FIFO while its KV memory test passes (`pd_preallocate`);
//!    only then does the prefill server see it (bootstrap: prefill cannot start before);
//! 3. the prefill server schedules it with its own PrefillAdder and chunking, `max_new = 1`;
//!    after every chunk the chunk's KV goes onto the prefill server's **transfer queue** (one
//!    FIFO per server: its GPUs' NICs), the last chunk with the first token;
//! 4. when the last piece lands (+ the link's fixed latency) the decode server takes it into
//!    its waiting queue; its next loop runs a **PREBUILT** iteration (CPU only, no decode of
//!    the running batch) that streams the first token — TTFT includes the transfer;
//! 5. decode iterations as in a unified server; retraction offloads to the CPU and resumes
//!    without recompute, and blocks new pre-allocation while any request is retracted.
//!
//! Events reuse [`Event`]: `ServerArrival(i)` is request `i` at the router,
//! `ServerArrival(n + i)` its KV landing on the decode server, `StepEnd(s)` the step of
//! prefill server `s < x` or decode server `s − x`.
mod client;
mod stages;

pub use stages::{PdStats, SideStats, StageStats};

use super::client_loop::{run_events, BenchClient};
use super::event::{step_end_time, Event, EventQueue, MAX_CLOCK_NS};
use super::request::Phase;
use super::router::Router;
use super::scheduler::{Batch, SchedStats, Scheduler};
use super::sim::{SimInput, SimOutput, SimStats};
use super::stream::Streams;
use super::timeline::Sample;
use crate::cost::{BatchShape, StepCost};
use crate::error::{Error, Result};
use crate::metrics::record::RunRecord;
use crate::spec::server::LoadBalanceMethod;
use stages::Stamps;
use std::collections::VecDeque;

/// The servers of a PD deployment and how they are joined.
pub struct PdServers<'a> {
    pub prefill: Vec<Scheduler>,
    pub decode: Vec<Scheduler>,
    pub prefill_cost: &'a dyn StepCost,
    pub decode_cost: &'a dyn StepCost,
    pub policy: LoadBalanceMethod,
    /// `--num-reserved-decode-tokens`.
    pub reserved_decode_tokens: u64,
    /// Transfer time per prompt token over the busiest NIC, ns.
    pub transfer_ns_per_token: f64,
    /// Fixed time per transfer, ns.
    pub transfer_latency_ns: u64,
}

/// What a PD simulation produced: the usual output plus the per-stage times.
#[derive(Debug, Clone)]
pub struct PdOutput {
    pub sim: SimOutput,
    pub pd: PdStats,
}

/// Where the router sent a request.
#[derive(Debug, Clone, Copy, Default)]
struct Route {
    prefill: u32,
    decode: u32,
    p_local: usize,
    d_local: usize,
    /// Prompt tokens whose KV is already on the transfer queue.
    kv_queued: u64,
}

struct PrefillServer {
    sched: Scheduler,
    batch: Option<Batch>,
    globals: Vec<usize>,
    /// When its NICs finish the transfers queued so far.
    link_free_ns: u64,
    busy_ns: u64,
}

struct DecodeServer {
    sched: Scheduler,
    batch: Option<Batch>,
    globals: Vec<usize>,
    streams: Streams,
    prealloc: VecDeque<usize>,
    /// Pre-allocated requests whose KV has not landed yet (SGLang's transfer queue).
    in_transfer: u64,
    busy_ns: u64,
}

struct Pd<'a> {
    input: &'a SimInput,
    cfg: PdConfigView<'a>,
    prefill: Vec<PrefillServer>,
    decode: Vec<DecodeServer>,
    p_router: Router,
    d_router: Router,
    q: EventQueue,
    client: BenchClient,
    routes: Vec<Route>,
    stamps: Vec<Stamps>,
    steps: u64,
    timeline: Vec<Sample>,
}

struct PdConfigView<'a> {
    prefill_cost: &'a dyn StepCost,
    decode_cost: &'a dyn StepCost,
    reserved: u64,
    ns_per_token: f64,
    latency_ns: u64,
}

/// Runs the PD simulation to completion.
pub fn simulate_pd(input: &SimInput, servers: PdServers) -> Result<PdOutput> {
    let n = input.requests.len();
    if input.dispatch_ns.len() != n || servers.prefill.is_empty() || servers.decode.is_empty() {
        return Err(Error::Msg(
            "internal: dispatch times and requests differ in length, or a PD side has no server"
                .into(),
        ));
    }
    let mut sim = Pd {
        input,
        cfg: PdConfigView {
            prefill_cost: servers.prefill_cost,
            decode_cost: servers.decode_cost,
            reserved: servers.reserved_decode_tokens,
            ns_per_token: servers.transfer_ns_per_token,
            latency_ns: servers.transfer_latency_ns,
        },
        prefill: servers
            .prefill
            .into_iter()
            .map(|sched| PrefillServer {
                sched,
                batch: None,
                globals: Vec::new(),
                link_free_ns: 0,
                busy_ns: 0,
            })
            .collect(),
        decode: servers
            .decode
            .into_iter()
            .map(|sched| DecodeServer {
                sched,
                batch: None,
                globals: Vec::new(),
                streams: Streams::default(),
                prealloc: VecDeque::new(),
                in_transfer: 0,
                busy_ns: 0,
            })
            .collect(),
        p_router: Router::new(servers.policy),
        d_router: Router::new(servers.policy),
        q: EventQueue::default(),
        client: BenchClient::new(input),
        routes: vec![Route::default(); n],
        stamps: vec![Stamps::default(); n],
        steps: 0,
        timeline: Vec::new(),
    };
    let now = run_events(input, &mut sim)?;
    sim.finish(now)
}

impl Pd<'_> {
    // --- router, pre-allocation, transfer ----------------------------------------------------

    /// The router picks a prefill and a decode server independently; the request waits in the
    /// decode server's pre-allocation queue (and in the prefill server's bootstrap queue).
    fn route(&mut self, i: usize, t: u64) -> Result<()> {
        let req = self.input.requests[i];
        let prefill = &self.prefill;
        let p = self
            .p_router
            .pick(prefill.len(), |k| prefill[k].sched.load());
        let decode = &self.decode;
        let d = self.d_router.pick(decode.len(), |k| {
            decode[k].sched.load() + decode[k].prealloc.len() as u64 + decode[k].in_transfer
        });
        let ps = &mut self.prefill[p];
        let p_local = ps.sched.add_request(req.prompt_len, 1);
        ps.sched.set_cached_prefix(p_local, req.cached_prefix);
        if let Some(g) = req.prefix_group {
            ps.sched.set_prefix_group(p_local, g, req.prefix_len);
        }
        ps.globals.push(i);
        let ds = &mut self.decode[d];
        let d_local = ds.sched.add_request(req.prompt_len, self.client[i].out_len);
        ds.globals.push(i);
        ds.prealloc.push_back(i);
        let c = &mut self.routes[i];
        (c.prefill, c.decode, c.p_local, c.d_local) = (p as u32, d as u32, p_local, d_local);
        self.stamps[i].router_ns = t;
        if self.decode[d].batch.is_none() {
            self.run_decode(d, t)?;
        }
        Ok(())
    }

    /// `process_decode_queue`: resume retracted requests; if none is left retracted,
    /// pre-allocate FIFO until the first refusal and hand those to their prefill servers.
    fn poll_prealloc(&mut self, d: usize, t: u64) -> Result<()> {
        let reserved = self.cfg.reserved;
        let ds = &mut self.decode[d];
        if !ds.sched.pd_resume_retracted(ds.in_transfer, reserved) {
            return Ok(());
        }
        let mut woken = Vec::new();
        while let Some(&i) = ds.prealloc.front() {
            let c = self.routes[i];
            if !ds.sched.pd_preallocate(c.d_local, ds.in_transfer, reserved) {
                break;
            }
            ds.prealloc.pop_front();
            ds.in_transfer += 1;
            self.stamps[i].prealloc_ns = t;
            let ps = &mut self.prefill[c.prefill as usize];
            ps.sched.arrive(c.p_local);
            if ps.batch.is_none() {
                woken.push(c.prefill as usize);
            }
        }
        woken.dedup();
        for p in woken {
            if self.prefill[p].batch.is_none() {
                self.run_prefill(p, t)?;
            }
        }
        Ok(())
    }

    /// Queues `tokens` of request `i`'s KV on prefill server `p`'s NICs at `t`; the last piece
    /// schedules the landing on the decode server.
    fn queue_transfer(&mut self, p: usize, i: usize, tokens: u64, last: bool, t: u64) {
        let ps = &mut self.prefill[p];
        let start = ps.link_free_ns.max(t);
        let dur = (tokens as f64 * self.cfg.ns_per_token).round() as u64;
        let end = start.saturating_add(dur).min(MAX_CLOCK_NS);
        ps.link_free_ns = end;
        self.routes[i].kv_queued += tokens;
        if last {
            let s = &mut self.stamps[i];
            s.prefill_done_ns = t;
            s.transfer_start_ns = start;
            let landed = end.saturating_add(self.cfg.latency_ns).min(MAX_CLOCK_NS);
            s.transfer_done_ns = landed;
            let n = self.input.requests.len();
            self.q.push(landed, Event::ServerArrival(n + i));
        }
    }

    /// Request `i`'s KV and first token landed on its decode server.
    fn kv_landed(&mut self, i: usize, t: u64) -> Result<()> {
        let c = self.routes[i];
        let d = c.decode as usize;
        let ds = &mut self.decode[d];
        ds.in_transfer -= 1;
        ds.sched.pd_transferred(c.d_local);
        if ds.batch.is_none() {
            self.run_decode(d, t)?;
        }
        Ok(())
    }

    // --- prefill servers ----------------------------------------------------------------------

    fn run_prefill(&mut self, p: usize, t: u64) -> Result<()> {
        let ps = &mut self.prefill[p];
        let Some(b) = ps.sched.next_batch() else {
            ps.sched.on_idle();
            ps.batch = None;
            return Ok(());
        };
        for it in &b.prefill {
            let i = ps.globals[it.id];
            if self.stamps[i].prefill_start_ns.is_none() {
                self.stamps[i].prefill_start_ns = Some(t);
            }
        }
        let st = self.cfg.prefill_cost.step_time(&b.shape);
        let end = step_end_time(t, st.total_ns, &b.shape)?;
        self.prefill[p].busy_ns += end - t;
        self.sample(p, t, end - t, &b.shape, false);
        self.q.push(end, Event::StepEnd(p));
        self.prefill[p].batch = Some(b);
        self.steps += 1;
        Ok(())
    }

    fn prefill_step_end(&mut self, p: usize, t: u64) -> Result<()> {
        let Some(batch) = self.prefill[p].batch.take() else {
            return Ok(());
        };
        let ps = &mut self.prefill[p];
        ps.sched.complete(&batch);
        if self.input.check_invariants {
            ps.sched.check_invariants().map_err(|e| {
                Error::Msg(format!(
                    "invariant violated on prefill server {p} at t={t} ns: {e}"
                ))
            })?;
        }
        for it in &batch.prefill {
            let i = self.prefill[p].globals[it.id];
            let prompt = self.input.requests[i].prompt_len;
            let tokens = if it.last_chunk {
                prompt.saturating_sub(self.routes[i].kv_queued)
            } else {
                it.extend
            };
            self.queue_transfer(p, i, tokens, it.last_chunk, t);
        }
        Ok(())
    }

    // --- decode servers -----------------------------------------------------------------------

    fn run_decode(&mut self, d: usize, t: u64) -> Result<()> {
        self.poll_prealloc(d, t)?;
        let ds = &mut self.decode[d];
        let Some(b) = ds.sched.pd_next_batch() else {
            ds.sched.on_idle();
            ds.batch = None;
            return Ok(());
        };
        for &local in &b.retracted {
            self.client[ds.globals[local]].retract(&mut ds.streams);
        }
        let prebuilt = !b.decode;
        let dur_ns = if prebuilt {
            // PREBUILT: no GPU forward, one scheduler iteration of CPU.
            let shape = BatchShape {
                prefill_reqs: b.prefill.len() as u64,
                ..Default::default()
            };
            self.cfg.decode_cost.step_time(&shape).cpu_ns
        } else {
            self.cfg.decode_cost.step_time(&b.shape).total_ns
        };
        let end = step_end_time(t, dur_ns, &b.shape)?;
        self.decode[d].busy_ns += end - t;
        self.sample(d, t, end - t, &b.shape, true);
        self.q.push(end, Event::StepEnd(self.prefill.len() + d));
        self.decode[d].batch = Some(b);
        self.steps += 1;
        Ok(())
    }

    fn decode_step_end(&mut self, d: usize, t: u64) -> Result<()> {
        let ds = &mut self.decode[d];
        let Some(batch) = ds.batch.take() else {
            return Ok(());
        };
        let res = if batch.decode {
            ds.sched.complete(&batch)
        } else {
            ds.sched.pd_complete_prebuilt(&batch)
        };
        if self.input.check_invariants {
            ds.sched.check_invariants().map_err(|e| {
                Error::Msg(format!(
                    "invariant violated on decode server {d} at t={t} ns: {e}"
                ))
            })?;
        }
        let emit = t + self.input.overheads.stream_latency_ns.round() as u64;
        let obs = self.client.observe(emit);
        if batch.decode {
            ds.streams.decode_tokens(res.decoded, obs);
        }
        let mut joined = 0;
        for &local in &res.prefill_tokens {
            let i = ds.globals[local];
            self.client[i].first_obs = Some(obs);
            self.stamps[i].first_token_ns = t;
            if ds.sched.phase(local) == Phase::Running {
                self.client[i].joined = Some((obs, ds.streams.decode_steps()));
                self.client[i].last_obs = obs;
                joined += 1;
            }
        }
        ds.streams
            .prefill_tokens(res.prefill_tokens.len() as u64, joined, obs);
        // Resumed (retracted) requests rejoin: their next gap counts from their last token.
        if !batch.decode {
            for it in &batch.prefill {
                let i = ds.globals[it.id];
                // Fresh requests got their first token at `t` above.
                if self.stamps[i].first_token_ns == t || ds.sched.phase(it.id) != Phase::Running {
                    continue;
                }
                let last = self.client[i].last_obs;
                ds.streams.prefill_tokens(0, 1, last);
                self.client[i].joined = Some((last, ds.streams.decode_steps()));
            }
        }
        for &local in &res.finished {
            self.client.finished(ds.globals[local], obs, &mut self.q);
        }
        Ok(())
    }

    fn sample(&mut self, s: usize, t: u64, dur: u64, shape: &BatchShape, decode_side: bool) {
        if !self.input.record_timeline {
            return;
        }
        let (sched, replica, waiting) = if decode_side {
            let ds = &self.decode[s];
            // Decode side: pre-allocation queue + transfer queue + waiting (PREBUILT/retracted).
            let queued = ds.prealloc.len() as u64 + ds.in_transfer + ds.sched.waiting_len() as u64;
            (&ds.sched, self.prefill.len() + s, queued)
        } else {
            let ps = &self.prefill[s];
            (&ps.sched, s, ps.sched.waiting_len() as u64)
        };
        self.timeline.push(Sample {
            time_ns: t,
            duration_ns: dur,
            replica: replica as u32,
            running: sched.running_len(),
            waiting,
            prefill_tokens: shape.prefill_tokens,
            decode_tokens: shape.decode_reqs,
            kv_used_tokens: sched.kv_used(),
            kv_capacity_tokens: sched.cfg().kv_pool_tokens,
        });
    }

    fn finish(self, now: u64) -> Result<PdOutput> {
        let (requests, end, failed) = self.client.outcomes(self.input, |i| {
            let (r, d) = (&self.input.requests[i], self.routes[i].decode);
            let sched = &self.decode[d as usize].sched;
            Error::Impossible(format!(
                "PD: request {i} ({} prompt tokens) never finished: decode server {d} (KV pool {} tokens, {} running) could not pre-allocate or resume it",
                r.prompt_len,
                sched.cfg().kv_pool_tokens,
                sched.running_len()
            ))
        })?;
        let side = |scheds: Vec<(&Scheduler, u64)>| {
            let mut s = SideStats::default();
            for (sc, busy) in scheds {
                s.sched.absorb(sc.stats());
                s.busy_ns += busy;
                s.servers += 1;
                s.max_kv_used_tokens = s.max_kv_used_tokens.max(sc.stats().max_kv_used_tokens);
            }
            s.utilization = s.busy_ns as f64 / (s.servers.max(1) * now.max(1)) as f64;
            s
        };
        let prefill_side = side(self.prefill.iter().map(|p| (&p.sched, p.busy_ns)).collect());
        let decode_side = side(self.decode.iter().map(|d| (&d.sched, d.busy_ns)).collect());
        let pd = PdStats::new(
            &self.stamps,
            &self.client_failed(),
            prefill_side,
            decode_side,
        );
        let mut sched = SchedStats::default();
        sched.absorb(&pd.prefill.sched);
        sched.absorb(&pd.decode.sched);
        let (mut itl, mut emissions) = (Vec::new(), Vec::new());
        for ds in self.decode {
            itl.extend(ds.streams.itl);
            emissions.extend(ds.streams.emissions);
        }
        Ok(PdOutput {
            sim: SimOutput {
                record: RunRecord {
                    requests,
                    itl,
                    emissions,
                    duration_ns: end,
                },
                stats: SimStats {
                    events: self.q.processed,
                    steps: self.steps,
                    simulated_ns: now,
                    sched,
                    failed,
                },
                timeline: self.timeline,
                // Speculative decoding is not modelled on PD deployments (refused at resolve).
                accept_length: None,
            },
            pd,
        })
    }

    fn client_failed(&self) -> Vec<bool> {
        self.client.iter().map(|c| c.failed).collect()
    }
}
