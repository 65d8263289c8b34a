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
//! A server with `--dp` holds DP ranks, each its own scheduler (a *unit* here); the router
//! picks a server and the server's DP controller the rank `bootstrap_room % dp` (SGLang's
//! `round_robin_scheduler` in PD mode; the decode side reads the prefill rank the same way),
//! with the room the router's random 63-bit id. With DP attention a server's ranks step
//! together (`prepare_mlp_sync_batch`: an idle rank runs an empty batch, a rank in its
//! PREBUILT iteration an idle forward) and the step is priced by `group_step_time`; without
//! it the ranks are independent replicas. Each rank has its own NICs (its own transfer FIFO).
//!
//! Events reuse [`Event`]: `ServerArrival(i)` is request `i` at the router,
//! `ServerArrival(n + i)` its KV landing on the decode side, `StepEnd(u)` the step of prefill
//! unit `u < x·dp` or decode unit `u − x·dp` (a DP-attention group's step: its first unit).
mod client;
mod decode;
mod stages;

pub use stages::{PdStats, SideStats, StageStats};

use super::client_loop::{run_events, BenchClient};
use super::event::{step_end_time, Event, EventQueue, MAX_CLOCK_NS};
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

/// How one side's schedulers form servers: `ranks` consecutive schedulers per server, which
/// step together when `lockstep` (DP attention).
#[derive(Debug, Clone, Copy)]
pub struct SideLayout {
    pub ranks: usize,
    pub lockstep: bool,
}

impl SideLayout {
    /// The units that step with unit `u` (itself alone unless lockstep).
    fn group(&self, u: usize) -> std::ops::Range<usize> {
        if self.lockstep {
            let s = u / self.ranks * self.ranks;
            s..s + self.ranks
        } else {
            u..u + 1
        }
    }
}

/// The servers of a PD deployment and how they are joined.
pub struct PdServers<'a> {
    /// One scheduler per DP rank, server by server (`replicas × ranks`).
    pub prefill: Vec<Scheduler>,
    pub decode: Vec<Scheduler>,
    pub prefill_layout: SideLayout,
    pub decode_layout: SideLayout,
    /// Seeds the router's `bootstrap_room` draws (they choose the DP rank on both sides).
    pub room_seed: u64,
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
    /// Prefill KV tokens held until the transfer completes.
    held: u64,
}

struct PrefillServer {
    sched: Scheduler,
    batch: Option<Batch>,
    /// Its step (or its DP-attention group's) is in flight.
    stepping: bool,
    globals: Vec<usize>,
    /// When its NICs finish the transfers queued so far.
    link_free_ns: u64,
    busy_ns: u64,
}

struct DecodeServer {
    sched: Scheduler,
    batch: Option<Batch>,
    stepping: bool,
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
    prefill_layout: SideLayout,
    decode_layout: SideLayout,
    room_seed: u64,
    reserved: u64,
    ns_per_token: f64,
    latency_ns: u64,
}

/// Runs the PD simulation to completion.
pub fn simulate_pd(input: &SimInput, servers: PdServers) -> Result<PdOutput> {
    let n = input.requests.len();
    let uneven = |v: &[Scheduler], l: SideLayout| l.ranks == 0 || v.len() % l.ranks != 0;
    if input.dispatch_ns.len() != n
        || servers.prefill.is_empty()
        || servers.decode.is_empty()
        || uneven(&servers.prefill, servers.prefill_layout)
        || uneven(&servers.decode, servers.decode_layout)
    {
        return Err(Error::Msg(
            "internal: dispatch times and requests differ in length, or a PD side has no server or a partial one"
                .into(),
        ));
    }
    let mut sim = Pd {
        input,
        cfg: PdConfigView {
            prefill_cost: servers.prefill_cost,
            decode_cost: servers.decode_cost,
            prefill_layout: servers.prefill_layout,
            decode_layout: servers.decode_layout,
            room_seed: servers.room_seed,
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
                stepping: false,
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
                stepping: false,
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

    /// The router's `bootstrap_room` for request `i`: a random 63-bit id (`generate_room_id`),
    /// here a SplitMix64 draw from the seed so reruns are identical.
    fn room(&self, i: usize) -> u64 {
        let mut z = self.cfg.room_seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) >> 1
    }

    /// The router picks a prefill and a decode server independently (by the summed load of
    /// their ranks); each server's DP controller picks the rank `room % dp`. The request waits
    /// in the decode rank's pre-allocation queue (and in the prefill rank's bootstrap queue).
    fn route(&mut self, i: usize, t: u64) -> Result<()> {
        let req = self.input.requests[i];
        let room = self.room(i);
        let (pr, dr) = (self.cfg.prefill_layout.ranks, self.cfg.decode_layout.ranks);
        let prefill = &self.prefill;
        let p_server = self.p_router.pick(prefill.len() / pr, |k| {
            (k * pr..(k + 1) * pr)
                .map(|u| prefill[u].sched.load())
                .sum()
        });
        let p = p_server * pr + (room % pr as u64) as usize;
        let decode = &self.decode;
        let d_server = self.d_router.pick(decode.len() / dr, |k| {
            (k * dr..(k + 1) * dr)
                .map(|u| {
                    let ds = &decode[u];
                    ds.sched.load() + ds.prealloc.len() as u64 + ds.in_transfer
                })
                .sum()
        });
        let d = d_server * dr + (room % dr as u64) as usize;
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
        if !self.decode[d].stepping {
            self.run_decode(d, t)?;
        }
        Ok(())
    }

    /// `process_decode_queue`: resume retracted requests; if none is left retracted,
    /// pre-allocate FIFO until the first refusal and hand those to their prefill ranks.
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
            if !ps.stepping {
                woken.push(c.prefill as usize);
            }
        }
        woken.dedup();
        for p in woken {
            if !self.prefill[p].stepping {
                self.run_prefill(p, t)?;
            }
        }
        Ok(())
    }

    /// Queues `tokens` of request `i`'s KV on prefill unit `p`'s NICs at `t`; the last piece
    /// schedules the landing on the decode side.
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

    /// Request `i`'s KV and first token landed on its decode rank: the prefill rank frees its
    /// copy (which may let it admit more) and the decode rank takes the request.
    fn kv_landed(&mut self, i: usize, t: u64) -> Result<()> {
        let c = self.routes[i];
        let p = c.prefill as usize;
        self.prefill[p].sched.pd_release_held(c.held);
        if !self.prefill[p].stepping {
            self.run_prefill(p, t)?;
        }
        let d = c.decode as usize;
        let ds = &mut self.decode[d];
        ds.in_transfer -= 1;
        ds.sched.pd_transferred(c.d_local);
        if !ds.stepping {
            self.run_decode(d, t)?;
        }
        Ok(())
    }

    // --- prefill servers ----------------------------------------------------------------------

    /// Launches the next step of prefill unit `p` (its whole group with DP attention), or
    /// lets it go idle.
    fn run_prefill(&mut self, p: usize, t: u64) -> Result<()> {
        let group = self.cfg.prefill_layout.group(p);
        let mut batches = Vec::with_capacity(group.len());
        for k in group.clone() {
            let ps = &mut self.prefill[k];
            let b = ps.sched.next_batch();
            match &b {
                None => ps.sched.on_idle(),
                Some(b) => {
                    for it in &b.prefill {
                        let i = ps.globals[it.id];
                        if self.stamps[i].prefill_start_ns.is_none() {
                            self.stamps[i].prefill_start_ns = Some(t);
                        }
                    }
                }
            }
            batches.push(b);
        }
        if batches.iter().all(Option::is_none) {
            group.for_each(|k| self.prefill[k].stepping = false);
            return Ok(());
        }
        let shapes: Vec<BatchShape> = batches
            .iter()
            .map(|b| b.as_ref().map(|b| b.shape).unwrap_or_default())
            .collect();
        let st = match shapes.as_slice() {
            [one] => self.cfg.prefill_cost.step_time(one),
            all => self.cfg.prefill_cost.group_step_time(all),
        };
        let end = step_end_time(t, st.total_ns, &shapes)?;
        for (k, b) in group.clone().zip(batches) {
            if let Some(b) = &b {
                self.sample(k, t, end - t, &b.shape, false);
            }
            let ps = &mut self.prefill[k];
            ps.busy_ns += end - t;
            ps.stepping = true;
            ps.batch = b;
        }
        self.q.push(end, Event::StepEnd(group.start));
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
                    "invariant violated on prefill unit {p} at t={t} ns: {e}"
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
            if it.last_chunk {
                let own = prompt.saturating_sub(self.input.requests[i].cached_prefix);
                self.routes[i].held = self.prefill[p].sched.pd_hold(own);
            }
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
        let first_accept = self.decode[0].sched.spec_accept_length();
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
                // bench_serving reads the first decode server's first rank
                // (`internal_states[0]` of the PD router's server info).
                accept_length: first_accept,
                frontend_busy_ns: self.client.frontend_busy_ns(),
            },
            pd,
        })
    }

    fn client_failed(&self) -> Vec<bool> {
        self.client.iter().map(|c| c.failed).collect()
    }
}
