//! The decode side of a prefill/decode-disaggregated (PD) server, as SGLang's
//! `disaggregation/decode.py` (v0.5.6) runs it on top of the ordinary scheduler: pre-allocation
//! of a request's prompt KV before the prefill server starts (`DecodePreallocQueue`), the
//! transferred request's PREBUILT iteration (no GPU forward; it streams the first token the
//! prefill server sampled), and the resumption of decode-side retractions (KV offloaded to the
//! CPU and reloaded, never recomputed). Retraction itself is the unified one
//! (`scheduler/decode.rs`); the retracted requests wait in the waiting queue holding no KV.
//! On the prefill side, a finished prompt's KV stays allocated while it is transferred
//! (`disagg_prefill_inflight_queue`: `release_kv_cache` only on the sender's `Success`).
use super::{Batch, PrefillItem, Scheduler, StepResult};
use crate::cost::BatchShape;
use crate::engine::request::Phase;
use crate::spec::version::Version;

/// SGLang's `SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION` used by the pre-allocation memory test.
const PREALLOC_CLIP_MAX_NEW_TOKENS: u64 = 4096;

impl Scheduler {
    /// Transferred requests waiting for their PREBUILT iteration (they hold their KV).
    fn pd_ready(&self) -> u64 {
        self.waiting
            .iter()
            .filter(|&&id| self.reqs[id].prefilled > 0)
            .count() as u64
    }

    /// `_allocatable_tokens` (without the single-request guarantee): free KV minus
    /// `reserved` tokens per running, transferring (`in_transfer`) and transferred request,
    /// minus (with `count_retracted`) what the retracted requests need to come back.
    fn pd_allocatable(&self, in_transfer: u64, reserved: u64, count_retracted: bool) -> i64 {
        let retracted: u64 = match count_retracted {
            true => self
                .waiting
                .iter()
                .map(|&id| &self.reqs[id])
                .filter(|r| r.prefilled == 0)
                .map(|r| r.input_len + r.out + reserved)
                .sum(),
            false => 0,
        };
        let holders = self.running.len() + in_transfer + self.pd_ready();
        self.kv_free() as i64 - (reserved * holders) as i64 - retracted as i64
    }

    /// Request slots a decode server has for running + pre-allocated requests: the running cap
    /// plus `pre_alloc_size` (`spec::server::ServerConfig::decode_prealloc_slots`).
    fn pd_slots(&self) -> u64 {
        self.cfg.max_running_requests + self.cfg.decode_prealloc_slots
    }

    /// `resume_retracted_reqs`: retracted requests come back FIFO (KV reloaded from the CPU)
    /// while `input + output + reserved` fits what is allocatable not counting the retracted
    /// ones (`_allocatable_tokens(count_retracted=False)`); true when none is left retracted
    /// (only then may new requests be pre-allocated).
    pub fn pd_resume_retracted(&mut self, in_transfer: u64, reserved: u64) -> bool {
        let mut allocatable = self.pd_allocatable(in_transfer, reserved, false);
        let ids: Vec<usize> = self
            .waiting
            .iter()
            .copied()
            .filter(|&id| self.reqs[id].prefilled == 0)
            .collect();
        let mut all = true;
        for id in ids {
            let (input, out) = (self.reqs[id].input_len, self.reqs[id].out);
            let held = self.running.len() + in_transfer + self.pd_ready();
            let need = (input + out + reserved) as i64;
            if need > allocatable || held >= self.pd_slots() {
                all = false;
                break;
            }
            let ctx = input + out - 1;
            let alloc = self.own_alloc(&self.reqs[id], ctx);
            self.allocate(alloc);
            self.reqs[id].prefilled = ctx;
            allocatable -= need;
        }
        all
    }

    /// `pop_preallocated` for one request (FIFO; the caller stops at the first refusal):
    /// reserves its prompt KV when
    /// `max(input + reserved, input + min(max_new, 4096) − retractable) ≤ allocatable` and a
    /// request slot is free. True when it was pre-allocated. Per version: the single-request
    /// guarantee (the second term) exists from v0.4.8 (before, `input + reserved ≤
    /// allocatable` alone), the 4096 clip from v0.5.2.
    pub fn pd_preallocate(&mut self, id: usize, in_transfer: u64, reserved: u64) -> bool {
        let allocatable = self.pd_allocatable(in_transfer, reserved, true);
        let r = &self.reqs[id];
        let version = self.cfg.version;
        let retractable = self.running.ctx_sum() as i64;
        let clip = match version >= Version::new(0, 5, 2) {
            true => r.max_new.min(PREALLOC_CLIP_MAX_NEW_TOKENS),
            false => r.max_new,
        } as i64;
        let single = match version >= Version::new(0, 4, 8) {
            true => r.input_len as i64 + clip - retractable,
            false => 0,
        };
        let need = ((r.input_len + reserved) as i64).max(single);
        let held = self.running.len() + in_transfer + self.pd_ready();
        if need > allocatable || held >= self.pd_slots() {
            return false;
        }
        let alloc = self.own_alloc(r, r.input_len);
        let input = r.input_len;
        self.allocate(alloc);
        let r = &mut self.reqs[id];
        r.prefilled = input;
        r.phase = Phase::Waiting;
        true
    }

    /// Prefill side: keeps `tokens` of a finished prompt's KV allocated until its transfer
    /// completes (at most what is free: the prompt's own KV was just released); returns the
    /// tokens held, to give back with [`Scheduler::pd_release_held`].
    pub fn pd_hold(&mut self, tokens: u64) -> u64 {
        let held = self.cfg.ceil_page(tokens).min(self.kv_free());
        self.allocate(held);
        self.pd_held_tokens += held;
        held
    }

    /// Prefill side: the transfer of a prompt holding `tokens` completed.
    pub fn pd_release_held(&mut self, tokens: u64) {
        self.release(tokens);
        self.pd_held_tokens -= tokens;
    }

    /// The request's KV (and first token) arrived: it joins the waiting queue for PREBUILT.
    pub fn pd_transferred(&mut self, id: usize) {
        self.waiting.push_back(id);
    }

    /// `get_next_disagg_decode_batch_to_run`: a PREBUILT batch of the waiting requests holding
    /// their KV (up to the running cap, no token budget, no GPU forward) when there is one,
    /// else the ordinary decode step of the running batch.
    pub fn pd_next_batch(&mut self) -> Option<Batch> {
        self.reqs.trim();
        let room = self
            .cfg
            .max_running_requests
            .saturating_sub(self.running.len()) as usize;
        let mut items = Vec::new();
        let mut rest = std::collections::VecDeque::with_capacity(self.waiting.len());
        while let Some(id) = self.waiting.pop_front() {
            let r = &self.reqs[id];
            if r.prefilled > 0 && items.len() < room {
                items.push(PrefillItem {
                    id,
                    extend: 0,
                    prefix: r.prefilled,
                    last_chunk: true,
                });
            } else {
                rest.push_back(id);
            }
        }
        self.waiting = rest;
        if !items.is_empty() {
            self.ghosts = (0, 0);
            self.stats.prefill_steps += 1;
            return Some(Batch {
                shape: BatchShape::default(),
                prefill: items,
                decode: false,
                gain: 1,
                retracted: Vec::new(),
            });
        }
        let b = self.try_decode();
        if b.is_some() {
            self.stats.decode_steps += 1;
        }
        b
    }

    /// Applies a PREBUILT batch: a new request gets the first token (sampled by the prefill
    /// server) and joins the running batch; a resumed one rejoins without a new token.
    pub fn pd_complete_prebuilt(&mut self, batch: &Batch) -> StepResult {
        let mut res = StepResult::default();
        for it in &batch.prefill {
            let seq = self.join_seq;
            self.join_seq += 1;
            let r = &mut self.reqs[it.id];
            let ctx = r.prefilled;
            if r.out == 0 && r.max_new > 0 {
                r.out = 1;
                res.prefill_tokens.push(it.id);
            }
            if r.out >= r.max_new {
                r.phase = Phase::Finished;
                res.finished.push(it.id);
                self.leave_pool(it.id, ctx, true);
            } else {
                r.phase = Phase::Running;
                let (input, out, max_new) = (r.input_len, r.out, r.max_new);
                self.running.join(it.id, ctx, out, input, max_new, seq);
            }
        }
        self.batch_is_full = false;
        res.finished.sort_unstable();
        self.stats.max_running = self.stats.max_running.max(self.running.len());
        res
    }
}
