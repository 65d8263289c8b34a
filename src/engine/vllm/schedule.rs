//! One call of vLLM V1's `Scheduler.schedule()` (reference A.3): running requests first
//! (decodes, then partial prefills), preempting the most recently admitted running request
//! while blocks are short; then, if nothing was preempted, waiting requests from the head of
//! the queue until the token budget, `max_num_seqs` or the blocks run out (the first that
//! does not fit stops admission: no skipping ahead). V0's switches are described in the
//! parent module.
use super::{VllmScheduler, OWN_BLOCKS_KEY};
use crate::cost::BatchShape;
use crate::engine::request::Phase;
use crate::engine::scheduler::{Batch, PrefillItem};

/// Which running request a preemption removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Victim {
    /// Nothing is running.
    None,
    Decoder,
    Prefilling(usize),
}

impl VllmScheduler {
    /// The next step's batch, or `None` when nothing can run. Under async scheduling the
    /// requests that arrived during the step just finished are not seen (vLLM scheduled this
    /// step while that one ran) unless this step would otherwise be empty; the finished
    /// requests' wasted slots (before 0.12) ride in it and free their blocks once it is formed.
    pub fn next_batch(&mut self) -> Option<Batch> {
        let held = std::mem::take(&mut self.staged);
        let mut batch = self.schedule();
        let empty = batch.is_none();
        self.waiting.extend(held);
        if empty && !self.waiting.is_empty() {
            batch = self.schedule();
        }
        let g = std::mem::take(&mut self.ghosts);
        self.kv.release(g.kv_tokens);
        self.in_flight = batch.is_some();
        batch
    }

    /// One call of `schedule()` over the requests the scheduler sees.
    fn schedule(&mut self) -> Option<Batch> {
        self.reqs.trim();
        self.alone = self.cfg.lone_request_uncapped && self.load() == 1;
        let mut retracted = Vec::new();
        let mut items = Vec::new();
        if self.cfg.prefill_first {
            // V0 without chunking: prompts that fit run alone; decodes wait for a step
            // that admits nothing.
            self.admit_waiting(self.cfg.max_num_batched_tokens, &mut items);
            if !items.is_empty() {
                return Some(self.finish_batch(items, 0, retracted));
            }
        }
        let mut preempted = self.schedule_decodes(&mut retracted)?;
        let mut budget = self
            .cfg
            .max_num_batched_tokens
            .saturating_sub(self.decoding.len() + self.ghosts.reqs);
        self.schedule_partials(&mut budget, &mut items, &mut retracted, &mut preempted);
        // Waiting requests, unless this step preempted (V1; V0 with chunking admits anyway;
        // an empty step admits anyway: vLLM would run the empty step and admit at the next
        // one, at the same time).
        let decodes = self.decoding.len();
        let idle = items.is_empty() && decodes == 0;
        if !self.cfg.prefill_first && (!preempted || self.cfg.admit_after_preemption || idle) {
            self.admit_waiting(budget, &mut items);
        }
        if items.is_empty() && decodes == 0 {
            return None;
        }
        Some(self.finish_batch(items, decodes, retracted))
    }

    /// Blocks for this step's decodes (one token each; a block for each whose context fills
    /// its last block), preempting the last running request while they do not fit.
    /// `Some(preempted)`, or `None` when even a lone request does not fit.
    fn schedule_decodes(&mut self, retracted: &mut Vec<usize>) -> Option<bool> {
        let mut preempted = false;
        while self.kv.admissible_tokens() + self.decode_frees().1 < self.decode_frees().0 {
            if self.preempt_last(retracted, false) == Victim::None {
                break;
            }
            preempted = true;
        }
        let (need, freed) = self.decode_frees();
        if self.kv.admissible_tokens() + freed < need {
            return None; // a lone request always fits (the pool holds max_model_len)
        }
        self.kv.release(freed);
        self.allocate(need);
        Some(preempted)
    }

    /// (tokens the next decode step allocates, window tokens it frees first).
    fn decode_frees(&mut self) -> (u64, u64) {
        match self.window_kv.as_mut() {
            Some(w) => w.next_step(&self.decoding),
            None => (self.decoding.new_pages_next_step() * self.cfg.block_size, 0),
        }
    }

    /// Partial prefills continue, in admission order, within `budget`; blocks short preempt
    /// the last running request (a decoder victim gives its budget token back).
    fn schedule_partials(
        &mut self,
        budget: &mut u64,
        items: &mut Vec<PrefillItem>,
        retracted: &mut Vec<usize>,
        preempted: &mut bool,
    ) {
        for id in self.prefilling.clone() {
            if *budget == 0 {
                break;
            }
            if !self.running_meta.contains_key(&id) {
                continue; // preempted in this step
            }
            let (fill, done) = (self.reqs[id].fill_len(), self.reqs[id].prefilled);
            let n = self.chunk(fill - done, *budget);
            let window = self
                .window_kv
                .as_ref()
                .map(|w| w.chunk_tokens(done, done + n));
            let held = self.window_held.get(&id).copied().unwrap_or(0);
            let need = (self.own_alloc(&self.reqs[id], done + n)
                - self.own_alloc(&self.reqs[id], done)) as i64
                + window.map_or(0, |w| w as i64 - held as i64);
            let mut fits = true;
            while (self.kv.admissible_tokens() as i64) < need {
                *preempted = true;
                match self.preempt_last(retracted, true) {
                    Victim::Decoder => *budget += 1,
                    Victim::Prefilling(v) if v != id => {}
                    _ => {
                        fits = false;
                        break;
                    }
                }
            }
            if !fits {
                break;
            }
            self.apply_delta(need);
            if let Some(w) = window {
                self.window_held.insert(id, w);
            }
            items.push(self.schedule_chunk(id, done, n));
            *budget -= n;
        }
    }

    /// The batch of `items` and `decodes` decoding requests, its shape priced by the cost
    /// model, and the step counted in the stats.
    fn finish_batch(
        &mut self,
        items: Vec<PrefillItem>,
        decodes: u64,
        retracted: Vec<usize>,
    ) -> Batch {
        let mut shape = BatchShape::default();
        for it in &items {
            shape.add_prefill(it.extend, it.prefix, self.window);
        }
        shape.decode_reqs = decodes + self.ghosts.reqs;
        if decodes > 0 {
            shape.decode_ctx_sum = self.decoding.ctx_sum() + decodes;
        }
        shape.decode_ctx_sum += self.ghosts.ctx_sum;
        self.cfg.set_graph(&mut shape);
        let s = &mut self.stats;
        match (items.is_empty(), decodes > 0) {
            (true, _) => s.decode_steps += 1,
            (false, true) => {
                s.prefill_steps += 1;
                s.mixed_steps += 1
            }
            (false, false) => s.prefill_steps += 1,
        }
        Batch {
            shape,
            prefill: items,
            decode: decodes > 0,
            gain: 1,
            retracted,
        }
    }

    /// Tokens one request prefills now: the rest, capped by the long-prefill threshold (not
    /// for a lone request from 0.31) and the budget left.
    fn chunk(&self, rest: u64, budget: u64) -> u64 {
        let t = self.cfg.long_prefill_token_threshold;
        let capped = if t > 0 && rest > t && !self.alone {
            t
        } else {
            rest
        };
        capped.min(budget)
    }

    /// Prefix-cache hit of waiting request `id`: (tokens it need not compute, the cache key
    /// to lock while it runs, tokens the cache holds for it). Whole blocks, at most
    /// `num_tokens − 1` (`get_computed_blocks`: the last token is always recomputed).
    fn cache_lookup(&self, id: usize) -> (u64, Option<u64>, u64) {
        if !self.cfg.prefix_caching {
            return (0, None, 0);
        }
        let b = self.cfg.block_size;
        let r = &self.reqs[id];
        let limit = r.fill_len().saturating_sub(1);
        let (key, cap) = match self.groups.get(&id) {
            Some(&(g, prefix)) => (g, prefix),
            None => (OWN_BLOCKS_KEY | id as u64, u64::MAX),
        };
        let held = self.kv.cache.cached(key).min(cap).min(limit) / b * b;
        let warm = r.cached_prefix.min(limit) / b * b;
        let lock = (held > 0 || self.groups.contains_key(&id)).then_some(key);
        (held.max(warm), lock, held)
    }

    /// Request `id` computes `n` more tokens after its first `done` in this step: its item.
    fn schedule_chunk(&mut self, id: usize, done: u64, n: u64) -> PrefillItem {
        let r = &mut self.reqs[id];
        r.prefilled = done + n;
        PrefillItem {
            id,
            extend: n,
            prefix: done,
            last_chunk: done + n == r.fill_len(),
        }
    }

    /// Admits waiting requests from the head while budget, `max_num_seqs` and blocks allow.
    fn admit_waiting(&mut self, mut budget: u64, items: &mut Vec<PrefillItem>) {
        while budget > 0 && self.running_len() + self.ghosts.reqs < self.cfg.max_num_seqs {
            let Some(&id) = self.waiting.front() else {
                break;
            };
            let (hit, key, held) = self.cache_lookup(id);
            if let Some(k) = key {
                self.kv.cache.lock(k);
            }
            self.reqs[id].shared = held;
            let fill = self.reqs[id].fill_len();
            let n = self.chunk(fill - hit, budget);
            if self.cfg.prefill_first && n < fill - hit {
                if let Some(k) = key {
                    self.kv.cache.unlock(k);
                }
                self.reqs[id].shared = 0;
                break; // V0 without chunking: the whole prompt fits this step or waits
            }
            let window = self
                .window_kv
                .as_ref()
                .map(|w| w.chunk_tokens(hit, hit + n));
            let need = self.own_alloc(&self.reqs[id], hit + n) + window.unwrap_or(0);
            let must_fit = if self.cfg.full_sequence_must_fit {
                self.own_alloc(&self.reqs[id], fill)
                    + self
                        .window_kv
                        .as_ref()
                        .map_or(0, |w| w.chunk_tokens(hit, fill))
            } else {
                need
            };
            if self.kv.admissible_tokens() < need.max(must_fit) + self.cfg.watermark_tokens {
                if let Some(k) = key {
                    self.kv.cache.unlock(k);
                }
                self.reqs[id].shared = 0;
                break; // head-of-line: later requests are not tried
            }
            self.waiting.pop_front();
            self.allocate(need);
            if let Some(w) = window {
                self.window_held.insert(id, w);
            }
            // Local ids are handed out in arrival order.
            let seq = if self.cfg.victim_by_arrival {
                id as u64
            } else {
                self.join_seq
            };
            self.join_seq += 1;
            self.order.insert((seq, id));
            self.running_meta.insert(id, (seq, key));
            self.prefilling.push(id);
            self.stats.prefix_hit_tokens += hit;
            self.stats.prompt_tokens += self.reqs[id].input_len;
            self.reqs[id].phase = Phase::Chunking;
            items.push(self.schedule_chunk(id, hit, n));
            budget -= n;
        }
    }

    /// Preempts the most recently admitted running request (`self.running.pop()` under
    /// FCFS): its blocks are freed (its full blocks stay cached), `num_computed_tokens = 0`,
    /// and it goes to the front of the waiting queue. `decode_allocated`: this step's decode
    /// blocks are already allocated (a decoder victim gives its new block back too).
    fn preempt_last(&mut self, retracted: &mut Vec<usize>, decode_allocated: bool) -> Victim {
        let Some(&(_, id)) = self.order.last() else {
            return Victim::None;
        };
        self.stats.retractions += 1;
        let victim = if let Some(m) = self.decoding.remove(id) {
            let ctx = self.decoding.ctx_of(&m);
            if let Some(w) = self.window_kv.as_mut() {
                w.leave(m.c, ctx);
            }
            self.leave_running(id, ctx, false);
            if decode_allocated {
                // This step's decode change of the victim is undone too.
                self.apply_delta(-self.step_delta(ctx));
            }
            self.reqs[id].out = self.decoding.out_of(&m);
            retracted.push(id);
            Victim::Decoder
        } else {
            let ctx = self.reqs[id].prefilled;
            self.leave_running(id, ctx, false);
            self.prefilling.retain(|&p| p != id);
            Victim::Prefilling(id)
        };
        let r = &mut self.reqs[id];
        r.prefilled = 0;
        r.cached_prefix = 0;
        r.retractions += 1;
        r.phase = Phase::Waiting;
        self.waiting.push_front(id);
        victim
    }
}
