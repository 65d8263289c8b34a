//! SGLang's `PrefillAdder` (`schedule_policy.py`): the token budgets that decide which waiting
//! requests join the next prefill batch (reference A.2).
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
        }
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
    pub fn add_chunked(&mut self, extend_left: u64, remaining_new: u64) -> (u64, bool) {
        let chunk = self.rem_chunk_tokens.unwrap_or(f64::INFINITY);
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
            remaining_new.min(CLIP_MAX_NEW_TOKENS)
        };
        self.update_budget(extend, reserve);
        (extend, !truncated)
    }

    /// `add_one_req` (radix-cache path). Returns the result, and `Some(extend)` when the
    /// request was admitted (`extend` < its full extend means it became the chunked request).
    pub fn add_one(&mut self, extend: u64, remaining_new: u64) -> (AddResult, Option<u64>) {
        let total = extend as f64 + remaining_new.min(CLIP_MAX_NEW_TOKENS) as f64;
        if total >= self.rem_total_tokens {
            return (AddResult::NoToken, None);
        }
        let input_tokens = self.ceil_page(extend);
        if input_tokens as f64 >= self.rem_input_tokens && self.admitted != 0 {
            return (AddResult::Other, None);
        }
        self.admit_or_chunk(extend, input_tokens, remaining_new)
    }

    fn admit_or_chunk(
        &mut self,
        extend: u64,
        input_tokens: u64,
        remaining_new: u64,
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
                self.update_budget(extend, remaining_new.min(CLIP_MAX_NEW_TOKENS));
                (self.budget_state(), Some(extend))
            }
        }
    }

    /// `add_one_req_ignore_eos` (radix cache disabled + ignore_eos): simulates the future of
    /// the running and admitted requests. `states` holds (tokens_left, tokens_occupied) of
    /// every running and already admitted request; `candidate_tokens` is what the future
    /// check charges this request (`AdmissionLimits::ignore_eos_candidate_tokens`: its prompt
    /// before SGLang 0.4.8, its page-rounded extend since).
    pub fn add_one_ignore_eos(
        &mut self,
        extend: u64,
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
        let r = self.admit_or_chunk(extend, input_tokens, remaining_new);
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
        assert_eq!(a.add_one(10, 10).0, AddResult::NoToken);
        let mut a = PrefillAdder::new(1, 1000, 0, 0.5, 16384, Some(8192), 0);
        assert_eq!(a.add_one(100, 100), (AddResult::Continue, Some(100)));
        assert_eq!(a.rem_total_tokens, 800.0);
    }

    #[test]
    fn long_prompt_is_chunked_to_the_budget() {
        let mut a = PrefillAdder::new(1, 1_000_000, 0, 0.7, 16384, Some(8192), 0);
        let (r, e) = a.add_one(20000, 10);
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
        assert_eq!(a.add_one(500, 1).1, Some(500)); // first is always admitted
        let mut a = PrefillAdder::new(1, 1_000_000, 0, 0.7, 100, None, 0);
        assert_eq!(a.add_one(60, 1).1, Some(60));
        assert_eq!(a.add_one(60, 1), (AddResult::Other, None));
    }

    #[test]
    fn ignore_eos_rule_simulates_the_future() {
        // 100 free; one running request holds 10 and needs 80 more: a new request of 10 + 20
        // fits (after it finishes, its 10 tokens come back: 80 + 10 − 80 > 1).
        let mut states = vec![(80, 10)];
        let mut a = PrefillAdder::new(1, 100, 80, 1.0, 16384, Some(8192), 0);
        // Admitted; its reservation (10 + 20) then exhausts rem_total (20): the batch is full.
        assert_eq!(
            a.add_one_ignore_eos(10, 20, 10, 10, &mut states),
            (AddResult::NoToken, Some(10))
        );
        assert_eq!(states.len(), 2);
        // If the running request needs 99 more, the future runs out: 90 + 10 − 99 ≤ 1 (the
        // reservation is left out here so the early exit does not decide it).
        let mut states = vec![(99, 10)];
        let mut a = PrefillAdder::new(1, 100, 0, 1.0, 16384, Some(8192), 0);
        assert_eq!(
            a.add_one_ignore_eos(10, 20, 10, 10, &mut states).0,
            AddResult::NoToken
        );
        assert_eq!(states.len(), 1, "a rejected request leaves no state behind");
    }
}
