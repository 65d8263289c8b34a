//! The running (decode) batch as aggregates. A global decode-step counter `d` makes every
//! per-request quantity a constant offset: `ctx_i = c_i + d`, `out_i = o_i + d`, remaining
//! `r_i − d`. Sums are kept incrementally, so a decode step costs O(1) plus O(log n) per request
//! that joins, finishes or is retracted; nothing walks the batch.
//!
//! Members live in a hash map by id. Finish times within `CLIP` steps sit in a ring of
//! `CLIP + 1` buckets indexed by step (linked lists over one node pool: O(1) in and out, no
//! allocation per bucket), later ones in a binary heap until they come within range; retraction
//! victims are a binary heap. All use lazy deletion: an entry whose member left (or left and
//! joined again) is skipped when it surfaces, and the victim heap is rebuilt once stale entries
//! outnumber live ones. That costs a fraction of ordered trees on the per-request path. The
//! victim heap exists only while retractions happen: built from the members on the first one,
//! dropped after [`VICTIM_IDLE_STEPS`] decode steps without one.
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// SGLang's `CLIP_MAX_NEW_TOKENS_ESTIMATION`.
pub const CLIP_MAX_NEW_TOKENS: u64 = 4096;

/// Decode steps without a retraction after which the victim heap is dropped (rebuilding it,
/// O(n), is then paid for by that many steps of joins that did not have to maintain it).
pub const VICTIM_IDLE_STEPS: u32 = 256;

/// Per-request constants while running (offsets against the decode counter at join time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub id: usize,
    /// Finishes when the counter reaches `r`.
    pub r: i64,
    /// `ctx = c + d` (context tokens allocated in the KV pool).
    pub c: i64,
    /// `out = o + d` (output tokens so far).
    pub o: i64,
    pub input_len: u64,
    pub max_new: u64,
    /// Order of joining (Python's stable sort keeps batch order among retraction ties).
    pub seq: u64,
    /// This membership's own number (distinguishes a rejoin from a stale heap entry).
    stamp: u64,
}

/// Retraction priority: fewest outputs first, then longest prompt, then latest in the batch.
type VictimKey = (i64, Reverse<u64>, Reverse<u64>, usize);

/// End of a ring list.
const NO_NODE: u32 = u32::MAX;

/// Heap entry of a retraction victim: (key, stamp), smallest first.
type VictimEntry = Reverse<(VictimKey, u64)>;

fn victim_entry(m: &Member) -> VictimEntry {
    Reverse(((m.o, Reverse(m.input_len), Reverse(m.seq), m.id), m.stamp))
}

/// Heap entry of a finish time: (r, id, stamp), smallest first.
type FinishEntry = Reverse<(i64, usize, u64)>;

/// Multiplicative hash of dense integer ids (deterministic; no per-process seed).
#[derive(Debug, Clone, Copy, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

/// A hash map keyed by request id (lookups only: iteration order is not meaningful).
pub type IdMap<V> = HashMap<usize, V, BuildHasherDefault<IdHasher>>;

#[derive(Debug, Clone, Default)]
pub struct Running {
    /// Decode steps taken so far.
    pub d: i64,
    n: u64,
    sum_c: i64,
    sum_o: i64,
    sum_max_new: u64,
    /// Live members with `r − d ≤ CLIP` ("uncapped"): their count and Σ r. A live member is
    /// uncapped exactly when `r ≤ d + CLIP` (members move over as the counter advances).
    n_uncapped: u64,
    sum_uncapped_r: i64,
    /// Uncapped members by finish time: the list at `ring_heads[r mod (CLIP + 1)]` holds those
    /// finishing at step `r` (a live uncapped member has `d < r ≤ d + CLIP`), as nodes of
    /// `ring_nodes`: (id, stamp, next node). Empty until the first join.
    ring_heads: Vec<u32>,
    ring_nodes: Vec<(usize, u64, u32)>,
    /// First unused node of `ring_nodes` (a free list through `next`).
    ring_free: u32,
    /// Finish times of capped members (`r − d > CLIP`), waiting to enter the ring.
    capped: BinaryHeap<FinishEntry>,
    /// Retraction order (`None` while no retraction happened in the last idle steps).
    victims: Option<BinaryHeap<VictimEntry>>,
    steps_since_victim: u32,
    members: IdMap<Member>,
    next_stamp: u64,
    /// Page accounting: members by `c mod page`.
    page: u64,
    residues: Vec<u64>,
}

impl Running {
    pub fn new(page_size: u64) -> Self {
        Running {
            page: page_size.max(1),
            residues: vec![0; page_size.max(1) as usize],
            ..Default::default()
        }
    }

    pub fn len(&self) -> u64 {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Σ context lengths (tokens attended by the next decode step before its new token).
    pub fn ctx_sum(&self) -> u64 {
        (self.sum_c + self.n as i64 * self.d).max(0) as u64
    }
    /// Σ output tokens so far.
    pub fn out_sum(&self) -> u64 {
        (self.sum_o + self.n as i64 * self.d).max(0) as u64
    }
    pub fn max_new_sum(&self) -> u64 {
        self.sum_max_new
    }

    fn residue(&self, c: i64) -> usize {
        c.rem_euclid(self.page as i64) as usize
    }

    fn is_live(&self, id: usize, stamp: u64) -> bool {
        self.members.get(&id).is_some_and(|m| m.stamp == stamp)
    }

    /// Adds a request whose context is `ctx` tokens with `out` outputs so far.
    pub fn join(&mut self, id: usize, ctx: u64, out: u64, input_len: u64, max_new: u64, seq: u64) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let m = Member {
            id,
            r: max_new as i64 - out as i64 + self.d,
            c: ctx as i64 - self.d,
            o: out as i64 - self.d,
            input_len,
            max_new,
            seq,
            stamp,
        };
        if let Some(old) = self.members.get(&id).copied() {
            self.detach(&old); // a duplicate id replaces the earlier member
        }
        self.n += 1;
        self.sum_c += m.c;
        self.sum_o += m.o;
        self.sum_max_new += max_new;
        if m.r - self.d <= CLIP_MAX_NEW_TOKENS as i64 {
            // r ≤ d only if the caller joins a request with nothing left to generate: it
            // finishes at the next step, like any other request whose r is reached.
            self.ring_push(m.r.max(self.d + 1), id, stamp);
            self.n_uncapped += 1;
            self.sum_uncapped_r += m.r;
        } else {
            self.capped.push(Reverse((m.r, id, stamp)));
        }
        if let Some(v) = self.victims.as_mut() {
            v.push(victim_entry(&m));
        }
        let res = self.residue(m.c);
        self.residues[res] += 1;
        self.members.insert(id, m);
    }

    fn ring_slot(&self, r: i64) -> usize {
        r.rem_euclid(self.ring_heads.len() as i64) as usize
    }

    fn ring_push(&mut self, r: i64, id: usize, stamp: u64) {
        if self.ring_heads.is_empty() {
            self.ring_heads = vec![NO_NODE; CLIP_MAX_NEW_TOKENS as usize + 1];
            self.ring_free = NO_NODE;
        }
        let slot = self.ring_slot(r);
        let next = self.ring_heads[slot];
        let node = if self.ring_free != NO_NODE {
            let n = self.ring_free;
            self.ring_free = self.ring_nodes[n as usize].2;
            self.ring_nodes[n as usize] = (id, stamp, next);
            n
        } else {
            let n = u32::try_from(self.ring_nodes.len())
                .ok()
                .filter(|&n| n != NO_NODE)
                .expect("fewer than 2^32 − 1 requests in one running batch");
            self.ring_nodes.push((id, stamp, next));
            n
        };
        self.ring_heads[slot] = node;
    }

    /// Takes `m` out of the aggregates (its heap entries become stale).
    fn detach(&mut self, m: &Member) {
        self.members.remove(&m.id);
        self.n -= 1;
        self.sum_c -= m.c;
        self.sum_o -= m.o;
        self.sum_max_new -= m.max_new;
        if m.r <= self.d + CLIP_MAX_NEW_TOKENS as i64 {
            self.n_uncapped -= 1;
            self.sum_uncapped_r -= m.r;
        }
        let res = self.residue(m.c);
        self.residues[res] -= 1;
        if let Some(v) = self.victims.take() {
            self.victims = Some(if v.len() as u64 > 2 * self.n + 64 {
                self.victim_heap(v.into_vec())
            } else {
                v
            });
        }
    }

    /// A heap of the live members' victim entries, in `buf`'s allocation.
    fn victim_heap(&self, mut buf: Vec<VictimEntry>) -> BinaryHeap<VictimEntry> {
        buf.clear();
        buf.extend(self.members.values().map(victim_entry));
        BinaryHeap::from(buf)
    }

    /// Removes a member (finish or retraction); returns its constants.
    pub fn remove(&mut self, id: usize) -> Option<Member> {
        let m = *self.members.get(&id)?;
        self.detach(&m);
        Some(m)
    }

    pub fn member(&self, id: usize) -> Option<&Member> {
        self.members.get(&id)
    }

    /// Σ min(max_new − out, CLIP): the new-token reservation before the ratio.
    pub fn reserved_new_tokens(&self) -> u64 {
        let uncapped = self.sum_uncapped_r - self.n_uncapped as i64 * self.d;
        (uncapped.max(0) as u64) + (self.n - self.n_uncapped) * CLIP_MAX_NEW_TOKENS
    }

    /// Pages the next decode step must allocate (one token per member; a new page when the
    /// current context fills its last page).
    pub fn new_pages_next_step(&self) -> u64 {
        self.new_pages_for(1)
    }

    /// Members whose context is ≡ `residue` modulo the page size (O(1)).
    pub fn members_at_ctx_residue(&self, residue: u64) -> u64 {
        self.residues[self.residue(residue as i64 - self.d)]
    }

    /// Tokens allocated for the current contexts, rounded up to pages.
    pub fn page_size(&self) -> u64 {
        self.page
    }

    /// Advances one decode step; returns the members that finished (output complete), in
    /// ascending id order.
    pub fn step(&mut self) -> Vec<Member> {
        let mut done = Vec::new();
        self.step_into(&mut done);
        done
    }

    /// [`Running::step`] appending the finished members to `done` (a buffer the caller
    /// reuses across steps), ascending id among those appended.
    pub fn step_into(&mut self, done: &mut Vec<Member>) {
        self.step_by(1, done);
    }

    /// Advances `gain` tokens at once (a speculative verify that gave every member `gain`
    /// tokens); members whose output completes within them finish, clipped at their length
    /// (their gain this step is `r − (d − gain)`, see [`Running::last_gain`]). Appends the
    /// finished members to `done`, ascending id among those appended. O(gain) plus the
    /// finishers.
    pub fn step_by(&mut self, gain: u64, done: &mut Vec<Member>) {
        let from = done.len();
        let prev = self.d;
        self.d += gain.max(1) as i64;
        self.steps_since_victim = self.steps_since_victim.saturating_add(1);
        if self.steps_since_victim > VICTIM_IDLE_STEPS {
            self.victims = None;
        }
        // Finishers first: the slots of (prev, d] hold exactly the members finishing in them
        // (live uncapped members have prev < r ≤ prev + CLIP); then capped members that came
        // within range take their slots.
        if !self.ring_heads.is_empty() {
            for r in prev + 1..=self.d {
                let slot = self.ring_slot(r);
                let mut node = std::mem::replace(&mut self.ring_heads[slot], NO_NODE);
                while node != NO_NODE {
                    let (id, stamp, next) = self.ring_nodes[node as usize];
                    self.ring_nodes[node as usize].2 = self.ring_free;
                    self.ring_free = node;
                    node = next;
                    if let Some(m) = self.members.get(&id).copied().filter(|m| m.stamp == stamp) {
                        self.detach(&m);
                        done.push(m);
                    }
                }
            }
        }
        let limit = self.d + CLIP_MAX_NEW_TOKENS as i64;
        while let Some(&Reverse((r, id, stamp))) = self.capped.peek() {
            if r > limit {
                break;
            }
            self.capped.pop();
            if self.is_live(id, stamp) {
                self.ring_push(r, id, stamp);
                self.n_uncapped += 1;
                self.sum_uncapped_r += r;
            }
        }
        // Lists pop last-in first; in join order the ids are nearly sorted already.
        done[from..].reverse();
        done[from..].sort_unstable_by_key(|m| m.id);
    }

    /// Tokens a member that finished in the last `step_by(gain)` got in it (≤ `gain`).
    pub fn last_gain(&self, m: &Member, gain: u64) -> u64 {
        (m.r - (self.d - gain.max(1) as i64)).clamp(0, gain as i64) as u64
    }

    /// Context of a member that finished in the last step: its context at its last token
    /// (a speculative step may have allocated past it).
    pub fn finish_ctx(&self, m: &Member) -> u64 {
        (m.c + m.r.min(self.d)).max(0) as u64
    }

    /// Pages a step of `gain` tokens per member allocates (a new page each time a context
    /// crosses a page boundary): Σ over the `gain` positions of the members whose context
    /// sits on a boundary there. O(gain).
    pub fn new_pages_for(&self, gain: u64) -> u64 {
        if self.page == 1 {
            return self.n * gain;
        }
        (0..gain as i64)
            .map(|j| self.residues[self.residue(-self.d - j)])
            .sum()
    }

    /// The next retraction victim (fewest outputs, longest prompt, latest joined).
    pub fn next_victim(&mut self) -> Option<usize> {
        self.steps_since_victim = 0;
        let mut heap = match self.victims.take() {
            Some(h) => h,
            None => self.victim_heap(Vec::new()),
        };
        let mut victim = None;
        while let Some(&Reverse(((_, _, _, id), stamp))) = heap.peek() {
            if self.is_live(id, stamp) {
                victim = Some(id);
                break;
            }
            heap.pop();
        }
        self.victims = Some(heap);
        victim
    }

    /// Current context length of a member.
    pub fn ctx_of(&self, m: &Member) -> u64 {
        (m.c + self.d).max(0) as u64
    }
    /// Current output count of a member.
    pub fn out_of(&self, m: &Member) -> u64 {
        (m.o + self.d).max(0) as u64
    }
    /// Members in id order (O(n log n): for the disabled-radix admission rule and checks).
    pub fn members(&self) -> impl Iterator<Item = &Member> {
        let mut v: Vec<&Member> = self.members.values().collect();
        v.sort_unstable_by_key(|m| m.id);
        v.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregates_follow_the_counter() {
        let mut r = Running::new(1);
        r.join(0, 100, 1, 100, 5, 0);
        r.join(1, 50, 1, 50, 3, 1);
        assert_eq!(r.ctx_sum(), 150);
        assert_eq!(r.reserved_new_tokens(), 4 + 2);
        let done = r.step();
        assert!(done.is_empty());
        assert_eq!(r.ctx_sum(), 152);
        let done = r.step(); // member 1 reaches 3 outputs
        assert_eq!(done.iter().map(|m| m.id).collect::<Vec<_>>(), vec![1]);
        assert_eq!(r.len(), 1);
        assert_eq!(r.reserved_new_tokens(), 2);
        assert_eq!(r.out_sum(), 3);
    }

    #[test]
    fn clip_applies_to_long_outputs() {
        let mut r = Running::new(1);
        r.join(0, 10, 1, 10, 10001, 0);
        assert_eq!(r.reserved_new_tokens(), CLIP_MAX_NEW_TOKENS);
        for _ in 0..5900 {
            r.step();
        }
        assert_eq!(
            r.reserved_new_tokens(),
            CLIP_MAX_NEW_TOKENS,
            "4100 left is still clipped"
        );
        for _ in 0..100 {
            r.step();
        }
        assert_eq!(r.reserved_new_tokens(), 10000 - 6000);
    }

    #[test]
    fn victim_is_fewest_outputs_then_longest_prompt_then_latest() {
        let mut r = Running::new(1);
        r.join(0, 10, 5, 5, 100, 0);
        r.join(1, 20, 1, 19, 100, 1);
        r.join(2, 30, 1, 29, 100, 2);
        r.join(3, 30, 1, 29, 100, 3);
        assert_eq!(r.next_victim(), Some(3));
        r.remove(3);
        assert_eq!(r.next_victim(), Some(2));
        r.remove(2);
        assert_eq!(r.next_victim(), Some(1));
    }

    #[test]
    fn victims_survive_the_heap_being_dropped_and_rebuilt() {
        let mut r = Running::new(1);
        r.join(0, 10, 1, 10, 10_000, 0);
        r.join(1, 10, 1, 20, 10_000, 1);
        assert_eq!(r.next_victim(), Some(1), "same outputs: longest prompt");
        for _ in 0..VICTIM_IDLE_STEPS + 10 {
            r.step();
        }
        assert!(r.victims.is_none(), "dropped after idle steps");
        r.join(2, 10, 1, 5, 10_000, 2); // fewest outputs now
        r.join(3, 10, 1, 5, 10_000, 3); // same, joined later
        assert_eq!(r.next_victim(), Some(3));
        r.remove(3);
        r.join(4, 10, 1, 5, 10_000, 4); // maintained while the heap exists
        assert_eq!(r.next_victim(), Some(4));
        r.remove(4);
        assert_eq!(r.next_victim(), Some(2));
        r.remove(2);
        assert_eq!(r.next_victim(), Some(1));
        // Rejoining after a retraction leaves a stale entry behind that must be skipped.
        r.remove(1);
        r.join(1, 10, 500, 20, 10_000, 5);
        assert_eq!(r.next_victim(), Some(0));
    }

    #[test]
    fn multi_token_steps_clip_at_the_output_length() {
        let mut r = Running::new(1);
        r.join(0, 10, 1, 10, 4, 0); // 3 tokens left
        r.join(1, 20, 1, 20, 9, 1); // 8 left
        let mut done = Vec::new();
        r.step_by(2, &mut done);
        assert!(done.is_empty());
        assert_eq!(r.out_sum(), 3 + 3);
        r.step_by(2, &mut done); // member 0 needed 1 more token of the 2
        assert_eq!(done.len(), 1);
        assert_eq!(r.last_gain(&done[0], 2), 1);
        assert_eq!(r.finish_ctx(&done[0]), 10 + 3);
        r.step_by(3, &mut done);
        r.step_by(3, &mut done); // member 1: 8 left after 2+2 → 4 left, then 3, then 1 of 3
        assert_eq!(done.len(), 2);
        assert_eq!(r.last_gain(&done[1], 3), 1);
        assert!(r.is_empty());
    }

    #[test]
    fn pages_for_several_tokens() {
        let mut r = Running::new(4);
        r.join(0, 4, 1, 4, 100, 0); // ctx 4: tokens 5..=7 need one new page
        r.join(1, 6, 1, 6, 100, 1); // ctx 6: tokens 7, 8 fit, 9 needs a page
        assert_eq!(r.new_pages_for(3), 2);
        assert_eq!(r.new_pages_for(2), 1);
        assert_eq!(r.new_pages_for(1), r.new_pages_next_step());
    }

    #[test]
    fn pages_counted_by_residue() {
        let mut r = Running::new(4);
        r.join(0, 4, 1, 4, 100, 0); // full page: next token needs a new page
        r.join(1, 5, 1, 5, 100, 1);
        assert_eq!(r.new_pages_next_step(), 1);
        r.step(); // ctx 5, 6
        assert_eq!(r.new_pages_next_step(), 0);
        r.step(); // 6, 7
        r.step(); // 7, 8 -> member 1 full
        assert_eq!(r.new_pages_next_step(), 1);
    }
}
