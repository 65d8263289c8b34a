//! The client's arguments from a `python -m sglang.bench_serving ...` command line, for
//! results quoted without the `Namespace(...)` line the client prints (benchmark READMEs,
//! pull-request descriptions, cookbook pages: they show the command and the result block).
//!
//! The command is read the way bench_serving's argparse reads it: `--flag value`,
//! `--flag=value`, store-true switches, and unique prefixes of long options (`--random-input
//! 1024`, `--num-prompt 200`). Options not given take bench_serving's argparse defaults, the
//! same in every client from 0.4 to 0.5.x (`dataset-name sharegpt`, `num-prompts 1000`,
//! `random-input-len`/`random-output-len 1024`, `random-range-ratio 0.0`, `request-rate inf`,
//! `seed 1`, `warmup-requests 1`), so the result is the Namespace the client would have
//! printed. Options bench_serving does not have are kept as text (they change nothing
//! servesim simulates); a value that is not a literal (`--max-concurrency $bs`) is an error
//! naming the option.
use super::pyrepr::{NamespaceField, PyValue};

/// How an option's value is typed.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Str,
    Int,
    Float,
    /// `store_true`: no value.
    Switch,
}

/// bench_serving's options that decide the workload or appear in the typed arguments, with
/// their argparse defaults (`None` = the Namespace prints `None`).
const OPTIONS: &[(&str, Kind, Option<&str>)] = &[
    ("backend", Kind::Str, Some("sglang")),
    ("base-url", Kind::Str, None),
    ("host", Kind::Str, Some("0.0.0.0")),
    ("port", Kind::Int, None),
    ("dataset-name", Kind::Str, Some("sharegpt")),
    ("dataset-path", Kind::Str, Some("")),
    ("model", Kind::Str, None),
    ("tokenizer", Kind::Str, None),
    ("num-prompts", Kind::Int, Some("1000")),
    ("sharegpt-output-len", Kind::Int, None),
    ("sharegpt-context-len", Kind::Int, None),
    ("random-input-len", Kind::Int, Some("1024")),
    ("random-output-len", Kind::Int, Some("1024")),
    ("random-range-ratio", Kind::Float, Some("0.0")),
    ("request-rate", Kind::Float, Some("inf")),
    ("max-concurrency", Kind::Int, None),
    ("output-file", Kind::Str, None),
    ("output-details", Kind::Switch, None),
    ("disable-tqdm", Kind::Switch, None),
    ("disable-stream", Kind::Switch, None),
    ("return-logprob", Kind::Switch, None),
    ("seed", Kind::Int, Some("1")),
    ("disable-ignore-eos", Kind::Switch, None),
    ("extra-request-body", Kind::Str, None),
    ("apply-chat-template", Kind::Switch, None),
    ("profile", Kind::Switch, None),
    ("lora-name", Kind::Str, None),
    ("prompt-suffix", Kind::Str, Some("")),
    ("pd-separated", Kind::Switch, None),
    ("flush-cache", Kind::Switch, None),
    ("warmup-requests", Kind::Int, Some("1")),
    ("tokenize-prompt", Kind::Switch, None),
];

/// The part of `line` from `sglang.bench_serving` on, when the line runs the client.
pub fn client_command_at(line: &str) -> Option<&str> {
    let k = line.find("sglang.bench_serving")?;
    let rest = line.get(k + "sglang.bench_serving".len()..)?;
    // `sglang.bench_serving_foo` or a file name is not the client.
    match rest.chars().next() {
        None => Some(rest),
        Some(c) if c.is_whitespace() => Some(rest),
        _ => None,
    }
}

/// The Namespace fields of a client command's arguments (the text after
/// `sglang.bench_serving`), defaults filled in. Errors name the option.
pub fn command_fields(args: &str) -> Result<Vec<NamespaceField>, String> {
    let tokens: Vec<String> = args
        .split_whitespace()
        .map(|t| t.trim_matches(|c| c == '\'' || c == '"').to_string())
        .collect();
    let mut given: Vec<(usize, String)> = Vec::new();
    let mut other: Vec<NamespaceField> = Vec::new();
    let mut i = 0;
    while let Some(tok) = tokens.get(i) {
        i += 1;
        let Some(opt) = tok.strip_prefix("--") else {
            // A positional word or a shell redirection: bench_serving takes none.
            continue;
        };
        let (name, inline) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (opt, None),
        };
        let Some(idx) = lookup(name)? else {
            // Not a bench_serving option servesim knows: keep it, with its value if any.
            let value = inline.or_else(|| {
                let next = tokens.get(i).filter(|t| !t.starts_with("--")).cloned();
                i += usize::from(next.is_some());
                next
            });
            other.push(NamespaceField {
                name: name.replace('-', "_"),
                value: PyValue::Raw(value.clone().unwrap_or_default()),
                raw: value.unwrap_or_default(),
            });
            continue;
        };
        let (long, kind, _) = OPTIONS[idx];
        let value = if kind == Kind::Switch {
            "True".to_string()
        } else {
            match inline {
                Some(v) => v,
                None => {
                    let v = tokens
                        .get(i)
                        .cloned()
                        .ok_or_else(|| format!("--{long} has no value"))?;
                    i += 1;
                    v
                }
            }
        };
        given.retain(|(j, _)| *j != idx);
        given.push((idx, value));
    }
    let mut fields = Vec::with_capacity(OPTIONS.len() + other.len());
    for (idx, &(long, kind, default)) in OPTIONS.iter().enumerate() {
        let text = given
            .iter()
            .find(|(j, _)| *j == idx)
            .map(|(_, v)| v.as_str());
        let value = match (kind, text, default) {
            (Kind::Switch, Some(_), _) => PyValue::Bool(true),
            (Kind::Switch, None, _) => PyValue::Bool(false),
            (_, None, None) => PyValue::None,
            (k, Some(t), _) | (k, None, Some(t)) => typed(long, k, t)?,
        };
        fields.push(NamespaceField {
            name: long.replace('-', "_"),
            raw: super::pyrepr::repr(&value),
            value,
        });
    }
    fields.extend(other);
    Ok(fields)
}

/// Index of the option `name` names exactly or as a unique prefix (argparse's
/// abbreviations); `Ok(None)` when it names none; an error when the prefix is ambiguous.
fn lookup(name: &str) -> Result<Option<usize>, String> {
    if let Some(i) = OPTIONS.iter().position(|(l, _, _)| *l == name) {
        return Ok(Some(i));
    }
    let hits: Vec<usize> = OPTIONS
        .iter()
        .enumerate()
        .filter(|(_, (l, _, _))| !name.is_empty() && l.starts_with(name))
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        many => Err(format!(
            "--{name} is ambiguous (could be {})",
            many.iter()
                .map(|&i| format!("--{}", OPTIONS[i].0))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn typed(long: &str, kind: Kind, text: &str) -> Result<PyValue, String> {
    let bad = |what: &str| format!("--{long} {text}: not {what}");
    Ok(match kind {
        Kind::Str => PyValue::Str(text.to_string()),
        Kind::Int => PyValue::Int(text.parse().map_err(|_| bad("a whole number"))?),
        Kind::Float => {
            let f: f64 = text.parse().map_err(|_| bad("a number"))?;
            if f.is_nan() {
                return Err(bad("a number"));
            }
            PyValue::Float(f)
        }
        Kind::Switch => PyValue::Bool(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(f: &'a [NamespaceField], name: &str) -> &'a PyValue {
        &f.iter().find(|x| x.name == name).unwrap().value
    }

    #[test]
    fn abbreviations_defaults_and_unknown_options() {
        let f = command_fields(
            "--backend sglang-oai --dataset-name random --random-input 1024 --random-output=512 \
             --num-prompt 200 --max-concurrency 8 --served-model-name x --flush-cache",
        )
        .unwrap();
        assert_eq!(get(&f, "random_input_len"), &PyValue::Int(1024));
        assert_eq!(get(&f, "random_output_len"), &PyValue::Int(512));
        assert_eq!(get(&f, "num_prompts"), &PyValue::Int(200));
        assert_eq!(get(&f, "random_range_ratio"), &PyValue::Float(0.0));
        assert_eq!(get(&f, "request_rate"), &PyValue::Float(f64::INFINITY));
        assert_eq!(get(&f, "seed"), &PyValue::Int(1));
        assert_eq!(get(&f, "flush_cache"), &PyValue::Bool(true));
        assert_eq!(get(&f, "model"), &PyValue::None);
        assert_eq!(get(&f, "served_model_name"), &PyValue::Raw("x".into()));
    }

    #[test]
    fn shell_variables_and_ambiguous_prefixes_are_errors() {
        let e = command_fields("--max-concurrency $bs").unwrap_err();
        assert!(e.contains("--max-concurrency $bs"), "{e}");
        let e = command_fields("--random 5").unwrap_err();
        assert!(e.contains("ambiguous"), "{e}");
        assert!(command_fields("--seed").is_err());
    }

    #[test]
    fn only_the_client_module_is_a_client_command() {
        assert!(client_command_at("python3 -m sglang.bench_serving --seed 2").is_some());
        assert!(client_command_at("python3 -m sglang.bench_serving_multi --x").is_none());
        assert!(client_command_at("python3 -m sglang.launch_server").is_none());
    }
}
