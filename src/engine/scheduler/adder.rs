//! SGLang's `PrefillAdder` (`schedule_policy.py`): the token budgets that decide which waiting
//! requests join the next prefill batch (reference A.2). What changed between releases is in
//! [`super::adder_rules`].
use super::adder_rules::AdderRules;
use crate::engine::running::CLIP_MAX_NEW_TOKENS;

/// Result of adding one request (`AddReqResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddResult {
    Continue,
    /// Out of KV tokens: also marks the running batch full.
    NoToken,
    /// Out of prefill/chunk budget.
    Other,
}

/// Budgets of one prefill attempt. Token counts are f64 because the ratio reservation is.
#[derive(Debug, Clone)]
pub struct PrefillAdder {
    pub page_size: u64,
    /// `rem_total_tokens`: free + evictable − reservations of running and admitted requests.
    pub rem_total_tokens: f64,
    /// `cur_rem_tokens`: free + evictable − extends admitted.
    pub cur_rem_tokens: f64,
    pub rem_input_tokens: f64,
    /// `None` when chunked prefill is disabled.
    pub rem_chunk_tokens: Option<f64>,
    pub admitted: usize,
    /// The release's rules (the newest unless [`PrefillAdder::with_rules`] says otherwise).
    pub rules: AdderRules,
}

impl PrefillAdder {
    /// `free_tokens` = available + evictable; `running_reserved` = Σ min(remaining, CLIP) over
    /// running requests (before the ratio); `mixed` = running requests riding in a mixed batch.
    pub fn new(
        page_size: u64,
        free_tokens: u64,
        running_reserved: u64,
        ratio: f64,
        max_prefill: u64,
        chunk: Option<u64>,
        mixed: u64,
    ) -> Self {
        let free = free_tokens as f64;
        PrefillAdder {
            page_size,
            rem_total_tokens: free - (mixed as f64 + running_reserved as f64 * ratio),
            cur_rem_tokens: free - mixed as f64,
            rem_input_tokens: max_prefill as f64 - mixed as f64,
            rem_chunk_tokens: chunk.map(|c| c as f64 - mixed as f64),
            admitted: 0,
            rules: AdderRules::default(),
        }
    }

    /// The same adder under `rules` (a release's, [`AdderRules::of`]).
    pub fn with_rules(mut self, rules: AdderRules) -> Self {
        self.rules = rules;
        self
    }

    pub fn ceil_page(&self, t: u64) -> u64 {
        t.div_ceil(self.page_size) * self.page_size
    }

    fn update_budget(&mut self, extend: u64, max_new: u64) {
        let e = self.ceil_page(extend) as f64;
        self.rem_total_tokens -= e + max_new as f64;
        self.cur_rem_tokens -= e;
        self.rem_input_tokens -= e;
        if let Some(c) = self.rem_chunk_tokens.as_mut() {
            *c -= e;
        }
        self.admitted += 1;
    }

    pub fn budget_state(&self) -> AddResult {
        if self.rem_total_tokens <= 0.0 || self.cur_rem_tokens <= 0.0 {
            AddResult::NoToken
        } else if self.rem_input_tokens <= 0.0 || self.rem_chunk_tokens.is_some_and(|c| c <= 0.0) {
            AddResult::Other
        } else {
            AddResult::Continue
        }
    }

    /// `add_chunked_req`: the in-progress chunked request always goes first. Returns the
    /// extend length of this chunk (0 when nothing fits) and whether it is the final chunk.
    /// Its last chunk reserves the whole `max_new` (clipped), like every admission.
    pub fn add_chunked(&mut self, extend_left: u64, max_new: u64) -> (u64, bool) {
        let chunk = self.rem_chunk_tokens.unwrap_or(f64::INFINITY);
        if !self.rules.chunk_capped_by_total {
            // ≤0.5.1: `min(extend_input_len, rem_chunk_tokens)`, whatever the memory budget.
            let truncated = extend_left as f64 > chunk;
            let extend = if truncated { chunk as u64 } else { extend_left };
            let reserve = if truncated {
                0
            } else {
                max_new.min(CLIP_MAX_NEW_TOKENS)
            };
            self.update_budget(extend, reserve);
            return (extend, !truncated);
        }
        let cap = chunk.min(self.rem_total_tokens.floor()).max(0.0);
        let truncated = extend_left as f64 > cap;
        let mut extend = if truncated { cap as u64 } else { extend_left };
        if truncated {
            extend = extend / self.page_size * self.page_size;
        }
        if extend == 0 {
            return (0, false);
        }
        let reserve = if truncated {
            0
        } else {
            max_new.min(CLIP_MAX_NEW_TOKENS)
        };
        self.update_budget(extend, reserve);
        (extend, !truncated)
    }

    /// `add_one_req` (radix-cache path) for a request of `max_new` outputs with
    /// `remaining_new` still to generate (fewer after a retraction). Returns the result, and
    /// `Some(extend)` when the request was admitted (`extend` < its full extend means it
    /// became the chunked request). The check charges the remaining outputs from 0.5.4, the
    /// whole `max_new` before; the budget always reserves the whole `max_new` (clipped).
    pub fn add_one(
        &mut self,
        extend: u64,
        max_new: u64,
        remaining_new: u64,
    ) -> (AddResult, Option<u64>) {
        let charged = if self.rules.check_remaining_outputs {
            remaining_new
        } else {
            max_new
        };
        let total = extend as f64 + charged.min(CLIP_MAX_NEW_TOKENS) as f64;
        if total >= self.rem_total_tokens {
            return (AddResult::NoToken, None);
        }
        let input_tokens = self.ceil_page(extend);
        if input_tokens as f64 >= self.rem_input_tokens && self.admitted != 0 {
            return (AddResult::Other, None);
        }
        self.admit_or_chunk(extend, input_tokens, max_new)
    }

    /// Admits the request whole (reserving `max_new`, clipped) or as the new chunked request.
    fn admit_or_chunk(
        &mut self,
        extend: u64,
        input_tokens: u64,
        max_new: u64,
    ) -> (AddResult, Option<u64>) {
        match self.rem_chunk_tokens {
            Some(c) if input_tokens as f64 > c => {
                let trunc = (c.max(0.0) as u64) / self.page_size * self.page_size;
                if trunc == 0 {
                    return (AddResult::Other, None);
                }
                self.update_budget(trunc, 0);
                (self.budget_state(), Some(trunc))
            }
            _ => {
                self.update_budget(extend, max_new.min(CLIP_MAX_NEW_TOKENS));
                (self.budget_state(), Some(extend))
            }
        }
    }

    /// `add_one_req_ignore_eos` (radix cache disabled + ignore_eos): simulates the future of
    /// the running and admitted requests. `states` holds (tokens_left, tokens_occupied) of
    /// every running and already admitted request; `candidate_tokens` is what the future
    /// check charges this request (`AdmissionLimits::ignore_eos_candidate_tokens`: its prompt
    /// before SGLang 0.4.8, its page-rounded extend since); `max_new` is what the budget
    /// reserves once admitted.
    pub fn add_one_ignore_eos(
        &mut self,
        extend: u64,
        max_new: u64,
        remaining_new: u64,
        fill_len: u64,
        candidate_tokens: u64,
        states: &mut Vec<(u64, u64)>,
    ) -> (AddResult, Option<u64>) {
        let e = self.ceil_page(extend) as f64;
        if e > self.cur_rem_tokens.min(self.rem_total_tokens) {
            return (AddResult::NoToken, None);
        }
        let pos = states.partition_point(|s| *s < (remaining_new, fill_len));
        states.insert(pos, (remaining_new, fill_len));
        let cur_rem = self.cur_rem_tokens - candidate_tokens as f64;
        let mut freed = 0.0;
        let n = states.len();
        for (i, &(left, occupied)) in states.iter().enumerate() {
            let bs = (n - i) as f64;
            // IGNORE_EOS_RESERVE_TOKENS = 1 per request.
            if cur_rem + freed - left as f64 * bs <= bs {
                states.remove(pos);
                return (AddResult::NoToken, None);
            }
            freed += occupied as f64;
        }
        // This path has no `max_prefill_tokens` check (SGLang's add_one_req_ignore_eos).
        let input_tokens = self.ceil_page(extend);
        let r = self.admit_or_chunk(extend, input_tokens, max_new);
        if r.1.is_none() {
            states.remove(pos);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservation_blocks_admission() {
        // 1000 free, running reserves 2000·0.5 = 1000 → nothing fits.
        let mut a = PrefillAdder::new(1, 1000, 2000, 0.5, 16384, Some(8192), 0);
        assert_eq!(a.add_one(10, 10, 10).0, AddResult::NoToken);
        let mut a = PrefillAdder::new(1, 1000, 0, 0.5, 16384, Some(8192), 0);
        assert_eq!(a.add_one(100, 100, 100), (AddResult::Continue, Some(100)));
        assert_eq!(a.rem_total_tokens, 800.0);
    }

    #[test]
    fn long_prompt_is_chunked_to_the_budget() {
        let mut a = PrefillAdder::new(1, 1_000_000, 0, 0.7, 16384, Some(8192), 0);
        let (r, e) = a.add_one(20000, 10, 10);
        assert_eq!(e, Some(8192));
        assert_eq!(r, AddResult::Other);
        // next iteration: chunked request continues
        let mut a = PrefillAdder::new(1, 1_000_000, 0, 0.7, 16384, Some(8192), 0);
        assert_eq!(a.add_chunked(20000 - 8192, 10), (8192, false));
        let mut a = PrefillAdder::new(1, 1_000_000, 0, 0.7, 16384, Some(8192), 0);
        assert_eq!(a.add_chunked(20000 - 16384, 10), (3616, true));
    }

    #[test]
    fn max_prefill_tokens_stops_second_request_but_not_first() {
        let mut a = PrefillAdder::new(1, 1_000_000, 0, 0.7, 100, None, 0);
        assert_eq!(a.add_one(500, 1, 1).1, Some(500)); // first is always admitted
        let mut a = PrefillAdder::new(1, 1_000_000, 0, 0.7, 100, None, 0);
        assert_eq!(a.add_one(60, 1, 1).1, Some(60));
        assert_eq!(a.add_one(60, 1, 1), (AddResult::Other, None));
    }

    #[test]
    fn ignore_eos_rule_simulates_the_future() {
        // 100 free; one running request holds 10 and needs 80 more: a new request of 10 + 20
        // fits (after it finishes, its 10 tokens come back: 80 + 10 − 80 > 1).
        let mut states = vec![(80, 10)];
        let mut a = PrefillAdder::new(1, 100, 80, 1.0, 16384, Some(8192), 0);
        // Admitted; its reservation (10 + 20) then exhausts rem_total (20): the batch is full.
        assert_eq!(
            a.add_one_ignore_eos(10, 20, 20, 10, 10, &mut states),
            (AddResult::NoToken, Some(10))
        );
        assert_eq!(states.len(), 2);
        // If the running request needs 99 more, the future runs out: 90 + 10 − 99 ≤ 1 (the
        // reservation is left out here so the early exit does not decide it).
        let mut states = vec![(99, 10)];
        let mut a = PrefillAdder::new(1, 100, 0, 1.0, 16384, Some(8192), 0);
        assert_eq!(
            a.add_one_ignore_eos(10, 20, 20, 10, 10, &mut states).0,
            AddResult::NoToken
        );
        assert_eq!(states.len(), 1, "a rejected request leaves no state behind");
    }

    #[test]
    fn retracted_request_reserves_its_whole_output_again() {
        // A retracted request re-admitted with 600 of its 1000 outputs done: fill 1600, all
        // to prefill again. The budget reserves the whole 1000 (schedule_policy.py
        // `_update_prefill_budget(..., min(max_new_tokens, CLIP))`), not the 400 left:
        // 10_000 − (1600 + 1000) = 7400.
        let mut a = PrefillAdder::new(1, 10_000, 0, 0.5, 16384, Some(8192), 0);
        assert_eq!(
            a.add_one(1600, 1000, 400),
            (AddResult::Continue, Some(1600))
        );
        assert_eq!(a.rem_total_tokens, 7400.0);
    }

    #[test]
    fn check_charges_whole_output_before_0_5_4() {
        // 2000 free: 1600 + 400 = 2000 ≥ 2000 fails either way; with 2100 free the 0.5.4+
        // check (1600 + 400 < 2100) admits, the 0.5.1 one (1600 + 1000 ≥ 2100) does not.
        let new = |free| PrefillAdder::new(1, free, 0, 0.5, 16384, Some(8192), 0);
        let old = |free| new(free).with_rules(AdderRules::of("0.5.1".parse().unwrap()));
        assert_eq!(new(2000).add_one(1600, 1000, 400).0, AddResult::NoToken);
        assert_eq!(new(2100).add_one(1600, 1000, 400).1, Some(1600));
        assert_eq!(
            old(2100).add_one(1600, 1000, 400),
            (AddResult::NoToken, None)
        );
        assert_eq!(old(2700).add_one(1600, 1000, 400).1, Some(1600));
    }

    #[test]
    fn chunk_is_capped_by_the_memory_budget_only_from_0_5_2() {
        // 5000 free, running requests reserve 4000·0.5 = 2000: rem_total 3000 < chunk 8192.
        let new = || PrefillAdder::new(1, 5000, 4000, 0.5, 16384, Some(8192), 0);
        let old = || new().with_rules(AdderRules::of("0.5.1".parse().unwrap()));
        // 0.5.2+: min(8192, 3000) = 3000, truncated, nothing reserved for outputs.
        assert_eq!(new().add_chunked(6000, 100), (3000, false));
        // 0.5.1: min(6000, 8192) = 6000, the last chunk, reserving its 100 outputs.
        let mut a = old();
        assert_eq!(a.add_chunked(6000, 100), (6000, true));
        assert_eq!(a.rem_total_tokens, 3000.0 - 6100.0);
        assert_eq!(a.budget_state(), AddResult::NoToken);
    }
}
