//! The benchmark client's own cost of sending a request, and when it, not the server, sets the
//! pace.
//!
//! bench_serving runs one single-threaded asyncio loop: creating an aiohttp session and posting
//! one request keeps it busy for a few milliseconds (`send_ns`), so a burst of N sends takes N
//! times that, and the loop can never send faster than 1 / `send_ns` requests per second. This
//! is a property of the client machine and bench_serving, not of the GPU, so it lives here
//! (it used to sit in the hardware profiles as `overheads.client_send_ns`).
//!
//! `--client-model ideal` prices sends at zero (what capacity planning wants: the server's
//! limits, not the benchmark client's); `real` (the default of `run`, `replay` and `validate`)
//! uses [`bench_serving_send_ns`] or `--client-send-us`.
use crate::spec::version::Version;
pub use crate::spec::workload::ClientModel;

/// CPU time of bench_serving's loop to create a session and send one request, ns, by
/// bench_serving version. Every version since 0.3 opens a new `aiohttp.ClientSession` per
/// request from its one asyncio loop; the cost is mostly the client machine's, so the two
/// values are the two recorded clients', not a known code change (pass `--client-send-us` for
/// yours):
/// - before 0.5.6: 3.333 ms, fitted on the 16 A100 runs of seed 003 (bench_serving 0.5.1
///   layout; rate inf with 2000–10000 prompts, whose TTFTs include the send burst) when the
///   constant still sat in the A100 profile;
/// - 0.5.6 and later: 2.5 ms, the initial judgement the other profiles carried; seed 001
///   (bench_serving ≥ 0.5.6.post2) sends 200 requests within its 0.59 s run, which bounds it
///   below ≈ 2.95 ms.
///
/// Plausible range 0.5–10 ms (one Python coroutine, session set-up and an HTTP POST).
pub fn bench_serving_send_ns(bench_version: Version) -> f64 {
    if bench_version < Version::new(0, 5, 6) {
        3.333e6
    } else {
        2.5e6
    }
}

/// Client send cost of one request, ns, for a model, an optional override (µs) and the bench
/// version.
pub fn send_ns(model: ClientModel, override_us: Option<f64>, bench_version: Version) -> f64 {
    match model {
        ClientModel::Ideal => 0.0,
        ClientModel::Real => override_us
            .map(|us| us * 1e3)
            .unwrap_or_else(|| bench_serving_send_ns(bench_version)),
    }
}

/// Share of the benchmark's duration the client's loop must spend sending for a run to count
/// as client-bound. The loop is a single server with a fixed service time: busy ≥ 80% of the
/// run, it is the busiest resource, its queue backs up (an M/D/1 queue at ρ = 0.8 already holds
/// 1.6 requests waiting on average, far more in bursts) and requests reach the server at the
/// client's pace, not the offered rate, so the client, not the server, sets the throughput.
/// A server-bound run keeps the loop mostly idle (seed 003: 8% of the run at rate inf).
pub const CLIENT_BOUND_BUSY_SHARE: f64 = 0.8;

/// One line saying the client limited throughput, when sending `requests` requests at
/// `send_ns` each kept the client's loop busy for at least [`CLIENT_BOUND_BUSY_SHARE`] of the
/// benchmark's `duration_s`; `None` otherwise (always for an ideal client).
pub fn client_bound_note(send_ns: f64, requests: u64, duration_s: f64) -> Option<String> {
    if send_ns <= 0.0 || !(duration_s.is_finite() && duration_s > 0.0) {
        return None;
    }
    let busy_s = requests as f64 * send_ns / 1e9;
    let share = busy_s / duration_s;
    (share >= CLIENT_BOUND_BUSY_SHARE).then(|| {
        format!(
            "client-bound: the benchmark client spent {busy_s:.1} s of the {duration_s:.1} s run \
             sending ({:.0}%; {:.3} ms per request, at most {:.0} req/s), so it, not the server, \
             limited throughput (--client-model ideal or --client-send-us to change it)",
            100.0 * share,
            send_ns / 1e6,
            1e9 / send_ns
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_sends_for_free_and_override_is_in_microseconds() {
        let v = Version::NEWEST;
        assert_eq!(send_ns(ClientModel::Ideal, Some(5000.0), v), 0.0);
        assert_eq!(send_ns(ClientModel::Real, Some(1500.0), v), 1.5e6);
        assert_eq!(send_ns(ClientModel::Real, None, v), 2.5e6);
        assert_eq!(
            send_ns(ClientModel::Real, None, Version::new(0, 5, 1)),
            3.333e6
        );
    }

    #[test]
    fn client_bound_when_sending_fills_80_percent_of_the_run() {
        // 1000 requests at 2 ms: 2 s of sending.
        assert!(client_bound_note(2e6, 1000, 2.5).is_some()); // exactly 80%
        assert!(client_bound_note(2e6, 1000, 2.6).is_none());
        assert!(client_bound_note(0.0, 1000, 0.1).is_none());
        assert!(client_bound_note(2e6, 1000, 0.0).is_none());
        let line = client_bound_note(2e6, 1000, 2.1).unwrap();
        assert!(
            !line.contains('\n') && line.contains("95%") && line.contains("500 req/s"),
            "{line}"
        );
    }
}
