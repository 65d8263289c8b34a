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
use serde::{Deserialize, Serialize};

/// Which client the simulation emulates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ClientModel {
    /// bench_serving's single asyncio loop: every send costs `send_ns` of client time.
    #[default]
    Real,
    /// A client that sends instantly (zero send cost): the server alone limits throughput.
    Ideal,
}

impl ClientModel {
    pub fn name(self) -> &'static str {
        match self {
            ClientModel::Real => "real",
            ClientModel::Ideal => "ideal",
        }
    }
}

/// CPU time of bench_serving's loop to create a session and send one request, ns, by
/// bench_serving version. Every version since 0.3 opens a new `aiohttp.ClientSession` per
/// request from the one asyncio loop, so one value covers them all. 3.333 ms is the value fitted
/// on the 16 A100 runs of seed 003 (rate inf, 2000-10000 prompts, whose TTFTs are set by the
/// send burst) when it still sat in the A100 profile; the other profiles carried a 2.5 ms
/// judgement. Plausible range 0.5–10 ms (one Python coroutine, session set-up and an HTTP POST).
pub fn bench_serving_send_ns(_bench_version: Version) -> f64 {
    3.333e6
}

/// Largest `--client-send-us` accepted: 1 s per request.
pub const MAX_SEND_US: f64 = 1e6;

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

/// Fraction of the client's maximum send rate at which a run counts as client-bound. At
/// utilisation ρ ≥ 0.95 the client's send queue (one server, deterministic service) holds on
/// average ρ²/(2(1−ρ)) ≥ 9 requests waiting: requests reach the server at the client's pace,
/// not the offered rate's.
pub const CLIENT_BOUND_UTILISATION: f64 = 0.95;

/// One line saying the client limited throughput, when the achieved request throughput
/// (completed requests / benchmark duration) is at least [`CLIENT_BOUND_UTILISATION`] of the
/// client's maximum send rate 1 / `send_ns`; `None` otherwise (or with an ideal client).
pub fn client_bound_note(send_ns: f64, request_throughput_per_s: f64) -> Option<String> {
    if send_ns <= 0.0 || !request_throughput_per_s.is_finite() {
        return None;
    }
    let max_rate = 1e9 / send_ns;
    (request_throughput_per_s >= CLIENT_BOUND_UTILISATION * max_rate).then(|| {
        format!(
            "client-bound: {request_throughput_per_s:.1} req/s is {:.0}% of the client's maximum \
             send rate ({max_rate:.1} req/s at {:.3} ms per send); the benchmark client, not the \
             server, limits throughput (--client-model ideal or --client-send-us to change it)",
            100.0 * request_throughput_per_s / max_rate,
            send_ns / 1e6
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
        assert_eq!(send_ns(ClientModel::Real, None, v), 3.333e6);
    }

    #[test]
    fn client_bound_at_95_percent_of_the_send_rate() {
        // 2 ms per send: at most 500 req/s; 475 req/s is exactly 95%.
        assert!(client_bound_note(2e6, 475.0).is_some());
        assert!(client_bound_note(2e6, 474.0).is_none());
        assert!(client_bound_note(0.0, 1e9).is_none());
        let line = client_bound_note(2e6, 499.0).unwrap();
        assert!(
            !line.contains('\n') && line.contains("500.0 req/s"),
            "{line}"
        );
    }
}
