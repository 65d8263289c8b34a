//! Checks a resolved scenario and its requests before simulating, so impossible or absurd
//! inputs get a clear error instead of a plausible-looking number.
//!
//! Two stages, both called from [`crate::simulation::run`]:
//! - [`check_scenario`] before the requests are drawn: counts that would exhaust memory.
//! - [`check`] on the drawn requests: lengths and dispatch times beyond what the simulator can
//!   represent are errors; requests that can never run are classified.
//!
//! What SGLang does with a request that can never run decides what we do with it. The
//! TokenizerManager rejects a prompt ≥ the context length, or prompt + max_new_tokens ≥ the
//! context length; the scheduler aborts a prompt that does not fit `max_req_input_len` (the KV
//! pool less one token). bench_serving counts both as failed requests and still prints its
//! report, so the simulation does the same, and [`check`] returns a note naming the first such
//! request and why, which `servesim run` prints on stderr. Chunked prefill does not help: a
//! chunked prompt keeps every earlier chunk's KV resident, so the whole prompt (+1 token) must
//! fit the pool. One case is an error instead: when EVERY request is larger than the KV pool,
//! the deployment itself cannot serve this workload, and a report of nothing but failures would
//! hide that.
use crate::client::dataset::DatasetRow;
use crate::engine::admission::{self, AdmissionLimits, Refusal};
use crate::error::{Error, Result};
use crate::simulation::Scenario;
use crate::spec::workload::MAX_COUNT;

pub use crate::spec::workload::MAX_PROMPTS;

/// Latest dispatch time a request may have (2^50 ns ≈ 13 days): far beyond any benchmark,
/// and far enough below 2^64 that no latency added to it can overflow the clock.
pub const MAX_DISPATCH_NS: u64 = 1 << 50;

/// Most serial client or tokenizer time a run may accumulate (2^60 ns ≈ 36 years).
const MAX_SERIAL_NS: f64 = (1u64 << 60) as f64;

/// Rejects scenarios whose request count alone would exhaust memory (before drawing them).
pub fn check_scenario(sc: &Scenario) -> Result<()> {
    let n = match &sc.lengths {
        Some(l) => l.len() as u64,
        None => sc.client.num_prompts,
    };
    prompt_count(n)
}

fn prompt_count(n: u64) -> Result<()> {
    if n > MAX_PROMPTS {
        return Err(Error::invalid(
            "--num-prompts",
            "num_prompts",
            format!(
                "{n} requests in one run is beyond the simulator's memory bound of {MAX_PROMPTS} \
                 (2^24); split the run"
            ),
        ));
    }
    Ok(())
}

/// Refuses a `--request-rate` whose Poisson arrivals (ending at `end_ns`) pass the latest
/// dispatch time the simulator represents, naming the flag and the slowest usable rate.
pub fn arrival_span(n: usize, rate_per_s: f64, end_ns: u64) -> Result<()> {
    if end_ns <= MAX_DISPATCH_NS {
        return Ok(());
    }
    let limit_s = MAX_DISPATCH_NS as f64 / 1e9;
    Err(Error::invalid(
        "--request-rate",
        "request_rate",
        format!(
            "{rate_per_s:.3e} req/s spreads {n} requests over about {:.3e} s, beyond the simulator's \
             limit of {limit_s:.0} s (2^50 ns, 13 days) of arrivals; use a rate of at least \
             {:.2e} req/s or fewer --num-prompts",
            n as f64 / rate_per_s,
            // Twice the mean rate that just fills the window, so a Poisson draw fits it.
            2.0 * n as f64 / limit_s
        ),
    ))
}

/// Why request `row` is refused by this scenario's server, if it is: the event loop's own
/// rule ([`admission::admit`]).
pub fn infeasible(sc: &Scenario, row: &DatasetRow) -> Option<Refusal> {
    admission::admit(
        &AdmissionLimits::of(&sc.server),
        row.prompt_len,
        row.output_len,
    )
    .err()
}

/// Checks the drawn requests. Errors for lengths or times the simulator cannot represent, and
/// when no request fits the KV pool; otherwise returns notes (one line each) about requests
/// that will be reported failed, as bench_serving would report them.
pub fn check(sc: &Scenario, rows: &[DatasetRow]) -> Result<Vec<String>> {
    prompt_count(rows.len() as u64)?;
    let source = dataset_source(sc);
    for (i, r) in rows.iter().enumerate() {
        for (field, v) in [("prompt_len", r.prompt_len), ("output_len", r.output_len)] {
            if v > MAX_COUNT {
                return Err(Error::invalid(
                    &source,
                    field,
                    format!("request {i} has {field} {v}, beyond 2^40 tokens"),
                ));
            }
        }
        if r.prompt_len == 0 {
            return Err(Error::invalid(
                &source,
                "prompt_len",
                format!("request {i} has an empty prompt (bench_serving cannot send it)"),
            ));
        }
        if let Some(t) = r.dispatch_ns.filter(|&t| t > MAX_DISPATCH_NS) {
            return Err(Error::invalid(
                &source,
                "timestamp",
                format!(
                    "request {i} is dispatched at {:.0} s, beyond the simulator's limit of {:.0} s",
                    t as f64 / 1e9,
                    MAX_DISPATCH_NS as f64 / 1e9
                ),
            ));
        }
    }
    // Server-side tokenization and client-side sends are serial: their sums bound the clock.
    let o = sc.overheads();
    let tokenize_ns: f64 =
        rows.iter().map(|r| r.prompt_len as f64).sum::<f64>() * o.tokenize_per_token_ns;
    let send_ns = rows.len() as f64 * sc.client_send_ns();
    if tokenize_ns.max(send_ns) > MAX_SERIAL_NS {
        return Err(Error::invalid(
            if tokenize_ns > send_ns {
                format!("hardware profile {}", sc.hardware.name)
            } else {
                "--client-send-us".to_string()
            },
            if tokenize_ns > send_ns {
                "overheads.tokenize_per_token_ns"
            } else {
                "client_send_us"
            },
            format!(
                "tokenizing or sending these {} requests one after another would take {:.3e} s: \
                 not a plausible overhead",
                rows.len(),
                tokenize_ns.max(send_ns) / 1e9
            ),
        ));
    }
    let mut first = [None, None];
    let mut count = [0u64, 0u64];
    for (i, r) in rows.iter().enumerate() {
        if let Some(why) = infeasible(sc, r) {
            let k = why as usize;
            count[k] += 1;
            first[k].get_or_insert(i);
        }
    }
    let n = rows.len() as u64;
    let pool = sc.server.kv_pool_tokens;
    if count[Refusal::KvPool as usize] == n {
        let r = &rows[0];
        return Err(Error::Impossible(format!(
            "no request can ever run: the KV pool holds {pool} tokens ({} on {} at tp {}), but \
             request 0 needs {} (its {}-token prompt + 1){}; raise --mem-fraction-static or \
             --max-total-tokens, use more TP ranks or a smaller model",
            sc.model.name,
            sc.hardware.name,
            sc.server.tp,
            r.prompt_len + 1,
            r.prompt_len,
            smallest_prompt(rows),
        )));
    }
    waits_forever(sc, rows)?;
    let mut notes = Vec::new();
    if let Some(i) = first[Refusal::Context as usize] {
        let r = &rows[i];
        notes.push(format!(
            "{} of {n} requests exceed the context length of {} ({} tokens) and are reported \
             failed, as bench_serving reports them; the first is request {i}: prompt {} + output \
             {} tokens",
            count[0], sc.model.name, sc.server.context_length, r.prompt_len, r.output_len
        ));
    }
    if let Some(i) = first[Refusal::KvPool as usize] {
        let r = &rows[i];
        notes.push(format!(
            "{} of {n} requests can never fit the KV pool of {pool} tokens and are reported \
             failed, as SGLang aborts them; the first is request {i}: its {}-token prompt needs \
             {} tokens (chunked prefill keeps every chunk resident, so it cannot help)",
            count[1],
            r.prompt_len,
            r.prompt_len + 1
        ));
    }
    Ok(notes)
}

/// Errors when a request the server queues can never be admitted, even alone in an empty
/// server ([`admission::waits_forever`]): SGLang would leave it and every request behind it
/// waiting for ever, so the benchmark would never finish.
fn waits_forever(sc: &Scenario, rows: &[DatasetRow]) -> Result<()> {
    let lim = AdmissionLimits::of(&sc.server);
    for (i, r) in rows.iter().enumerate() {
        let Ok(max_new) = admission::admit(&lim, r.prompt_len, r.output_len) else {
            continue;
        };
        if admission::waits_forever(&lim, r.prompt_len, max_new) {
            let s = &sc.server;
            return Err(Error::Impossible(format!(
                "request {i} can never be admitted, so SGLang {} would wait for ever and the \
                 benchmark would never finish: without the radix cache its admission needs \
                 the {}-token prompt rounded up to {}-token pages ({}) + {} new tokens (after \
                 the server's clip) + 2 ≤ the KV pool of {} tokens; use --page-size 1, keep \
                 the radix cache, or raise --max-total-tokens",
                s.version,
                r.prompt_len,
                s.page_size,
                s.ceil_page(r.prompt_len),
                max_new,
                s.kv_pool_tokens
            )));
        }
    }
    Ok(())
}

/// ", and the shortest prompt has N tokens" when the prompts differ.
fn smallest_prompt(rows: &[DatasetRow]) -> String {
    let min = rows.iter().map(|r| r.prompt_len).min().unwrap_or(0);
    if min == rows[0].prompt_len {
        String::new()
    } else {
        format!("; even the shortest prompt has {min} tokens")
    }
}

/// What to call the requests' origin in errors.
fn dataset_source(sc: &Scenario) -> String {
    if sc.lengths.is_some() {
        "request lengths".into()
    } else {
        format!("--dataset-name {}", sc.client.dataset_name)
    }
}
