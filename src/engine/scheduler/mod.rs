//! SGLang's scheduler loop (`scheduler.py`, reference A.1–A.4): every iteration tries a prefill
//! first (PrefillAdder budgets, running cap, one chunked request at a time) and decodes only
//! when no prefill can be formed; decode checks KV memory and retracts when it runs out;
//! the new-token ratio decays per decode step and resets when idle.
pub mod adder;
pub mod adder_rules;
mod batch_full;
pub mod config;
mod decode;
mod prebuilt;
mod prefill;
pub mod speculative;
mod swa;

use super::admission::AdmissionLimits;
use super::kv::KvPool;
use super::request::{Phase, Req, ReqTable};
use super::running::{IdMap, Running};
use crate::cost::BatchShape;
use crate::spec::server::{SchedulePolicy, ServerConfig};
use crate::spec::version_rules;
use config::SchedulerConfig;
use std::collections::VecDeque;

/// One request's part of a prefill batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefillItem {
    pub id: usize,
    pub extend: u64,
    pub prefix: u64,
    /// Last chunk: the request produces a token and joins the running batch.
    pub last_chunk: bool,
}

/// A batch chosen for one iteration.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub shape: BatchShape,
    pub prefill: Vec<PrefillItem>,
    /// The running batch decodes one token each in this step (pure decode, or mixed chunk).
    pub decode: bool,
    /// Requests retracted while forming this batch.
    pub retracted: Vec<usize>,
    /// Tokens each running request gains in the decode part (1; more with speculation).
    pub gain: u64,
}

/// What a completed step produced.
#[derive(Debug, Clone, Default)]
pub struct StepResult {
    /// Requests that got a token from prefill (first token, or next token after retraction).
    pub prefill_tokens: Vec<usize>,
    /// Running members that got a decode token (count, before finishes are removed).
    pub decoded: u64,
    /// Requests that produced their last token in this step, ascending id.
    pub finished: Vec<usize>,
    /// Tokens each decode member gained (the batch's `gain`).
    pub gain: u64,
    /// Decode members that finished with fewer than `gain` tokens: (id, tokens gained).
    pub clipped: Vec<(usize, u64)>,
}

/// Counters for reports and invariants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SchedStats {
    pub prefill_steps: u64,
    pub decode_steps: u64,
    pub mixed_steps: u64,
    pub retractions: u64,
    pub max_running: u64,
    pub max_kv_used_tokens: u64,
    /// Prompt tokens found in the radix cache at admission, and prompt tokens admitted.
    pub prefix_hit_tokens: u64,
    pub prompt_tokens: u64,
}

impl SchedStats {
    /// Adds another replica's counters (sums; maxima for the peaks).
    pub fn absorb(&mut self, o: &SchedStats) {
        self.prefill_steps += o.prefill_steps;
        self.decode_steps += o.decode_steps;
        self.mixed_steps += o.mixed_steps;
        self.retractions += o.retractions;
        self.max_running = self.max_running.max(o.max_running);
        self.max_kv_used_tokens = self.max_kv_used_tokens.max(o.max_kv_used_tokens);
        self.prefix_hit_tokens += o.prefix_hit_tokens;
        self.prompt_tokens += o.prompt_tokens;
    }
}

/// The SGLang scheduler of one replica.
#[derive(Debug, Clone)]
pub struct Scheduler {
    cfg: SchedulerConfig,
    /// Requests by local id; finished ones are dropped at the next `next_batch`.
    reqs: ReqTable,
    waiting: VecDeque<usize>,
    running: Running,
    chunked: Option<usize>,
    /// The KV pool and the radix cache beside it.
    kv: KvPool,
    /// SGLang's SWA pool beside the full one, when the hybrid pools are on (`swa`).
    swa: Option<swa::SwaPool>,
    new_token_ratio: f64,
    init_ratio: f64,
    min_ratio: f64,
    ratio_decay: f64,
    batch_is_full: bool,
    /// Decode finishes not yet visible to `filter_batch`: bit i set = some become visible
    /// i iterations from now (`batch_full`).
    finish_bits: u8,
    /// Finished requests are visible: the next `update_running_batch` clears `batch_is_full`.
    full_clear_ready: bool,
    join_seq: u64,
    /// PD prefill server: KV of finished prompts still being transferred (`prebuilt.rs`).
    pd_held_tokens: u64,
    /// Requests that finished in the last decode step and, with the overlap scheduler before
    /// 0.5.22 (`spec::version_rules`), still occupy a slot of the next decode step:
    /// (count, Σ context).
    ghosts: (u64, u64),
    window: Option<u64>,
    /// Shared-prefix group and prefix length of the requests in the server that have one.
    groups: IdMap<(u64, u64)>,
    stats: SchedStats,
    /// Scratch for the members finishing in a decode step (reused: no allocation per step).
    finished_scratch: Vec<super::running::Member>,
    /// The admission rules shared with the event loop and the up-front check.
    limits: AdmissionLimits,
    /// Speculative decoding's gain draws and accept-length counters.
    acceptance: speculative::Acceptance,
}

impl Scheduler {
    /// The scheduler of one replica of `server` (it keeps only the fields it reads:
    /// [`SchedulerConfig`], and the admission limits); `window` is the model's sliding window.
    pub fn new(server: &ServerConfig, window: Option<u64>) -> Self {
        let cfg = SchedulerConfig::of(server);
        let limits = AdmissionLimits::of(server);
        let init_ratio = (0.7 * cfg.schedule_conservativeness).min(1.0);
        let min_ratio = (init_ratio * 0.14).min(1.0);
        Scheduler {
            limits,
            running: Running::new(cfg.page_size),
            kv: KvPool::new(cfg.kv_pool_tokens),
            swa: cfg.swa.map(|(t, w)| swa::SwaPool::new(t, w)),
            cfg,
            reqs: ReqTable::default(),
            waiting: VecDeque::new(),
            chunked: None,
            new_token_ratio: init_ratio,
            init_ratio,
            min_ratio,
            ratio_decay: (init_ratio - min_ratio) / 600.0,
            batch_is_full: false,
            finish_bits: 0,
            full_clear_ready: false,
            join_seq: 0,
            pd_held_tokens: 0,
            ghosts: (0, 0),
            window,
            groups: IdMap::default(),
            stats: SchedStats::default(),
            finished_scratch: Vec::new(),
            acceptance: speculative::Acceptance::default(),
        }
    }

    /// Seeds the speculative gain draws (each replica its own stream).
    pub fn seed_acceptance(&mut self, seed: u64) {
        self.acceptance = speculative::Acceptance::new(seed);
    }

    /// SGLang's `avg_spec_accept_length` so far (`None` without speculation or before the
    /// first 40 decode iterations).
    pub fn spec_accept_length(&self) -> Option<f64> {
        self.cfg.spec.and(self.acceptance.accept_length())
    }

    /// The configuration this scheduler runs.
    pub fn cfg(&self) -> &SchedulerConfig {
        &self.cfg
    }
    /// The admission rules of its server.
    pub fn limits(&self) -> &AdmissionLimits {
        &self.limits
    }
    /// Counters for reports and invariants.
    pub fn stats(&self) -> &SchedStats {
        &self.stats
    }
    /// Requests in the running (decode) batch.
    pub fn running_len(&self) -> u64 {
        self.running.len()
    }
    /// Local ids of the running batch's members.
    pub fn running_ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.running.members().map(|m| m.id)
    }
    /// Where request `id` is in the server.
    pub fn phase(&self, id: usize) -> Phase {
        self.reqs[id].phase
    }
    /// Request `id`'s prompt tokens already in the radix cache when it arrives (e.g. the
    /// warm-up's prompt).
    pub fn set_cached_prefix(&mut self, id: usize, tokens: u64) {
        self.reqs[id].cached_prefix = tokens;
    }

    /// Registers a request (not yet arrived). Ids must be dense from 0.
    pub fn add_request(&mut self, input_len: u64, max_new: u64) -> usize {
        self.reqs.push(Req::new(input_len, max_new))
    }

    /// A request reaches the waiting queue.
    pub fn arrive(&mut self, id: usize) {
        self.reqs[id].phase = Phase::Waiting;
        self.enqueue(id);
    }

    fn enqueue(&mut self, id: usize) {
        if self.cfg.schedule_policy == SchedulePolicy::Lof {
            // Kept sorted by −max_new_tokens (stable: ties keep arrival order).
            let key = self.reqs[id].max_new;
            let pos = self
                .waiting
                .partition_point(|&w| self.reqs[w].max_new >= key);
            self.waiting.insert(pos, id);
        } else {
            self.waiting.push_back(id);
        }
    }

    pub fn kv_used(&self) -> u64 {
        self.kv.used_tokens()
    }
    /// Tokens available to admission: free plus evictable cache (the smaller of the full
    /// and SWA pools' with hybrid pools).
    pub fn kv_free(&self) -> u64 {
        let full = self.kv.admissible_tokens();
        self.swa
            .as_ref()
            .map_or(full, |s| full.min(s.free_tokens()))
    }

    /// Tokens of `r`'s context it holds itself (not shared through the cache), page-rounded.
    fn own_alloc(&self, r: &Req, ctx: u64) -> u64 {
        self.cfg.ceil_page(ctx.max(r.shared)) - r.shared
    }

    /// Declares request `id`'s shared-prefix group (kept only while the radix cache is on:
    /// groups matter to nothing else).
    pub fn set_prefix_group(&mut self, id: usize, group: u64, prefix_len: u64) {
        if self.cfg.radix_cache {
            let prefix = prefix_len.min(self.reqs[id].input_len);
            self.groups.insert(id, (group, prefix));
        }
    }

    /// Request `id`'s (group, shared prefix tokens), if it has one and the radix cache is on.
    fn group_of(&self, id: usize) -> Option<(u64, u64)> {
        self.groups.get(&id).copied()
    }

    /// Prompt tokens of request `id` the cache would serve now (page-aligned, at most
    /// fill − 1).
    fn cache_hit(&self, id: usize) -> u64 {
        match self.group_of(id) {
            Some((g, group_prefix)) => {
                let hit = self
                    .kv
                    .cache
                    .cached(g)
                    .min(group_prefix)
                    .min(self.reqs[id].fill_len().saturating_sub(1));
                hit / self.cfg.page_size * self.cfg.page_size
            }
            None => 0,
        }
    }

    /// A request leaves the KV pool (finish or retraction): frees what it holds itself and,
    /// on finish, leaves its context in its group's cache for later requests.
    pub(super) fn leave_pool(&mut self, id: usize, ctx: u64, finished: bool) {
        let own = self.own_alloc(&self.reqs[id], ctx);
        self.kv.release(own);
        if let Some(s) = self.swa.as_mut() {
            let evicted = s.leave(id);
            s.release(own.saturating_sub(evicted));
        }
        if let Some((g, _)) = self.group_of(id) {
            if finished {
                let keep = ctx / self.cfg.page_size * self.cfg.page_size;
                let added = self.kv.cache.insert(g, keep);
                self.kv.make_room(0);
                debug_assert!(added <= own + self.cfg.page_size);
                self.groups.remove(&id); // done with the group for good
            }
            self.kv.cache.unlock(g);
        }
        let r = &mut self.reqs[id];
        r.shared = 0;
    }

    pub fn waiting_len(&self) -> usize {
        self.waiting.len()
    }
    /// Requests this replica holds (waiting + running + chunked), for the router.
    pub fn load(&self) -> u64 {
        self.waiting.len() as u64 + self.running.len() + self.chunked.is_some() as u64
    }
    pub fn has_work(&self) -> bool {
        !self.waiting.is_empty() || !self.running.is_empty() || self.chunked.is_some()
    }

    /// The scheduler found nothing to run: `self_check_during_idle` resets the ratio.
    pub fn on_idle(&mut self) {
        self.new_token_ratio = self.init_ratio;
        self.ghosts = (0, 0);
    }

    /// `get_next_batch_to_run`: prefill first if one can be formed, else decode.
    pub fn next_batch(&mut self) -> Option<Batch> {
        self.reqs.trim();
        let cap = self.waiting.capacity();
        if cap > 4096 && self.waiting.len() < cap / 4 {
            self.waiting.shrink_to(cap / 2); // a drained backlog gives its memory back
        }
        self.finish_bits >>= 1;
        if self.finish_bits & 1 != 0 {
            self.finish_bits &= !1;
            self.full_clear_ready = true;
        }
        if let Some(b) = self.try_prefill() {
            self.ghosts = (0, 0);
            self.stats.prefill_steps += 1;
            if b.decode {
                self.stats.mixed_steps += 1;
            }
            return Some(b);
        }
        let emptied = self.running.is_empty() && (self.full_clear_ready || self.finish_bits != 0);
        let b = self.try_decode();
        if b.is_some() {
            self.stats.decode_steps += 1;
        } else if emptied && !self.waiting.is_empty() {
            // `update_running_batch` on a batch whose every request finished cleared the flag:
            // this iteration runs nothing (the normal loop's idle check resets the ratio; the
            // overlap loop's only after two empty iterations) and the next one prefills.
            if !self.cfg.overlap_schedule {
                self.on_idle();
            }
            return self.next_batch();
        }
        b
    }

    /// One `update_running_batch` call: clears `batch_is_full` when its `filter_batch` drops
    /// requests that finished in an earlier decode step (`batch_full`); on an emptied batch
    /// it drops every finished request at once.
    pub(super) fn filter_finished(&mut self) {
        if self.full_clear_ready || (self.running.is_empty() && self.finish_bits != 0) {
            self.full_clear_ready = false;
            if self.running.is_empty() {
                self.finish_bits = 0;
            }
            self.batch_is_full = false;
        }
    }

    pub(super) fn allocate(&mut self, tokens: u64) {
        self.kv.allocate(tokens);
        if let Some(s) = self.swa.as_mut() {
            s.allocate(tokens);
        }
        self.stats.max_kv_used_tokens = self.stats.max_kv_used_tokens.max(self.kv.used_tokens());
    }

    pub(super) fn release(&mut self, tokens: u64) {
        self.kv.release(tokens);
        if let Some(s) = self.swa.as_mut() {
            s.release(tokens);
        }
    }

    /// Checks the DESIGN.md invariants that hold between steps (O(n): for tests and
    /// `--check-invariants`): KV used = Σ allocations ≤ capacity, running cap, phases.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.kv.check()?;
        let mut expect: u64 = self
            .running
            .members()
            .map(|m| self.own_alloc(&self.reqs[m.id], self.running.ctx_of(m)))
            .sum();
        if let Some(id) = self.chunked {
            let r = &self.reqs[id];
            expect += self.own_alloc(r, r.prefilled);
        }
        expect += self.pd_held_tokens;
        // A PD decode server's pre-allocated requests hold their prompt KV while waiting.
        expect += self
            .reqs
            .iter()
            .filter(|r| r.phase == Phase::Waiting && r.prefilled > 0)
            .map(|r| self.own_alloc(r, r.prefilled))
            .sum::<u64>();
        if expect != self.kv.used_tokens() {
            return Err(format!(
                "KV used {} but allocations sum to {expect}",
                self.kv.used_tokens()
            ));
        }
        if let Some(s) = &self.swa {
            // The SWA pool: the same allocations less the decode tokens freed behind the
            // window, and less the shared prefixes the cache holds (not counted there).
            let evicted: u64 = self.running.members().map(|m| s.evicted(m.id)).sum();
            let swa_expect = expect - evicted;
            if swa_expect != s.used_tokens() || s.used_tokens() > s.capacity_tokens() {
                return Err(format!(
                    "SWA used {} of {} but allocations sum to {swa_expect}",
                    s.used_tokens(),
                    s.capacity_tokens()
                ));
            }
        }
        if self.running.len() > self.cfg.max_running_requests {
            return Err(format!(
                "{} running requests exceed the cap {}",
                self.running.len(),
                self.cfg.max_running_requests
            ));
        }
        let running_phase = self
            .reqs
            .iter()
            .filter(|r| r.phase == Phase::Running)
            .count() as u64;
        if running_phase != self.running.len() {
            return Err(format!(
                "{running_phase} requests in phase Running but the batch holds {}",
                self.running.len()
            ));
        }
        for m in self.running.members() {
            let out = self.running.out_of(m);
            if out == 0 || out > m.max_new {
                return Err(format!(
                    "request {} has {out} outputs of {}",
                    m.id, m.max_new
                ));
            }
        }
        Ok(())
    }

    /// After its last prefill chunk, a request's shared prefix moves into its group's cache
    /// (or, if a sibling put it there first, its duplicate copy is freed).
    fn insert_group_prefix(&mut self, id: usize) {
        let Some((g, group_prefix)) = self.group_of(id) else {
            return;
        };
        let r = &self.reqs[id];
        let (fill, shared) = (r.fill_len(), r.shared);
        self.reqs[id].shared =
            self.kv
                .cache_group_prefix(g, group_prefix, fill, shared, self.cfg.page_size);
        // The cached prefix leaves the request's SWA charge too (tree-held, evictable).
        let moved = self.reqs[id].shared - shared;
        if let Some(s) = self.swa.as_mut() {
            s.release(moved);
        }
    }

    /// Applies a finished step: prefill requests get their token and join the running batch
    /// (or stay chunked), the running batch advances one token, finished requests leave.
    pub fn complete(&mut self, batch: &Batch) -> StepResult {
        let mut res = StepResult {
            prefill_tokens: Vec::with_capacity(batch.prefill.len()),
            ..Default::default()
        };
        let mut done = std::mem::take(&mut self.finished_scratch);
        done.clear();
        let gain = batch.gain.max(1);
        res.gain = gain;
        if batch.decode {
            self.running.step_by(gain, &mut done);
        }
        res.finished = Vec::with_capacity(done.len() + batch.prefill.len());
        if batch.decode {
            res.decoded = self.running.len() + done.len() as u64;
            let mut tokens = res.decoded * gain;
            let mut ghost_ctx = 0;
            for &m in &done {
                // A speculative step allocated `gain` tokens; a request that needed fewer
                // gives the rest back (rejected slots are freed at once in SGLang).
                let ctx = self.running.finish_ctx(&m);
                let allocated = self.running.ctx_of(&m);
                if allocated > ctx {
                    let r = &self.reqs[m.id];
                    let extra = self.own_alloc(r, allocated) - self.own_alloc(r, ctx);
                    self.release(extra);
                    let got = self.running.last_gain(&m, gain);
                    tokens -= gain - got;
                    res.clipped.push((m.id, got));
                }
                self.leave_pool(m.id, ctx, true);
                ghost_ctx += ctx;
                let r = &mut self.reqs[m.id];
                r.out = r.max_new;
                r.phase = Phase::Finished;
                res.finished.push(m.id);
            }
            if !res.finished.is_empty() {
                let delay =
                    batch_full::clear_after_decodes(self.cfg.version, self.cfg.overlap_schedule);
                self.finish_bits |= 1 << delay;
            }
            let ride = version_rules::finished_rides_next_decode(
                self.cfg.version,
                self.cfg.overlap_schedule,
            );
            self.ghosts = if ride {
                (res.finished.len() as u64, ghost_ctx)
            } else {
                (0, 0)
            };
            if self.cfg.spec.is_some() {
                self.acceptance.record(res.decoded, tokens);
            }
        }
        self.finished_scratch = done;
        for it in &batch.prefill {
            if !it.last_chunk {
                continue;
            }
            let seq = self.join_seq;
            self.join_seq += 1;
            self.insert_group_prefix(it.id);
            let r = &mut self.reqs[it.id];
            let ctx = r.fill_len();
            if r.max_new > 0 {
                r.out += 1;
                res.prefill_tokens.push(it.id);
            }
            if r.out >= r.max_new {
                r.phase = Phase::Finished;
                res.finished.push(it.id);
                self.leave_pool(it.id, ctx, true);
                self.batch_is_full = false;
            } else {
                r.phase = Phase::Running;
                let (input, out, max_new) = (r.input_len, r.out, r.max_new);
                self.running.join(it.id, ctx, out, input, max_new, seq);
                if let Some(s) = self.swa.as_mut() {
                    s.join(it.id);
                }
            }
        }
        res.finished.sort_unstable();
        self.stats.max_running = self.stats.max_running.max(self.running.len());
        res
    }
}
