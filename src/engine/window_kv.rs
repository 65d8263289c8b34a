//! vLLM's sliding-window KV groups inside one block pool (`spec::hybrid_kv::VllmHybridKv`):
//! what a request holds and when blocks come and go, as vLLM 0.10.2 / 0.11.0's
//! `SlidingWindowManager` decides it. Every `allocate_slots` call first frees the window
//! group's blocks wholly before `num_computed − window + 1` (`remove_skipped_blocks`), then
//! takes blocks up to the step's last token in every group. So a chunk of a long prompt holds
//! its whole chunk in the window group too, and a decoding request of `x` computed tokens
//! holds `ceil_block(x) − block·⌊(x − window) / block⌋` tokens there (at most
//! `⌈(window + block − 1) / block⌉` blocks).
//!
//! The decode step's change stays O(1) in the batch size: every group takes a block for the
//! members whose context fills its last block ([`Running::new_pages_next_step`]); the window
//! groups free one for the members at context ≡ `window − 1` (mod block) past
//! `window + block − 1` tokens, counted by residue minus the few younger members still short
//! of that (kept by their offset, at most `window / block` look-ups a step).
use super::running::Running;
use crate::spec::hybrid_kv::VllmHybridKv;
use std::collections::BTreeMap;

/// The hybrid groups' charges of one vLLM scheduler.
#[derive(Debug, Clone)]
pub struct WindowKv {
    full_groups: u64,
    window_groups: u64,
    window: u64,
    block: u64,
    /// Decoding members that joined short of `window + block − 1` tokens, by offset
    /// `c = ctx − d` (count); pruned once they are past it.
    young: BTreeMap<i64, u64>,
}

impl WindowKv {
    pub fn new(h: &VllmHybridKv, block: u64) -> Self {
        WindowKv {
            full_groups: h.full_groups,
            window_groups: h.window_groups,
            window: h.window_tokens.max(1),
            block: block.max(1),
            young: BTreeMap::new(),
        }
    }

    pub fn full_groups(&self) -> u64 {
        self.full_groups
    }

    fn ceil_block(&self, t: u64) -> u64 {
        t.div_ceil(self.block) * self.block
    }

    /// Tokens the window groups hold after slots up to `upto` were allocated in a call whose
    /// `num_computed_tokens` was `done`.
    pub fn chunk_tokens(&self, done: u64, upto: u64) -> u64 {
        let skipped = (done + 1).saturating_sub(self.window) / self.block * self.block;
        self.window_groups * self.ceil_block(upto).saturating_sub(skipped)
    }

    /// Tokens the window groups hold for a decoding request of `ctx` computed tokens.
    pub fn decode_tokens(&self, ctx: u64) -> u64 {
        self.chunk_tokens(ctx.saturating_sub(1), ctx)
    }

    /// Context past which a decoding member frees a window block every `block` steps.
    fn threshold(&self) -> u64 {
        self.window + self.block - 1
    }

    /// Whether the next decode step of a member at `ctx` frees one window block.
    fn frees_next(&self, ctx: u64) -> bool {
        ctx + 1 >= self.window + self.block && (ctx + 1 - self.window) % self.block == 0
    }

    /// Change of a member's holdings (all groups) in its next decode step, tokens.
    pub fn step_delta(&self, ctx: u64) -> i64 {
        let b = self.block as i64;
        let new = (ctx % self.block == 0) as i64;
        let free = self.frees_next(ctx) as i64;
        self.full_groups as i64 * b * new + self.window_groups as i64 * b * (new - free)
    }

    /// A member of context `ctx` and offset `c` starts decoding.
    pub fn join(&mut self, c: i64, ctx: u64) {
        if ctx < self.threshold() {
            *self.young.entry(c).or_insert(0) += 1;
        }
    }

    /// A member of offset `c`, now at `ctx`, stops decoding.
    pub fn leave(&mut self, c: i64, ctx: u64) {
        if ctx < self.threshold() {
            if let Some(n) = self.young.get_mut(&c) {
                *n -= 1;
                if *n == 0 {
                    self.young.remove(&c);
                }
            }
        }
    }

    /// (tokens allocated, tokens freed) by the next decode step of `running`.
    pub fn next_step(&mut self, running: &Running) -> (u64, u64) {
        let d = running.d;
        let thr = self.threshold() as i64;
        while let Some((&c, _)) = self.young.last_key_value() {
            if c + d < thr {
                break;
            }
            self.young.remove(&c);
        }
        let b = self.block;
        let residue = (self.window - 1) % b;
        let short: u64 = (0..)
            .map(|k| self.window as i64 - 1 - k * b as i64)
            .take_while(|&x| x >= 0)
            .filter_map(|x| self.young.get(&(x - d)))
            .sum();
        let frees = running.members_at_ctx_residue(residue) - short;
        let new = running.new_pages_next_step();
        (
            (self.full_groups + self.window_groups) * new * b,
            self.window_groups * frees * b,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv() -> WindowKv {
        let h = VllmHybridKv {
            window_tokens: 128,
            full_groups: 1,
            window_groups: 1,
            layers_per_group: 12,
        };
        WindowKv::new(&h, 16)
    }

    #[test]
    fn window_group_holds_the_window_in_whole_blocks() {
        let w = kv();
        // Hand check of remove_skipped_blocks: at 200 computed tokens the last call had
        // num_computed 199, last useful token 72, block 4: blocks 0..4 freed; 13 − 4 = 9.
        assert_eq!(w.decode_tokens(200), 9 * 16);
        assert_eq!(w.decode_tokens(208), 8 * 16); // 13 − 5
        assert_eq!(w.decode_tokens(209), 9 * 16); // 14 − 5
        assert_eq!(w.decode_tokens(100), 7 * 16);
        let max = (1..5000).map(|x| w.decode_tokens(x)).max().unwrap();
        assert_eq!(max, 9 * 16); // ⌈(128 + 15) / 16⌉ blocks
                                 // A 6000-token prompt in one chunk holds it all in the window group too.
        assert_eq!(w.chunk_tokens(0, 6000), 6000);
        // Its next call (done 6000): last useful token 5873, block 367: blocks 0..367 freed.
        assert_eq!(w.chunk_tokens(6000, 6001), (376 - 367) * 16);
    }

    #[test]
    fn step_deltas_match_holdings_and_aggregate() {
        let mut w = kv();
        let mut r = Running::new(16);
        let ctxs = [5u64, 127, 142, 143, 159, 300, 16, 32];
        for (id, &x) in ctxs.iter().enumerate() {
            r.join(id, x, 1, x, 10_000, id as u64);
            w.join(x as i64 - r.d, x);
        }
        for _ in 0..400 {
            let members: Vec<u64> = r.members().map(|m| r.ctx_of(m)).collect();
            let expect: i64 = members.iter().map(|&x| w.step_delta(x)).sum();
            for &x in &members {
                assert_eq!(
                    w.decode_tokens(x + 1) as i64 + ((x + 1).div_ceil(16) * 16) as i64
                        - w.decode_tokens(x) as i64
                        - (x.div_ceil(16) * 16) as i64,
                    w.step_delta(x),
                    "ctx {x}"
                );
            }
            let (alloc, free) = w.next_step(&r);
            assert_eq!(alloc as i64 - free as i64, expect);
            r.step();
        }
    }
}
