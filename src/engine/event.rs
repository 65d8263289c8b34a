//! The event queue, ordered by (time, fixed kind priority, sequence number), so simultaneous
//! events always run in the same order; and [`DispatchOrder`], which feeds the client's
//! dispatches to it one at a time so the queue holds the events in flight, not one per request
//! of the whole run.
//!
//! The queue is a binary heap plus a FIFO "lane" for pushes that come in key order (a backlog
//! of arrivals behind the tokenizer is one long such run): a push at or after the lane's last
//! key joins the lane in O(1), any other goes to the heap, and a pop takes the smaller of the
//! lane's front and the heap's top. Keys are unique, so the pop order is exactly a single
//! heap's. Entries are 24 bytes: time, (priority, sequence) packed in one word, payload.
use crate::error::{Error, Result};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Kinds of event, in their same-time priority order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The client received a request's last chunk (frees a concurrency slot).
    ClientDone(usize),
    /// bench_serving's dispatch loop yields a request (it then waits for the semaphore).
    Dispatch(usize),
    /// The client's event loop finished a burst of sends: they leave together.
    ClientFlush,
    /// A request reaches the scheduler's waiting queue.
    ServerArrival(usize),
    /// The batch in flight on a replica finishes.
    StepEnd(usize),
}

/// Bits of the packed order word below the priority (sequence numbers stay far below 2^60).
const SEQ_BITS: u32 = 60;

impl Event {
    fn priority(&self) -> u64 {
        match self {
            Event::ClientDone(_) => 0,
            Event::Dispatch(_) => 1,
            Event::ClientFlush => 2,
            Event::ServerArrival(_) => 3,
            Event::StepEnd(_) => 4,
        }
    }
    fn payload(&self) -> u64 {
        match *self {
            Event::ClientDone(i)
            | Event::Dispatch(i)
            | Event::ServerArrival(i)
            | Event::StepEnd(i) => i as u64,
            Event::ClientFlush => 0,
        }
    }
    fn decode(priority: u64, payload: u64) -> Event {
        let i = payload as usize;
        match priority {
            0 => Event::ClientDone(i),
            1 => Event::Dispatch(i),
            2 => Event::ClientFlush,
            3 => Event::ServerArrival(i),
            _ => Event::StepEnd(i),
        }
    }
}

/// One queued event; ordered by time, then the packed (priority, sequence) word, which is
/// unique, so the payload never decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    time_ns: u64,
    order: u64,
    payload: u64,
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    /// Entries pushed in increasing key order (each after the previous lane entry).
    lane: VecDeque<Entry>,
    seq: u64,
    /// Events popped so far.
    pub processed: u64,
}

impl EventQueue {
    pub fn push(&mut self, time_ns: u64, ev: Event) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << SEQ_BITS);
        let e = Entry {
            time_ns,
            order: ev.priority() << SEQ_BITS | self.seq,
            payload: ev.payload(),
        };
        match self.lane.back() {
            Some(last) if e < *last => self.heap.push(Reverse(e)),
            _ => self.lane.push_back(e),
        }
    }
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        let from_lane = match (self.lane.front(), self.heap.peek()) {
            (Some(l), Some(Reverse(h))) => l < h,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let e = if from_lane {
            let e = self.lane.pop_front()?;
            // A drained backlog gives its memory back (amortised O(1)).
            if self.lane.capacity() > 4096 && self.lane.len() < self.lane.capacity() / 4 {
                self.lane.shrink_to(self.lane.capacity() / 2);
            }
            e
        } else {
            self.heap.pop()?.0
        };
        self.processed += 1;
        Some((e.time_ns, Event::decode(e.order >> SEQ_BITS, e.payload)))
    }
    pub fn len(&self) -> usize {
        self.heap.len() + self.lane.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.lane.is_empty()
    }
}

/// The order in which dispatches leave the queue: by time, then request index, which is the
/// order a heap holding all of them from the start would pop them in (same time and kind,
/// earlier push first). Pushing the next one only when the previous one is popped gives the
/// same event order with one dispatch in the heap instead of one per request.
#[derive(Debug, Clone)]
pub struct DispatchOrder {
    /// Request indices sorted by (time, index); `None` when the times are already in order.
    sorted: Option<Vec<usize>>,
    next: usize,
    len: usize,
}

impl DispatchOrder {
    pub fn new(dispatch_ns: &[u64]) -> Self {
        let sorted = if dispatch_ns.windows(2).all(|w| w[0] <= w[1]) {
            None
        } else {
            let mut idx: Vec<usize> = (0..dispatch_ns.len()).collect();
            idx.sort_by_key(|&i| (dispatch_ns[i], i));
            Some(idx)
        };
        DispatchOrder {
            sorted,
            next: 0,
            len: dispatch_ns.len(),
        }
    }
}

impl Iterator for DispatchOrder {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.next >= self.len {
            return None;
        }
        let k = self.next;
        self.next += 1;
        Some(self.sorted.as_ref().map_or(k, |s| s[k]))
    }
}

/// Latest simulated time (2^62 ns ≈ 146 years); later means the inputs are absurd, and it
/// leaves headroom so latencies added to any event time cannot overflow.
pub const MAX_CLOCK_NS: u64 = 1 << 62;

/// When a step of `total_ns` launched at `t` ends, or an error for a broken cost model or
/// an absurd profile (which must error, not overflow the clock); `shape` (the batch, or
/// the group's batches) only names the step in the error.
pub fn step_end_time(t: u64, total_ns: f64, shape: &dyn std::fmt::Debug) -> Result<u64> {
    if !(total_ns.is_finite() && total_ns >= 0.0) {
        return Err(Error::Msg(format!(
            "cost model returned {total_ns} ns for {shape:?}"
        )));
    }
    let dur = (total_ns.round() as u64).max(1);
    t.checked_add(dur)
        .filter(|&e| e <= MAX_CLOCK_NS)
        .ok_or_else(|| {
            Error::Impossible(format!(
                "simulated time would pass {} years (a step of {:.3e} s at {:.3e} s): \
                 the hardware profile or model numbers are implausible",
                MAX_CLOCK_NS / (365 * 86_400 * 1_000_000_000),
                total_ns / 1e9,
                t as f64 / 1e9
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ties_break_by_kind_then_insertion() {
        let mut q = EventQueue::default();
        q.push(5, Event::StepEnd(0));
        q.push(5, Event::ServerArrival(2));
        q.push(5, Event::ServerArrival(1));
        q.push(3, Event::StepEnd(0));
        q.push(5, Event::ClientDone(9));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::StepEnd(0)),
                (5, Event::ClientDone(9)),
                (5, Event::ServerArrival(2)),
                (5, Event::ServerArrival(1)),
                (5, Event::StepEnd(0))
            ]
        );
    }

    #[test]
    fn lane_and_heap_pop_like_one_heap() {
        // Pseudo-random times with many ties, pops interleaved with pushes: the lane plus heap
        // must pop exactly what a plain heap of (time, priority, push order) pops.
        let mut x: u64 = 12345;
        let script: Vec<(u64, Event, bool)> = (0..2000u64)
            .map(|round| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = round as usize;
                let ev = [
                    Event::ClientDone(i),
                    Event::Dispatch(i),
                    Event::ClientFlush,
                    Event::ServerArrival(i),
                    Event::StepEnd(i),
                ][((x >> 40) % 5) as usize];
                (round / 3 + (x >> 60), ev, (x >> 20) % 3 == 0)
            })
            .collect();
        let mut q = EventQueue::default();
        let mut h = BinaryHeap::new();
        let (mut got, mut reference) = (Vec::new(), Vec::new());
        for (seq, &(t, ev, pop)) in script.iter().enumerate() {
            q.push(t, ev);
            h.push(Reverse((t, ev.priority(), seq, ev)));
            if pop {
                got.extend(q.pop());
                reference.extend(h.pop().map(|Reverse(e)| (e.0, e.3)));
            }
        }
        got.extend(std::iter::from_fn(|| q.pop()));
        reference.extend(std::iter::from_fn(|| h.pop().map(|Reverse(e)| (e.0, e.3))));
        assert_eq!(got, reference);
        assert_eq!(got.len(), script.len());
    }

    #[test]
    fn dispatch_order_is_the_up_front_heap_order() {
        let times = [5u64, 3, 5, 0, 3];
        let mut q = EventQueue::default();
        for (i, &t) in times.iter().enumerate() {
            q.push(t, Event::Dispatch(i));
        }
        let heap: Vec<usize> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::Dispatch(i) => i,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(DispatchOrder::new(&times).collect::<Vec<_>>(), heap);
        assert_eq!(
            DispatchOrder::new(&[0, 0, 7]).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
    }
}
