//! vLLM V1's scheduler (`vllm/v1/core/sched/scheduler.py`, reference A.3, A.5): one token
//! budget (`max_num_batched_tokens`) per step shared by running and waiting requests, the
//! running requests first (each decode takes one token, a partial prefill continues with
//! `min(rest, threshold, budget)`), then waiting requests from the head of the queue while
//! fewer than `max_num_seqs` run and the budget lasts, unless this step preempted. KV is
//! handed out in blocks; when a running request's blocks do not fit, the most recently
//! admitted running request is preempted (its blocks freed, `num_computed_tokens = 0`,
//! prepended to the waiting queue) until they do. Prefix caching hits whole blocks, at most
//! `num_tokens − 1` tokens.
//!
//! V0 (0.6–0.7, `vllm/core/scheduler.py`) runs through the same code with four switches in
//! [`VllmSchedConfig`]: prefill-first steps without chunked prefill, admission after a
//! preemption with it, the 1% block watermark at admission, and the last *arrived* running
//! request as the preemption victim; its whole prompt must fit at admission (V0 allocates
//! it at once), and it has no prefix caching unless asked.
//!
//! The running requests whose prompt is computed decode in [`Running`] (O(1) aggregates, as
//! SGLang's batch); the ones still prefilling are a short list in admission order. Decodes
//! are scheduled before partial prefills: the same as vLLM's running order (admission order)
//! except with `--long-prefill-token-threshold`, where a request admitted after a still
//! prefilling one may decode before it (the budget always covers every decode, since vLLM
//! requires `max_num_batched_tokens ≥ max_num_seqs`).
mod schedule;

use super::admission::AdmissionLimits;
use super::kv::KvPool;
use super::request::{Phase, Req, ReqTable};
use super::running::{IdMap, Member, Running};
use super::scheduler::{SchedStats, StepResult};
use super::window_kv::WindowKv;
use crate::cost::BatchShape;
use crate::spec::server::ServerConfig;
use crate::spec::vllm::defaults;
use std::collections::{BTreeSet, VecDeque};

/// Prefix-cache key of a request's own blocks (kept cached after a preemption so its
/// recompute hits them): this bit set on its id, apart from the client's group ids.
const OWN_BLOCKS_KEY: u64 = 1 << 63;

/// What the vLLM scheduler reads from its server's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct VllmSchedConfig {
    pub block_size: u64,
    pub max_num_seqs: u64,
    pub max_num_batched_tokens: u64,
    /// 0 = off.
    pub long_prefill_token_threshold: u64,
    /// The threshold is not applied when one request is running or waiting in all (0.31+).
    pub lone_request_uncapped: bool,
    pub prefix_caching: bool,
    /// Admission needs blocks for the whole sequence (0.19+).
    pub full_sequence_must_fit: bool,
    /// Usable KV blocks × block size.
    pub kv_pool_tokens: u64,
    /// CUDA-graph capture sizes, ascending (empty when eager): tokens in V1, decode batch
    /// sizes in V0.
    pub capture_sizes: Vec<u64>,
    /// V0 without chunked prefill (`_schedule_default`): a step that admits prompts runs
    /// only them; decodes run in steps that admit nothing.
    pub prefill_first: bool,
    /// V0 with chunked prefill (`_schedule_chunked_prefill`): new prompts are admitted even
    /// in a step that preempted (V1 admits none then).
    pub admit_after_preemption: bool,
    /// V0's watermark: tokens (whole blocks) an admission must leave free.
    pub watermark_tokens: u64,
    /// The preemption victim is the last arrived running request (V0, FCFS by arrival);
    /// V1 takes the last admitted.
    pub victim_by_arrival: bool,
    /// Which steps replay CUDA graphs, and how.
    pub graphs: GraphRule,
    /// Async scheduling (`step_with_batch_queue`): step N+1 is scheduled while step N runs,
    /// so requests that arrive during step N wait for step N+2 (unless N+1 is empty).
    pub async_scheduling: bool,
    /// Async scheduling before 0.12: a request that finishes in step N is scheduled once
    /// more in step N+1 (its slot, budget token and blocks taken, its output dropped).
    pub async_wasted_slot: bool,
}

/// Requests that finished in the step just completed but, under async scheduling before
/// 0.12, still take a decode slot in the next one (aggregates only).
#[derive(Debug, Clone, Copy, Default)]
struct Ghosts {
    reqs: u64,
    /// Σ context of the wasted decodes (each attends to its context + 1).
    ctx_sum: u64,
    /// KV tokens they hold until the next step is formed.
    kv_tokens: u64,
}

/// Which steps run under CUDA graphs, by engine and version (reference A.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphRule {
    /// V0: pure decode steps replay a full graph of the padded batch size; prefill and mixed
    /// steps run eagerly.
    DecodeOnly,
    /// V1 0.8–0.10 (`cudagraph_mode` PIECEWISE): every step up to the largest capture size
    /// (in tokens) runs piecewise: attention eager between captured pieces.
    Piecewise,
    /// V1 0.11+ (FULL_AND_PIECEWISE): pure decode steps replay full graphs, mixed steps
    /// piecewise ones.
    FullAndPiecewise,
}

impl VllmSchedConfig {
    /// The scheduler settings of `server`, a vLLM server (`None` for SGLang).
    pub fn of(server: &ServerConfig) -> Option<Self> {
        let v = server.vllm.as_ref()?;
        Some(VllmSchedConfig {
            block_size: v.block_size,
            max_num_seqs: v.max_num_seqs,
            max_num_batched_tokens: v.max_num_batched_tokens,
            long_prefill_token_threshold: v.long_prefill_token_threshold,
            lone_request_uncapped: v.version >= defaults::LONE_REQUEST_UNCAPPED_SINCE,
            prefix_caching: v.prefix_caching,
            full_sequence_must_fit: v.full_sequence_must_fit,
            kv_pool_tokens: v.usable_blocks() * v.block_size,
            capture_sizes: v.capture_sizes.clone(),
            prefill_first: !v.chunked_prefill,
            admit_after_preemption: v.is_v0() && v.chunked_prefill,
            watermark_tokens: v.watermark_blocks * v.block_size,
            victim_by_arrival: v.is_v0(),
            async_scheduling: v.async_scheduling,
            async_wasted_slot: v.async_scheduling
                && v.version < defaults::ASYNC_SKIPS_FINISHED_SINCE,
            graphs: if v.is_v0() {
                GraphRule::DecodeOnly
            } else if v.version < defaults::FULL_AND_PIECEWISE_SINCE {
                GraphRule::Piecewise
            } else {
                GraphRule::FullAndPiecewise
            },
        })
    }

    /// Rounds tokens up to whole blocks.
    pub fn ceil_block(&self, tokens: u64) -> u64 {
        tokens.div_ceil(self.block_size) * self.block_size
    }

    /// The capture size a step of `tokens` tokens is padded to, or `None` (eager).
    pub fn padded_tokens(&self, tokens: u64) -> Option<u64> {
        let i = self.capture_sizes.partition_point(|&s| s < tokens);
        self.capture_sizes.get(i).copied()
    }

    /// Sets how `shape` runs under CUDA graphs, per [`GraphRule`]: V1 pads every step up to
    /// the largest capture size by tokens (a larger step runs eagerly, unpadded).
    pub fn set_graph(&self, shape: &mut BatchShape) {
        let mixed = shape.prefill_reqs > 0;
        let tokens = shape.prefill_tokens + shape.decode_reqs;
        (shape.graph_bs, shape.piecewise) = match self.graphs {
            GraphRule::DecodeOnly if mixed => (None, false),
            GraphRule::DecodeOnly => (self.padded_tokens(shape.decode_reqs), false),
            GraphRule::Piecewise => (self.padded_tokens(tokens), true),
            GraphRule::FullAndPiecewise => (self.padded_tokens(tokens), mixed),
        };
    }
}

/// The vLLM scheduler of one engine (one data-parallel rank).
#[derive(Debug, Clone)]
pub struct VllmScheduler {
    cfg: VllmSchedConfig,
    limits: AdmissionLimits,
    reqs: ReqTable,
    waiting: VecDeque<usize>,
    /// Running requests whose prompt is computed: one token each per step.
    decoding: Running,
    /// Running requests still prefilling (or recomputing), in admission order.
    prefilling: Vec<usize>,
    /// Every running request by (admission sequence, id): the preemption victim is the last.
    order: BTreeSet<(u64, usize)>,
    /// Admission sequence and prefix-cache key (locked while it runs) of running requests.
    running_meta: IdMap<(u64, Option<u64>)>,
    /// Shared-prefix group and prefix length of requests that have one.
    groups: IdMap<(u64, u64)>,
    kv: KvPool,
    join_seq: u64,
    /// This step's scheduler holds one request in all (the long-prefill cap is off, 0.31+).
    alone: bool,
    /// Async scheduling: requests that arrived while a step was in flight (not yet seen by
    /// the scheduler), and whether a step is in flight.
    staged: Vec<usize>,
    in_flight: bool,
    ghosts: Ghosts,
    window: Option<u64>,
    /// The hybrid KV manager's sliding-window groups (`None`: every layer in one group).
    window_kv: Option<WindowKv>,
    /// Window-group tokens each still-prefilling request holds (its last chunk's call).
    window_held: IdMap<u64>,
    stats: SchedStats,
    finished_scratch: Vec<Member>,
}

impl VllmScheduler {
    /// The scheduler of one engine of `server` (a vLLM server); `window` is the model's
    /// sliding window. `None` when `server` is not a vLLM server.
    pub fn new(server: &ServerConfig, window: Option<u64>) -> Option<Self> {
        let cfg = VllmSchedConfig::of(server)?;
        Some(VllmScheduler {
            limits: AdmissionLimits::of(server),
            reqs: ReqTable::default(),
            waiting: VecDeque::new(),
            decoding: Running::new(cfg.block_size),
            prefilling: Vec::new(),
            order: BTreeSet::new(),
            running_meta: IdMap::default(),
            groups: IdMap::default(),
            kv: KvPool::new(cfg.kv_pool_tokens),
            join_seq: 0,
            alone: false,
            staged: Vec::new(),
            in_flight: false,
            ghosts: Ghosts::default(),
            window,
            window_kv: server
                .vllm
                .as_ref()
                .and_then(|v| v.hybrid.as_ref())
                .map(|h| WindowKv::new(h, cfg.block_size)),
            window_held: IdMap::default(),
            stats: SchedStats::default(),
            finished_scratch: Vec::new(),
            cfg,
        })
    }

    pub fn cfg(&self) -> &VllmSchedConfig {
        &self.cfg
    }
    pub fn limits(&self) -> &AdmissionLimits {
        &self.limits
    }
    pub fn stats(&self) -> &SchedStats {
        &self.stats
    }
    /// Running requests (decoding + prefilling), `len(self.running)` in vLLM.
    pub fn running_len(&self) -> u64 {
        self.order.len() as u64
    }
    /// Local ids of the decoding requests.
    pub fn running_ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.decoding.members().map(|m| m.id)
    }
    pub fn waiting_len(&self) -> usize {
        self.waiting.len() + self.staged.len()
    }
    /// Local ids in the waiting queue, head first (for tests and reports).
    pub fn waiting_ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.waiting.iter().copied()
    }
    pub fn phase(&self, id: usize) -> Phase {
        self.reqs[id].phase
    }
    /// Output tokens request `id` has (while it is not decoding, or the running count).
    pub fn output_tokens(&self, id: usize) -> u64 {
        match self.decoding.member(id) {
            Some(m) => self.decoding.out_of(m),
            None => self.reqs[id].out,
        }
    }
    /// Tokens of request `id` whose KV is computed (`num_computed_tokens`).
    pub fn computed_tokens(&self, id: usize) -> u64 {
        match self.decoding.member(id) {
            Some(m) => self.decoding.ctx_of(m),
            None => self.reqs[id].prefilled,
        }
    }
    pub fn kv_used(&self) -> u64 {
        self.kv.used_tokens()
    }
    pub fn kv_pool_tokens(&self) -> u64 {
        self.cfg.kv_pool_tokens
    }
    pub fn load(&self) -> u64 {
        self.waiting_len() as u64 + self.running_len()
    }
    pub fn has_work(&self) -> bool {
        !self.waiting.is_empty() || !self.order.is_empty() || !self.staged.is_empty()
    }
    /// Nothing to run: vLLM keeps no state across idle periods.
    pub fn on_idle(&mut self) {
        self.in_flight = false;
    }

    /// Registers a request (not yet arrived). Ids must be dense from 0.
    pub fn add_request(&mut self, input_len: u64, max_new: u64) -> usize {
        self.reqs.push(Req::new(input_len, max_new))
    }
    /// Prompt tokens already cached when it arrives (the warm-up's prompt).
    pub fn set_cached_prefix(&mut self, id: usize, tokens: u64) {
        if self.cfg.prefix_caching {
            self.reqs[id].cached_prefix = tokens;
        }
    }
    /// Declares request `id`'s shared-prefix group (kept only with prefix caching on).
    pub fn set_prefix_group(&mut self, id: usize, group: u64, prefix_len: u64) {
        if self.cfg.prefix_caching {
            let prefix = prefix_len.min(self.reqs[id].input_len);
            self.groups.insert(id, (group & !OWN_BLOCKS_KEY, prefix));
        }
    }
    /// A request reaches the waiting queue (at the tail); under async scheduling, while a
    /// step is in flight, it is seen one schedule later ([`VllmSchedConfig::async_scheduling`]).
    pub fn arrive(&mut self, id: usize) {
        self.reqs[id].phase = Phase::Waiting;
        if self.cfg.async_scheduling && self.in_flight {
            self.staged.push(id);
        } else {
            self.waiting.push_back(id);
        }
    }

    /// Tokens of `r`'s context its full-attention group(s) hold themselves (not through the
    /// cache), block-rounded.
    fn own_alloc(&self, r: &Req, ctx: u64) -> u64 {
        let groups = self.window_kv.as_ref().map_or(1, |w| w.full_groups());
        groups * (self.cfg.ceil_block(ctx.max(r.shared)) - r.shared)
    }

    /// Tokens the window groups hold for a decoding request of `ctx` tokens (0 without them).
    fn window_decode(&self, ctx: u64) -> u64 {
        self.window_kv.as_ref().map_or(0, |w| w.decode_tokens(ctx))
    }

    /// Everything decoding request `id` at `ctx` holds itself.
    fn decode_hold(&self, id: usize, ctx: u64) -> u64 {
        self.own_alloc(&self.reqs[id], ctx) + self.window_decode(ctx)
    }

    /// Change of a decoding member's holdings in the next decode step (a new block when its
    /// context fills its last one; a window block freed now and then).
    fn step_delta(&self, ctx: u64) -> i64 {
        match &self.window_kv {
            Some(w) => w.step_delta(ctx),
            None => ((ctx % self.cfg.block_size == 0) as u64 * self.cfg.block_size) as i64,
        }
    }

    /// Applies a signed change to the pool.
    fn apply_delta(&mut self, delta: i64) {
        if delta >= 0 {
            self.allocate(delta as u64);
        } else {
            self.kv.release(delta.unsigned_abs());
        }
    }

    fn allocate(&mut self, tokens: u64) {
        self.kv.allocate(tokens);
        self.stats.max_kv_used_tokens = self.stats.max_kv_used_tokens.max(self.kv.used_tokens());
    }

    /// Request `id` leaves the running set (finish or preemption) with `ctx` computed tokens:
    /// its own blocks are freed; on preemption its full blocks stay cached (evictable) under
    /// its own key, and a finished request's shared prefix stays in its group.
    /// Returns the tokens released.
    fn leave_running(&mut self, id: usize, ctx: u64, finished: bool) -> u64 {
        let window = match self.window_held.remove(&id) {
            Some(w) => w,
            None => self.window_decode(ctx),
        };
        let own = self.own_alloc(&self.reqs[id], ctx) + window;
        self.kv.release(own);
        let (seq, key) = self.running_meta.remove(&id).unwrap_or((0, None));
        self.order.remove(&(seq, id));
        if !finished && self.cfg.prefix_caching && !self.groups.contains_key(&id) {
            let keep = ctx / self.cfg.block_size * self.cfg.block_size;
            self.kv.cache.insert(OWN_BLOCKS_KEY | id as u64, keep);
            self.kv.make_room(0);
        }
        if let Some(k) = key {
            self.kv.cache.unlock(k);
        }
        if finished {
            self.groups.remove(&id);
        }
        self.reqs[id].shared = 0;
        own
    }

    /// Applies a finished step: decoders advance one token, requests whose prompt (or
    /// recompute) completed get a token and decode from now on, finished ones leave.
    pub fn complete(&mut self, batch: &super::scheduler::Batch) -> StepResult {
        let mut res = StepResult {
            prefill_tokens: Vec::with_capacity(batch.prefill.len()),
            ..Default::default()
        };
        let mut done = std::mem::take(&mut self.finished_scratch);
        done.clear();
        if batch.decode {
            self.decoding.step_into(&mut done);
            res.decoded = self.decoding.len() + done.len() as u64;
        }
        for &m in &done {
            let ctx = self.decoding.ctx_of(&m);
            if let Some(w) = self.window_kv.as_mut() {
                w.leave(m.c, ctx);
            }
            let own = self.leave_running(m.id, ctx, true);
            self.keep_as_ghost(own, ctx);
            let r = &mut self.reqs[m.id];
            r.out = r.max_new;
            r.phase = Phase::Finished;
            res.finished.push(m.id);
        }
        self.finished_scratch = done;
        for it in &batch.prefill {
            if !it.last_chunk {
                continue;
            }
            self.insert_group_prefix(it.id);
            self.prefilling.retain(|&p| p != it.id);
            let r = &mut self.reqs[it.id];
            let ctx = r.prefilled;
            if r.max_new > 0 {
                r.out += 1;
                res.prefill_tokens.push(it.id);
            }
            if r.out >= r.max_new {
                r.phase = Phase::Finished;
                res.finished.push(it.id);
                let own = self.leave_running(it.id, ctx, true);
                self.keep_as_ghost(own, ctx);
            } else {
                r.phase = Phase::Running;
                let (input, out, max_new) = (r.input_len, r.out, r.max_new);
                let seq = self.running_meta.get(&it.id).map_or(0, |m| m.0);
                self.decoding.join(it.id, ctx, out, input, max_new, seq);
                // The next call's remove_skipped_blocks frees the window blocks behind it.
                if let Some(held) = self.window_held.remove(&it.id) {
                    self.kv.release(held - self.window_decode(ctx));
                }
                let c = ctx as i64 - self.decoding.d;
                if let Some(w) = self.window_kv.as_mut() {
                    w.join(c, ctx);
                }
            }
        }
        res.finished.sort_unstable();
        self.stats.max_running = self.stats.max_running.max(self.running_len());
        res
    }

    /// Async scheduling before 0.12: a finished request (context `ctx`, `own` KV tokens
    /// just freed) takes a decode slot in the next step, holding its blocks until that step
    /// is formed.
    fn keep_as_ghost(&mut self, own: u64, ctx: u64) {
        if !self.cfg.async_wasted_slot {
            return;
        }
        self.kv.allocate(own);
        self.ghosts.reqs += 1;
        self.ghosts.ctx_sum += ctx + 1;
        self.ghosts.kv_tokens += own;
    }

    /// After its prompt is computed, a request's shared prefix (whole blocks) moves into its
    /// group's cache, or its duplicate copy is freed if a sibling cached it first.
    fn insert_group_prefix(&mut self, id: usize) {
        let Some(&(g, prefix)) = self.groups.get(&id) else {
            return;
        };
        let r = &self.reqs[id];
        let (fill, shared) = (r.fill_len(), r.shared);
        self.reqs[id].shared =
            self.kv
                .cache_group_prefix(g, prefix, fill, shared, self.cfg.block_size);
    }

    /// The DESIGN.md invariants between steps (O(n)): KV used = Σ own allocations ≤
    /// capacity, running ≤ max_num_seqs, phases consistent with the sets.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.kv.check()?;
        let mut expect: u64 = self.ghosts.kv_tokens;
        expect += self
            .decoding
            .members()
            .map(|m| self.decode_hold(m.id, self.decoding.ctx_of(m)))
            .sum::<u64>();
        for &id in &self.prefilling {
            let r = &self.reqs[id];
            expect +=
                self.own_alloc(r, r.prefilled) + self.window_held.get(&id).copied().unwrap_or(0);
        }
        if expect != self.kv.used_tokens() {
            return Err(format!(
                "KV used {} but allocations sum to {expect}",
                self.kv.used_tokens()
            ));
        }
        let running = self.decoding.len() + self.prefilling.len() as u64;
        if running != self.running_len() || running > self.cfg.max_num_seqs {
            return Err(format!(
                "{running} running requests ({} in order) against max_num_seqs {}",
                self.running_len(),
                self.cfg.max_num_seqs
            ));
        }
        for m in self.decoding.members() {
            if self.reqs[m.id].phase != Phase::Running {
                return Err(format!("decoding request {} is not in phase Running", m.id));
            }
        }
        for &id in &self.prefilling {
            if self.reqs[id].phase != Phase::Chunking {
                return Err(format!("prefilling request {id} is not in phase Chunking"));
            }
        }
        Ok(())
    }
}
