//! The benchmark client's send cost (issue 12): it belongs to the client, caps a run at the
//! client's send rate, a run it limits says so in one line, and `plan`/`sweep` price the
//! server with an ideal client unless told otherwise.
mod common;
use common::servesim;
use servesim::simulation::{run, RunOutput};
use servesim::spec::server::ServerFlags;
use servesim::spec::workload::ClientFlags;

/// qwen2.5-0.5b on `dp` H100 replicas, `n` requests of 64/16 tokens at `rate` req/s.
fn simulate(dp: u64, n: u64, rate: f64, extra: ClientFlags) -> RunOutput {
    let client = ClientFlags {
        num_prompts: Some(n),
        random_input_len: Some(64),
        random_output_len: Some(16),
        random_range_ratio: Some(1.0),
        request_rate: Some(rate),
        ..extra
    };
    let server = ServerFlags {
        dp: Some(dp),
        ..Default::default()
    };
    run(&common::small_h100_scenario(&server, &client)).unwrap()
}

fn client_bound(out: &RunOutput) -> Vec<&String> {
    out.notes
        .iter()
        .filter(|n| n.starts_with("client-bound"))
        .collect()
}

#[test]
fn a_client_limited_run_says_so_once_and_an_ideal_client_lifts_the_cap() {
    // 2000 req/s offered to 16 replicas; bench_serving 0.5.6.post2 sends one request per
    // 2.5 ms, at most 400 req/s.
    let real = simulate(16, 4000, 2000.0, ClientFlags::default());
    let rps = real.metrics.request_throughput;
    assert!(rps < 400.0 && rps > 300.0, "{rps} req/s");
    assert_eq!(client_bound(&real).len(), 1, "{:?}", real.notes);
    let ideal = simulate(
        16,
        4000,
        2000.0,
        ClientFlags {
            client_model: Some(servesim::client::send::ClientModel::Ideal),
            ..Default::default()
        },
    );
    assert!(
        ideal.metrics.request_throughput > 3.0 * rps,
        "{} req/s",
        ideal.metrics.request_throughput
    );
    assert!(client_bound(&ideal).is_empty(), "{:?}", ideal.notes);
    // A slower send (--client-send-us 5000) halves the cap.
    let slow = simulate(
        16,
        4000,
        2000.0,
        ClientFlags {
            client_send_us: Some(5000.0),
            ..Default::default()
        },
    );
    let slow_rps = slow.metrics.request_throughput;
    assert!(slow_rps < 200.0 && slow_rps > 150.0, "{slow_rps} req/s");
}

#[test]
fn a_server_limited_run_is_not_called_client_bound() {
    // One replica at 20 req/s keeps the client's loop busy 2.5 ms in every 50 ms.
    let out = simulate(1, 200, 20.0, ClientFlags::default());
    assert!(client_bound(&out).is_empty(), "{:?}", out.notes);
}

#[test]
fn cli_run_prints_the_client_bound_line_and_plan_says_which_client() {
    let args = [
        "--model",
        "qwen2.5-0.5b",
        "--dp",
        "16",
        "--num-prompts",
        "2000",
        "--random-input-len",
        "64",
        "--random-output-len",
        "16",
        "--random-range-ratio",
        "1",
    ];
    let (code, _, err) = servesim(&[&["run", "--request-rate", "2000"][..], &args[..]].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("note: client-bound"))
            .count(),
        1,
        "{err}"
    );
    let plan = |extra: &[&str]| {
        let mut a = vec![
            "plan",
            "--quiet",
            "--hardware",
            "h100-sxm5-80gb",
            "--target-rate",
            "1000",
            "--slo-ttft-p99",
            "2000",
        ];
        a.extend_from_slice(&args);
        a.extend_from_slice(extra);
        servesim(&a)
    };
    let (code, out, err) = plan(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("client: ideal"), "{out}");
    // With the ideal client 16 replicas of a 0.5B model serve 1000 req/s; the real client
    // (at most 400 req/s) cannot.
    assert!(out.contains("best: h100-sxm5-80gb"), "{out}");
    let (_, out_real, _) = plan(&["--client-model", "real"]);
    assert!(
        out_real.starts_with("client: --client-model real"),
        "{out_real}"
    );
    assert!(!out_real.contains("best: h100-sxm5-80gb"), "{out_real}");
}
