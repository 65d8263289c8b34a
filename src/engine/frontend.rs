//! The server's front-end process: a request's parsing and tokenization on its way in (SGLang's
//! TokenizerManager queue; vLLM's API server, which also pays a fixed cost per request) and,
//! for vLLM V1, each step's streamed token chunks on their way out (`spec::vllm::frontend`).
//! Each path is served in the order it is booked, one piece at a time, so O(1) per request
//! and per step. The two paths are two queues that do not wait for each other: vLLM's API
//! process interleaves them on its asyncio loop (`process_outputs` yields to other tasks every
//! `VLLM_V1_OUTPUT_PROC_CHUNK_SIZE` = 128 outputs, and each request handler yields while its
//! prompt is tokenized on the executor thread), so neither burst blocks the other whole;
//! their sum is the process's busy time, which decides the front-end-bound note.
//! Where the version micro-batches tokenization (`spec::vllm::frontend::TOKENIZER_BATCH_WAIT_NS`),
//! a prompt's tokenization starts no earlier than the close of the batch window it joins (a
//! window opens at the first prompt that finds none open): a wait, not busy time.
//! Request work that holds the loop without yielding (`FrontendCosts::blocking_ns`, vLLM
//! 0.11.0's chat-template parse) couples the paths: a step's output processing that starts
//! while the request path is busy first waits for one such piece, so a saturated request path
//! slows the stream (the loop alternates one parse, one output batch).
//! SGLang books no output cost here. Its HTTP generator takes only the newest output on each
//! wakeup (`_wait_one_response`: `out_list[-1]`), so SSE work merges chunks instead of queueing
//! them. Its two O(batch) loops (detokenizer, `handle_loop`) have sourced ceilings of ≈ 22 µs
//! per streamed token (seed 001) and ≤ 26 µs (PR #9970), which move no validated run
//! (validation/public/p004-decode-notes.md, round hfront).
use crate::spec::vllm::frontend::FrontendCosts;

/// The front-end process: when it is next free, its costs and its busy time so far.
#[derive(Debug, Clone, Default)]
pub struct Frontend {
    /// When the request path is next free.
    free_ns: u64,
    /// When the output path is next free.
    out_free_ns: u64,
    request_ns: u64,
    chunk_ns: u64,
    busy_ns: u64,
    /// The micro-batching window's length, ns (0: none).
    batch_wait_ns: u64,
    /// The request work that does not yield the loop, ns (0: none).
    blocking_ns: u64,
    /// When the open micro-batch window closes (a prompt arriving before then joins it).
    batch_close_ns: Option<u64>,
}

impl Frontend {
    pub fn new(costs: FrontendCosts) -> Self {
        Frontend {
            free_ns: 0,
            out_free_ns: 0,
            request_ns: costs.request_ns.round() as u64,
            chunk_ns: costs.chunk_ns.round() as u64,
            busy_ns: 0,
            batch_wait_ns: costs.batch_wait_ns.round() as u64,
            batch_close_ns: None,
            blocking_ns: costs.blocking_ns.round() as u64,
        }
    }

    /// When a prompt reaching the server at `at_ns` may be tokenized: at once without
    /// micro-batching, else when its window closes (the open one if `at_ns` is inside it, else
    /// one it opens).
    fn tokenize_ready(&mut self, at_ns: u64) -> u64 {
        if self.batch_wait_ns == 0 {
            return at_ns;
        }
        match self.batch_close_ns {
            Some(close) if at_ns < close => close,
            _ => {
                let close = at_ns + self.batch_wait_ns;
                self.batch_close_ns = Some(close);
                close
            }
        }
    }

    /// A request reaches the server at `at_ns` and needs `tokenize_ns` of tokenization: when
    /// it reaches the engine.
    pub fn request(&mut self, at_ns: u64, tokenize_ns: u64) -> u64 {
        let work_ns = self.request_ns + tokenize_ns;
        let ready_ns = self.tokenize_ready(at_ns);
        self.free_ns = ready_ns.max(self.free_ns) + work_ns;
        self.busy_ns += work_ns;
        self.free_ns
    }

    /// A step emitted `chunks` streamed tokens at `emit_ns`: when the last is written (a
    /// step's outputs are processed as one batch, `OutputProcessor.process_outputs`, after the
    /// previous step's). Free when the server pays nothing per chunk.
    pub fn chunks(&mut self, emit_ns: u64, chunks: u64) -> u64 {
        if self.chunk_ns == 0 || chunks == 0 {
            return emit_ns;
        }
        let work_ns = chunks * self.chunk_ns;
        let start_ns = emit_ns.max(self.out_free_ns);
        // A blocking piece of request work is running or queued: it finishes first.
        let blocked_ns = if self.free_ns > start_ns {
            self.blocking_ns
        } else {
            0
        };
        self.out_free_ns = start_ns + blocked_ns + work_ns;
        self.busy_ns += work_ns;
        self.out_free_ns
    }

    /// Total serial work so far, ns.
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_is_a_fifo_and_neither_waits_for_the_other() {
        let mut f = Frontend::new(FrontendCosts {
            request_ns: 1000.0,
            chunk_ns: 10.0,
            batch_wait_ns: 0.0,
            blocking_ns: 0.0,
        });
        // Two requests at once: the second waits for the first.
        assert_eq!(f.request(0, 50), 1050);
        assert_eq!(f.request(0, 50), 2100);
        // A step's 30 chunks emitted at 1500 do not wait for the request burst: 1500 + 300.
        assert_eq!(f.chunks(1500, 30), 1800);
        // The next step's 30 chunks, emitted at 1700, wait for those: 1800 + 300.
        assert_eq!(f.chunks(1700, 30), 2100);
        // Idle later: no wait.
        assert_eq!(f.chunks(5000, 1), 5010);
        assert_eq!(f.busy_ns(), 2 * 1050 + 600 + 10);
        // Without a chunk cost (SGLang) streaming is untouched and books nothing.
        let mut s = Frontend::new(FrontendCosts::default());
        assert_eq!(s.chunks(7, 100), 7);
        assert_eq!(s.request(3, 5), 8);
        assert_eq!(s.busy_ns(), 5);
    }

    #[test]
    fn a_lone_prompt_waits_the_whole_window_a_burst_shares_one() {
        // vLLM 0.10+: batch_wait_timeout_s = 0.002 (AsyncMicrobatchTokenizer).
        let mut f = Frontend::new(FrontendCosts {
            request_ns: 1000.0,
            chunk_ns: 0.0,
            batch_wait_ns: 2_000_000.0,
            blocking_ns: 0.0,
        });
        // Alone at t = 0: tokenized after the 2 ms window, then 1000 + 50 of work.
        assert_eq!(f.request(0, 50), 2_001_050);
        // At 1 ms it joins that window (closes at 2 ms) and queues behind the first.
        assert_eq!(f.request(1_000_000, 50), 2_002_100);
        // At 10 ms no window is open: it opens one and waits it whole.
        assert_eq!(f.request(10_000_000, 0), 12_001_000);
        // The wait is idle time, not work.
        assert_eq!(f.busy_ns(), 2 * 1050 + 1000);
    }

    #[test]
    fn a_blocking_request_piece_delays_a_step_that_finds_the_request_path_busy() {
        // vLLM 0.11.0 chat: 9.8 ms per request, 8.8 ms of it the loop-holding template parse.
        let mut f = Frontend::new(FrontendCosts {
            request_ns: 9_800.0,
            chunk_ns: 100.0,
            batch_wait_ns: 0.0,
            blocking_ns: 8_800.0,
        });
        // Three requests at once: the request path is busy until 29,400.
        assert_eq!(f.request(0, 0), 9_800);
        assert_eq!(f.request(0, 0), 19_600);
        assert_eq!(f.request(0, 0), 29_400);
        // A step's 2 chunks at 1,000 wait for one parse: 1,000 + 8,800 + 200.
        assert_eq!(f.chunks(1_000, 2), 10_000);
        // The next at 10,500 (path still busy) waits for another: 10,500 + 8,800 + 200.
        assert_eq!(f.chunks(10_500, 2), 19_500);
        // Once the request path is idle (after 29,400) chunks go straight out.
        assert_eq!(f.chunks(40_000, 2), 40_200);
        // The wait is not counted as work twice.
        assert_eq!(f.busy_ns(), 3 * 9_800 + 3 * 200);
    }
}
