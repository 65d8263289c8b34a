//! The printed result block of vLLM's benchmark clients, found in any log: from
//! `============ Serving Benchmark Result ============` to the closing `=====` rule, each line
//! `label: value`. A block whose first line is `Successful requests:` is vLLM's (SGLang's
//! starts with `Backend:`). Labels map to vLLM's JSON keys; `Mean/Median/P{p} {X} (ms)` lines
//! become `mean_{x}_ms` / `median_{x}_ms` / `p{p}_{x}_ms` with X in TTFT, TPOT, ITL, E2EL.
//! Unknown labels (extra sections of newer versions) are skipped; a malformed number is an
//! error naming the line.
use super::{VllmResult, REQUIRED};
use crate::error::{Error, Result};
use std::path::PathBuf;

const TITLE: &str = "Serving Benchmark Result";

fn key_for(label: &str) -> Option<String> {
    let fixed = match label {
        "Successful requests" => "completed",
        "Failed requests" => "failed",
        "Maximum request concurrency" => "max_concurrency",
        "Request rate configured (RPS)" => "request_rate",
        "Benchmark duration (s)" => "duration",
        "Total input tokens" => "total_input_tokens",
        "Total generated tokens" => "total_output_tokens",
        "Request throughput (req/s)" => "request_throughput",
        "Request goodput (req/s)" => "request_goodput",
        "Output token throughput (tok/s)" => "output_throughput",
        "Peak output token throughput (tok/s)" => "max_output_tokens_per_s",
        "Peak concurrent requests" => "max_concurrent_requests",
        "Total Token throughput (tok/s)" | "Total token throughput (tok/s)" => {
            "total_token_throughput"
        }
        _ => "",
    };
    if !fixed.is_empty() {
        return Some(fixed.to_string());
    }
    let body = label.strip_suffix(" (ms)")?;
    let (stat, metric) = body.split_once(' ')?;
    let metric = match metric {
        "TTFT" => "ttft",
        "TPOT" => "tpot",
        "ITL" => "itl",
        "E2EL" => "e2el",
        _ => return None,
    };
    let stat = match stat {
        "Mean" => "mean".to_string(),
        "Median" => "median".to_string(),
        p if p.starts_with('P') && p[1..].parse::<f64>().is_ok() => format!("p{}", &p[1..]),
        _ => return None,
    };
    Some(format!("{stat}_{metric}_ms"))
}

/// Is `line` a client command line of vLLM's benchmark?
fn is_bench_command(line: &str) -> bool {
    line.contains("vllm bench serve") || line.contains("benchmark_serving.py")
}

/// Is `line` a server command: `vllm serve` / `api_server`, or SGLang's `launch_server` (a log
/// where one vLLM client measured either engine)?
fn is_serve_command(line: &str) -> bool {
    (line.contains("vllm serve")
        || line.contains("vllm.entrypoints.openai.api_server")
        || line.contains("sglang.launch_server"))
        && !line.contains("bench")
        && !line.trim_start().starts_with('#')
}

/// The command starting at `lines[i]`, with `\`-continued lines joined.
pub fn joined_command(lines: &[&str], i: usize) -> String {
    let mut out = String::new();
    for l in &lines[i..] {
        let t = l.trim_end();
        match t.strip_suffix('\\') {
            Some(head) => {
                out.push_str(head.trim());
                out.push(' ');
            }
            None => {
                out.push_str(t.trim());
                break;
            }
        }
    }
    // Drop a shell prompt or anything before the command word.
    for start in ["vllm ", "python", "VLLM_", "CUDA_"] {
        if let Some(p) = out.find(start) {
            return out[p..].trim().to_string();
        }
    }
    out.trim().to_string()
}

fn parse_error(source: &str, line: usize, reason: String) -> Error {
    Error::Parse {
        path: PathBuf::from(source),
        line: Some(line),
        reason,
    }
}

/// Every vLLM result block in `text`, in file order; `source` names the file in errors.
pub fn parse_vllm_blocks(text: &str, source: &str) -> Result<Vec<VllmResult>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut runs = Vec::new();
    let mut bench_cmd: Option<String> = None;
    let mut serve_cmd: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_bench_command(line) && !line.contains("DEPRECATED") {
            bench_cmd = Some(joined_command(&lines, i));
        } else if is_serve_command(line) {
            serve_cmd = Some(joined_command(&lines, i));
        }
        let first = lines.get(i + 1).map(|l| l.trim_start()).unwrap_or_default();
        if !(line.contains(TITLE)
            && line.trim_start().starts_with('=')
            && first.starts_with("Successful requests:"))
        {
            i += 1;
            continue;
        }
        let mut run = VllmResult {
            line: i + 1,
            bench_command: bench_cmd.clone(),
            serve_command: serve_cmd.clone(),
            ..VllmResult::default()
        };
        let mut j = i + 1;
        while j < lines.len() {
            let l = lines[j].trim();
            if l.starts_with("=====") {
                break;
            }
            if let Some((label, value)) = l.rsplit_once(':') {
                if let Some(key) = key_for(label.trim()) {
                    let v: f64 = value.trim().parse().map_err(|_| {
                        parse_error(
                            source,
                            j + 1,
                            format!("`{}`: `{}` is not a number", label.trim(), value.trim()),
                        )
                    })?;
                    match key.as_str() {
                        "max_concurrency" => run.max_concurrency = Some(v as u64),
                        "request_rate" => run.request_rate = Some(v),
                        _ => {}
                    }
                    run.values.insert(key, v);
                }
            }
            j += 1;
        }
        if let Some(missing) = REQUIRED.iter().find(|k| !run.values.contains_key(**k)) {
            return Err(parse_error(
                source,
                i + 1,
                format!("vLLM result block without `{missing}`"),
            ));
        }
        runs.push(run);
        i = j + 1;
    }
    Ok(runs)
}
