//! One server's scheduler, of either engine: SGLang's ([`Scheduler`]) or vLLM V1's
//! ([`VllmScheduler`]). The event loop (`sim`) drives it through these methods only, so it
//! needs no knowledge of which engine runs.
use super::admission::AdmissionLimits;
use super::request::Phase;
use super::scheduler::{Batch, SchedStats, Scheduler, StepResult};
use super::vllm::VllmScheduler;
use crate::spec::server::ServerConfig;

/// The scheduler of one replica.
#[derive(Debug, Clone)]
pub enum EngineScheduler {
    Sglang(Scheduler),
    Vllm(VllmScheduler),
}

impl From<Scheduler> for EngineScheduler {
    fn from(s: Scheduler) -> Self {
        EngineScheduler::Sglang(s)
    }
}

impl From<VllmScheduler> for EngineScheduler {
    fn from(s: VllmScheduler) -> Self {
        EngineScheduler::Vllm(s)
    }
}

macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            EngineScheduler::Sglang($s) => $e,
            EngineScheduler::Vllm($s) => $e,
        }
    };
}

impl EngineScheduler {
    /// The scheduler `server`'s engine runs (vLLM when `server.vllm` is set).
    pub fn new(server: &ServerConfig, window: Option<u64>) -> Self {
        match VllmScheduler::new(server, window) {
            Some(v) => v.into(),
            None => Scheduler::new(server, window).into(),
        }
    }
    /// Seeds speculative decoding's gain draws (SGLang only: servesim's vLLM engine has none).
    pub fn seed_acceptance(&mut self, seed: u64) {
        if let EngineScheduler::Sglang(s) = self {
            s.seed_acceptance(seed);
        }
    }
    /// SGLang's `avg_spec_accept_length` so far (`None` without speculation).
    pub fn spec_accept_length(&self) -> Option<f64> {
        match self {
            EngineScheduler::Sglang(s) => s.spec_accept_length(),
            EngineScheduler::Vllm(_) => None,
        }
    }
    pub fn limits(&self) -> &AdmissionLimits {
        each!(self, s => s.limits())
    }
    pub fn stats(&self) -> &SchedStats {
        each!(self, s => s.stats())
    }
    pub fn load(&self) -> u64 {
        each!(self, s => s.load())
    }
    pub fn has_work(&self) -> bool {
        each!(self, s => s.has_work())
    }
    pub fn waiting_len(&self) -> usize {
        each!(self, s => s.waiting_len())
    }
    pub fn running_len(&self) -> u64 {
        each!(self, s => s.running_len())
    }
    pub fn kv_used(&self) -> u64 {
        each!(self, s => s.kv_used())
    }
    /// KV capacity in tokens.
    pub fn kv_pool_tokens(&self) -> u64 {
        match self {
            EngineScheduler::Sglang(s) => s.cfg().kv_pool_tokens,
            EngineScheduler::Vllm(s) => s.kv_pool_tokens(),
        }
    }
    pub fn phase(&self, id: usize) -> Phase {
        each!(self, s => s.phase(id))
    }
    /// Local ids of the requests that decode in the next step.
    pub fn running_ids(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        each!(self, s => Box::new(s.running_ids()))
    }
    pub fn add_request(&mut self, input_len: u64, max_new: u64) -> usize {
        each!(self, s => s.add_request(input_len, max_new))
    }
    pub fn set_cached_prefix(&mut self, id: usize, tokens: u64) {
        each!(self, s => s.set_cached_prefix(id, tokens))
    }
    pub fn set_prefix_group(&mut self, id: usize, group: u64, prefix_len: u64) {
        each!(self, s => s.set_prefix_group(id, group, prefix_len))
    }
    pub fn arrive(&mut self, id: usize) {
        each!(self, s => s.arrive(id))
    }
    pub fn next_batch(&mut self) -> Option<Batch> {
        each!(self, s => s.next_batch())
    }
    pub fn on_idle(&mut self) {
        each!(self, s => s.on_idle())
    }
    pub fn complete(&mut self, batch: &Batch) -> StepResult {
        each!(self, s => s.complete(batch))
    }
    pub fn check_invariants(&self) -> Result<(), String> {
        each!(self, s => s.check_invariants())
    }
}
