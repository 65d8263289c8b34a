//! Prefill-batch formation (`get_new_batch_prefill`): the chunked request first, then the
//! waiting queue in policy order through the PrefillAdder's token, memory and running-request
//! budgets (reference A.2, A.3); which requests may stop at EOS under `--ignore-eos` rules.
use super::adder::{AddResult, PrefillAdder};
use super::adder_rules::AdderRules;
use super::{Batch, PrefillItem, Scheduler};
use crate::cost::BatchShape;
use crate::engine::request::Phase;
use crate::spec::server::SchedulePolicy;
use crate::spec::version_rules;

impl Scheduler {
    pub(super) fn try_prefill(&mut self) -> Option<Batch> {
        if (self.batch_is_full || self.waiting.is_empty()) && self.chunked.is_none() {
            return None;
        }
        let running_bs = self.running.len();
        let max_running = self.cfg.max_running_requests;
        if running_bs >= max_running && self.chunked.is_none() {
            self.batch_is_full = true;
            return None;
        }
        if self.cfg.schedule_policy == SchedulePolicy::Lpm && self.waiting.len() <= 128 {
            // Longest cached prefix first; stable, so FCFS among equals.
            let mut v: Vec<usize> = self.waiting.drain(..).collect();
            v.sort_by_key(|&id| std::cmp::Reverse(self.reqs[id].cached_prefix));
            self.waiting.extend(v);
        }
        let mixed = if self.cfg.mixed_chunk && running_bs > 0 {
            running_bs
        } else {
            0
        };
        let mut adder = PrefillAdder::new(
            self.cfg.page_size,
            self.kv_free(),
            self.running.reserved_new_tokens(),
            version_rules::running_reserve_ratio(self.cfg.version, self.new_token_ratio),
            self.cfg.max_prefill_tokens,
            self.cfg.chunked_prefill_size,
            mixed,
        )
        .with_rules(AdderRules::of(self.cfg.version));
        let mut items: Vec<PrefillItem> = Vec::with_capacity(self.waiting.len().min(63) + 1);
        if let Some(id) = self.chunked {
            let r = &self.reqs[id];
            let (extend, last) = adder.add_chunked(r.extend_len(), r.max_new);
            if extend > 0 {
                items.push(PrefillItem {
                    id,
                    extend,
                    prefix: r.prefix_len(),
                    last_chunk: last,
                });
            }
        }
        let mut eos_states: Option<Vec<(u64, u64)>> = None;
        while let Some(&id) = self.waiting.front() {
            if adder.admitted as u64 >= max_running.saturating_sub(running_bs) {
                self.batch_is_full = true;
                break;
            }
            let hit = if self.reqs[id].shared == 0 {
                self.cache_hit(id)
            } else {
                self.reqs[id].shared
            };
            self.reqs[id].shared = hit;
            let (extend, max_new, remaining, fill, prefix) = {
                let r = &self.reqs[id];
                (
                    r.extend_len(),
                    r.max_new,
                    r.remaining_new(),
                    r.fill_len(),
                    r.prefix_len(),
                )
            };
            let (res, admitted) = if self.cfg.radix_cache {
                adder.add_one(extend, max_new, remaining)
            } else {
                let states = eos_states.get_or_insert_with(|| self.ignore_eos_states(&items));
                let input = self.reqs[id].input_len;
                let candidate = self.limits.ignore_eos_candidate_tokens(input, extend);
                adder.add_one_ignore_eos(extend, max_new, remaining, fill, candidate, states)
            };
            if admitted.is_none() {
                self.reqs[id].shared = 0;
            }
            if let Some(e) = admitted {
                self.waiting.pop_front();
                if let Some((g, _)) = self.group_of(id) {
                    self.kv.cache.lock(g);
                }
                self.stats.prefix_hit_tokens += hit;
                self.stats.prompt_tokens += self.reqs[id].input_len;
                let last_chunk = e == extend;
                self.reqs[id].phase = if last_chunk {
                    Phase::Running
                } else {
                    Phase::Chunking
                };
                items.push(PrefillItem {
                    id,
                    extend: e,
                    prefix,
                    last_chunk,
                });
            }
            match res {
                AddResult::Continue => {}
                AddResult::NoToken => {
                    self.batch_is_full = true;
                    break;
                }
                AddResult::Other => break,
            }
        }
        if items.is_empty() {
            return None;
        }
        let mut shape = BatchShape::default();
        for it in &items {
            let r = &self.reqs[it.id];
            let before = if r.prefilled == 0 {
                0
            } else {
                self.own_alloc(r, r.prefilled)
            };
            let after = self.own_alloc(r, it.prefix + it.extend);
            self.allocate(after.saturating_sub(before));
            self.reqs[it.id].prefilled = it.prefix + it.extend;
            shape.add_prefill(it.extend, it.prefix, self.window);
        }
        self.chunked = items.iter().find(|it| !it.last_chunk).map(|it| it.id);
        let decode =
            mixed > 0 && self.kv_free() >= self.running.new_pages_next_step() * self.cfg.page_size;
        if decode {
            let pages = self.running.new_pages_next_step();
            self.allocate(pages * self.cfg.page_size);
            shape.decode_reqs = running_bs;
            shape.decode_ctx_sum = self.running.ctx_sum() + running_bs;
        }
        Some(Batch {
            shape,
            prefill: items,
            decode,
            retracted: Vec::new(),
            gain: 1,
        })
    }

    /// (tokens_left, tokens_occupied) of running and already admitted requests, sorted.
    fn ignore_eos_states(&self, items: &[PrefillItem]) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self
            .running
            .members()
            .map(|m| {
                let out = self.running.out_of(m);
                (m.max_new.saturating_sub(out), m.input_len + out)
            })
            .collect();
        v.extend(items.iter().map(|it| {
            let r = &self.reqs[it.id];
            (r.remaining_new(), r.fill_len())
        }));
        v.sort_unstable();
        v
    }
}
