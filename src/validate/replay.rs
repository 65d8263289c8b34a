//! Replay: one parsed run of a real log → the [`Scenario`] that reproduces it.
//!
//! The workload comes from the run's own `Namespace(...)` (prompts, random lengths and ratio,
//! request rate, concurrency cap, seed, backend, warm-up); server flags from the
//! `launch_server` command printed above the run, when there is one. A manifest entry adds
//! hardware, model, server flags and client version; command-line flags override everything.
//! For a log outside the manifest the model is mapped from the `model=` path when the name is
//! obvious (`Qwen/Qwen3-8B` → `qwen3-8b`), the client version is inferred from the printed
//! layout, and `--hardware` is required. ShareGPT runs use the bundled ShareGPT sample
//! (see [`super::sampled`]).
use super::logparse::{BenchArgs, ClientStyle, Metrics, ParsedRun};
use super::manifest::Entry;
use crate::client::dataset::random::sample_random_lengths;
use crate::client::flavour::Flavour;
use crate::error::{Error, Result};
use crate::simulation::Scenario;
use crate::spec::bundled::{hardware_names, model_names};
use crate::spec::server::ServerFlags;
use crate::spec::version::Version;
use crate::spec::workload::{ClientFlags, ScenarioFile};
use std::collections::BTreeMap;

/// What the user gives on the command line; every field overrides the log and the manifest.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub hardware: Option<String>,
    pub model: Option<String>,
    pub server: ServerFlags,
    pub client: ClientFlags,
}

/// Where a replayed run's request lengths come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LengthSource {
    /// bench_serving's random dataset, drawn exactly (numpy-exact lengths).
    Random,
    /// ShareGPT selected from the bundled sample tables.
    Sampled,
}

/// A run ready to simulate, plus how it was put together.
#[derive(Debug, Clone)]
pub struct Replay {
    pub scenario: Scenario,
    pub lengths: LengthSource,
    /// Where each setting came from, one line each, for the report.
    pub notes: Vec<String>,
    /// The server flags the scenario was resolved from (calibration re-resolves the server
    /// when it changes a memory constant of the profile).
    pub server_flags: ServerFlags,
}

/// Builds the scenario of `run`; `source` names the log in errors.
pub fn scenario_for(
    run: &ParsedRun,
    entry: Option<&Entry>,
    ov: &Overrides,
    source: &str,
) -> Result<Replay> {
    let args = &run.args;
    let mut notes = Vec::new();
    let at = |field: &str, reason: String| {
        Error::invalid(format!("{source} run {}", run.index), field, reason)
    };

    // Server flags: the log's command < the manifest < the command line.
    let (log_flags, bad) = match &run.server_command {
        Some(cmd) => {
            let parsed = server_flags_from_command(cmd);
            notes.push(format!(
                "server command (line {}): {}",
                run.server_line.unwrap_or(0),
                parsed.summary()
            ));
            (parsed.flags, parsed.bad)
        }
        None => (ServerFlags::default(), BTreeMap::new()),
    };
    let manifest_flags = entry
        .map(Entry::server_flags)
        .transpose()?
        .unwrap_or_default();
    let server = log_flags.merged(&manifest_flags);
    let given = server.merged(&ov.server);
    for (flag, why) in &bad {
        if !is_set(&given, flag) {
            return Err(at(
                "server command",
                format!("--{flag}: {why}; pass --{flag} explicitly"),
            ));
        }
    }

    let hardware = ov.hardware.clone().or_else(|| entry.map(|e| e.hardware.value.clone())).ok_or_else(|| {
        at("hardware", format!("the log does not say which hardware ran it and no manifest entry covers it; pass --hardware (one of {}, or a profile YAML)", hardware_names().join(", ")))
    })?;
    let model = match ov
        .model
        .clone()
        .or_else(|| entry.map(|e| e.model.value.clone()))
    {
        Some(m) => m,
        None => {
            // The printed id resolves by name (`spec::checkpoint_name`: the bundled model or
            // config it names, its `-FP8` weight format, same-architecture builds).
            let printed = args.model.as_deref().unwrap_or("");
            let resolved = crate::spec::bundled::load_model(printed).map_err(|e| {
                at("model", format!("cannot map model `{printed}` to a bundled model ({e}); pass --model (one of {}, a model YAML or a config.json)", model_names().join(", ")))
            })?;
            notes.push(format!("model: `{printed}` mapped to {}", resolved.name));
            printed.to_string()
        }
    };

    let mut client = client_flags(args).map_err(|r| at("Namespace", r))?;
    let lengths = if args.dataset_name == "sharegpt" {
        LengthSource::Sampled
    } else {
        LengthSource::Random
    };
    client.bench_version = match (entry, ov.client.bench_version) {
        (_, Some(v)) => Some(v),
        (Some(e), None) => Some(e.bench_version.value),
        (None, None) => {
            let (v, why) = infer_bench_version(&run.metrics, run.client_style, args);
            notes.push(format!(
                "bench_serving version {v} inferred from the log: {why}"
            ));
            Some(v)
        }
    };
    if entry.is_none() && given.sglang_version.is_none() {
        notes.push(format!(
            "SGLang version not given: {} defaults assumed (pass --sglang-version)",
            Version::NEWEST
        ));
    }

    let file = ScenarioFile {
        hardware: Some(hardware),
        model: Some(model),
        server,
        client,
        ..Default::default()
    };
    let scenario = Scenario::resolve(&file, None, None, &ov.server, &ov.client)?;
    if lengths == LengthSource::Sampled {
        notes.push(super::sampled::DESCRIPTION.to_string());
    }
    Ok(Replay {
        scenario,
        lengths,
        notes,
        server_flags: file.server.merged(&ov.server),
    })
}

/// The overrides of an entry with `prior-runs:`: `--prior-runs` from the listed entries' own
/// client arguments (`args_of` finds an entry's; each must be a `random` run with this run's
/// seed). A `--prior-runs` given on the command line wins.
pub fn with_prior_runs(
    ov: &Overrides,
    entry: &Entry,
    this: &BenchArgs,
    args_of: impl Fn(&str) -> Option<BenchArgs>,
) -> Result<Overrides> {
    let Some(prior) = entry
        .prior_runs
        .as_ref()
        .filter(|_| ov.client.prior_runs.is_none())
    else {
        return Ok(ov.clone());
    };
    let bad =
        |why: String| Error::invalid(format!("manifest entry {}", entry.id), "prior-runs", why);
    let mut items = Vec::new();
    for id in &prior.value {
        let a = args_of(id).ok_or_else(|| bad(format!("no parsed run for entry `{id}`")))?;
        match (
            a.dataset_name.as_str(),
            a.random_input_len,
            a.random_output_len,
        ) {
            ("random", Some(i), Some(o)) if a.seed == this.seed => items.push(format!(
                "{}:{i}:{o}:{}",
                a.num_prompts,
                a.random_range_ratio.unwrap_or(0.0)
            )),
            _ => {
                return Err(bad(format!(
                    "`{id}` is not a `random` run with seed {} and explicit lengths",
                    this.seed
                )))
            }
        }
    }
    let mut out = ov.clone();
    out.client.prior_runs = Some(items.join(","));
    Ok(out)
}

/// Client flags from a run's Namespace. Errors for workloads servesim cannot rebuild.
pub fn client_flags(a: &BenchArgs) -> std::result::Result<ClientFlags, String> {
    let dataset = match a.dataset_name.as_str() {
        "random" | "random-ids" => a.dataset_name.clone(),
        // The bundled sample table (the log's dataset_path is a path on the benchmark host).
        "sharegpt" => "sharegpt".to_string(),
        other => {
            return Err(format!(
                "dataset `{other}` cannot be replayed (random, random-ids and sharegpt can)"
            ))
        }
    };
    if a.disable_ignore_eos {
        return Err("disable_ignore_eos=True: output lengths depend on the model's text, which servesim does not have".into());
    }
    Ok(ClientFlags {
        backend: Some(a.backend.clone()),
        dataset_name: Some(dataset),
        num_prompts: Some(a.num_prompts),
        random_input_len: a.random_input_len,
        random_output_len: a.random_output_len,
        random_range_ratio: a.random_range_ratio,
        request_rate: Some(a.request_rate),
        max_concurrency: a.max_concurrency.filter(|&c| c > 0),
        seed: Some(a.seed),
        bench_version: None,
        warmup_requests: a.warmup_requests,
        flush_cache: a.flush_cache.unwrap_or(false),
        tokenize_prompt: a.tokenize_prompt.unwrap_or(false),
        sharegpt_output_len: a.sharegpt_output_len,
        sharegpt_context_len: a.sharegpt_context_len,
        ..ClientFlags::default()
    })
}

/// True when the replayed workload's totals are the log's own (for random runs a check that the lengths are drawn as bench_serving did).
pub fn totals_match(real: &Metrics, input: u64, output: u64) -> bool {
    real.total_input_tokens == input && real.total_generated_tokens == output
}

/// The bench_serving version whose printed layout matches the log (boundaries of
/// `report::text`), with the reason. Between 0.5.6 and 0.5.6.post2, which print the same
/// layout, the run's own totals decide (output lengths ≥ 1 from 0.5.6.post2).
pub fn infer_bench_version(m: &Metrics, style: ClientStyle, a: &BenchArgs) -> (Version, String) {
    let has = |label: &str| {
        m.all
            .keys()
            .chain(m.text.keys())
            .any(|k| k.eq_ignore_ascii_case(label))
    };
    let v = |s: &str| s.parse::<Version>().unwrap_or(Version::NEWEST);
    let pick = |s: &str, why: &str| (v(s), why.to_string());
    if style == ClientStyle::Legacy && !has("Total token throughput (tok/s)") {
        return pick(
            "0.3.0",
            "older fork: no concurrency or total-throughput line, TPOT printed",
        );
    }
    if has("P90 E2E Latency (ms)") {
        return pick("0.5.8", "P90 E2E line");
    }
    if has("Peak output token throughput (tok/s)") {
        let candidates = [v("0.5.6.post2"), v("0.5.6")];
        let fits = |ver: Version| match (a.random_input_len, a.random_output_len) {
            (Some(i), Some(o)) if a.dataset_name.starts_with("random") => {
                let min_one = Flavour::new(ver, &a.backend, false).output_min_one;
                let l = sample_random_lengths(
                    a.seed as u32,
                    a.num_prompts,
                    i,
                    o,
                    a.random_range_ratio.unwrap_or(0.0),
                    min_one,
                );
                totals_match(m, l.iter().map(|x| x.0).sum(), l.iter().map(|x| x.1).sum())
            }
            _ => false,
        };
        let ver = candidates
            .into_iter()
            .find(|&c| fits(c))
            .unwrap_or(candidates[0]);
        return (
            ver,
            "Peak lines (0.5.6 or 0.5.6.post2, chosen by the run's totals)".into(),
        );
    }
    if has("Mean TPOT (ms)") && has("Total input text tokens") {
        return pick(
            "0.5.5.post2",
            "TPOT block and text-token line, no Peak lines",
        );
    }
    if has("Total input text tokens") {
        return pick("0.5.4", "text-token line, no TPOT block");
    }
    if has("Max request concurrency") {
        return pick(
            "0.5.1",
            "`Max request concurrency` spelled right, no text-token line",
        );
    }
    if has("P95 ITL (ms)") {
        return pick("0.4.5", "`Max reqeuest concurrency` typo with P95 ITL");
    }
    if has("Concurrency") {
        return pick("0.4.3", "Concurrency line without P95 ITL");
    }
    if has("Max reqeuest concurrency") {
        return pick(
            "0.4.0",
            "`Max reqeuest concurrency` typo, no Concurrency line",
        );
    }
    pick("0.3.0", "no concurrency line")
}

pub use crate::spec::bundled::model_from_path;

/// One line describing the client's arguments (the manifest's `log.client`).
pub fn workload_summary(a: &BenchArgs) -> String {
    let cap = a
        .max_concurrency
        .filter(|&c| c > 0)
        .map_or("no cap".to_string(), |c| format!("max-concurrency {c}"));
    let data = match (
        a.dataset_name.as_str(),
        a.random_input_len,
        a.random_output_len,
    ) {
        ("sharegpt", _, _) => "sharegpt".to_string(),
        (d, Some(i), Some(o)) => {
            format!("{d} {i}/{o} ratio {}", a.random_range_ratio.unwrap_or(0.0))
        }
        (d, _, _) => d.to_string(),
    };
    format!(
        "{data}, {} prompts, rate {}, {cap}, seed {}, backend {}",
        a.num_prompts,
        rate(a.request_rate),
        a.seed,
        a.backend
    )
}

/// A short workload label for tables (`rand 1024/1024 ×2000`, `sharegpt ×10000 c80`).
pub fn workload_short(a: &BenchArgs) -> String {
    let data = match (
        a.dataset_name.as_str(),
        a.random_input_len,
        a.random_output_len,
    ) {
        ("sharegpt", _, _) => "sharegpt".to_string(),
        (_, Some(i), Some(o)) => {
            let r = a.random_range_ratio.unwrap_or(0.0);
            if r == 1.0 {
                format!("rand {i}/{o}")
            } else {
                format!("rand {i}/{o} r{r}")
            }
        }
        (d, _, _) => d.to_string(),
    };
    let mut s = format!("{data} ×{}", a.num_prompts);
    if let Some(c) = a.max_concurrency.filter(|&c| c > 0) {
        s.push_str(&format!(" c{c}"));
    }
    if a.request_rate.is_finite() {
        s.push_str(&format!(" @{}rps", a.request_rate));
    }
    s
}

fn rate(r: f64) -> String {
    if r.is_finite() {
        r.to_string()
    } else {
        "inf".into()
    }
}

/// The server flags read from a `launch_server` command.
#[derive(Debug, Clone, Default)]
pub struct CommandFlags {
    pub flags: ServerFlags,
    /// Modelled flags as written (`--tp 8`), in order.
    pub used: Vec<String>,
    /// Flags servesim does not model or that change nothing it simulates, as written.
    pub ignored: Vec<String>,
    /// Modelled flags whose value does not parse (e.g. `--tp ${TP}`), by servesim name.
    pub bad: BTreeMap<String, String>,
}

impl CommandFlags {
    fn summary(&self) -> String {
        let used = if self.used.is_empty() {
            "no modelled flags".to_string()
        } else {
            self.used.join(" ")
        };
        if self.ignored.is_empty() {
            used
        } else {
            format!("{used}; not modelled: {}", self.ignored.join(" "))
        }
    }
}

/// Modelled `launch_server` flags: (servesim name, takes a value).
const MODELLED: &[(&str, bool)] = &[
    ("tp", true),
    ("tp-size", true),
    ("mem-fraction-static", true),
    ("chunked-prefill-size", true),
    ("max-prefill-tokens", true),
    ("max-running-requests", true),
    ("max-total-tokens", true),
    ("page-size", true),
    ("schedule-policy", true),
    ("schedule-conservativeness", true),
    ("disable-radix-cache", false),
    ("disable-cuda-graph", false),
    ("cuda-graph-max-bs", true),
    ("disable-chunked-prefix-cache", false),
    ("enable-mixed-chunk", false),
    ("disable-overlap-schedule", false),
    ("kv-cache-dtype", true),
    ("attention-backend", true),
    ("quantization", true),
];

/// A flag's value as argparse reads it: the `--flag=value` part, else (when the flag takes
/// a value) `tokens[*next]` unless that is another flag, in which case `*next` moves past it.
pub fn argparse_value<S: AsRef<str>>(
    inline: Option<&str>,
    takes_value: bool,
    tokens: &[S],
    next: &mut usize,
) -> Option<String> {
    match inline {
        Some(v) => Some(v.to_string()),
        None if takes_value => match tokens.get(*next).map(AsRef::as_ref) {
            Some(v) if !v.starts_with("--") => {
                *next += 1;
                Some(v.to_string())
            }
            _ => None,
        },
        None => None,
    }
}

/// Reads the modelled flags of a `launch_server` command. Like argparse, a flag may be
/// abbreviated to a unique prefix (`--disable-radix`) and written `--flag=value`.
pub fn server_flags_from_command(cmd: &str) -> CommandFlags {
    let tokens: Vec<&str> = cmd.split_whitespace().collect();
    let mut out = CommandFlags::default();
    let mut values = serde_norway::Mapping::new();
    let mut i = 0;
    while let Some(&tok) = tokens.get(i) {
        i += 1;
        let Some(body) = tok.strip_prefix("--") else {
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let matches: Vec<&(&str, bool)> = MODELLED
            .iter()
            .filter(|(m, _)| *m == name || (name.len() >= 4 && m.starts_with(name)))
            .collect();
        let exact = MODELLED.iter().find(|(m, _)| *m == name);
        let hit = exact.or(if matches.len() == 1 {
            matches.first().copied()
        } else {
            None
        });
        let value = argparse_value(inline, hit.map_or(true, |h| h.1), &tokens, &mut i);
        let written = match &value {
            Some(v) => format!("--{name} {v}"),
            None => format!("--{name}"),
        };
        let Some(&(flag, needs_value)) = hit else {
            out.ignored.push(written);
            continue;
        };
        let flag = if flag == "tp-size" { "tp" } else { flag };
        let yaml = match (needs_value, value) {
            (false, _) => serde_norway::Value::Bool(true),
            (true, None) => {
                out.bad.insert(flag.to_string(), "no value given".into());
                continue;
            }
            (true, Some(v)) => serde_norway::from_str(&v).unwrap_or(serde_norway::Value::String(v)),
        };
        let key = serde_norway::Value::String(flag.to_string());
        let single: serde_norway::Mapping = [(key.clone(), yaml.clone())].into_iter().collect();
        match serde_norway::from_value::<ServerFlags>(serde_norway::Value::Mapping(single)) {
            Ok(_) => {
                values.insert(key, yaml);
                out.used.push(written);
            }
            Err(e) => {
                out.bad.insert(
                    flag.to_string(),
                    format!("`{written}` does not parse ({e})"),
                );
            }
        }
    }
    out.flags = serde_norway::from_value(serde_norway::Value::Mapping(values)).unwrap_or_default();
    out
}

/// True when `flags` sets the flag named `name` (servesim's kebab-case name).
pub fn is_set(flags: &ServerFlags, name: &str) -> bool {
    match serde_norway::to_value(flags) {
        Ok(serde_norway::Value::Mapping(m)) => m.get(name).is_some_and(|v| {
            !matches!(
                v,
                serde_norway::Value::Null | serde_norway::Value::Bool(false)
            )
        }),
        _ => false,
    }
}
