//! `--prior-runs`: earlier `sglang.bench_serving` runs of the `random` dataset on the same
//! server (same `--seed`, no `/flush_cache`, no restart), whose prompts are still in the radix
//! cache when this run starts. bench_serving's `random` prompts are ShareGPT first turns in
//! one seeded shuffle order that does not depend on the run's size, each truncated or repeated
//! to its drawn length, so request `i` of any such run shares its leading tokens with request
//! `i` of every other (`client::prior` computes the hits).
//!
//! Written `N:IN:OUT[:RATIO]` per run (`--num-prompts`, `--random-input-len`,
//! `--random-output-len`, `--random-range-ratio`, default 0), comma-separated, oldest first.
use crate::error::{Error, Result};
use serde::Serialize;

/// One earlier run on the same server.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PriorRun {
    pub num_prompts: u64,
    pub input_len: u64,
    pub output_len: u64,
    pub range_ratio: f64,
}

/// Most earlier runs one flag may list (each is drawn again at resolve).
pub const MAX_PRIOR_RUNS: usize = 64;

const FLAG: &str = "--prior-runs";

/// Parses `N:IN:OUT[:RATIO],...` (empty: none); `max_prompts` bounds each N (the run's own
/// limit, `workload::MAX_PROMPTS`).
pub fn parse_prior_runs(text: &str, max_prompts: u64) -> Result<Vec<PriorRun>> {
    let bad = |what: String| Error::invalid(FLAG, "prior_runs", what);
    let items: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.len() > MAX_PRIOR_RUNS {
        return Err(bad(format!(
            "{} runs listed; at most {MAX_PRIOR_RUNS}",
            items.len()
        )));
    }
    items
        .into_iter()
        .map(|item| {
            let parts: Vec<&str> = item.split(':').map(str::trim).collect();
            if !(3..=4).contains(&parts.len()) {
                return Err(bad(format!(
                    "`{item}` is not N:IN:OUT or N:IN:OUT:RATIO (prompts, input length, output length, range ratio)"
                )));
            }
            let count = |i: usize, name: &str, min: u64, max: u64| {
                parts[i]
                    .parse::<u64>()
                    .ok()
                    .filter(|v| (min..=max).contains(v))
                    .ok_or_else(|| {
                        bad(format!(
                            "`{item}`: {name} `{}` must be a whole number between {min} and {max}",
                            parts[i]
                        ))
                    })
            };
            let max_len = super::yaml_numbers::MAX_COUNT;
            let range_ratio = match parts.get(3) {
                None => 0.0,
                Some(r) => r
                    .parse::<f64>()
                    .ok()
                    .filter(|v| (0.0..=1.0).contains(v))
                    .ok_or_else(|| {
                        bad(format!(
                            "`{item}`: range ratio `{r}` must be a number between 0 and 1"
                        ))
                    })?,
            };
            Ok(PriorRun {
                num_prompts: count(0, "prompt count", 1, max_prompts)?,
                input_len: count(1, "input length", 1, max_len)?,
                output_len: count(2, "output length", 0, max_len)?,
                range_ratio,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_runs_and_rejects_bad_items_with_the_limit() {
        let r = parse_prior_runs("10:1000:1000, 80:8000:1000:0.5", 1000).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[1].num_prompts, r[1].input_len, r[1].output_len),
            (80, 8000, 1000)
        );
        assert_eq!((r[0].range_ratio, r[1].range_ratio), (0.0, 0.5));
        assert!(parse_prior_runs("", 1000).unwrap().is_empty());
        let e = parse_prior_runs("10:1000", 1000).unwrap_err().to_string();
        assert!(e.contains("--prior-runs") && e.contains("N:IN:OUT"), "{e}");
        let e = parse_prior_runs("0:1000:10", 1000).unwrap_err().to_string();
        assert!(e.contains("between 1 and 1000"), "{e}");
        let e = parse_prior_runs("5:10:10:1.5", 1000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("between 0 and 1"), "{e}");
    }
}
