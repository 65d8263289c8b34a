//! Which serving engine's runs a fittable constant acts on. The accelerator's constants
//! (efficiencies, device-side floors, HTTP/stream latencies) act on every run of the GPU,
//! SGLang's or vLLM's; SGLang's scheduler CPU (`step_cpu_ns`, `per_request_cpu_ns`,
//! `worker_thread_cpu_scale`) acts on SGLang servers only (a vLLM server uses its own, sourced
//! in `spec::vllm::overheads`); vLLM's multipliers on that (`vllm_step_cpu_scale`,
//! `vllm_per_request_cpu_scale`) act on vLLM servers only. A fit gives a constant a coordinate
//! only where runs of its engine train it (see `fit::slots`), so fitting vLLM runs never moves
//! SGLang's host constants, and the reverse.
use crate::spec::engine::Engine;

/// The engines whose runs a constant acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineScope {
    /// Every run on the accelerator, either engine.
    Both,
    /// SGLang servers only.
    Sglang,
    /// vLLM servers only.
    Vllm,
}

impl EngineScope {
    /// True when the constant acts on a run of `engine`.
    pub fn covers(self, engine: Engine) -> bool {
        matches!(
            (self, engine),
            (EngineScope::Both, _)
                | (EngineScope::Sglang, Engine::Sglang)
                | (EngineScope::Vllm, Engine::Vllm)
        )
    }

    /// How reports name it (`SGLang servers only`), or `None` for [`EngineScope::Both`].
    pub fn note(self) -> Option<&'static str> {
        match self {
            EngineScope::Both => None,
            EngineScope::Sglang => Some("acts on SGLang servers only"),
            EngineScope::Vllm => Some("acts on vLLM servers only"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_cover_their_engines() {
        assert!(EngineScope::Both.covers(Engine::Vllm));
        assert!(EngineScope::Sglang.covers(Engine::Sglang));
        assert!(!EngineScope::Sglang.covers(Engine::Vllm));
        assert!(!EngineScope::Vllm.covers(Engine::Sglang));
    }
}
