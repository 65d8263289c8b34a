//! Which `vllm bench serve` (or legacy `benchmarks/benchmark_serving.py`) behaviours apply for
//! a given `--bench-version`: the random dataset's era, the arrival process, the test
//! request, the reported input total. Boundaries are the first sampled release showing each
//! change (reference: vLLM's released wheels and sdists 0.6.2 to 0.33.0; see DESIGN.md).
use crate::spec::version::Version;

/// The two vLLM client scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// `benchmarks/benchmark_serving.py` (0.6.2 to 0.10.1.1; a deprecation stub from 0.10.2).
    Legacy,
    /// `vllm bench serve` (`vllm/benchmarks/serve.py`, 0.8.0 and later).
    Cli,
}

/// How the `random` dataset draws its lengths (the five eras of `vllm-behaviour` B.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandomEra {
    /// Legacy ≤0.8.3 and CLI 0.8.0–0.9.1: global RandomState, `[int(L·r), L]`, default r=1;
    /// draws prefix, inputs, outputs, offsets.
    LowerFraction,
    /// Legacy 0.8.4–0.10.1 and CLI 0.9.2–0.10.1: global RandomState, `[int(L(1−r)), int(L(1+r))]`,
    /// default r=0; draws prefix (if any), inputs, outputs, offsets.
    Symmetric,
    /// CLI 0.10.2 and later: a private `default_rng(seed)` (PCG64), floor/ceil bounds;
    /// draws inputs, outputs, offsets, then the prefix.
    Pcg64,
}

/// How request send times are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalEra {
    /// Legacy ≤0.6.3: `exponential(1/rate)` after each request (first at 0, one extra sleep
    /// after the last).
    Exponential,
    /// 0.6.4–0.9.x: `gamma(burstiness, 1/(rate·burstiness))` after each request.
    GammaAfterEach,
    /// 0.10.0 and later: N gaps drawn up front, summed, rescaled so the last send is at N/rate
    /// (without ramp-up); the first request waits its own gap.
    GammaNormalized,
}

/// Version-dependent behaviour of vLLM's benchmark client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VllmFlavour {
    pub script: Script,
    pub version: Version,
    pub random_era: RandomEra,
    pub arrivals: ArrivalEra,
    /// `Initial test run`: request 0's prompt is sent once before the timed run (≤0.13),
    /// which leaves it in the prefix cache.
    pub test_request: bool,
    /// `--burstiness inf` means constant gaps (0.11.2+); earlier numpy raises.
    pub constant_gaps_at_inf_burstiness: bool,
    /// "Total input tokens" is the server's `usage.prompt_tokens` (0.20+ CLI), which includes
    /// the BOS, rather than the client's count.
    pub server_prompt_count: bool,
    /// The printed block has "Failed requests" (CLI 0.11.2+).
    pub prints_failed: bool,
    /// "Maximum request concurrency" / "Request rate configured" lines (0.10.1+).
    pub prints_config_lines: bool,
    /// "Peak output token throughput" / "Peak concurrent requests" (CLI 0.11.0+).
    pub prints_peaks: bool,
    /// "Total token throughput" with a lower-case t (CLI 0.13+).
    pub total_lowercase: bool,
    /// Output lengths of the symmetric era are at least 1 (0.10.0+).
    pub output_min_one: bool,
    /// The range ratio's default: 1.0 (fixed lengths, lower-fraction era) or 0.0.
    pub default_range_ratio: f64,
    /// `I_eff = I − S` (the tokenizer's special tokens are taken off the input length).
    pub subtract_special_tokens: bool,
}

/// The first release with `vllm bench serve`.
pub const CLI_FROM: Version = Version::new(0, 8, 0);

impl VllmFlavour {
    /// The behaviour of `script` at `version` (the caller has checked the script existed).
    pub fn new(script: Script, version: Version) -> Self {
        let v = |a, b, c| Version::new(a, b, c);
        let random_era = match script {
            Script::Legacy if version < v(0, 8, 4) => RandomEra::LowerFraction,
            Script::Legacy => RandomEra::Symmetric,
            Script::Cli if version < v(0, 9, 2) => RandomEra::LowerFraction,
            Script::Cli if version < v(0, 10, 2) => RandomEra::Symmetric,
            Script::Cli => RandomEra::Pcg64,
        };
        let arrivals = if version < v(0, 6, 4) {
            ArrivalEra::Exponential
        } else if version < v(0, 10, 0) {
            ArrivalEra::GammaAfterEach
        } else {
            ArrivalEra::GammaNormalized
        };
        let cli = script == Script::Cli;
        VllmFlavour {
            script,
            version,
            random_era,
            arrivals,
            test_request: version < v(0, 14, 0),
            constant_gaps_at_inf_burstiness: version >= v(0, 11, 2),
            server_prompt_count: cli && version >= v(0, 20, 0),
            prints_failed: cli && version >= v(0, 11, 2),
            prints_config_lines: version >= Version::post(0, 10, 1, 1)
                || (cli && version >= v(0, 10, 1)),
            prints_peaks: cli && version >= v(0, 11, 0),
            total_lowercase: cli && version >= v(0, 13, 0),
            output_min_one: version >= v(0, 10, 0),
            default_range_ratio: if random_era == RandomEra::LowerFraction {
                1.0
            } else {
                0.0
            },
            subtract_special_tokens: random_era == RandomEra::Pcg64
                || (random_era == RandomEra::Symmetric && version >= v(0, 9, 0)),
        }
    }

    /// Which script a `--client` value and version mean: `vllm-legacy` is always the old
    /// script; `vllm` is the CLI from 0.8.0 and the old script before it existed.
    pub fn script_for(legacy_requested: bool, version: Version) -> Script {
        if legacy_requested || version < CLI_FROM {
            Script::Legacy
        } else {
            Script::Cli
        }
    }
}
