//! What several commands print the same way: the run preamble (SGLang's start-up facts and
//! the simulator's counters), `--stats`, writing to stdout, progress bars.
use crate::error::{Error, Result};
use crate::simulation::{RunOutput, Scenario};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// What SGLang's start-up log and bench_serving print before the result block.
pub fn preamble(sc: &Scenario, out: &RunOutput) -> String {
    let s = &sc.server;
    let (engine, server) = match &s.vllm {
        Some(v) => (format!("vLLM {} (V1)", v.version), v.server_line()),
        None => (
            format!("SGLang {}", s.version),
            format!(
                "max_total_num_tokens={}, max_running_requests={}, chunked_prefill_size={}, mem_fraction_static={}, cuda_graph_max_bs={}, attention_backend={}, page_size={}",
                s.full_pool_tokens(),
                s.max_running_requests,
                s.chunked_prefill_size.map_or("-1".to_string(), |c| c.to_string()),
                s.mem_fraction_static,
                s.cuda_graph_max_bs(),
                s.attention_backend,
                s.page_size,
            ) + &s
                .swa_pools
                .as_ref()
                .map_or(String::new(), |p| format!(", {}", p.log_line())),
        ),
    };
    // Disaggregated: the sides are in the `pd:` line; the shared flags' one-server resolution
    // would name a server that does not exist.
    let (devices, server) = match &sc.pd {
        Some(pd) => (
            pd.devices(),
            "one per side, in the `pd:` line above".to_string(),
        ),
        None => (s.devices(), server),
    };
    format!(
        "servesim: {} on {} × {} ({}{}), {engine} defaults, bench_serving {}\n\
         server: {server}\n\
         sim: {} steps ({}{} prefill, {} decode), {} retractions, peak running {}, radix cache hit rate {:.1}%\n\n\
         #Input tokens: {}\n#Output tokens: {}\n",
        sc.model.name,
        devices,
        sc.hardware.name,
        match &sc.pd {
            Some(_) => "prefill/decode disaggregated".to_string(),
            None => format!("tp {}", s.tp),
        },
        match (s.dp, s.dp_attention) {
            (1, _) => String::new(),
            (d, true) => format!(", DP attention: {d} ranks of attn_tp {}", s.attn_tp),
            (d, false) => format!(", dp {d} replicas"),
        },
        sc.client.bench_version,
        out.stats.steps,
        // Under DP attention a step is one lockstep of every rank; the parts count each rank's.
        if s.dp_attention && s.dp > 1 {
            "rank-steps: "
        } else {
            ""
        },
        out.stats.sched.prefill_steps,
        out.stats.sched.decode_steps,
        out.stats.sched.retractions,
        out.stats.sched.max_running,
        100.0 * out.stats.sched.prefix_hit_tokens as f64 / out.stats.sched.prompt_tokens.max(1) as f64,
        out.metrics.total_input_tokens,
        out.metrics.total_output_tokens,
    )
}

pub fn stats_text(out: &RunOutput, wall_s: f64) -> String {
    let sim_s = out.stats.simulated_ns as f64 / 1e9;
    format!(
        "stats: wall {:.3} s, simulated {:.1} s, ratio {:.0}x, {} events, {} steps, peak RSS {} MiB\n",
        wall_s,
        sim_s,
        if wall_s > 0.0 { sim_s / wall_s } else { f64::INFINITY },
        out.stats.events,
        out.stats.steps,
        peak_rss_mib().map_or("?".into(), |m| m.to_string())
    )
}

/// Peak resident memory of this process (Linux `VmHWM`), MiB.
pub fn peak_rss_mib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Writes `text` to `out` (stdout for the binary); a closed pipe (`| head`) is not an error.
pub fn emit(out: &mut dyn std::io::Write, text: &str) -> Result<()> {
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::Msg(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// A spinner on stderr with the elapsed time, for work whose length is not counted (one
/// simulation); hidden with `quiet` or when stderr is no terminal. Never touches stdout.
pub fn spinner(quiet: bool, what: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(&format!("{{spinner}} {what} {{elapsed}}")) {
        pb.set_style(style);
    }
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// A progress bar on stderr over `n` items, hidden with `quiet` or when stderr is no terminal.
pub fn progress_bar(n: usize, quiet: bool, what: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(&format!(
        "{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {what} (eta {{eta}})"
    )) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.enable_steady_tick(std::time::Duration::from_millis(500));
    pb
}

/// Refuses an output file `flag` names that cannot be written: a directory, or a file in a
/// directory that does not exist.
pub fn check_output_file(flag: &str, path: &std::path::Path) -> crate::error::Result<()> {
    let field = flag.trim_start_matches('-').replace('-', "_");
    if path.is_dir() {
        return Err(crate::error::Error::invalid(
            flag,
            field,
            format!("`{}` is a directory; name a file", path.display()),
        ));
    }
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(crate::error::Error::invalid(
            flag,
            field,
            format!(
                "`{}`: its directory `{}` does not exist",
                path.display(),
                dir.display()
            ),
        )),
        _ => Ok(()),
    }
}
