//! A pasted command line: `servesim run [FLAGS] -- python -m sglang.bench_serving ...`
//! (`sglang.benchmark.serving`, or `vllm bench serve ...`, which adds `--client vllm` and that
//! client's defaults; and/or `python -m sglang.launch_server ...` or `vllm serve MODEL ...`
//! (`--engine vllm`, `cli::paste_vllm`), joined by `&&`, `;`, `&` or
//! newlines, with `VAR=value` prefixes, `\` continuations, quotes and redirections, as a shell
//! would read them) is rewritten into the `servesim run` arguments it means, before clap parses
//! them:
//! * launch_server's flags that servesim models (the server flag group, same names, unique
//!   prefixes as argparse allows) are kept, `--model-path`/`--model` becomes `--model`, the
//!   rest (host, port, ...) is ignored with one note on stderr;
//! * bench_serving's flags are kept as written (every one of them is a `run` flag), and
//!   bench_serving's own defaults replace the bundled scenario's client section: no
//!   `--dataset-name` means sharegpt, no `--max-concurrency` means no cap;
//! * the flags given before `--` come last, so they override the pasted ones.
use crate::spec::server::ServerFlags;
use crate::validate::replay::argparse_value;
use std::ffi::OsString;

/// A word or a command separator of a shell line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    Sep,
}

/// Splits shell text into words and separators (`&&`, `||`, `;`, `&`, `|`, newlines), with
/// single and double quotes, backslash escapes and `\`-newline continuations. A quote left
/// open is refused, as a shell refuses it.
fn shell_tokens(text: &str, out: &mut Vec<Tok>) -> Result<(), String> {
    let mut word: Option<String> = None;
    let mut chars = text.chars().peekable();
    let flush = |word: &mut Option<String>, out: &mut Vec<Tok>| {
        if let Some(w) = word.take() {
            out.push(Tok::Word(w));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => word.get_or_insert_with(String::new).push(n),
            },
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                let mut closed = false;
                for n in chars.by_ref() {
                    if n == '\'' {
                        closed = true;
                        break;
                    }
                    w.push(n);
                }
                if !closed {
                    return Err(unclosed('\'', w));
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                let mut closed = false;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => {
                            if let Some(e) = chars.next() {
                                w.push(e);
                            }
                        }
                        _ => w.push(n),
                    }
                }
                if !closed {
                    return Err(unclosed('"', w));
                }
            }
            '\n' | ';' | '&' | '|' => {
                flush(&mut word, out);
                out.push(Tok::Sep);
            }
            c if c.is_whitespace() => flush(&mut word, out),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    flush(&mut word, out);
    Ok(())
}

/// The error of a quote left open, showing where it opened.
fn unclosed(quote: char, word: &str) -> String {
    let start: String = word.chars().take(20).collect();
    format!("the pasted command has an unclosed {quote} quote (at `{quote}{start}`); a shell would refuse it")
}

/// The words of each command of the pasted line, redirections (`> log`, `2>&1`) dropped.
fn commands(pasted: &[String]) -> Result<Vec<Vec<String>>, String> {
    let mut toks = Vec::new();
    for arg in pasted {
        if arg == "&&" || arg == ";" || arg == "||" {
            toks.push(Tok::Sep);
        } else if pasted.len() == 1 || arg.contains(char::is_whitespace) {
            shell_tokens(arg, &mut toks)?;
        } else {
            toks.push(Tok::Word(arg.clone()));
        }
    }
    let mut cmds = vec![Vec::new()];
    let mut skip_next = false;
    for t in toks {
        match t {
            Tok::Sep => cmds.push(Vec::new()),
            Tok::Word(_) if skip_next => skip_next = false,
            Tok::Word(w) if w == ">" || w == ">>" || w == "<" || w == "2>" => skip_next = true,
            Tok::Word(w) if w.starts_with('>') || w.starts_with("2>") || w.starts_with('<') => {}
            Tok::Word(w) => cmds.last_mut().into_iter().for_each(|c| c.push(w.clone())),
        }
    }
    cmds.retain(|c| !c.is_empty());
    Ok(cmds)
}

/// Which benchmark or server program a command runs, and its arguments: sglang's client
/// (`sglang.bench_serving`, or `sglang.benchmark.serving` where 0.5.15+ moved it), its server,
/// or vLLM's client (`vllm bench serve`).
fn program(cmd: &[String]) -> Option<(&'static str, &[String])> {
    for (i, w) in cmd.iter().enumerate() {
        if w == "sglang.benchmark.serving" && i > 0 && cmd[i - 1] == "-m"
            || w.ends_with("sglang/benchmark/serving.py")
        {
            return Some(("sglang.bench_serving", &cmd[i + 1..]));
        }
        if w == "vllm" && cmd.get(i + 1..i + 3) == Some(&["bench".into(), "serve".into()]) {
            return Some(("vllm bench serve", &cmd[i + 3..]));
        }
        let api_server = w == "vllm.entrypoints.openai.api_server" && i > 0 && cmd[i - 1] == "-m";
        if api_server || w == "vllm" && cmd.get(i + 1).is_some_and(|s| s == "serve") {
            return Some(("vllm serve", &cmd[i..]));
        }
        for module in ["sglang.bench_serving", "sglang.launch_server"] {
            let named = w == module
                || w.ends_with(&format!("/{}.py", module.replace('.', "/")))
                || w.ends_with(&format!("{}.py", module.rsplit('.').next().unwrap_or("")));
            if named && (i == 0 || cmd[i - 1] == "-m" || w.ends_with(".py")) {
                return Some((module, &cmd[i + 1..]));
            }
        }
    }
    None
}

/// servesim's server flags: (long name, aliases, values it takes: 0, 1, or more for a list
/// such as `--cuda-graph-bs 1 2 4`, argparse's `nargs="+"`).
fn server_flags() -> Vec<(String, Vec<String>, usize)> {
    <ServerFlags as clap::Args>::augment_args(clap::Command::new("server"))
        .get_arguments()
        .filter_map(|a| {
            let values = match a.get_action() {
                clap::ArgAction::SetTrue | clap::ArgAction::SetFalse => 0,
                _ => a.get_num_args().map_or(1, |n| n.max_values()),
            };
            Some((
                a.get_long()?.to_string(),
                a.get_all_aliases()
                    .unwrap_or_default()
                    .into_iter()
                    .map(String::from)
                    .collect(),
                values,
            ))
        })
        .collect()
}

/// launch_server's arguments → servesim `run` arguments, and the ignored ones.
fn server_args(args: &[String]) -> (Vec<String>, Vec<String>) {
    let known = server_flags();
    let (mut kept, mut ignored) = (Vec::new(), Vec::new());
    let mut i = 0;
    while let Some(tok) = args.get(i) {
        i += 1;
        let Some(body) = tok.strip_prefix("--") else {
            ignored.push(tok.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let exact = known
            .iter()
            .find(|(l, a, _)| l == name || a.iter().any(|a| a == name));
        let prefixed: Vec<_> = known
            .iter()
            .filter(|(l, _, _)| l.starts_with(name))
            .collect();
        let hit = exact.or(match prefixed.as_slice() {
            [one] if name.len() >= 4 => Some(*one),
            _ => None,
        });
        let model = matches!(name, "model-path" | "model");
        let mut value: Vec<String> =
            argparse_value(inline, hit.map_or(true, |h| h.2 > 0), args, &mut i)
                .into_iter()
                .collect();
        while hit.is_some_and(|h| h.2 > 1) && inline.is_none() {
            match args.get(i) {
                Some(v) if !v.starts_with("--") => value.push(v.clone()),
                _ => break,
            }
            i += 1;
        }
        match (hit, model) {
            (_, true) => kept.extend(["--model".to_string()].into_iter().chain(value)),
            (Some((long, _, _)), false) => {
                kept.extend([format!("--{long}")].into_iter().chain(value));
            }
            (None, false) => ignored.extend([tok.clone()].into_iter().chain(value)),
        }
    }
    (kept, ignored)
}

/// SGLang environment variables servesim models, and the `run` flag each becomes
/// (`spec::speculative_v2`, `spec::chunked_prefix`).
const MODELLED_ENV: &[(&str, &str)] = &[
    ("SGLANG_ENABLE_SPEC_V2", "--sglang-enable-spec-v2"),
    (
        "SGL_CHUNKED_PREFIX_CACHE_THRESHOLD",
        "--sgl-chunked-prefix-cache-threshold",
    ),
];

/// The `VAR=value` words a command starts with → the `run` flags of the modelled SGLang
/// variables, and the other variables. A boolean is read as SGLang's `get_bool_env_var`
/// reads it: true for `1` or `true` (any case), else false.
fn env_args(cmd: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut kept, mut other) = (Vec::new(), Vec::new());
    for word in cmd {
        let Some((name, value)) = word.split_once('=') else {
            break;
        };
        let is_var = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !is_var {
            break;
        }
        match MODELLED_ENV.iter().find(|(var, _)| *var == name) {
            Some(("SGLANG_ENABLE_SPEC_V2", flag)) => {
                let on = matches!(value.to_ascii_lowercase().as_str(), "1" | "true");
                kept.extend([flag.to_string(), on.to_string()]);
            }
            Some((_, flag)) => kept.extend([flag.to_string(), value.to_string()]),
            None => other.push(word.clone()),
        }
    }
    (kept, other)
}

/// launch_server flags that cannot change what bench_serving measures: addresses, logging,
/// names, authentication, download and loading options.
const HARMLESS_SERVER_FLAGS: &[&str] = &[
    "host",
    "port",
    "trust-remote-code",
    "log-level",
    "log-level-http",
    "log-requests",
    "log-requests-level",
    "enable-metrics",
    "served-model-name",
    "api-key",
    "revision",
    "download-dir",
    "tokenizer-path",
    "tokenizer-mode",
    "load-format",
    "model-loader-extra-config",
    "show-time-cost",
    "decode-log-interval",
    "file-storage-path",
    "enable-cache-report",
    "watchdog-timeout",
    "nccl-port",
    "chat-template",
    "reasoning-parser",
    "tool-call-parser",
    "allow-auto-truncate",
    "collect-tokens-histogram",
    "random-seed",
    "node-rank",
    "dist-init-addr",
    "skip-server-warmup",
    "enable-request-time-stats-logging",
];

/// `--dtype` values that run the same 16-bit arithmetic as SGLang's `auto` on a 16-bit
/// checkpoint (bfloat16 and float16 cost the same on every modelled GPU).
const SIXTEEN_BIT_DTYPES: &[&str] = &["auto", "bfloat16", "float16", "half", "bf16", "fp16"];

/// Splits the ignored launch_server words into the harmless flags (with their values) and
/// the rest, which may change the real server's numbers.
fn split_ignored(ignored: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut harmless, mut unmodelled) = (Vec::new(), Vec::new());
    let mut into_harmless = false;
    for (i, word) in ignored.iter().enumerate() {
        if let Some(body) = word.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            into_harmless = if name == "dtype" {
                let value = inline.or(ignored.get(i + 1).map(String::as_str));
                value.is_some_and(|v| SIXTEEN_BIT_DTYPES.contains(&v))
            } else {
                HARMLESS_SERVER_FLAGS.contains(&name)
            };
        }
        if into_harmless {
            harmless.push(word.clone());
        } else {
            unmodelled.push(word.clone());
        }
    }
    (harmless, unmodelled)
}

/// True when `args` set the bench_serving flag `flag` (`--flag`, `--flag=v`, or an
/// abbreviation of at least `min` characters, as argparse allows).
fn sets(args: &[String], flag: &str, min: usize) -> bool {
    args.iter().any(|a| {
        let name = a.split('=').next().unwrap_or("");
        name.len() >= min && flag.starts_with(name)
    })
}

/// Rewrites `servesim run [FLAGS] -- PASTED...` into `servesim run ARGS...`; other command
/// lines are returned unchanged. The bool says whether a paste was expanded.
pub fn expand(argv: Vec<OsString>) -> Result<(Vec<OsString>, bool), String> {
    let is_run = argv.get(1).is_some_and(|a| a == "run");
    let dash = argv.iter().position(|a| a == "--");
    let (true, Some(dash)) = (is_run, dash) else {
        return Ok((argv, false));
    };
    let pasted: Vec<String> = argv[dash + 1..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut out: Vec<OsString> = argv[..2].to_vec();
    let (mut found, mut skipped) = (false, Vec::new());
    for cmd in commands(&pasted)? {
        match program(&cmd) {
            Some(("sglang.launch_server", args)) => {
                let (env_kept, env_other) = env_args(&cmd);
                let sglang_env: Vec<_> = env_other
                    .iter()
                    .filter(|w| w.starts_with("SGLANG_") || w.starts_with("SGL_"))
                    .cloned()
                    .collect();
                if !sglang_env.is_empty() {
                    eprintln!(
                        "warning: SGLang environment variables servesim does not model, ignored (the real server's numbers may differ): {}",
                        sglang_env.join(" ")
                    );
                }
                out.extend(env_kept.into_iter().map(OsString::from));
                let (kept, ignored) = server_args(args);
                let (harmless, unmodelled) = split_ignored(&ignored);
                if !harmless.is_empty() {
                    eprintln!(
                        "note: launch_server flags with no effect on the simulation, ignored: {}",
                        harmless.join(" ")
                    );
                }
                if !unmodelled.is_empty() {
                    eprintln!(
                        "warning: launch_server flags servesim does not model, ignored (the real server's numbers may differ): {}",
                        unmodelled.join(" ")
                    );
                }
                out.extend(kept.into_iter().map(OsString::from));
                found = true;
            }
            Some(("vllm serve", args)) => {
                out.extend(
                    super::paste_vllm::serve_args(args)
                        .into_iter()
                        .map(OsString::from),
                );
                found = true;
            }
            Some(("vllm bench serve", args)) => {
                out.extend(args.iter().map(OsString::from));
                // vLLM's client defaults (`vllm/benchmarks/datasets.py`, `serve.py`): random
                // 1024/128, seed 0, no concurrency cap.
                out.extend(["--client", "vllm"].map(OsString::from));
                for (flag, min, value) in [
                    ("--dataset-name", 11, "random"),
                    ("--random-input-len", 10, "1024"),
                    ("--random-output-len", 10, "128"),
                    ("--seed", 6, "0"),
                    ("--max-concurrency", 5, "0"),
                ] {
                    if !sets(args, flag, min) {
                        out.extend([flag, value].map(OsString::from));
                    }
                }
                found = true;
            }
            Some((_, args)) => {
                out.extend(args.iter().map(OsString::from));
                if !sets(args, "--dataset-name", 11) {
                    out.extend(["--dataset-name", "sharegpt"].map(OsString::from));
                }
                if !sets(args, "--max-concurrency", 5) {
                    out.extend(["--max-concurrency", "0"].map(OsString::from));
                }
                found = true;
            }
            None => skipped.push(cmd.join(" ")),
        }
    }
    if !found {
        return Err(format!(
            "the command after `run --` runs none of `python -m sglang.bench_serving` (or \
             `sglang.benchmark.serving`), `vllm bench serve` and `python -m sglang.launch_server` \
             (got `{}`)",
            pasted.join(" ")
        ));
    }
    if !skipped.is_empty() {
        eprintln!(
            "note: pasted commands not simulated: {}",
            skipped.join("; ")
        );
    }
    out.extend(argv[2..dash].iter().cloned());
    Ok((out, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        commands(&[text.to_string()]).unwrap()
    }

    #[test]
    fn an_unclosed_quote_is_refused_as_a_shell_refuses_it() {
        for text in ["python3 -m sglang.bench_serving --num-prompts \"20", "a 'b"] {
            let err = commands(&[text.to_string()]).unwrap_err();
            assert!(err.contains("unclosed"), "{text}: {err}");
        }
        assert!(commands(&["a 'b' \"c\"".to_string()]).is_ok());
    }

    #[test]
    fn a_shell_line_splits_like_a_shell() {
        let cmds = words(
            "SGLANG_X=1 python3 -m sglang.launch_server --model-path 'Qwen/Qwen3-8B' \\\n --tp 2 > log 2>&1 &\n\
             python -m sglang.bench_serving --extra-request-body '{\"a\": 1}' && echo done",
        );
        assert_eq!(cmds.len(), 3, "{cmds:?}");
        assert_eq!(
            cmds[0],
            [
                "SGLANG_X=1",
                "python3",
                "-m",
                "sglang.launch_server",
                "--model-path",
                "Qwen/Qwen3-8B",
                "--tp",
                "2"
            ]
        );
        assert_eq!(cmds[1][4], "{\"a\": 1}");
        assert_eq!(program(&cmds[0]).map(|p| p.0), Some("sglang.launch_server"));
        assert_eq!(program(&cmds[2]), None);
    }

    #[test]
    fn modelled_sglang_env_vars_become_flags() {
        let cmd: Vec<String> =
            "SGLANG_ENABLE_SPEC_V2=True SGL_CHUNKED_PREFIX_CACHE_THRESHOLD=4096 \
             SGLANG_ENABLE_FLASHINFER_GEMM=1 CUDA_VISIBLE_DEVICES=0,1 python3 -m \
             sglang.launch_server A=1"
                .split_whitespace()
                .map(String::from)
                .collect();
        let (kept, other) = env_args(&cmd);
        assert_eq!(
            kept,
            [
                "--sglang-enable-spec-v2",
                "true",
                "--sgl-chunked-prefix-cache-threshold",
                "4096"
            ]
        );
        // Only the leading assignments are the command's environment.
        assert_eq!(
            other,
            [
                "SGLANG_ENABLE_FLASHINFER_GEMM=1",
                "CUDA_VISIBLE_DEVICES=0,1"
            ]
        );
        let off = env_args(&["SGLANG_ENABLE_SPEC_V2=0".to_string()]).0;
        assert_eq!(off, ["--sglang-enable-spec-v2", "false"]);
    }

    #[test]
    fn ignored_flags_that_may_change_the_result_are_told_apart() {
        let ignored: Vec<String> = "--host 0.0.0.0 --num-continuous-decode-steps 8 \
             --log-level=info --node-rank 1 --enable-two-batch-overlap --dtype bfloat16 \
             --dtype=float32"
            .split_whitespace()
            .map(String::from)
            .collect();
        let (harmless, unmodelled) = split_ignored(&ignored);
        assert_eq!(
            harmless,
            [
                "--host",
                "0.0.0.0",
                "--log-level=info",
                "--node-rank",
                "1",
                "--dtype",
                "bfloat16"
            ]
        );
        assert_eq!(
            unmodelled,
            [
                "--num-continuous-decode-steps",
                "8",
                "--enable-two-batch-overlap",
                "--dtype=float32"
            ]
        );
    }

    #[test]
    fn launch_server_flags_keep_the_modelled_ones() {
        let args: Vec<String> = "--model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --host 0.0.0.0 \
             --port 30000 --trust-remote-code --disable-radix --mem-fraction-static=0.8 \
             --enable-torch-compile --torch-compile-max-bs 8"
            .split_whitespace()
            .map(String::from)
            .collect();
        let (kept, ignored) = server_args(&args);
        assert_eq!(
            kept,
            [
                "--model",
                "deepseek-ai/DeepSeek-V3",
                "--tp",
                "8",
                "--disable-radix-cache",
                "--mem-fraction-static",
                "0.8",
                "--enable-torch-compile",
                "--torch-compile-max-bs",
                "8"
            ]
        );
        assert_eq!(
            ignored,
            [
                "--host",
                "0.0.0.0",
                "--port",
                "30000",
                "--trust-remote-code"
            ]
        );
    }
}
