//! A plan as text (the ranked table, the recommendation, and why each runner-up loses) or JSON.
use super::search::{fmt_ms as ms, fmt_rate, Probe};
use super::{Candidate, Goal, Plan};
use crate::report::table::{Style, Table};
use crate::sweep::frontier::{self, EfficiencyPoint};

/// Flags shown in their own columns (other varying flags get a column each after them).
const FIXED_COLUMNS: [&str; 4] = ["hardware", "tp", "dp", "max-concurrency"];

fn usd(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{c:.2}"))
}

fn usd3(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{c:.3}"))
}

/// A short name of a candidate: `h100-sxm5-80gb tp 2 dp 1 max-concurrency 64 …`.
pub fn name(c: &Candidate, varying: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(d) = &c.deployment {
        parts.push(d.hardware.clone());
        parts.push(format!("tp {}", d.tp));
        if d.dp > 1 {
            parts.push(format!("dp {}", d.dp));
        }
        if let Some(m) = d.max_concurrency {
            parts.push(format!("max-concurrency {m}"));
        }
    }
    for f in varying
        .iter()
        .filter(|f| !FIXED_COLUMNS.contains(&f.as_str()))
    {
        parts.push(format!(
            "{f} {}",
            c.params.get(f).map_or("", |v| v.as_str())
        ));
    }
    if c.deployment.is_none() {
        parts.insert(0, format!("point {}", c.index));
    }
    parts.join(" ")
}

/// The probe shown in the table: at the target rate, or at the max rate on a budget.
fn shown_probe(c: &Candidate, goal: Goal) -> Option<&Probe> {
    let s = c.search.as_ref()?;
    match goal {
        Goal::TargetRate(_) => s.at_target.as_ref(),
        Goal::BudgetPerHour(_) => s.best.as_ref(),
    }
}

/// Why `c` ranks below `best` (or, with no qualifying candidate, why `c` fails).
pub fn why_not(c: &Candidate, best: Option<&Candidate>, goal: Goal) -> String {
    if let Some(e) = &c.error {
        return format!("cannot run: {e}");
    }
    let Some(s) = &c.search else {
        if let Goal::BudgetPerHour(b) = goal {
            return format!("costs ${}/h, over the ${b}/h budget", usd(c.cost_per_hour));
        }
        return "not evaluated".into();
    };
    if let Some(sat) = s.saturation.as_ref().filter(|p| !p.meets_slos()) {
        let cap = c.deployment.as_ref().and_then(|d| d.max_concurrency);
        // Below the target's rate the capacity is the first reason; the SLO miss comes second.
        let below = match goal {
            Goal::TargetRate(t) if t > s.capacity_rps => format!(
                "saturates at {} req/s, below the {} req/s target; and ",
                fmt_rate(s.capacity_rps),
                fmt_rate(t)
            ),
            _ => String::new(),
        };
        return format!(
            "{below}with the cap full (closed loop at max-concurrency {}): {}",
            cap.map_or("-".into(), |m| m.to_string()),
            sat.why()
        );
    }
    if !c.qualifies(goal) {
        return match goal {
            Goal::TargetRate(t) => {
                if t > s.capacity_rps {
                    format!(
                        "saturates at {} req/s, below the {} req/s target",
                        fmt_rate(s.capacity_rps),
                        fmt_rate(t)
                    )
                } else {
                    s.at_target.as_ref().map_or(String::new(), Probe::why)
                }
            }
            Goal::BudgetPerHour(_) => format!(
                "meets the SLOs at no rate down to {} req/s: {}",
                fmt_rate(s.capacity_rps * super::search::MIN_RATE_FRACTION),
                s.best.as_ref().map_or(String::new(), Probe::why)
            ),
        };
    }
    let Some(b) = best else {
        return String::new();
    };
    if b.index == c.index {
        return "best".into();
    }
    let (cc, bc) = (
        c.cost_per_hour.unwrap_or(f64::INFINITY),
        b.cost_per_hour.unwrap_or(f64::INFINITY),
    );
    let rates = format!(
        "max {} vs {} req/s",
        fmt_rate(c.max_rate()),
        fmt_rate(b.max_rate())
    );
    match goal {
        Goal::TargetRate(_) if cc > bc => format!(
            "costs ${}/h vs ${}/h (+{:.0}%)",
            usd(Some(cc)),
            usd(Some(bc)),
            (cc / bc - 1.0) * 100.0
        ),
        Goal::TargetRate(_) => format!("same cost, less headroom: {rates}"),
        Goal::BudgetPerHour(_) if c.max_rate() < b.max_rate() => format!("sustains less: {rates}"),
        Goal::BudgetPerHour(_) => format!(
            "same rate, costs ${}/h vs ${}/h",
            usd(Some(cc)),
            usd(Some(bc))
        ),
    }
}

/// The ranked table.
pub fn table(p: &Plan) -> Table {
    let extra: Vec<&String> = p
        .varying
        .iter()
        .filter(|f| !FIXED_COLUMNS.contains(&f.as_str()))
        .collect();
    let at = match p.goal {
        Goal::TargetRate(r) => format!("@{} req/s", fmt_rate(r)),
        Goal::BudgetPerHour(_) => "@max rate".into(),
    };
    let mut header: Vec<String> = ["rank", "hardware", "tp", "dp", "devices", "max conc"]
        .map(String::from)
        .to_vec();
    header.extend(extra.iter().map(|f| f.to_string()));
    header.extend([
        "$/h".to_string(),
        "$/1M out tok".into(),
        "tok/s/GPU".into(),
        "capacity req/s".into(),
        "max rate req/s".into(),
        format!("p99 TTFT ms {at}"),
        "p99 TPOT ms".into(),
        "p99 E2E ms".into(),
    ]);
    let pd = super::pd::any_pd(p);
    if pd {
        header.extend(["xPyD".to_string(), "bottleneck".into()]);
    }
    header.push("verdict".into());
    let best = p.best();
    let rows = p
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let d = c.deployment.as_ref();
            let mut row = vec![
                (i + 1).to_string(),
                d.map_or("-".into(), |d| d.hardware.clone()),
                d.map_or("-".into(), |d| d.tp.to_string()),
                d.map_or("-".into(), |d| d.dp.to_string()),
                d.map_or("-".into(), |d| d.devices.to_string()),
                d.and_then(|d| d.max_concurrency)
                    .map_or("-".into(), |m| m.to_string()),
            ];
            row.extend(
                extra
                    .iter()
                    .map(|f| c.params.get(*f).cloned().unwrap_or_default()),
            );
            let probe = shown_probe(c, p.goal);
            row.extend([
                usd(c.cost_per_hour),
                usd3(
                    c.efficiency
                        .as_ref()
                        .and_then(|e| e.cost_per_1m_output_tokens_usd),
                ),
                c.efficiency
                    .as_ref()
                    .map_or("-".into(), |e| format!("{:.1}", e.tok_s_per_gpu)),
                c.search
                    .as_ref()
                    .map_or("-".into(), |s| fmt_rate(s.capacity_rps)),
                // "-": no rate was searched (the closed loop missed the SLOs or served nothing).
                c.search
                    .as_ref()
                    .filter(|s| s.searched())
                    .map_or("-".into(), |s| fmt_rate(s.max_rate)),
                probe.map_or("-".into(), |p| ms(p.p99_ttft_ms)),
                probe.map_or("-".into(), |p| ms(p.p99_tpot_ms)),
                probe.map_or("-".into(), |p| ms(p.p99_e2e_ms)),
            ]);
            if pd {
                row.extend(super::pd::columns(c));
            }
            row.push(why_not(c, best, p.goal));
            row
        })
        .collect();
    let cols = header.len();
    let mut right = vec![true; cols];
    right[1] = false;
    right[cols - 1] = false;
    Table {
        header,
        rows,
        right,
    }
}

/// The plan as text: headline, recommendation, ranked table.
pub fn text(p: &Plan) -> String {
    let mut out = match p.goal {
        Goal::TargetRate(r) => format!(
            "servesim plan: cheapest deployment serving {} req/s with {}\n",
            fmt_rate(r),
            p.slo.describe()
        ),
        Goal::BudgetPerHour(b) => format!(
            "servesim plan: highest sustainable rate for at most ${b}/h with {}\n",
            p.slo.describe()
        ),
    };
    out.push_str(&format!(
        "{} candidates; max rate = highest Poisson rate meeting the SLOs (bisection, ±{:.0}%); capacity = closed-loop throughput\n\n",
        p.candidates.len(),
        p.tolerance * 100.0
    ));
    match p.best() {
        Some(b) => {
            let rate = b.max_rate();
            out.push_str(&format!(
                "best: {} — ${}/h, meets the SLOs up to {} req/s\n\n",
                name(b, &p.varying),
                usd(b.cost_per_hour),
                fmt_rate(rate)
            ));
        }
        None => out.push_str("no candidate meets the goal; the table says why each fails\n\n"),
    }
    if let Some(w) = p.best().and_then(|b| {
        let s = b.search.as_ref()?;
        s.at_target
            .as_ref()
            .or(s.best.as_ref())?
            .client_bound
            .clone()
    }) {
        out.push_str(&format!("warning: the recommendation's run is {w}\n\n"));
    }
    out.push_str(&table(p).render(Style::Text));
    out.push_str(&per_gpu_text(p));
    if let Some(l) = &p.launch {
        out.push_str(&format!(
            "\nTo deploy and benchmark the recommendation (settings pinned to the simulated values):\n  {}\n  {}\n",
            l.server.replace('\n', "\n  "),
            l.client
        ));
    }
    out
}

/// The per-GPU / per-user frontier of the candidates, as text.
fn per_gpu_text(p: &Plan) -> String {
    let front: Vec<&EfficiencyPoint> = p
        .per_gpu_frontier
        .iter()
        .filter_map(|i| {
            p.candidates
                .iter()
                .find(|c| c.index == *i)?
                .efficiency
                .as_ref()
        })
        .collect();
    if front.is_empty() {
        return String::new();
    }
    let label = |i: usize| {
        let c = p.candidates.iter().find(|c| c.index == i);
        vec![c.map_or(String::new(), |c| name(c, &p.varying))]
    };
    format!(
        "\nPer-GPU frontier at each candidate's highest rate meeting the SLOs (output tok/s per GPU vs tok/s per user = 1000 / mean TPOT):\n{}",
        frontier::table(&front, &["deployment".into()], label).render(Style::Text)
    )
}

/// The plan as pretty JSON.
pub fn json(p: &Plan) -> String {
    let mut v = serde_json::to_value(p).expect("plan serializes");
    // The recommendation by grid index, `null` when no candidate meets the goal (exit code 3).
    if let Some(map) = v.as_object_mut() {
        let best = p.best().map_or(serde_json::Value::Null, |c| c.index.into());
        map.insert("recommended".into(), best);
    }
    let mut s = serde_json::to_string_pretty(&v).expect("plan serializes");
    s.push('\n');
    s
}
