//! SGLang's sliding-window (SWA) token pool beside the full one (`spec::hybrid_kv::SwaPools`,
//! gpt-oss from 0.5.8/0.5.10): every token a request allocates takes a slot in both pools
//! (`SWATokenToKVPoolAllocator.alloc`), and admission counts the smaller pool's free tokens
//! (`PrefillAdder.rem_total_tokens`). With the radix cache a request's prompt keeps its SWA
//! slots (the whole prompt node stays SWA-locked); `ScheduleBatch.maybe_evict_swa` frees only
//! decode tokens behind the window, before the decode batches whose `decode_batch_idx` is ≡ 1
//! (mod window): at index `e` everything before `prompt + e − window` goes, i.e. one token at
//! `e = window + 1`, then `window` tokens every `window` batches (read in 0.5.8–0.5.10, page
//! 1). Later releases change the cadence: 0.5.12 and 0.5.16 evict every
//! `SGLANG_SWA_EVICTION_INTERVAL` iterations, 0.5.20+ once that many tokens have slid out
//! of the window, and 0.5.23 can release the prompt's SWA lock. They are charged at the
//! 0.5.10 cadence here (not modelled per release).
//!
//! Per decode batch the frees are O(1): members are counted by the batch index they joined at
//! (mod window, and exactly), so the ones evicting in this batch are three look-ups.
//! Not modelled: speculative steps and mixed-chunk decodes (no eviction is counted: the
//! charge stays conservative), pages above 1 (evictions then free whole pages), and the
//! radix-off path (which also frees the prompt's SWA slots).
use super::super::running::IdMap;
use std::collections::BTreeMap;

/// The SWA pool of one SGLang scheduler.
#[derive(Debug, Clone)]
pub struct SwaPool {
    capacity_tokens: u64,
    used_tokens: u64,
    window: u64,
    /// Decode batches run so far (`decode_batch_idx` of a member = batches − its join).
    batches: u64,
    /// Decoding members by join batch: exact, and modulo the window.
    by_join: BTreeMap<u64, u64>,
    by_residue: Vec<u64>,
    joined: IdMap<u64>,
}

impl SwaPool {
    pub fn new(capacity_tokens: u64, window: u64) -> Self {
        let window = window.max(1);
        SwaPool {
            capacity_tokens,
            used_tokens: 0,
            window,
            batches: 0,
            by_join: BTreeMap::new(),
            by_residue: vec![0; window as usize],
            joined: IdMap::default(),
        }
    }

    pub fn capacity_tokens(&self) -> u64 {
        self.capacity_tokens
    }
    pub fn used_tokens(&self) -> u64 {
        self.used_tokens
    }
    pub fn free_tokens(&self) -> u64 {
        self.capacity_tokens.saturating_sub(self.used_tokens)
    }

    pub fn allocate(&mut self, tokens: u64) {
        self.used_tokens += tokens;
        debug_assert!(
            self.used_tokens <= self.capacity_tokens,
            "SWA over capacity"
        );
    }

    pub fn release(&mut self, tokens: u64) {
        debug_assert!(tokens <= self.used_tokens, "SWA release underflow");
        self.used_tokens = self.used_tokens.saturating_sub(tokens);
    }

    /// SWA tokens a member that has run `idx` decode batches has had freed.
    fn evicted_after(&self, idx: u64) -> u64 {
        let w = self.window;
        if idx < w + 2 {
            return 0;
        }
        let last = (idx - 2) / w * w + 1; // the last eviction index run, ≡ 1 (mod w)
        last - w
    }

    /// Request `id` starts decoding (after its prefill).
    pub fn join(&mut self, id: usize) {
        let j = self.batches;
        if let Some(old) = self.joined.insert(id, j) {
            self.forget(old);
        }
        *self.by_join.entry(j).or_insert(0) += 1;
        self.by_residue[(j % self.window) as usize] += 1;
    }

    fn forget(&mut self, j: u64) {
        if let Some(n) = self.by_join.get_mut(&j) {
            *n -= 1;
            if *n == 0 {
                self.by_join.remove(&j);
            }
        }
        self.by_residue[(j % self.window) as usize] -= 1;
    }

    /// Request `id` stops decoding; returns the SWA tokens already freed of what it holds
    /// (0 for a request that never decoded).
    pub fn leave(&mut self, id: usize) -> u64 {
        match self.joined.remove(&id) {
            Some(j) => {
                self.forget(j);
                self.evicted_after(self.batches - j)
            }
            None => 0,
        }
    }

    /// SWA tokens already freed of decoding request `id`.
    pub fn evicted(&self, id: usize) -> u64 {
        self.joined
            .get(&id)
            .map_or(0, |&j| self.evicted_after(self.batches - j))
    }

    /// A decode batch is formed: frees what `maybe_evict_swa` frees before it, and counts it.
    pub fn decode_batch(&mut self) {
        let (w, b) = (self.window, self.batches);
        let count = |j: Option<u64>| j.and_then(|j| self.by_join.get(&j)).copied().unwrap_or(0);
        // Index ≡ 1 (mod w): joined at b − 1 (index 1: nothing), b − 1 − w (index w + 1: one
        // token) or earlier (w tokens each).
        let at_one = count(b.checked_sub(1));
        let at_w1 = count(b.checked_sub(1 + w));
        let all = if b >= 1 {
            self.by_residue[((b - 1) % w) as usize]
        } else {
            0
        };
        let freed = (all - at_one - at_w1) * w + at_w1;
        self.release(freed);
        self.batches += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_tokens_behind_the_window_are_freed_every_window_batches() {
        // Window 4: a member frees 1 token before its batch 5, then 4 before 9, 13, …
        let mut p = SwaPool::new(1000, 4);
        p.allocate(100); // a 100-token prompt
        p.join(0);
        let mut held = vec![];
        for _ in 0..14 {
            p.decode_batch();
            p.allocate(1); // its token of this batch
            held.push(p.used_tokens());
        }
        // Batches 0..4 grow to 105; before batch 5 (index 5 = w + 1) one token goes; before
        // batch 9, four; before batch 13, four more.
        assert_eq!(
            held,
            [101, 102, 103, 104, 105, 105, 106, 107, 108, 105, 106, 107, 108, 105]
        );
        assert_eq!(p.evicted(0), 9);
        assert_eq!(p.leave(0), 9);
        p.release(114 - 9);
        assert_eq!(p.used_tokens(), 0);
    }
}
