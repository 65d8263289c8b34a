//! Server-side state of one request, and the scheduler's table of them ([`ReqTable`]), which
//! drops finished requests so its memory follows the requests in the server, not the run.
use std::collections::VecDeque;
use std::ops::{Index, IndexMut};

/// Where a request is in the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Not yet at the scheduler.
    InFlight,
    /// In the waiting queue (new, or retracted).
    Waiting,
    /// Being prefilled chunk by chunk (the one chunked request).
    Chunking,
    /// In the running (decode) batch.
    Running,
    Finished,
    /// Rejected (bench_serving counts it as failed).
    Failed,
}

/// A request as the scheduler sees it (its id is its index in the [`ReqTable`]; its
/// shared-prefix group, if any, is kept beside the table by the scheduler).
#[derive(Debug, Clone)]
pub struct Req {
    /// Prompt tokens (`origin_input_ids`).
    pub input_len: u64,
    /// `max_new_tokens` after the scheduler's clip.
    pub max_new: u64,
    /// Output tokens generated so far (valid while not running; the running batch keeps it
    /// implicitly).
    pub out: u64,
    /// Tokens of `input + out` already in the KV pool from earlier chunks.
    pub prefilled: u64,
    /// Prompt tokens found in the radix cache when it is (re)admitted.
    pub cached_prefix: u64,
    /// Leading context tokens held by the group's cache rather than by this request.
    pub shared: u64,
    pub retractions: u32,
    pub phase: Phase,
}

impl Req {
    pub fn new(input_len: u64, max_new: u64) -> Self {
        Req {
            input_len,
            max_new,
            out: 0,
            prefilled: 0,
            cached_prefix: 0,
            shared: 0,
            retractions: 0,
            phase: Phase::InFlight,
        }
    }
    /// `len(fill_ids)`: prompt plus generated tokens to (re)compute.
    pub fn fill_len(&self) -> u64 {
        self.input_len + self.out
    }
    /// Tokens already available without compute (chunks done, or cached prefix), at most
    /// `fill_len − 1` (at least one token is always computed).
    pub fn prefix_len(&self) -> u64 {
        self.prefilled
            .max(self.cached_prefix)
            .max(self.shared)
            .min(self.fill_len().saturating_sub(1))
    }
    /// Tokens still to prefill.
    pub fn extend_len(&self) -> u64 {
        self.fill_len() - self.prefix_len()
    }
    /// `max_new_tokens − len(output_ids)`, clipped for reservation.
    pub fn remaining_new(&self) -> u64 {
        self.max_new.saturating_sub(self.out)
    }
}

/// Requests by id (dense from 0, in arrival order), in blocks of [`ReqTable::BLOCK`]. Finished
/// requests at the front are dropped when [`ReqTable::trim`] is called, and a block is freed
/// once all of its requests are, so the table spans from the oldest unfinished request to the
/// newest: with first-come-first-served admission, about the requests in the server. Indexing
/// a dropped id panics.
#[derive(Debug, Clone, Default)]
pub struct ReqTable {
    /// Id of `blocks[0][0]`.
    base: usize,
    /// First id not dropped (`base ≤ start ≤ len`).
    start: usize,
    blocks: VecDeque<Vec<Req>>,
    len: usize,
}

impl ReqTable {
    /// Requests per block.
    pub const BLOCK: usize = 1024;

    /// Adds a request; returns its id.
    pub fn push(&mut self, r: Req) -> usize {
        let id = self.len;
        match self.blocks.back_mut() {
            Some(b) if b.len() < Self::BLOCK => b.push(r),
            _ => {
                let mut b = Vec::with_capacity(Self::BLOCK);
                b.push(r);
                self.blocks.push_back(b);
            }
        }
        self.len += 1;
        id
    }
    /// Ids handed out so far.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The request, if it has not been dropped.
    pub fn get(&self, id: usize) -> Option<&Req> {
        if id < self.start || id >= self.len {
            return None;
        }
        let i = id - self.base;
        Some(&self.blocks[i / Self::BLOCK][i % Self::BLOCK])
    }
    fn get_mut(&mut self, id: usize) -> Option<&mut Req> {
        if id < self.start || id >= self.len {
            return None;
        }
        let i = id - self.base;
        Some(&mut self.blocks[i / Self::BLOCK][i % Self::BLOCK])
    }
    /// Requests not yet dropped, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &Req> {
        let skip = self.start - self.base;
        self.blocks.iter().flatten().skip(skip)
    }
    /// Drops the finished requests at the front (and frees the blocks they emptied).
    pub fn trim(&mut self) {
        while self
            .get(self.start)
            .is_some_and(|r| r.phase == Phase::Finished)
        {
            self.start += 1;
            if self.start - self.base == Self::BLOCK {
                self.blocks.pop_front();
                self.base += Self::BLOCK;
            }
        }
    }
}

impl Index<usize> for ReqTable {
    type Output = Req;
    fn index(&self, id: usize) -> &Req {
        match self.get(id) {
            Some(r) => r,
            None => panic!("request {id} is not in the table (dropped when finished)"),
        }
    }
}

impl IndexMut<usize> for ReqTable {
    fn index_mut(&mut self, id: usize) -> &mut Req {
        match self.get_mut(id) {
            Some(r) => r,
            None => panic!("request {id} is not in the table (dropped when finished)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn requests_stay_small() {
        // Every request waiting in the server holds one: keep it to seven words.
        assert!(std::mem::size_of::<Req>() <= 56);
    }

    #[test]
    fn finished_requests_leave_from_the_front() {
        let mut t = ReqTable::default();
        for i in 0..4 {
            assert_eq!(t.push(Req::new(10 + i, 5)), i as usize);
        }
        t[1].phase = Phase::Finished;
        t.trim();
        assert_eq!(t.iter().count(), 4, "request 0 is still in the server");
        t[0].phase = Phase::Finished;
        t.trim();
        assert_eq!(
            t.iter().map(|r| r.input_len).collect::<Vec<_>>(),
            vec![12, 13]
        );
        assert!(t.get(1).is_none());
        assert_eq!(t[3].input_len, 13);
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn emptied_blocks_are_freed() {
        let mut t = ReqTable::default();
        let n = 3 * ReqTable::BLOCK + 5;
        for i in 0..n {
            t.push(Req::new(i as u64 + 1, 1));
        }
        for i in 0..2 * ReqTable::BLOCK + 1 {
            t[i].phase = Phase::Finished;
        }
        t.trim();
        assert_eq!(t.blocks.len(), 2);
        assert_eq!(t.iter().count(), n - 2 * ReqTable::BLOCK - 1);
        let first = 2 * ReqTable::BLOCK + 1;
        assert_eq!(t.iter().next().map(|r| r.input_len), Some(first as u64 + 1));
        assert_eq!(t[n - 1].input_len, n as u64);
        assert!(t.get(2 * ReqTable::BLOCK).is_none());
    }
}
