//! One run over time (`servesim run --timeline FILE --plot DIR`): the engine's per-iteration
//! samples as CSV, and SVG charts of running and queued requests, batch tokens, KV-cache usage
//! and token throughput against simulated time, one line per data-parallel replica (identical
//! replicas collapse into one line, more than [`MAX_REPLICA_LINES`] into their mean and max;
//! the tokens-per-step chart clips outliers such as the first prefill burst and marks them).
//!
//! Charts aggregate the samples into [`BUCKETS`] equal time buckets per replica: request
//! counts and KV usage are averaged over the bucket weighted by step duration, batch tokens
//! are averaged per step, and throughput is tokens in the bucket divided by its width.
use super::charts::{LineChart, Mark, Scale, Series};
use crate::engine::timeline::Sample;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Time buckets per chart.
pub const BUCKETS: usize = 300;

/// The CSV header (the fields of [`Sample`]).
pub const CSV_HEADER: &str = "time_ns,duration_ns,replica,running,waiting,prefill_tokens,decode_tokens,kv_used_tokens,kv_capacity_tokens";

/// One line per sample, in the engine's order.
pub fn csv(samples: &[Sample]) -> String {
    let mut out = String::with_capacity(64 * (samples.len() + 1));
    out.push_str(CSV_HEADER);
    out.push('\n');
    for s in samples {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{}\n",
            s.time_ns,
            s.duration_ns,
            s.replica,
            s.running,
            s.waiting,
            s.prefill_tokens,
            s.decode_tokens,
            s.kv_used_tokens,
            s.kv_capacity_tokens
        ));
    }
    out
}

/// Per-bucket aggregates of one replica.
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    weight: f64,
    running: f64,
    waiting: f64,
    kv_frac: f64,
    steps: f64,
    prefill: f64,
    decode: f64,
}

/// (bucket width in s, buckets per replica).
fn bucketize(samples: &[Sample]) -> (f64, BTreeMap<u32, Vec<Bucket>>) {
    let end_ns = samples
        .iter()
        .map(|s| s.time_ns + s.duration_ns)
        .max()
        .unwrap_or(0)
        .max(1);
    let width_ns = end_ns.div_ceil(BUCKETS as u64).max(1);
    let mut out: BTreeMap<u32, Vec<Bucket>> = BTreeMap::new();
    for s in samples {
        let b = &mut out
            .entry(s.replica)
            .or_insert_with(|| vec![Bucket::default(); BUCKETS])
            [((s.time_ns / width_ns) as usize).min(BUCKETS - 1)];
        let w = s.duration_ns.max(1) as f64;
        b.weight += w;
        b.running += w * s.running as f64;
        b.waiting += w * s.waiting as f64;
        if s.kv_capacity_tokens > 0 {
            b.kv_frac += w * s.kv_used_tokens as f64 / s.kv_capacity_tokens as f64;
        }
        b.steps += 1.0;
        b.prefill += s.prefill_tokens as f64;
        b.decode += s.decode_tokens as f64;
    }
    (width_ns as f64 / 1e9, out)
}

/// A named quantity of a bucket (the bucket width in s is the second argument).
type Measure = (&'static str, fn(&Bucket, f64) -> Option<f64>);

/// Replicas drawn one line each; with more, each quantity is drawn as the mean and the
/// maximum over the replicas (a legend of 16 identical DP ranks says nothing).
pub const MAX_REPLICA_LINES: usize = 4;

/// The values of `f` at every bucket centre of one replica.
fn values(bs: &[Bucket], width_s: f64, f: fn(&Bucket, f64) -> Option<f64>) -> Vec<(f64, f64)> {
    bs.iter()
        .enumerate()
        .filter_map(|(i, b)| Some(((i as f64 + 0.5) * width_s, f(b, width_s)?)))
        .collect()
}

/// (x, y) points of one line.
type Points = Vec<(f64, f64)>;

/// Per bucket centre, the mean and the max of the replicas' values there.
fn mean_and_max(per_replica: &[Points]) -> (Points, Points) {
    let mut at: BTreeMap<u64, (f64, f64, f64, f64)> = BTreeMap::new();
    for pts in per_replica {
        for &(x, y) in pts {
            let e = at
                .entry(x.to_bits())
                .or_insert((x, 0.0, 0.0, f64::NEG_INFINITY));
            e.1 += y;
            e.2 += 1.0;
            e.3 = e.3.max(y);
        }
    }
    let mut v: Vec<_> = at.into_values().collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    (
        v.iter().map(|e| (e.0, e.1 / e.2)).collect(),
        v.iter().map(|e| (e.0, e.3)).collect(),
    )
}

/// One series per replica (and per `what`), points at bucket centres; identical replicas
/// (DP attention's lockstep ranks) collapse into one line, and more than
/// [`MAX_REPLICA_LINES`] replicas into their mean and max.
fn series(buckets: &BTreeMap<u32, Vec<Bucket>>, width_s: f64, what: &[Measure]) -> Vec<Series> {
    let n = buckets.len();
    let mut out = Vec::new();
    for (j, (label, f)) in what.iter().enumerate() {
        let per: Vec<Vec<(f64, f64)>> =
            buckets.values().map(|bs| values(bs, width_s, *f)).collect();
        let mark = if j == 0 { Mark::Line } else { Mark::Dashed };
        if n <= 1 || per.iter().all(|p| *p == per[0]) {
            out.push(Series {
                label: if n > 1 {
                    format!("{label} (each of {n} replicas)")
                } else {
                    label.to_string()
                },
                points: per.into_iter().next().unwrap_or_default(),
                color: j,
                mark,
            });
        } else if n > MAX_REPLICA_LINES {
            let (mean, max) = mean_and_max(&per);
            out.push(Series {
                label: format!("{label} (mean of {n} replicas)"),
                points: mean,
                color: 2 * j,
                mark: Mark::Line,
            });
            out.push(Series {
                label: format!("{label} (max of {n} replicas)"),
                points: max,
                color: 2 * j + 1,
                mark: Mark::Dashed,
            });
        } else {
            for (k, (replica, points)) in buckets.keys().zip(per).enumerate() {
                out.push(Series {
                    label: format!("{label} (replica {replica})"),
                    points,
                    color: k * what.len() + j,
                    mark,
                });
            }
        }
    }
    out
}

/// Clips a chart whose top is set by a few outliers (the first prefill burst flattens the
/// tokens-per-step chart): values above 1.5 × the 95th percentile of all points are drawn
/// at that cap and marked by a series of their own, so the typical values fill the chart.
fn clip_outliers(series: &mut Vec<Series>) {
    let mut all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if all.len() < 20 {
        return;
    }
    all.sort_by(f64::total_cmp);
    let cap = 1.5 * all[(all.len() * 95 / 100).min(all.len() - 1)];
    let max = all[all.len() - 1];
    if max <= cap {
        return;
    }
    let mut clipped = Vec::new();
    for s in series.iter_mut() {
        for p in s.points.iter_mut().filter(|p| p.1 > cap) {
            p.1 = cap;
            clipped.push(*p);
        }
    }
    series.push(Series {
        label: format!(
            "clipped at {} (peak {})",
            super::charts::compact(cap),
            super::charts::compact(max)
        ),
        points: clipped,
        color: 3,
        mark: Mark::Points,
    });
}

fn mean(total: f64, b: &Bucket) -> Option<f64> {
    (b.weight > 0.0).then(|| total / b.weight)
}

fn per_step(total: f64, b: &Bucket) -> Option<f64> {
    (b.steps > 0.0).then(|| total / b.steps)
}

/// The charts: `(file stem, chart)`.
pub fn charts(samples: &[Sample]) -> Vec<(&'static str, LineChart)> {
    let (w, buckets) = bucketize(samples);
    let time = || Scale::linear("time (s)");
    let chart = |title: &str, y: &str, what: &[Measure]| LineChart {
        title: title.into(),
        x: time(),
        y: Scale::linear(y),
        series: series(&buckets, w, what),
    };
    vec![
        (
            "requests",
            chart(
                "Running and queued requests",
                "requests (count)",
                &[
                    ("running", |b, _| mean(b.running, b)),
                    ("queued", |b, _| mean(b.waiting, b)),
                ],
            ),
        ),
        ("batch_tokens", {
            let mut c = chart(
                "Tokens per batch",
                "tokens per step (tokens)",
                &[
                    ("decode", |b, _| per_step(b.decode, b)),
                    ("prefill", |b, _| per_step(b.prefill, b)),
                ],
            );
            clip_outliers(&mut c.series);
            c
        }),
        (
            "kv_usage",
            chart(
                "KV cache usage",
                "% of the KV pool",
                &[("KV used", |b, _| mean(b.kv_frac * 100.0, b))],
            ),
        ),
        (
            "throughput",
            chart(
                "Token throughput",
                "throughput (tokens/s)",
                &[
                    ("decode (output) tok/s", |b, w| Some(b.decode / w)),
                    ("prefill tok/s", |b, w| Some(b.prefill / w)),
                ],
            ),
        ),
    ]
}

/// Writes the CSV to `csv_path` and the charts to `plot_dir/<stem>.svg`, each if given.
pub fn write(samples: &[Sample], csv_path: Option<&Path>, plot_dir: Option<&Path>) -> Result<()> {
    if let Some(p) = csv_path {
        std::fs::write(p, csv(samples)).map_err(|e| Error::io_write(p, e))?;
    }
    if let Some(dir) = plot_dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::io_write(dir, e))?;
        for (stem, c) in charts(samples) {
            let p = dir.join(format!("{stem}.svg"));
            std::fs::write(&p, c.svg()).map_err(|e| Error::io_write(&p, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: u64, replica: u32, running: u64) -> Sample {
        Sample {
            time_ns: t,
            duration_ns: 1_000_000,
            replica,
            running,
            waiting: 2,
            prefill_tokens: 0,
            decode_tokens: running,
            kv_used_tokens: 50,
            kv_capacity_tokens: 100,
        }
    }

    #[test]
    fn csv_and_charts() {
        let s: Vec<Sample> = (0..1000)
            .map(|i| sample(i * 1_000_000, (i % 2) as u32, i % 7))
            .collect();
        let text = csv(&s);
        assert_eq!(text.lines().count(), 1001);
        assert!(text.starts_with(CSV_HEADER));
        assert_eq!(
            text.lines().nth(2).unwrap(),
            "1000000,1000000,1,1,2,0,1,50,100"
        );
        let charts = charts(&s);
        assert_eq!(charts.len(), 4);
        let kv = &charts[2].1.series;
        // Both replicas hold half the pool throughout: one line for the two.
        assert_eq!(kv.len(), 1, "identical replicas collapse");
        assert_eq!(kv[0].label, "KV used (each of 2 replicas)");
        assert!(kv[0].points.iter().all(|p| (p.1 - 50.0).abs() < 1e-9));
        // Their running counts differ: one line per replica (two ≤ MAX_REPLICA_LINES).
        assert!(charts[0].1.svg().contains("running (replica 1)"));
    }

    #[test]
    fn many_or_identical_replicas_collapse_and_a_prefill_spike_is_clipped() {
        // 8 replicas: mean and max, not 8 lines per quantity.
        let s: Vec<Sample> = (0..4000)
            .map(|i| sample(i * 1_000_000, (i % 8) as u32, 1 + (i / 8) % 5 + (i % 8) / 4))
            .collect();
        let c = charts(&s);
        let labels: Vec<&str> = c[2].1.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["KV used (each of 8 replicas)"],
            "identical KV usage: one line"
        );
        let req: Vec<&str> = c[0].1.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            req,
            [
                "running (mean of 8 replicas)",
                "running (max of 8 replicas)",
                "queued (each of 8 replicas)"
            ]
        );
        // One prefill burst of 8192 tokens among decode steps of ≈ 3 tokens: clipped at
        // 1.5 × the 95th percentile, and marked.
        let mut s: Vec<Sample> = (0..1000).map(|i| sample(i * 1_000_000, 0, 3)).collect();
        s[0].prefill_tokens = 8192;
        let c = charts(&s);
        let batch = &c[1].1.series;
        let clipped = batch.last().unwrap();
        assert!(
            clipped.label.starts_with("clipped at 4.5 (peak"),
            "{}",
            clipped.label
        );
        assert_eq!(clipped.points.len(), 1);
        let top = batch
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        assert!(top <= 4.5 + 1e-9, "{top}");
    }
}
