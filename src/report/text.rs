//! bench_serving's printed result block, byte-for-byte per client version: from the
//! `============ Serving Benchmark Result ============` line to the closing `=====` line.
//!
//! Every version prints each line as Python's `"{:<40} {:<10}".format(label, value)` (or
//! `{:<10.2f}` for floats), so short values carry trailing spaces ("inf       "). Which lines
//! appear, and two label spellings, changed over time; [`LAYOUT`] is the single table of that,
//! checked line by line against the `bench_serving.py` shipped in every SGLang wheel on PyPI
//! from 0.3.0 to 0.5.23 (`sglang/benchmark/serving.py` from 0.5.15; 0.5.16–0.5.23 print 0.5.15's block,
//! 0.5.23's goodput lines only with `--goodput`; boundaries are the first release, post-releases included, that
//! prints the change).
//!
//! "Accept length:" (0.4.3.post3+) is printed right after "Concurrency:" when the server
//! reports a non-zero `avg_spec_accept_length` (speculative decoding) and the backend's name
//! contains "sglang" (only those query `/get_server_info`).
//!
//! Not modelled: "Traffic request rate: trace" (`--use-trace-timestamps`), and 0.5.8+'s "Total input vision
//! tokens" line, which those versions print only for the `image`/`mmmu` datasets.
use super::ReportHeader;
use crate::metrics::BenchMetrics;
use crate::spec::version::Version;

/// Width of the title, section and closing rules.
const RULE_WIDTH: usize = 50;

/// Versions `[from, until)`.
#[derive(Debug, Clone, Copy)]
struct Span {
    from: Version,
    until: Version,
}

const V_MIN: Version = Version {
    major: 0,
    minor: 0,
    patch: 0,
    stage: 0,
};
const V_MAX: Version = Version {
    major: u32::MAX,
    minor: u32::MAX,
    patch: u32::MAX,
    stage: u32::MAX,
};

// First versions printing each change (see the module doc).
/// "Total token throughput (tok/s)".
const TOTAL_THROUGHPUT_FROM: Version = Version::post(0, 3, 5, 2);
/// "Max reqeuest concurrency:" (sic).
const MAX_CONCURRENCY_FROM: Version = Version::post(0, 3, 6, 1);
/// "Concurrency:".
const CONCURRENCY_FROM: Version = Version::new(0, 4, 2);
/// "Inter-Token Latency" header, P95 and Max ITL; the TPOT block stops being printed.
const ITL_V2_FROM: Version = Version::post(0, 4, 3, 3);
/// "Accept length:" (`avg_spec_accept_length` from `/get_server_info`).
const ACCEPT_LENGTH_FROM: Version = Version::post(0, 4, 3, 3);
/// "Max request concurrency:" spelled right.
const TYPO_FIXED_FROM: Version = Version::post(0, 4, 6, 4);
/// "Total input text tokens" / "Total input vision tokens".
const INPUT_SPLIT_FROM: Version = Version::post(0, 5, 3, 1);
/// The TPOT block is printed again.
const TPOT_AGAIN_FROM: Version = Version::post(0, 5, 5, 2);
/// "Peak output token throughput" / "Peak concurrent requests".
const PEAKS_FROM: Version = Version::new(0, 5, 6);
/// "P90/P99 E2E Latency"; the vision-token line becomes dataset-dependent (not printed).
const E2E_TAIL_FROM: Version = Version::new(0, 5, 8);
/// "P95 E2E Latency", "P90/P95 TTFT", "P90/P95 TPOT", "P90 ITL" (bench_serving.py at v0.5.14).
const MORE_PERCENTILES_FROM: Version = Version::new(0, 5, 14);

const fn span(from: Version, until: Version) -> Span {
    Span { from, until }
}
const ALWAYS: &[Span] = &[span(V_MIN, V_MAX)];
const TOTAL_THROUGHPUT: &[Span] = &[span(TOTAL_THROUGHPUT_FROM, V_MAX)];
const MAX_CONC_TYPO: &[Span] = &[span(MAX_CONCURRENCY_FROM, TYPO_FIXED_FROM)];
const MAX_CONC: &[Span] = &[span(TYPO_FIXED_FROM, V_MAX)];
const CONCURRENCY: &[Span] = &[span(CONCURRENCY_FROM, V_MAX)];
const ITL_V1: &[Span] = &[span(V_MIN, ITL_V2_FROM)];
const ITL_V2: &[Span] = &[span(ITL_V2_FROM, V_MAX)];
const TPOT: &[Span] = &[span(V_MIN, ITL_V2_FROM), span(TPOT_AGAIN_FROM, V_MAX)];
const INPUT_TEXT: &[Span] = &[span(INPUT_SPLIT_FROM, V_MAX)];
const INPUT_VISION: &[Span] = &[span(INPUT_SPLIT_FROM, E2E_TAIL_FROM)];
const PEAKS: &[Span] = &[span(PEAKS_FROM, V_MAX)];
const ACCEPT_LENGTH: &[Span] = &[span(ACCEPT_LENGTH_FROM, V_MAX)];
const E2E_TAIL: &[Span] = &[span(E2E_TAIL_FROM, V_MAX)];
const MORE_PERCENTILES: &[Span] = &[span(MORE_PERCENTILES_FROM, V_MAX)];

/// Where a field's value comes from and how Python formats it.
#[derive(Clone, Copy)]
enum Value {
    /// A header value, already formatted (`{:<10}` of a str, int or float).
    Header(fn(&ReportHeader) -> String),
    /// `{:<10}` of a Python int.
    Int(fn(&BenchMetrics) -> u64),
    /// `{:<10.2f}` of a Python float.
    Fixed2(fn(&BenchMetrics) -> f64),
    /// `{:<10.2f}` of a value printed only when truthy (`if accept_length:`) and the backend
    /// queries the server's info (its name contains "sglang").
    ServerFixed2(fn(&BenchMetrics) -> Option<f64>),
}

/// One printed line.
#[derive(Clone, Copy)]
enum Line {
    /// `"{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="=")`.
    Title,
    /// `"{s:{c}^{n}}".format(s=title, n=50, c="-")`.
    Section(&'static str),
    /// `"{:<40} {:<10}".format(label, value)`.
    Field(&'static str, Value),
    /// `"=" * 50`.
    Close,
}

/// A line and the versions that print it.
struct Row {
    line: Line,
    spans: &'static [Span],
}

const fn row(line: Line, spans: &'static [Span]) -> Row {
    Row { line, spans }
}
const fn header(label: &'static str, get: fn(&ReportHeader) -> String) -> Row {
    row(Line::Field(label, Value::Header(get)), ALWAYS)
}
const fn int(label: &'static str, get: fn(&BenchMetrics) -> u64, spans: &'static [Span]) -> Row {
    row(Line::Field(label, Value::Int(get)), spans)
}
const fn f2(label: &'static str, get: fn(&BenchMetrics) -> f64, spans: &'static [Span]) -> Row {
    row(Line::Field(label, Value::Fixed2(get)), spans)
}
const fn section(title: &'static str, spans: &'static [Span]) -> Row {
    row(Line::Section(title), spans)
}

/// Every line any version prints, in order, with the versions that print it.
#[rustfmt::skip]
const LAYOUT: &[Row] = &[
    row(Line::Title, ALWAYS),
    header("Backend:", |h| h.backend.clone()),
    header("Traffic request rate:", |h| py_float_repr(h.request_rate)),
    row(Line::Field("Max reqeuest concurrency:", Value::Header(max_concurrency)), MAX_CONC_TYPO),
    row(Line::Field("Max request concurrency:", Value::Header(max_concurrency)), MAX_CONC),
    int("Successful requests:", |m| m.completed, ALWAYS),
    f2("Benchmark duration (s):", |m| m.duration_s, ALWAYS),
    int("Total input tokens:", |m| m.total_input_tokens, ALWAYS),
    int("Total input text tokens:", |m| m.total_input_tokens, INPUT_TEXT),
    int("Total input vision tokens:", |_| 0, INPUT_VISION),
    int("Total generated tokens:", |m| m.total_output_tokens, ALWAYS),
    int("Total generated tokens (retokenized):", |m| m.total_output_tokens_retokenized, ALWAYS),
    f2("Request throughput (req/s):", |m| m.request_throughput, ALWAYS),
    f2("Input token throughput (tok/s):", |m| m.input_throughput, ALWAYS),
    f2("Output token throughput (tok/s):", |m| m.output_throughput, ALWAYS),
    f2("Peak output token throughput (tok/s):", |m| m.peak_output_throughput, PEAKS),
    int("Peak concurrent requests:", |m| m.peak_concurrent_requests, PEAKS),
    f2("Total token throughput (tok/s):", |m| m.total_throughput, TOTAL_THROUGHPUT),
    f2("Concurrency:", |m| m.concurrency, CONCURRENCY),
    row(Line::Field("Accept length:", Value::ServerFixed2(|m| m.accept_length)), ACCEPT_LENGTH),
    section("End-to-End Latency", ALWAYS),
    f2("Mean E2E Latency (ms):", |m| m.e2e_ms.mean, ALWAYS),
    f2("Median E2E Latency (ms):", |m| m.e2e_ms.median, ALWAYS),
    f2("P90 E2E Latency (ms):", |m| m.e2e_ms.p90, E2E_TAIL),
    f2("P95 E2E Latency (ms):", |m| m.e2e_ms.p95, MORE_PERCENTILES),
    f2("P99 E2E Latency (ms):", |m| m.e2e_ms.p99, E2E_TAIL),
    section("Time to First Token", ALWAYS),
    f2("Mean TTFT (ms):", |m| m.ttft_ms.mean, ALWAYS),
    f2("Median TTFT (ms):", |m| m.ttft_ms.median, ALWAYS),
    f2("P90 TTFT (ms):", |m| m.ttft_ms.p90, MORE_PERCENTILES),
    f2("P95 TTFT (ms):", |m| m.ttft_ms.p95, MORE_PERCENTILES),
    f2("P99 TTFT (ms):", |m| m.ttft_ms.p99, ALWAYS),
    section("Time per Output Token (excl. 1st token)", TPOT),
    f2("Mean TPOT (ms):", |m| m.tpot_ms.mean, TPOT),
    f2("Median TPOT (ms):", |m| m.tpot_ms.median, TPOT),
    f2("P90 TPOT (ms):", |m| m.tpot_ms.p90, MORE_PERCENTILES),
    f2("P95 TPOT (ms):", |m| m.tpot_ms.p95, MORE_PERCENTILES),
    f2("P99 TPOT (ms):", |m| m.tpot_ms.p99, TPOT),
    section("Inter-token Latency", ITL_V1),
    section("Inter-Token Latency", ITL_V2),
    f2("Mean ITL (ms):", |m| m.itl_ms.mean, ALWAYS),
    f2("Median ITL (ms):", |m| m.itl_ms.median, ALWAYS),
    f2("P90 ITL (ms):", |m| m.itl_ms.p90, MORE_PERCENTILES),
    f2("P95 ITL (ms):", |m| m.itl_ms.p95, ITL_V2),
    f2("P99 ITL (ms):", |m| m.itl_ms.p99, ALWAYS),
    f2("Max ITL (ms):", |m| m.itl_ms.max, ITL_V2),
    row(Line::Close, ALWAYS),
];

/// The result block as `h.bench_version` prints it, each line ending in `\n` (bench_serving
/// prints a blank line before the title; that line is not part of the block).
pub fn render(m: &BenchMetrics, h: &ReportHeader) -> String {
    let v = h.bench_version;
    let mut out = String::new();
    for Row { line, spans } in LAYOUT {
        if !spans.iter().any(|s| s.from <= v && v < s.until) {
            continue;
        }
        match *line {
            Line::Title => out.push_str(&centered(" Serving Benchmark Result ", '=')),
            Line::Section(title) => out.push_str(&centered(title, '-')),
            Line::Field(label, value) => {
                let value = match value {
                    Value::Header(get) => get(h),
                    Value::Int(get) => get(m).to_string(),
                    Value::Fixed2(get) => fixed2(get(m)),
                    Value::ServerFixed2(get) => match get(m) {
                        Some(x) if x != 0.0 && h.backend.contains("sglang") => fixed2(x),
                        _ => continue,
                    },
                };
                out.push_str(&field(label, &value));
            }
            Line::Close => out.push_str(&"=".repeat(RULE_WIDTH)),
        }
        out.push('\n');
    }
    out
}

/// `"{:<40} {:<10}".format(label, value)`: the one "label: value" line format.
pub(crate) fn field(label: &str, value: &str) -> String {
    format!("{label:<40} {value:<10}")
}

/// `"{s:{c}^{n}}".format(s=title, n=50, c=fill)`: Python puts the odd fill char on the right.
pub(crate) fn centered(title: &str, fill: char) -> String {
    let pad = RULE_WIDTH.saturating_sub(title.chars().count());
    let left = pad / 2;
    let fill_str = |n: usize| fill.to_string().repeat(n);
    format!("{}{title}{}", fill_str(left), fill_str(pad - left))
}

/// `max_concurrency if max_concurrency else "not set"`.
fn max_concurrency(h: &ReportHeader) -> String {
    match h.max_concurrency {
        Some(c) if c > 0 => c.to_string(),
        _ => "not set".to_string(),
    }
}

/// Python's `format(x, ".2f")`: correctly rounded (ties to even on the exact binary value, as
/// Rust's formatter does), `nan`/`inf` spelled Python's way.
pub fn fixed2(x: f64) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else {
        format!("{x:.2}")
    }
}

/// Python's `repr(float)` / `format(x, "")`: the shortest round-tripping digits, positional
/// for decimal exponents -4..=15 (always with a fractional part, "16.0"), otherwise
/// scientific with a signed two-digit-minimum exponent ("1e+16", "1e-05").
pub fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // Rust's `{:e}` gives the same shortest digits: "-1.2345e-7".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exp) {
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mantissa}e{exp_sign}{:02}", exp.abs());
    }
    let point = exp + 1; // digits before the decimal point
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if (point as usize) >= digits.len() {
        format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_float_formats() {
        // Reference values from CPython 3: repr(x) and format(x, ".2f").
        let cases = [
            (f64::INFINITY, "inf"),
            (16.0, "16.0"),
            (0.5, "0.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123456789012345.6, "123456789012345.6"),
            (2.5e-7, "2.5e-07"),
            (1.5e300, "1.5e+300"),
            (0.0, "0.0"),
            (-3.25, "-3.25"),
        ];
        for (x, want) in cases {
            assert_eq!(py_float_repr(x), want, "repr({x})");
        }
        for (x, want) in [
            (0.125, "0.12"),
            (0.375, "0.38"),
            (2.675, "2.67"),
            (1.005, "1.00"),
        ] {
            assert_eq!(fixed2(x), want);
        }
        assert_eq!(fixed2(f64::NAN), "nan");
        assert_eq!(fixed2(f64::INFINITY), "inf");
    }

    #[test]
    fn rules_center_like_python() {
        assert_eq!(
            centered("Time to First Token", '-'),
            format!("{}Time to First Token{}", "-".repeat(15), "-".repeat(16))
        );
        assert_eq!(
            centered(" Serving Benchmark Result ", '=').len(),
            RULE_WIDTH
        );
    }
}
