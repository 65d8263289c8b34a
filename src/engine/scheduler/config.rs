//! The part of a resolved [`ServerConfig`] one scheduler reads: its budgets, policy, version
//! rules, page size, pool size and captured CUDA-graph sizes. Built once per replica, so the
//! scheduler depends on these fields only, not on the whole server configuration.
use crate::spec::server::{SchedulePolicy, ServerConfig};
use crate::spec::version::Version;

#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerConfig {
    /// SGLang version: decides the retraction rule and the ratio re-estimate.
    pub version: Version,
    pub page_size: u64,
    pub schedule_policy: SchedulePolicy,
    pub schedule_conservativeness: f64,
    pub radix_cache: bool,
    pub mixed_chunk: bool,
    pub overlap_schedule: bool,
    /// `None` when chunked prefill is disabled.
    pub chunked_prefill_size: Option<u64>,
    pub max_prefill_tokens: u64,
    pub max_running_requests: u64,
    /// PD decode server: request slots beyond the running cap for pre-allocated requests.
    pub decode_prealloc_slots: u64,
    /// KV pool size in tokens (the full pool's with hybrid SWA pools).
    pub kv_pool_tokens: u64,
    /// SGLang's hybrid SWA pools: (SWA pool tokens, window), when on.
    pub swa: Option<(u64, u64)>,
    /// Captured decode batch sizes, ascending (empty without CUDA graphs).
    pub cuda_graph_batch_sizes: Vec<u64>,
    /// Speculative decoding, when on: what a decode step gains and reserves.
    pub spec: Option<SpecDecode>,
}

/// What the scheduler needs of speculative decoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpecDecode {
    /// Mean tokens gained per request per verify (bonus included).
    pub accept_length: f64,
    /// Most tokens one verify gives a request.
    pub max_gain: u64,
    /// KV tokens per request the decode memory check wants free (N + k·K).
    pub buffer_tokens: u64,
}

impl SchedulerConfig {
    pub fn of(cfg: &ServerConfig) -> Self {
        SchedulerConfig {
            version: cfg.version,
            page_size: cfg.page_size,
            schedule_policy: cfg.schedule_policy,
            schedule_conservativeness: cfg.schedule_conservativeness,
            radix_cache: cfg.radix_cache,
            mixed_chunk: cfg.mixed_chunk,
            overlap_schedule: cfg.overlap_schedule,
            chunked_prefill_size: cfg.chunked_prefill_size,
            max_prefill_tokens: cfg.max_prefill_tokens,
            max_running_requests: cfg.max_running_requests,
            decode_prealloc_slots: cfg.decode_prealloc_slots,
            kv_pool_tokens: cfg.full_pool_tokens(),
            swa: cfg
                .swa_pools
                .as_ref()
                .map(|p| (p.swa_tokens, p.window_tokens)),
            cuda_graph_batch_sizes: cfg.cuda_graph_batch_sizes.clone(),
            spec: cfg.speculative.as_ref().map(|s| SpecDecode {
                accept_length: s.accept_length,
                max_gain: s.max_gain(),
                buffer_tokens: s.decode_buffer_tokens(),
            }),
        }
    }

    /// The captured size a decode batch of `bs` is padded to, or `None` when it runs eagerly.
    pub fn graph_batch_size(&self, bs: u64) -> Option<u64> {
        let i = self.cuda_graph_batch_sizes.partition_point(|&b| b < bs);
        self.cuda_graph_batch_sizes.get(i).copied()
    }

    /// Rounds a token count up to whole pages.
    pub fn ceil_page(&self, tokens: u64) -> u64 {
        tokens.div_ceil(self.page_size) * self.page_size
    }
}
