//! Values of the client's count and rate flags: their limits (as errors state them), clap's
//! parsers and the scenario file's rate reader (a number or `inf`).
use super::yaml_numbers::MAX_COUNT;
use serde::Deserialize;

/// Most requests one run may hold. Each costs a few hundred bytes across the client, the
/// scheduler and the metrics; 2^24 keeps a run within a few GiB.
pub const MAX_PROMPTS: u64 = 1 << 24;

/// Largest `--seed`: numpy seeds are 32-bit.
pub const MAX_SEED: u64 = u32::MAX as u64;

/// How a count's upper limit is written in errors.
fn limit_text(max: u64) -> String {
    match max {
        MAX_COUNT => "2^40".into(),
        MAX_PROMPTS => format!("{MAX_PROMPTS} (2^24, the simulator's memory bound)"),
        MAX_SEED => format!("{MAX_SEED} (numpy seeds are 32-bit)"),
        m => m.to_string(),
    }
}

/// A user's float as an error shows it: plainly in [1e-3, 1e6) (and 0), else in scientific
/// notation, so `1e-300` is not printed as 300 digits.
pub fn show_f64(v: f64) -> String {
    match v.abs() {
        a if a == 0.0 || (1e-3..1e6).contains(&a) || !a.is_finite() => format!("{v}"),
        _ => format!("{v:.3e}"),
    }
}

/// The range error of a count flag: the real limits, whatever was given (even negative).
pub fn count_range_error(min: u64, max: u64, got: impl std::fmt::Display) -> String {
    format!("must be between {min} and {}, got {got}", limit_text(max))
}

/// clap's parser of a count flag, a whole number in `[MIN, MAX]`. Negative numbers reach it
/// (the CLI allows them as values), so `--num-prompts -1` states the real limit.
pub fn count_arg<const MIN: u64, const MAX: u64>(s: &str) -> std::result::Result<u64, String> {
    match s.trim().parse::<i128>() {
        Ok(v) if (MIN as i128..=MAX as i128).contains(&v) => Ok(v as u64),
        Ok(v) => Err(count_range_error(MIN, MAX, v)),
        Err(_) => Err(count_range_error(
            MIN,
            MAX,
            format!("`{s}` (not a whole number)"),
        )),
    }
}

pub(crate) fn parse_rate(s: &str) -> std::result::Result<f64, String> {
    if s.eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && !v.is_nan() => Ok(v),
        _ => Err(format!(
            "`{s}` is not a request rate (a number > 0 or `inf`)"
        )),
    }
}

pub(crate) fn de_rate<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Rate {
        N(f64),
        S(String),
    }
    match Option::<Rate>::deserialize(d)? {
        None => Ok(None),
        Some(Rate::N(v)) => parse_rate(&v.to_string())
            .map(Some)
            .map_err(serde::de::Error::custom),
        Some(Rate::S(s)) => parse_rate(&s).map(Some).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn extreme_floats_are_shown_in_scientific_notation() {
        assert_eq!(super::show_f64(1e-300), "1.000e-300");
        assert_eq!(super::show_f64(2.5), "2.5");
        assert_eq!(super::show_f64(-3e9), "-3.000e9");
        assert_eq!(super::show_f64(0.0), "0");
        assert_eq!(super::show_f64(f64::NAN), "NaN");
    }
}
