//! `servesim plan`: the cheapest deployment meeting latency SLOs at a target rate (or the
//! highest sustainable rate within a budget) over a grid of `run` flags: hardware, `--tp`,
//! `--dp`, `--max-concurrency`, …, with the workload given by the client flags. Exits 0 with a
//! recommendation, 3 when no candidate meets the goal (the table still says why each fails),
//! 1 on bad input.
use super::print::progress_bar;
use crate::error::{Error, Result};
use crate::plan::{plan as compute, render, Goal, PlanSpec, Prices, Slo};
use crate::spec::workload::ScenarioFile;
use crate::sweep::grid::{Grid, GridArgs};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("goal").required(true).args(["target_rate", "budget_per_hour"])))]
pub struct PlanArgs {
    /// Base scenario file (default: the bundled default, whose client section applies only
    /// when no client flag is given).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// SLO on bench_serving's P99 time to first token, ms.
    #[arg(long, value_name = "MS")]
    pub slo_ttft_p99: Option<f64>,
    /// SLO on bench_serving's P99 time per output token, ms.
    #[arg(long, value_name = "MS")]
    pub slo_tpot_p99: Option<f64>,
    /// SLO on bench_serving's P99 end-to-end latency, ms.
    #[arg(long, value_name = "MS")]
    pub slo_e2e_p99: Option<f64>,
    /// Find the cheapest deployment meeting the SLOs at this request rate (req/s, Poisson).
    #[arg(long, value_name = "REQ/S")]
    pub target_rate: Option<f64>,
    /// Find the deployment sustaining the highest rate for at most this many USD per hour.
    #[arg(long, value_name = "USD")]
    pub budget_per_hour: Option<f64>,
    /// Price of one device-hour in USD, overriding the profiles': `2.5` for every profile,
    /// or `h100-sxm5-80gb=3.0,h200-sxm-141gb=3.8`.
    #[arg(long, value_name = "[HW=]USD,...")]
    pub cost_per_device_hour: Option<Prices>,
    /// Never propose a deployment using more than N devices (GPUs/NPUs): larger candidates
    /// are dropped before they are searched.
    #[arg(long, value_name = "N")]
    pub gpu_budget: Option<u64>,
    /// Relative resolution of the max-rate bisection.
    #[arg(long, default_value_t = 0.02)]
    pub rate_tolerance: f64,
    /// text (ranked table) or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// No progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub grid: GridArgs,
}

pub fn plan(a: &PlanArgs, out: &mut dyn Write) -> Result<()> {
    if !["text", "json"].contains(&a.format.as_str()) {
        return Err(Error::Unknown {
            kind: "format",
            name: a.format.clone(),
            available: "text, json".into(),
        });
    }
    if a.gpu_budget == Some(0) {
        return Err(Error::invalid(
            "--gpu-budget",
            "gpu_budget",
            "must be ≥ 1 device, got 0",
        ));
    }
    let grid = Grid::parse(&a.grid.flags)?;
    let goal = match (a.target_rate, a.budget_per_hour) {
        (Some(r), _) => Goal::TargetRate(r),
        (None, Some(b)) => Goal::BudgetPerHour(b),
        (None, None) => {
            return Err(Error::Msg(
                "plan needs --target-rate or --budget-per-hour".into(),
            ))
        }
    };
    let mut file = ScenarioFile::base(a.scenario.as_deref(), grid.sets_flag("request-rate"))?;
    let client_line = crate::sweep::ideal_client_unless_set(&mut file, &grid);
    let spec = PlanSpec {
        file,
        grid,
        slo: Slo {
            ttft_p99_ms: a.slo_ttft_p99,
            tpot_p99_ms: a.slo_tpot_p99,
            e2e_p99_ms: a.slo_e2e_p99,
        },
        goal,
        prices: a.cost_per_device_hour.clone().unwrap_or_default(),
        tolerance: a.rate_tolerance,
        gpu_budget: a.gpu_budget,
    };
    let pb = progress_bar(spec.grid.len(), a.quiet, "deployments");
    let p = compute(&spec, &|| pb.inc(1))?;
    pb.finish_and_clear();
    let text = if a.format == "json" {
        eprintln!("{client_line}");
        render::json(&p)
    } else {
        format!("{client_line}\n{}", render::text(&p))
    };
    super::print::emit(out, &text)?;
    // "No deployment qualifies" is an answer, printed above, but a script must not read it as
    // a recommendation: exit 3 (bad input exits 1).
    match p.best() {
        Some(_) => Ok(()),
        None => Err(Error::NoAnswer(
            "no candidate meets the goal (the table above says why each fails)".into(),
        )),
    }
}
