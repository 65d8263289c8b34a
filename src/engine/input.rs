//! What a run's event loop is given besides its servers and cost models: the requests as the
//! client sends them, their dispatch times, the client's settings and the run's budgets
//! (re-exported by `engine::sim`, where the event loop of the unified server lives).
use crate::spec::hardware::Overheads;
use crate::spec::vllm::frontend::FrontendCosts;

/// One request as the client sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientRequest {
    pub prompt_len: u64,
    pub output_len: u64,
    /// Prompt tokens already in the radix cache when it arrives (e.g. the warm-up's prompt).
    pub cached_prefix: u64,
    /// The data-parallel rank whose cache holds `cached_prefix` (each rank has its own radix
    /// cache); `None`: whichever rank the request is routed to.
    pub cached_rank: Option<usize>,
    /// Shared-prefix group (system prompt, or earlier turns of a conversation).
    pub prefix_group: Option<u64>,
    /// Leading prompt tokens shared within the group.
    pub prefix_len: u64,
}

/// Everything the event loop needs besides the scheduler and the cost model.
#[derive(Debug, Clone)]
pub struct SimInput {
    pub requests: Vec<ClientRequest>,
    /// Dispatch time of each request (ns).
    pub dispatch_ns: Vec<u64>,
    /// When bench_serving's dispatch loop ends (after its last sleep), ns.
    pub dispatch_end_ns: u64,
    pub max_concurrency: Option<u64>,
    /// Closing `/get_server_info` round trip, if the client makes one.
    pub server_info_at_end: bool,
    pub overheads: Overheads,
    /// CPU time of the client's loop per request send, ns (0 for an ideal client).
    pub client_send_ns: f64,
    /// The server's front-end process beyond tokenization (vLLM's API server; zero for SGLang).
    pub frontend: FrontendCosts,
    /// Safety budget: stop with an error after this many events.
    pub max_events: u64,
    /// Check the scheduler's invariants after every step (O(n) per step; for tests).
    pub check_invariants: bool,
    /// Wall-clock budget (start, seconds): the run stops with an error once it is exceeded.
    /// Checked every 4096 events; it never changes a result, only turns a run into an error.
    pub deadline: Option<(std::time::Instant, f64)>,
    /// Record one timeline sample per scheduler iteration.
    pub record_timeline: bool,
    /// Track every request's ITLs one token at a time (the straightforward O(batch) per step
    /// path) instead of by cohort; results must be identical. For tests.
    pub reference_itl: bool,
}
