//! Per-request stage times of a PD run (SGLang's `TimeStats` stages: decode pre-allocation
//! queue, prefill waiting queue, prefill forward, transfer queue, transfer, decode admission)
//! and their summaries for `--stats`, the JSON report and `plan`'s bottleneck.
use crate::engine::scheduler::SchedStats;
use serde::Serialize;

/// When request `i` passed each stage, ns (server clock).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Stamps {
    /// At the router (tokenized): enters the decode pre-allocation queue.
    pub router_ns: u64,
    /// Pre-allocated on the decode server: enters the prefill waiting queue.
    pub prealloc_ns: u64,
    /// Its first prefill chunk starts.
    pub prefill_start_ns: Option<u64>,
    /// Its last chunk ends (first token sampled): its KV tail enters the transfer queue.
    pub prefill_done_ns: u64,
    /// The NICs start its last piece.
    pub transfer_start_ns: u64,
    /// Its KV landed on the decode server (with the fixed latency).
    pub transfer_done_ns: u64,
    /// The decode server's PREBUILT iteration streaming its first token ends.
    pub first_token_ns: u64,
}

/// Prefill-window busy fraction from which the prefill side is the bottleneck.
const PREFILL_BOUND_UTILIZATION: f64 = 0.8;

/// Mean and percentiles of one stage over the successful requests, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StageStats {
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl StageStats {
    fn of(mut v: Vec<u64>) -> StageStats {
        if v.is_empty() {
            return StageStats::default();
        }
        v.sort_unstable();
        let ms = |ns: u64| ns as f64 / 1e6;
        let at = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
        StageStats {
            mean_ms: v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64 / 1e6,
            p50_ms: at(0.5),
            p99_ms: at(0.99),
            max_ms: ms(*v.last().unwrap_or(&0)),
        }
    }
}

/// One side's servers together.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SideStats {
    pub servers: u64,
    /// Σ step time over its servers, ns.
    pub busy_ns: u64,
    /// `busy_ns / (servers × simulated time)`.
    pub utilization: f64,
    /// Largest KV use of any one of its servers, tokens.
    pub max_kv_used_tokens: u64,
    pub sched: SchedStats,
}

/// What a PD run adds to the simulation's own statistics.
#[derive(Debug, Clone, Serialize)]
pub struct PdStats {
    /// Router → pre-allocated on the decode server (waits while decode KV is full).
    pub prealloc_wait: StageStats,
    /// Pre-allocated → first prefill chunk starts (prefill waiting queue).
    pub prefill_queue: StageStats,
    /// First chunk start → last chunk end.
    pub prefill_forward: StageStats,
    /// Last chunk end → its last KV piece starts on the NICs (transfer queue).
    pub transfer_queue: StageStats,
    /// Last KV piece on the NICs → landed on the decode server.
    pub transfer: StageStats,
    /// Landed → the PREBUILT iteration streaming the first token ends.
    pub decode_admit: StageStats,
    pub prefill: SideStats,
    pub decode: SideStats,
    /// Busy fraction of the prefill servers from the first arrival to the last prefill.
    pub prefill_window_utilization: f64,
    /// The side limiting a saturated run: `transfer` when requests queue longest for the
    /// NICs, else `prefill` when the prefill servers were busy ≥ 80 % of the time prompts were
    /// waiting to be prefilled, else `decode` (prefill idled waiting for pre-allocation:
    /// decode KV or request slots were full). Meaningful for a loaded run (`plan` reads it
    /// from the closed-loop run); a light load shows where the little waiting there is.
    pub bottleneck: &'static str,
}

impl PdStats {
    pub(super) fn new(
        stamps: &[Stamps],
        failed: &[bool],
        prefill: SideStats,
        decode: SideStats,
    ) -> PdStats {
        let ok: Vec<&Stamps> = stamps
            .iter()
            .zip(failed)
            .filter(|(_, &f)| !f)
            .map(|(s, _)| s)
            .collect();
        let stage = |f: &dyn Fn(&Stamps) -> u64| StageStats::of(ok.iter().map(|s| f(s)).collect());
        let start = |s: &Stamps| s.prefill_start_ns.unwrap_or(s.prefill_done_ns);
        let prealloc_wait = stage(&|s| s.prealloc_ns - s.router_ns);
        let prefill_queue = stage(&|s| start(s) - s.prealloc_ns);
        let prefill_forward = stage(&|s| s.prefill_done_ns - start(s));
        let transfer_queue = stage(&|s| s.transfer_start_ns - s.prefill_done_ns);
        let transfer = stage(&|s| s.transfer_done_ns - s.transfer_start_ns);
        let decode_admit = stage(&|s| s.first_token_ns.saturating_sub(s.transfer_done_ns));
        // While prompts are being prefilled, a prefill side that is the bottleneck is busy;
        // one that waits for decode pre-allocation is not.
        let first = ok.iter().map(|s| s.router_ns).min().unwrap_or(0);
        let last = ok.iter().map(|s| s.prefill_done_ns).max().unwrap_or(0);
        let window_ns = (last.saturating_sub(first) * prefill.servers.max(1)).max(1);
        let prefill_window_utilization = (prefill.busy_ns as f64 / window_ns as f64).min(1.0);
        let bottleneck =
            if transfer_queue.mean_ms > prefill_queue.mean_ms.max(prealloc_wait.mean_ms) {
                "transfer"
            } else if prefill_window_utilization >= PREFILL_BOUND_UTILIZATION {
                "prefill"
            } else {
                "decode"
            };
        PdStats {
            prealloc_wait,
            prefill_queue,
            prefill_forward,
            transfer_queue,
            transfer,
            decode_admit,
            prefill,
            decode,
            prefill_window_utilization,
            bottleneck,
        }
    }

    /// The `--stats` lines.
    pub fn text(&self) -> String {
        let mut s = String::from("PD stages (ms)           mean      p50      p99      max\n");
        for (name, st) in [
            ("decode pre-allocation", &self.prealloc_wait),
            ("prefill queue", &self.prefill_queue),
            ("prefill forward", &self.prefill_forward),
            ("transfer queue", &self.transfer_queue),
            ("KV transfer", &self.transfer),
            ("decode admission", &self.decode_admit),
        ] {
            s.push_str(&format!(
                "  {name:<22}{:>8.2} {:>8.2} {:>8.2} {:>8.2}\n",
                st.mean_ms, st.p50_ms, st.p99_ms, st.max_ms
            ));
        }
        for (name, side) in [("prefill", &self.prefill), ("decode", &self.decode)] {
            s.push_str(&format!(
                "  {name} servers: {}, busy {:.1} %, max KV used {} tokens, {} retractions\n",
                side.servers,
                side.utilization * 100.0,
                side.max_kv_used_tokens,
                side.sched.retractions
            ));
        }
        s.push_str(&format!(
            "  bottleneck: {} (prefill busy {:.1} % while prompts waited)\n",
            self.bottleneck,
            self.prefill_window_utilization * 100.0
        ));
        s
    }
}
