//! One run a fit is scored on ([`FitRun`]): the replayed scenario, the log's values of the three
//! scored metrics ([`Metric`]) and which of them enter the loss. Built by [`super::runs`] (SGLang
//! client blocks) and [`super::vllm_runs`] (`vllm bench serve` blocks).
use crate::spec::engine::Engine;
use crate::validate::replay::{LengthSource, Replay};

/// The metrics a fit is scored on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Output token throughput (tok/s).
    Throughput,
    /// Median TPOT, or median ITL where the log prints no TPOT.
    Tpot,
    /// Mean TTFT.
    Ttft,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::Throughput, Metric::Tpot, Metric::Ttft];

    /// Short column title.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Throughput => "out tok/s",
            Metric::Tpot => "med TPOT/ITL",
            Metric::Ttft => "mean TTFT",
        }
    }
}

/// The three scored values of one run, in [`Metric::ALL`] order.
pub type Values = [f64; 3];

/// One run to score.
#[derive(Debug, Clone)]
pub struct FitRun {
    /// Manifest id (`003-05`).
    pub id: String,
    /// Model name as the manifest gives it.
    pub model: String,
    pub replay: Replay,
    /// The log's values of the scored metrics.
    pub real: Values,
    /// True when the log prints no TPOT and median ITL is scored instead.
    pub itl: bool,
    /// Index of the run's hardware profile among the profiles of the fit (0 for a fit of one).
    pub hw: usize,
    /// The server engine the run replays (decides which constants act on it).
    pub engine: Engine,
    /// True for a block printed by vLLM's client (simulated through it, read by vLLM's keys).
    pub vllm_client: bool,
    /// Which of `real` enter the loss: false where the log lacks the metric (`real` is NaN)
    /// or it is only a flag (throughput of a run that stops at EOS, [`super::vllm_runs`]).
    pub scored: [bool; 3],
}

impl FitRun {
    /// An `sglang.bench_serving` run of an SGLang server: every metric scored.
    pub fn sglang(
        id: String,
        model: String,
        replay: Replay,
        real: Values,
        itl: bool,
        hw: usize,
    ) -> FitRun {
        FitRun {
            id,
            model,
            replay,
            real,
            itl,
            hw,
            engine: Engine::Sglang,
            vllm_client: false,
            scored: [true; 3],
        }
    }

    /// True when the run's request lengths are approximate: ShareGPT selected from the bundled
    /// sample rather than the user's full file.
    pub fn approx_lengths(&self) -> bool {
        self.replay.lengths == LengthSource::Sampled
    }
}
