//! Metrics and report against ground truth: numpy statistics from REAL numpy (vectors made by
//! `tests/vectors/gen_percentile_vectors.py`), run-length statistics against a plain
//! expanded-list reference (proptest), the peak buckets against a naive per-second loop, and
//! the text report byte-for-byte against every result block in the recorded logs
//! (`validation/*.txt`).
use proptest::prelude::*;
use servesim::metrics::percentile::Runs;
use servesim::metrics::record::{Emission, ItlRun, RequestOutcome, RunRecord};
use servesim::metrics::{compute, BenchMetrics, Stats};
use servesim::report::{json, text, ReportHeader};

// ---------------------------------------------------------------- numpy reference vectors

/// Percentiles, medians and maxima are bit-exact; sums (mean, std) may differ from numpy's
/// pairwise summation in the last ulps.
fn assert_stats_eq(got: [f64; 8], want: [f64; 8], what: &str) {
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        let exact = !matches!(i, 5 | 6);
        let ok = if exact {
            g == w
        } else {
            (g - w).abs() <= 1e-12 * w.abs().max(1e-300)
        };
        assert!(ok, "{what}: stat #{i} got {g:?} want {w:?}");
    }
}

fn runs_stats(r: &Runs) -> [f64; 8] {
    let p = |q| r.percentile(q);
    [
        p(50.0),
        p(90.0),
        p(95.0),
        p(99.0),
        r.median(),
        r.mean(),
        r.std(),
        r.max(),
    ]
}

#[test]
fn runs_match_real_numpy() {
    for (runs, want) in vectors::STATS_CASES {
        let r = Runs::new(runs.iter().map(|&(ns, c)| (ns as f64 / 1e9, c)));
        assert_stats_eq(runs_stats(&r), *want, &format!("{runs:?}"));
    }
}

fn record_from_vectors() -> RunRecord {
    let requests = vectors::RECORD_REQUESTS
        .iter()
        .map(
            |&(prompt_len, output_len, success, start_ns, ttft_ns, latency_ns, _)| RequestOutcome {
                prompt_len,
                output_len,
                success,
                start_ns,
                ttft_ns,
                latency_ns,
            },
        )
        .collect();
    let itl = vectors::RECORD_REQUESTS
        .iter()
        .flat_map(|r| r.6.iter().map(|&gap_ns| ItlRun { gap_ns, count: 1 }))
        .collect();
    let emissions = vectors::RECORD_EMISSIONS
        .iter()
        .map(|&(time_ns, count)| Emission { time_ns, count })
        .collect();
    RunRecord {
        requests,
        itl,
        emissions,
        duration_ns: vectors::RECORD_DURATION_NS,
    }
}

fn stats_array(s: &Stats) -> [f64; 8] {
    [
        s.median, s.p90, s.p95, s.p99, s.median, s.mean, s.std, s.max,
    ]
}

#[test]
fn compute_matches_numpy_calculate_metrics() {
    let m = compute(&record_from_vectors());
    let [completed, total_in, total_out, peak_conc] = vectors::RECORD_COUNTS;
    assert_eq!((m.completed, m.failed), (completed, 1));
    assert_eq!(
        (m.total_input_tokens, m.total_output_tokens),
        (total_in, total_out)
    );
    assert_eq!(m.total_output_tokens_retokenized, total_out);
    assert_eq!(m.peak_concurrent_requests, peak_conc);
    let rates = [
        m.request_throughput,
        m.input_throughput,
        m.output_throughput,
        m.total_throughput,
        m.concurrency,
        m.peak_output_throughput,
    ];
    for (got, want) in rates.iter().zip(vectors::RECORD_RATES.iter()) {
        assert!(
            (got - want).abs() <= 1e-12 * want.abs(),
            "got {got} want {want}"
        );
    }
    let lists = [
        ("ttft", &m.ttft_ms),
        ("tpot", &m.tpot_ms),
        ("itl", &m.itl_ms),
        ("e2e", &m.e2e_ms),
    ];
    for ((name, got), want) in lists.iter().zip(vectors::RECORD_STATS_MS.iter()) {
        // p50 is not a Stats field; in these lists the two middle samples are equal, so
        // numpy's p50 equals the median in the p50 slot.
        assert_stats_eq(stats_array(got), *want, name);
    }
}

#[test]
fn empty_and_degenerate_runs_give_zeros_not_nan() {
    let empty = compute(&RunRecord::default());
    assert_eq!(empty, BenchMetrics::default());
    let failed_only = RunRecord {
        requests: vec![RequestOutcome {
            prompt_len: 10,
            output_len: 0,
            success: false,
            start_ns: 5,
            ttft_ns: 0,
            latency_ns: 7,
        }],
        duration_ns: 0,
        ..RunRecord::default()
    };
    let m = compute(&failed_only);
    assert_eq!((m.completed, m.failed, m.total_input_tokens), (0, 1, 0));
    assert_eq!(
        m,
        BenchMetrics {
            failed: 1,
            ..BenchMetrics::default()
        }
    );
    let h = header("0.5.6.post2", f64::INFINITY, None);
    assert!(!text::render(&m, &h).contains("nan"));
}

// ---------------------------------------------------------------- run-length vs expanded

/// numpy 'linear' percentile on an explicitly sorted, expanded list (the reference).
fn np_percentile(sorted: &[f64], q_pct: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let n = sorted.len();
    let vi = (n - 1) as f64 * (q_pct / 100.0);
    let (i, j) = if vi >= (n - 1) as f64 {
        (n - 1, n - 1)
    } else {
        (vi as usize, vi as usize + 1)
    };
    let (a, b, t) = (sorted[i], sorted[j], vi - vi.floor());
    if t >= 0.5 {
        b - (b - a) * (1.0 - t)
    } else {
        a + (b - a) * t
    }
}

fn reference_stats(values: &[f64]) -> [f64; 8] {
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        s.push(0.0); // bench_serving's `x or 0`
    }
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let mean = s.iter().sum::<f64>() / n as f64;
    let var = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    let p = |q| np_percentile(&s, q);
    [
        p(50.0),
        p(90.0),
        p(95.0),
        p(99.0),
        median,
        mean,
        var.sqrt(),
        s[n - 1],
    ]
}

fn assert_close_to_reference(got: [f64; 8], want: [f64; 8]) -> Result<(), TestCaseError> {
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        if matches!(i, 5 | 6) {
            // Sums: tolerance relative to the data's scale (std can be ~0 by cancellation).
            let scale = want[7].abs().max(1e-9);
            prop_assert!((g - w).abs() <= 1e-9 * scale, "stat {i}: {g} vs {w}");
        } else {
            prop_assert_eq!(g.to_bits(), w.to_bits(), "stat {}: {} vs {}", i, g, w);
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn runs_equal_expanded_list(
        runs in prop::collection::vec((0u64..3_000_000_000, 0u64..40), 0..30),
        dup_runs in prop::collection::vec((0u64..5, 1u64..5), 0..6),
    ) {
        let all: Vec<(f64, u64)> = runs.iter().chain(dup_runs.iter())
            .map(|&(ns, c)| (ns as f64 / 1e9, c)).collect();
        let expanded: Vec<f64> =
            all.iter().flat_map(|&(v, c)| std::iter::repeat_n(v, c as usize)).collect();
        let r = Runs::new(all.iter().copied());
        prop_assert_eq!(r.len(), expanded.len() as u64);
        assert_close_to_reference(runs_stats(&r), reference_stats(&expanded))?;
        let q = (r.len() % 101) as f64;
        prop_assert_eq!(r.percentile(q).to_bits(), {
            let mut s = expanded.clone();
            s.sort_by(f64::total_cmp);
            np_percentile(&s, q).to_bits()
        });
    }

    #[test]
    fn peaks_equal_naive_per_second_loop(
        reqs in prop::collection::vec(
            (0u64..5_000_000_000, 0u64..2_000_000_000, 0u64..4_000_000_000, 0u64..6, any::<bool>()),
            0..25),
    ) {
        let mut rec = RunRecord::default();
        for &(start_ns, ttft_raw, extra_ns, n_itl, success) in &reqs {
            let latency_ns = ttft_raw + extra_ns;
            let ttft_ns = ttft_raw;
            let output_len = if success { n_itl + 1 } else { 0 };
            rec.requests.push(RequestOutcome { prompt_len: 1, output_len, success, start_ns, ttft_ns, latency_ns });
            if success {
                rec.emissions.push(Emission { time_ns: start_ns + ttft_ns, count: 1 });
                for k in 1..=n_itl {
                    let t = start_ns + ttft_ns + extra_ns * k / n_itl.max(1);
                    rec.emissions.push(Emission { time_ns: t, count: 1 });
                }
            }
        }
        rec.duration_ns = 10_000_000_000;
        let m = compute(&rec);
        let ok: Vec<&RequestOutcome> = rec.requests.iter().filter(|r| r.success).collect();
        let (mut want_tok, mut want_conc) = (0u64, 0u64);
        if let Some(min_start) = ok.iter().map(|r| r.start_ns).min() {
            let max_end = ok.iter().map(|r| r.start_ns + r.latency_ns).max().unwrap();
            let dur_sec = (max_end - min_start).div_ceil(1_000_000_000) + 1;
            for s in 0..dur_sec {
                let in_bucket = |t: u64| (t - min_start) / 1_000_000_000 == s;
                let tok: u64 = rec.emissions.iter().filter(|e| in_bucket(e.time_ns)).map(|e| e.count).sum();
                let conc = ok.iter().filter(|r| {
                    let first = (r.start_ns - min_start) / 1_000_000_000;
                    let last = (r.start_ns + r.latency_ns - min_start) / 1_000_000_000;
                    first <= s && s <= last
                }).count() as u64;
                want_tok = want_tok.max(tok);
                want_conc = want_conc.max(conc);
            }
        }
        prop_assert_eq!(m.peak_output_throughput, want_tok as f64);
        prop_assert_eq!(m.peak_concurrent_requests, want_conc);
    }
}

// ---------------------------------------------------------------- text report goldens

fn header(version: &str, request_rate: f64, max_concurrency: Option<u64>) -> ReportHeader {
    ReportHeader {
        backend: "sglang".to_string(),
        request_rate,
        max_concurrency,
        bench_version: version.parse().expect("version"),
    }
}

fn seed(name: &str) -> String {
    let path = format!("{}/validation/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every result block of a log, from the title line through the closing `=` * 50 line.
fn result_blocks(log: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        if line.starts_with("============ Serving Benchmark Result") {
            current = Some(String::new());
        }
        if let Some(block) = current.as_mut() {
            block.push_str(line);
            block.push('\n');
            if line == "=".repeat(50) {
                blocks.extend(current.take());
            }
        }
    }
    blocks
}

fn set_stat(stats: &mut Stats, which: &str, v: f64) {
    match which {
        "Mean" => stats.mean = v,
        "Median" => stats.median = v,
        "P90" => stats.p90 = v,
        "P95" => stats.p95 = v,
        "P99" => stats.p99 = v,
        "Max" => stats.max = v,
        other => panic!("unknown statistic {other}"),
    }
}

/// Rebuilds BenchMetrics and the header from a printed block (label at columns 0..40, value
/// from column 41).
fn parse_block(block: &str, version: &str) -> (BenchMetrics, ReportHeader) {
    let mut m = BenchMetrics::default();
    let mut h = header(version, f64::INFINITY, None);
    for line in block
        .lines()
        .filter(|l| l.len() > 41 && l.as_bytes()[40] == b' ')
    {
        let (label, value) = (line[..40].trim_end(), line[41..].trim_end());
        let f = || value.parse::<f64>().expect(label);
        let u = || value.parse::<u64>().expect(label);
        match label {
            "Backend:" => h.backend = value.to_string(),
            "Traffic request rate:" => h.request_rate = f(),
            "Max request concurrency:" | "Max reqeuest concurrency:" => {
                h.max_concurrency = value.parse().ok()
            }
            "Successful requests:" => m.completed = u(),
            "Benchmark duration (s):" => m.duration_s = f(),
            "Total input tokens:" => m.total_input_tokens = u(),
            "Total input text tokens:" => assert_eq!(u(), m.total_input_tokens),
            "Total input vision tokens:" => assert_eq!(u(), 0),
            "Total generated tokens:" => m.total_output_tokens = u(),
            "Total generated tokens (retokenized):" => m.total_output_tokens_retokenized = u(),
            "Request throughput (req/s):" => m.request_throughput = f(),
            "Input token throughput (tok/s):" => m.input_throughput = f(),
            "Output token throughput (tok/s):" => m.output_throughput = f(),
            "Peak output token throughput (tok/s):" => m.peak_output_throughput = f(),
            "Peak concurrent requests:" => m.peak_concurrent_requests = u(),
            "Total token throughput (tok/s):" => m.total_throughput = f(),
            "Concurrency:" => m.concurrency = f(),
            _ => {
                let (which, rest) = label.split_once(' ').expect(label);
                let stats = match rest.split(' ').next() {
                    Some("E2E") => &mut m.e2e_ms,
                    Some("TTFT") => &mut m.ttft_ms,
                    Some("TPOT") => &mut m.tpot_ms,
                    Some("ITL") => &mut m.itl_ms,
                    _ => panic!("unknown line {line:?}"),
                };
                set_stat(stats, which, f());
            }
        }
    }
    (m, h)
}

/// The 003 and 004 logs lost their trailing spaces on the way (every bench_serving version
/// pads values with `{:<10}`, so "inf" is always followed by 7 spaces, yet 004 has none); for
/// those the comparison ignores trailing spaces only.
fn strip_trailing(s: &str) -> String {
    s.lines().map(|l| l.trim_end().to_string() + "\n").collect()
}

/// (log, client version, whether the log kept its trailing spaces, number of result blocks).
const GOLDEN_LOGS: &[(&str, &str, bool, usize)] = &[
    ("000_6795e473c4b3f35e.txt", "0.5.6.post2", true, 1),
    ("001_60470e8ed6145649.txt", "0.5.8", true, 1),
    ("002_2ab2911fe03928ae.txt", "0.5.6.post2", true, 1),
    ("003_6333425655433de6.txt", "0.3.0", false, 24),
    ("004_d6ca1b0ee7fecd17.txt", "0.5.1", false, 4),
];

#[test]
fn text_report_reproduces_every_recorded_block() {
    for &(name, version, exact, count) in GOLDEN_LOGS {
        let blocks = result_blocks(&seed(name));
        assert_eq!(blocks.len(), count, "{name}");
        for (i, block) in blocks.iter().enumerate() {
            let (m, h) = parse_block(block, version);
            let got = text::render(&m, &h);
            let (got, want) = if exact {
                (got, block.clone())
            } else {
                (strip_trailing(&got), block.clone())
            };
            assert_eq!(got, want, "{name} block {i} as {version}");
        }
    }
}

#[test]
fn seed_000_from_hand_built_metrics() {
    let m = BenchMetrics {
        completed: 320,
        total_input_tokens: 1_120_000,
        total_output_tokens: 480_000,
        total_output_tokens_retokenized: 478_667,
        duration_s: 322.16,
        request_throughput: 0.99,
        input_throughput: 3476.50,
        output_throughput: 1489.93,
        total_throughput: 4966.43,
        concurrency: 79.97,
        peak_output_throughput: 1840.0,
        peak_concurrent_requests: 160,
        e2e_ms: Stats {
            mean: 80507.59,
            median: 80407.05,
            ..Stats::default()
        },
        ttft_ms: Stats {
            mean: 6412.33,
            median: 6247.77,
            p99: 10224.53,
            ..Stats::default()
        },
        tpot_ms: Stats {
            mean: 49.43,
            median: 49.31,
            p99: 52.95,
            ..Stats::default()
        },
        itl_ms: Stats {
            mean: 49.43,
            median: 46.89,
            p95: 52.56,
            p99: 56.78,
            max: 8901.20,
            ..Stats::default()
        },
        ..BenchMetrics::default()
    };
    let got = text::render(&m, &header("0.5.6.post2", f64::INFINITY, Some(80)));
    assert_eq!(got, result_blocks(&seed("000_6795e473c4b3f35e.txt"))[0]);
}

#[test]
fn layout_changes_at_the_right_versions() {
    let m = BenchMetrics::default();
    let lines = |v: &str, conc: Option<u64>| text::render(&m, &header(v, 4.0, conc));
    assert!(lines("0.3.0", None).contains("Traffic request rate:                    4.0       \n"));
    assert!(!lines("0.3.5", None).contains("Total token throughput"));
    assert!(lines("0.3.5.post2", None).contains("Total token throughput"));
    assert!(
        lines("0.4.0", Some(8)).contains("Max reqeuest concurrency:                8         \n")
    );
    assert!(lines("0.4.6.post4", Some(0))
        .contains("Max request concurrency:                 not set   \n"));
    assert!(
        !lines("0.4.1", None).contains("Concurrency:")
            && lines("0.4.2", None).contains("Concurrency:")
    );
    let v043 = lines("0.4.3", None);
    assert!(
        v043.contains("Inter-token Latency") && v043.contains("TPOT") && !v043.contains("P95 ITL")
    );
    let v045 = lines("0.4.5", None);
    assert!(
        v045.contains("Inter-Token Latency") && !v045.contains("TPOT") && v045.contains("Max ITL")
    );
    assert!(
        !lines("0.5.3", None).contains("text tokens")
            && lines("0.5.4", None).contains("vision tokens")
    );
    assert!(!lines("0.5.5", None).contains("TPOT") && lines("0.5.5.post2", None).contains("TPOT"));
    assert!(!lines("0.5.5.post3", None).contains("Peak") && lines("0.5.6", None).contains("Peak"));
    let v057 = lines("0.5.7", None);
    assert!(v057.contains("vision tokens") && !v057.contains("P90 E2E"));
    let v058 = lines("0.5.8", None);
    assert!(!v058.contains("vision tokens") && v058.contains("P90 E2E"));
    // 0.5.14 adds P95 E2E, P90/P95 TTFT and TPOT, P90 ITL (bench_serving.py at v0.5.14, lines
    // 1628-1652), in this order.
    let latency_labels = |v: &str| -> Vec<String> {
        let block = lines(v, None);
        let ms = block.lines().filter_map(|l| l.split_once(" (ms):"));
        ms.map(|(label, _)| label.replace(" Latency", "")).collect()
    };
    assert_eq!(
        latency_labels("0.5.14").join(","),
        "Mean E2E,Median E2E,P90 E2E,P95 E2E,P99 E2E,Mean TTFT,Median TTFT,P90 TTFT,P95 TTFT,\
         P99 TTFT,Mean TPOT,Median TPOT,P90 TPOT,P95 TPOT,P99 TPOT,Mean ITL,Median ITL,P90 ITL,\
         P95 ITL,P99 ITL,Max ITL"
    );
    assert_eq!(latency_labels("0.5.13.post1").len(), 15);
}

// ---------------------------------------------------------------- JSON

#[test]
fn json_has_bench_serving_keys_and_valid_inf() {
    let m = compute(&record_from_vectors());
    let extra = serde_json::json!({"model": "test"});
    let parsed: serde_json::Value = serde_json::from_str(&json::render(
        &m,
        &header("0.5.6", f64::INFINITY, None),
        &extra,
    ))
    .unwrap();
    assert_eq!(parsed["request_rate"], "inf");
    assert_eq!(parsed["max_concurrency"], serde_json::Value::Null);
    assert_eq!(parsed["completed"], 5);
    assert_eq!(
        parsed["max_concurrent_requests"],
        m.peak_concurrent_requests
    );
    assert_eq!(parsed["p99_itl_ms"], m.itl_ms.p99);
    assert_eq!(parsed["servesim"], extra);
    for key in [
        "duration",
        "total_output_tokens_retokenized",
        "mean_tpot_ms",
        "p90_e2e_latency_ms",
        "concurrency",
        "max_output_tokens_per_s",
    ] {
        assert!(parsed.get(key).is_some(), "missing {key}");
    }
    let finite: serde_json::Value = serde_json::from_str(&json::render(
        &m,
        &header("0.5.6", 2.5, Some(16)),
        &serde_json::Value::Null,
    ))
    .unwrap();
    assert_eq!(
        (
            finite["request_rate"].as_f64(),
            finite["max_concurrency"].as_u64()
        ),
        (Some(2.5), Some(16))
    );
}

#[rustfmt::skip]
mod vectors {
    // ---- generated ----
    // generated by tests/vectors/gen_percentile_vectors.py (numpy 2.4.6)
    /// (runs as (value_ns, count), [p50, p90, p95, p99, median, mean, std, max] in s)
    pub type StatsCase = (&'static [(u64, u64)], [f64; 8]);
    pub const STATS_CASES: &[StatsCase] = &[
        (&[(1000000000, 1)], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0]),
        (&[(3000000, 1), (1000000, 1)], [0.002, 0.0028, 0.0029, 0.00298, 0.002, 0.002, 0.001, 0.003]),
        (&[(1, 1), (2, 1), (3, 1), (4, 1)], [2.5e-09, 3.7000000000000005e-09, 3.85e-09, 3.97e-09, 2.5e-09, 2.5e-09, 1.1180339887498949e-09, 4e-09]),
        (&[(50000000, 7), (49000000, 3), (8901200000, 1)], [0.05, 0.05, 4.4756, 8.016080000000002, 0.05, 0.8543818181818181, 2.544627374692227, 8.9012]),
        (&[(1737400096, 5), (173850489, 1), (1958941210, 4), (1604483687, 2), (808937010, 3), (367926475, 2), (660625273, 5), (527147178, 4), (1256649771, 3), (962392236, 4), (595927826, 1), (306340208, 5), (888631511, 5), (1491162101, 4), (684005983, 2), (170718658, 2), (1645639704, 5)], [0.888631511, 1.737400096, 1.95894121, 1.95894121, 0.888631511, 1.027588826736842, 0.5557434944980896, 1.95894121]),
        (&[(9359169, 125), (1657029870, 275), (918433349, 235), (411482069, 167), (923175344, 143), (97145324, 119), (376677682, 22), (741288460, 294), (218615032, 237), (1593402962, 40), (1993682886, 159), (1209289994, 42), (485824697, 130), (641782330, 281), (696425340, 271), (421338358, 273), (647965775, 75), (596230015, 171), (951777546, 300), (1632610056, 215), (1305804333, 101), (1458013889, 168), (540126173, 71), (1547013708, 7), (994975724, 95)], [0.74128846, 1.65702987, 1.65702987, 1.993682886, 0.74128846, 0.8589196641780379, 0.5081708282406479, 1.993682886]),
        (&[(611956767, 1), (67315522, 1), (659645689, 1), (242882406, 1), (1648950959, 1), (1973439406, 1), (62038811, 1), (860430476, 1), (534426812, 1), (669162348, 1), (1161933350, 1), (1317254299, 1), (989531649, 1), (1439365126, 1), (157634225, 1), (1132256012, 1), (555535986, 1), (693725103, 1), (990867133, 1), (946067097, 1), (1406818038, 1), (1485454102, 1), (845230189, 1), (1696497370, 1), (1746831403, 1), (793122318, 1), (605102330, 1), (1666505238, 1), (632409338, 1), (1025582357, 1)], [0.9032487865000001, 1.6695044512000001, 1.72418108815, 1.9077230851300002, 0.9032487865000001, 0.9539323953000001, 0.5108241487788697, 1.973439406]),
        (&[(43400000, 100000), (104690000, 5000), (306790000, 900), (20518050000, 1)], [0.0434, 0.0434, 0.10469, 0.10469, 0.0434, 0.04872549881493093, 0.0685353535493814, 20.51805]),
    ];
    /// (prompt_len, output_len, success, start_ns, ttft_ns, latency_ns, itl gaps)
    pub type Request = (u64, u64, bool, u64, u64, u64, &'static [u64]);
    pub const RECORD_REQUESTS: &[Request] = &[
        (100, 4, true, 0, 250000000, 400000000, &[50000000, 50000000, 50000000]),
        (200, 1, true, 10000000, 300000000, 300000000, &[]),
        (300, 0, false, 20000000, 0, 5000000, &[]),
        (50, 3, true, 900000000, 1200000000, 2300000000, &[600000000, 500000000]),
        (70, 6, true, 1500000000, 100000000, 600000000, &[100000000, 100000000, 100000000, 100000000, 100000000]),
        (80, 5, true, 2000000000, 0, 400000000, &[100000000, 100000000, 100000000, 100000000]),
    ];
    pub const RECORD_DURATION_NS: u64 = 3400000000;
    /// Token arrivals: first token at start + ttft, then one per ITL.
    pub const RECORD_EMISSIONS: &[(u64, u64)] = &[(250000000, 1), (300000000, 1), (350000000, 1), (400000000, 1), (310000000, 1), (2100000000, 1), (2700000000, 1), (3200000000, 1), (1600000000, 1), (1700000000, 1), (1800000000, 1), (1900000000, 1), (2000000000, 1), (2100000000, 1), (2000000000, 1), (2100000000, 1), (2200000000, 1), (2300000000, 1), (2400000000, 1)];
    /// completed, total_input, total_output, peak_concurrent_requests
    pub const RECORD_COUNTS: [u64; 4] = [5, 500, 19, 3];
    /// request/input/output/total throughput, concurrency, peak output tokens per s
    pub const RECORD_RATES: [f64; 6] = [1.4705882352941178, 147.05882352941177, 5.588235294117648, 152.64705882352942, 1.1764705882352942, 9.0];
    /// ttft, tpot, itl, e2e: [p50, p90, p95, p99, median, mean, std, max] in ms
    pub const RECORD_STATS_MS: [[f64; 8]; 4] = [
        [250.0, 840.0000000000001, 1019.9999999999998, 1164.0, 250.0, 370.0, 428.485705712571, 1200.0],
        [100.0, 415.00000000000006, 482.4999999999998, 536.4999999999999, 100.0, 199.99999999999997, 203.100960115899, 549.9999999999999],
        [100.0, 380.00000000000045, 534.9999999999999, 586.9999999999999, 100.0, 153.5714285714286, 164.16921335087437, 600.0],
        [400.0, 1620.0, 1959.9999999999995, 2231.9999999999995, 400.0, 800.0, 756.3068160475615, 2300.0],
    ];
}
