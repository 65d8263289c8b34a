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
use super::{RunOutput, Scenario};
use crate::cost::breakdown::StepBreakdown;
use crate::cost::BatchShape;
use crate::error::Result;

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
    let decode = BatchShape {
        decode_reqs: bs,
        decode_ctx_sum: bs * ctx,
        graph_bs: sc.server.graph_batch_size(bs),
        ..Default::default()
    };
    let chunk = sc
        .server
        .chunked_prefill_size
        .unwrap_or(sc.server.max_prefill_tokens)
        .max(1) as f64;
    let window = sc.model.sliding_window.as_ref().map(|w| w.window_tokens);
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
