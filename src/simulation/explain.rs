//! What `servesim run --explain` prints after the report: one representative decode step and
//! one prefill step of the run, broken into components (GEMM, attention, MoE, all-reduce, LM
//! head, fixed GPU overheads, CPU) with the backend and the tables or constants that priced
//! each.
//!
//! The steps are reconstructed from the run's steady state, not sampled from it: decode at the
//! run's mean decode batch (decode tokens / decode steps) and mean context (mean prompt + half
//! the mean output: the average context over a request's decode tokens), CUDA-graph padded as
//! the server would; prefill as one chunk (`chunked_prefill_size`, else `max_prefill_tokens`)
//! of mean-length prompts without cached prefix.
//!
//! `--explain-step` prices named shapes instead, without simulating ([`StepSpec`]): the shapes
//! of a single-batch benchmark (SGLang's `bench_one_batch`: one extend of `batch × input_len`,
//! then decode steps of `batch` requests), for checking the step cost against its logs
//! (`validation/step-bench-notes.md`).
use super::{RunOutput, Scenario};
use crate::cost::breakdown::StepBreakdown;
use crate::cost::BatchShape;
use crate::error::{Error, Result};

/// One step named by its shape: `decode:BxL` (B requests decoding one token each over a
/// context of L tokens, CUDA-graph padded as the server would) or `prefill:BxL` (one extend of
/// B requests of L new tokens each, no cached prefix, unchunked as `bench_one_batch` runs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepSpec {
    pub prefill: bool,
    pub reqs: u64,
    pub tokens: u64,
}

impl std::str::FromStr for StepSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::invalid(
                "--explain-step",
                "explain_step",
                format!("expected decode:BxL or prefill:BxL with B, L ≥ 1, got `{s}`"),
            )
        };
        let (kind, dims) = s.split_once(':').ok_or_else(bad)?;
        let (b, l) = dims.split_once('x').ok_or_else(bad)?;
        let num = |v: &str| v.trim().parse::<u64>().ok().filter(|n| *n >= 1);
        let (reqs, tokens) = (num(b).ok_or_else(bad)?, num(l).ok_or_else(bad)?);
        let prefill = match kind.trim() {
            "decode" => false,
            "prefill" => true,
            _ => return Err(bad()),
        };
        Ok(StepSpec {
            prefill,
            reqs,
            tokens,
        })
    }
}

/// A decode step of `reqs` requests, each over `ctx` context tokens, padded to the server's
/// CUDA-graph batch size (eager above the largest).
pub fn decode_shape(sc: &Scenario, reqs: u64, ctx: u64) -> BatchShape {
    BatchShape {
        decode_reqs: reqs,
        decode_ctx_sum: reqs.saturating_mul(ctx),
        graph_bs: sc.server.graph_batch_size(reqs),
        ..Default::default()
    }
}

/// The batch `spec` names, under `sc`'s server.
pub fn spec_shape(sc: &Scenario, spec: &StepSpec) -> BatchShape {
    if !spec.prefill {
        return decode_shape(sc, spec.reqs, spec.tokens);
    }
    let window = crate::cost::window::applied_tokens(&sc.model, &sc.server);
    let mut one = BatchShape::default();
    one.add_prefill(spec.tokens, 0, window);
    // B identical requests: B times one request's sums (O(1) in B).
    let n = spec.reqs as f64;
    BatchShape {
        prefill_reqs: spec.reqs,
        prefill_tokens: spec.reqs.saturating_mul(one.prefill_tokens),
        prefill_attn_work: n * one.prefill_attn_work,
        prefill_attn_work_windowed: n * one.prefill_attn_work_windowed,
        prefill_attn_work_window_prefix: n * one.prefill_attn_work_window_prefix,
        prefill_kv_tokens: spec.reqs.saturating_mul(one.prefill_kv_tokens),
        ..one
    }
}

/// The representative (decode, prefill) shapes of a run.
pub fn representative_shapes(sc: &Scenario, out: &RunOutput) -> (BatchShape, BatchShape) {
    let m = &out.metrics;
    let done = m.completed.max(1) as f64;
    let mean_in = (m.total_input_tokens as f64 / done).max(1.0);
    let mean_out = m.total_output_tokens as f64 / done;
    let s = &out.stats.sched;
    let decode_steps = (s.decode_steps + s.mixed_steps).max(1) as f64;
    let decode_tokens = m.total_output_tokens.saturating_sub(m.completed) as f64;
    let bs = ((decode_tokens / decode_steps).round() as u64).max(1);
    let ctx = (mean_in + mean_out / 2.0).round() as u64;
    let decode = decode_shape(sc, bs, ctx);
    let chunk = sc
        .server
        .chunked_prefill_size
        .unwrap_or(sc.server.max_prefill_tokens)
        .max(1) as f64;
    let window = crate::cost::window::applied_tokens(&sc.model, &sc.server);
    let mut prefill = BatchShape::default();
    if mean_in >= chunk {
        prefill.add_prefill(chunk as u64, 0, window);
    } else {
        for _ in 0..((chunk / mean_in).floor() as u64).max(1) {
            prefill.add_prefill(mean_in.round() as u64, 0, window);
        }
    }
    (decode, prefill)
}

fn render(title: &str, shape: &BatchShape, b: &StepBreakdown) -> String {
    let mut s = format!(
        "{title}: {} decode reqs (Σ context {}{}), {} prefill reqs ({} tokens); backend {}\n  step {:.3} ms = GPU {:.3} ms {} CPU {:.3} ms\n",
        shape.decode_reqs,
        shape.decode_ctx_sum,
        shape.graph_bs.map_or(String::new(), |g| format!(", CUDA graph bs {g}")),
        shape.prefill_reqs,
        shape.prefill_tokens,
        b.backend,
        b.time.total_ns / 1e6,
        b.time.gpu_ns / 1e6,
        if b.time.total_ns < b.time.gpu_ns + b.time.cpu_ns - 1.0 { "overlapping" } else { "+" },
        b.time.cpu_ns / 1e6,
    );
    for i in &b.items {
        s += &format!(
            "  {:<13}{:>10.3} ms  {}\n",
            i.component.name(),
            i.time_ns / 1e6,
            i.detail
        );
    }
    s
}

/// Under DP attention the breakdown above is one rank alone, its MoE over its own tokens; the
/// engine prices a lockstep step of every rank, whose MLP / MoE, collectives and LM head run
/// over the tokens gathered from all ranks (`StepCost::group_step_time`). This line prices
/// that step with every rank at the representative batch; empty without DP attention.
fn lockstep_line(sc: &Scenario, cost: &dyn crate::cost::StepCost, decode: &BatchShape) -> String {
    let ranks = sc.server.dp;
    if !sc.server.dp_attention || ranks <= 1 {
        return String::new();
    }
    let t = cost.group_step_time(&vec![*decode; ranks as usize]);
    let gathered = ranks * decode.decode_tokens();
    let padded = (ranks as f64 * decode.gemm_rows()).round() as u64;
    let pad = if padded > gathered {
        format!(", padded to {padded} rows by the CUDA graphs")
    } else {
        String::new()
    };
    format!(
        "  lockstep of {ranks} DP-attention ranks at this batch each (MLP / MoE, collectives and LM head over the {gathered} gathered tokens{pad}): step {:.3} ms = GPU {:.3} ms, CPU {:.3} ms; the breakdown above is one rank alone\n",
        t.total_ns / 1e6,
        t.gpu_ns / 1e6,
        t.cpu_ns / 1e6,
    )
}

/// The `--explain` text for a finished run.
pub fn explain_text(sc: &Scenario, out: &RunOutput) -> Result<String> {
    let cost = sc.step_cost()?;
    let (decode, prefill) = representative_shapes(sc, out);
    let mut s = String::from(
        "\n--- explain: representative steps of this run (see `servesim run --help`) ---\n",
    );
    s += &render("decode step", &decode, &cost.explain(&decode));
    s += &lockstep_line(sc, cost.as_ref(), &decode);
    s += &render("prefill step", &prefill, &cost.explain(&prefill));
    if let Some(costs) = super::vllm::frontend_costs(sc) {
        s += &crate::spec::vllm::frontend::explain_line(&costs);
    }
    Ok(s)
}

/// The `--explain-step` text: each named step's breakdown, with no run simulated.
pub fn steps_text(sc: &Scenario, specs: &[StepSpec]) -> Result<String> {
    let cost = sc.step_cost()?;
    let mut s = String::from("--- explain: named steps, no run simulated ---\n");
    for spec in specs {
        let shape = spec_shape(sc, spec);
        let kind = if spec.prefill { "prefill" } else { "decode" };
        let title = format!("{kind} step {}x{}", spec.reqs, spec.tokens);
        s += &render(&title, &shape, &cost.explain(&shape));
        if !spec.prefill {
            s += &lockstep_line(sc, cost.as_ref(), &shape);
        }
    }
    Ok(s)
}
