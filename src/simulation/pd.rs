//! A PD (prefill/decode-disaggregated) scenario run: one scheduler per DP rank of every
//! prefill and decode server, each side priced by its own step-cost backend (its hardware,
//! TP, DP attention and flags), the transfer link from `spec::pd`, then the ordinary event
//! input and metrics.
use super::Scenario;
use crate::cost::StepCost;
use crate::engine::pd::{simulate_pd, PdOutput, PdServers, SideLayout};
use crate::engine::scheduler::Scheduler;
use crate::engine::sim::SimInput;
use crate::error::Result;
use crate::spec::pd::{PdConfig, PdSide};

/// The step-cost backend of one side.
fn side_cost(sc: &Scenario, side: &PdSide) -> Result<Box<dyn StepCost>> {
    crate::cost::build(&side.hardware, &sc.model, &side.server, &sc.cost)
}

/// Simulates `input` on the PD deployment `pd` of scenario `sc`.
pub fn simulate(sc: &Scenario, pd: &PdConfig, input: &SimInput) -> Result<PdOutput> {
    let scheds = |side: &PdSide| {
        let window = crate::cost::window::applied_tokens(&sc.model, &side.server);
        (0..side.replicas * side.ranks())
            .map(|u| {
                let mut s = Scheduler::new(&side.server, window);
                // Speculative gains: one stream per rank, from the benchmark seed.
                s.seed_acceptance(sc.client.seed ^ (u + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                s
            })
            .collect::<Vec<_>>()
    };
    let layout = |side: &PdSide| SideLayout {
        ranks: side.ranks() as usize,
        lockstep: side.server.dp_attention,
    };
    let prefill_cost = side_cost(sc, &pd.prefill)?;
    let decode_cost = side_cost(sc, &pd.decode)?;
    simulate_pd(
        input,
        PdServers {
            prefill: scheds(&pd.prefill),
            decode: scheds(&pd.decode),
            prefill_layout: layout(&pd.prefill),
            decode_layout: layout(&pd.decode),
            room_seed: sc.client.seed,
            prefill_cost: prefill_cost.as_ref(),
            decode_cost: decode_cost.as_ref(),
            policy: pd.policy,
            reserved_decode_tokens: pd.reserved_decode_tokens,
            transfer_ns_per_token: pd.transfer_ns(1),
            transfer_latency_ns: pd.link.latency_ns.round() as u64,
        },
    )
}
