//! The command lines of a PD deployment: one `python -m sglang.launch_server` per prefill and
//! decode server (`--disaggregation-mode prefill|decode`, the transfer backend, the
//! bootstrap port), each pinned to its side's resolved settings like a colocated server
//! (`launch::sglang_launch_server`), then the PD router. Flags as the deployment's SGLang
//! version spells them (reference sglang-specdec-pd.md §2.1–2.3):
//!
//! - `--disaggregation-transfer-backend` exists from 0.4.5.post1 (before, the stub moved no
//!   KV); `mooncake` is its default and what the `pd_transfer` NIC models;
//! - the prefill server names the decode side's TP/DP (`--disaggregation-decode-tp/-dp`) when
//!   they differ from its own, 0.4.8 to 0.5.9 (removed in 0.5.10);
//! - `--num-reserved-decode-tokens` (0.4.8+) when not the default 512;
//! - a decode server with `--dp > 1` needs `--prefill-round-robin-balance` in 0.5.2–0.5.7;
//! - the router is the Rust `sglang_router.launch_router --pd-disaggregation` from 0.4.8,
//!   before it `sglang.srt.disaggregation.mini_lb` (comma-separated URL lists).
//!
//! Hosts are placeholders (`PREFILL_0_IP`, `DECODE_0_IP`, …); each server listens on 30000
//! and the prefill servers bootstrap on 8998 (SGLang's default).
use super::launch::{render, sglang_launch_server, Engine, LaunchCommands};
use crate::simulation::Scenario;
use crate::spec::pd::{PdConfig, PdSide, DEFAULT_RESERVED_DECODE_TOKENS};
use crate::spec::server::LoadBalanceMethod;
use crate::spec::version::Version;

/// Port every server of the rendered deployment listens on.
const SERVER_PORT: u16 = 30000;
/// SGLang's `--disaggregation-bootstrap-port` default.
const BOOTSTRAP_PORT: u16 = 8998;
/// The router's port (its default).
const ROUTER_PORT: u16 = 8000;

/// The commands of `sc` for `engine`: [`render`]'s, with a PD deployment's server commands
/// in place of the single server's (SGLang only: PD with vLLM is refused at resolve).
pub fn render_deployment(sc: &Scenario, engine: Engine) -> LaunchCommands {
    let mut l = render(sc, engine);
    if let (Engine::Sglang, Some(pd)) = (engine, &sc.pd) {
        l.server = sglang_pd_commands(sc, pd);
    }
    l
}

/// The commands, one per line: the prefill servers, the decode servers, then the router
/// (multi-node servers: the command of node rank 0).
pub fn sglang_pd_commands(sc: &Scenario, pd: &PdConfig) -> String {
    let v = pd.prefill.server.version;
    let mut lines = Vec::new();
    for k in 0..pd.prefill.replicas {
        lines.push(server(sc, pd, &pd.prefill, "prefill", k, v));
    }
    for k in 0..pd.decode.replicas {
        lines.push(server(sc, pd, &pd.decode, "decode", k, v));
    }
    lines.push(router(pd, v));
    lines.join("\n")
}

fn host(mode: &str, k: u64) -> String {
    format!("{}_{k}_IP", mode.to_uppercase())
}

/// `launch_server` for server `k` of one side.
fn server(sc: &Scenario, pd: &PdConfig, side: &PdSide, mode: &str, k: u64, v: Version) -> String {
    let mut one = sc.clone();
    one.server = side.server.clone();
    one.hardware = side.hardware.clone();
    let h = host(mode, k);
    let mut l = sglang_launch_server(&one).replace("HEAD_NODE_IP", &h);
    let mut arg = |s: String| {
        l.push(' ');
        l.push_str(&s);
    };
    arg(format!("--disaggregation-mode {mode}"));
    if v >= Version::post(0, 4, 5, 1) {
        arg("--disaggregation-transfer-backend mooncake".into());
    }
    arg(format!("--host {h} --port {SERVER_PORT}"));
    let (p, d) = (&pd.prefill.server, &pd.decode.server);
    if mode == "prefill" {
        arg(format!("--disaggregation-bootstrap-port {BOOTSTRAP_PORT}"));
        let named = Version::new(0, 4, 8) <= v && v < Version::new(0, 5, 10);
        if named && (d.tp, d.dp) != (p.tp, p.dp) {
            arg(format!(
                "--disaggregation-decode-tp {} --disaggregation-decode-dp {}",
                d.tp, d.dp
            ));
        }
    } else {
        if pd.reserved_decode_tokens != DEFAULT_RESERVED_DECODE_TOKENS && v >= Version::new(0, 4, 8)
        {
            arg(format!(
                "--num-reserved-decode-tokens {}",
                pd.reserved_decode_tokens
            ));
        }
        if d.dp > 1 && Version::new(0, 5, 2) <= v && v < Version::new(0, 5, 8) {
            arg("--prefill-round-robin-balance".into());
        }
    }
    l
}

/// The PD router in front of every server.
fn router(pd: &PdConfig, v: Version) -> String {
    let urls = |mode: &str, n: u64| -> Vec<String> {
        (0..n)
            .map(|k| format!("http://{}:{SERVER_PORT}", host(mode, k)))
            .collect()
    };
    let (p, d) = (
        urls("prefill", pd.prefill.replicas),
        urls("decode", pd.decode.replicas),
    );
    if v < Version::new(0, 4, 8) {
        return format!(
            "python -m sglang.srt.disaggregation.mini_lb --prefill {} --decode {} --host 0.0.0.0 --port {ROUTER_PORT}",
            p.join(","),
            d.join(",")
        );
    }
    let mut l = String::from("python -m sglang_router.launch_router --pd-disaggregation");
    for u in &p {
        l.push_str(&format!(" --prefill {u} {BOOTSTRAP_PORT}"));
    }
    for u in &d {
        l.push_str(&format!(" --decode {u}"));
    }
    // servesim's shortest_queue is the router's least-loaded pick (power_of_two).
    let policy = match pd.policy {
        LoadBalanceMethod::RoundRobin => "round_robin",
        LoadBalanceMethod::ShortestQueue => "power_of_two",
    };
    l.push_str(&format!(
        " --policy {policy} --host 0.0.0.0 --port {ROUTER_PORT}"
    ));
    l
}
