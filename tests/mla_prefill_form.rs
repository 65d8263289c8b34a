//! SGLang's MLA prefill form (`cost::kernels::mla_form`) against independent numbers: the FLOP
//! of DeepSeek's two attention forms, SGLang's per-batch dispatch (deepseek_v2.py, 0.4.1 /
//! 0.4.7 / 0.5.3 wheels) and another measured FA3 kernel. Hopper's `context_mla` table times
//! the absorbed form (576 / 512 dims, AIConfigurator's collector on `fa3`); a prefill without
//! a prefix runs MHA (192 / 128), 640 / 2176 of the FLOP.
use servesim::cost::breakdown::Component;
use servesim::cost::kernels::db::KernelDb;
use servesim::cost::kernels::mla_form::{Form, MlaPrefill};
use servesim::cost::kernels::KernelCost;
use servesim::cost::{BatchShape, StepCost};
use servesim::simulation::Scenario;
use servesim::spec::server::ServerFlags;
use servesim::spec::workload::{ClientFlags, ScenarioFile};

fn scenario(hw: &str, version: &str, backend: Option<&str>) -> Scenario {
    scenario_with(hw, version, backend, ServerFlags::default())
}

fn scenario_with(hw: &str, version: &str, backend: Option<&str>, base: ServerFlags) -> Scenario {
    let flags = ServerFlags {
        tp: Some(8),
        sglang_version: Some(version.parse().unwrap()),
        attention_backend: backend.map(String::from),
        ..base
    };
    Scenario::resolve(
        &ScenarioFile::default(),
        Some(hw),
        Some("deepseek-v3"),
        &flags,
        &ClientFlags::default(),
    )
    .unwrap()
}

fn rules(hw: &str, version: &str, backend: Option<&str>) -> MlaPrefill {
    let sc = scenario(hw, version, backend);
    MlaPrefill::of(&sc.hardware, &sc.model, &sc.server).unwrap()
}

/// The rules with `--disable-chunked-prefix-cache` (`disable`) and the env threshold.
fn rules_with(version: &str, backend: &str, disable: bool, threshold: Option<u64>) -> MlaPrefill {
    let base = ServerFlags {
        disable_chunked_prefix_cache: disable,
        sgl_chunked_prefix_cache_threshold: threshold,
        ..Default::default()
    };
    let hw = if backend == "trtllm_mla" {
        "b200-sxm-180gb"
    } else {
        "h200-sxm-141gb"
    };
    let sc = scenario_with(hw, version, Some(backend), base);
    MlaPrefill::of(&sc.hardware, &sc.model, &sc.server).unwrap()
}

/// The H200's own tables (no cross-GPU envelope), SGLang 0.5.3 (fa3), DeepSeek-V3 TP8.
fn h200_cost() -> KernelCost {
    let sc = scenario("h200-sxm-141gb", "0.5.3", None);
    assert_eq!(sc.server.attention_backend, "fa3");
    let db = KernelDb::bundled("h200_sxm", sc.server.version).unwrap();
    KernelCost::new(&sc.hardware, &sc.model, &sc.server, &db).unwrap()
}

/// Attention time (ms) of one prefill of `extend` tokens over `prefix` cached ones.
fn attention_ms(k: &KernelCost, extend: u64, prefix: u64) -> f64 {
    let mut s = BatchShape::default();
    s.add_prefill(extend, prefix, None);
    k.explain(&s)
        .items
        .iter()
        .filter(|i| i.component == Component::Attention)
        .map(|i| i.time_ns)
        .sum::<f64>()
        / 1e6
}

#[test]
fn dispatch_follows_sglang_per_backend() {
    // fa3 (0.5.3 `_handle_attention_backend`): MHA at Σ prefix 0 or ≥ 8192, absorbed between.
    let fa3 = rules("h200-sxm-141gb", "0.5.3", None);
    assert_eq!(fa3.table, Form::Absorbed);
    assert_eq!(fa3.form(0), Form::Mha);
    assert_eq!(fa3.form(8191), Form::Absorbed);
    assert_eq!(fa3.form(8192), Form::Mha);
    // MHA looked up in the absorbed table: √((192 + 128) / (576 + 512)).
    assert!((fa3.len_factor(0) - (320.0_f64 / 1088.0).sqrt()).abs() < 1e-12);
    assert_eq!(fa3.len_factor(100), 1.0);
    assert_eq!(fa3.kv_b_rows(0), 0.0);
    assert_eq!(fa3.kv_b_rows(100), 0.0); // absorbed: no up-projection of the prefix
    assert_eq!(fa3.kv_b_rows(20000), 20000.0);
    // triton on Hopper (0.4.1's only MLA path): MHA only without a prefix.
    let tri = rules("h200-sxm-141gb", "0.4.1", None);
    assert_eq!(tri.form(0), Form::Mha);
    assert_eq!(tri.form(20000), Form::Absorbed);
    // B200's table is the MHA form (trtllm_mla collector); 0.5.6+ runs trtllm_mla: always MHA.
    let trt = rules("b200-sxm-180gb", "0.5.6", None);
    assert_eq!(trt.table, Form::Mha);
    assert_eq!(trt.len_factor(0), 1.0);
    assert_eq!(trt.len_factor(100), 1.0);
    // 0.4.7 flashinfer on B200: a cached prefix runs absorbed, 2176 / 640 the FLOP per pair.
    let fi = rules("b200-sxm-180gb", "0.4.7", Some("flashinfer"));
    assert_eq!(fi.form(0), Form::Mha);
    assert!((fi.len_factor(100) - (1088.0_f64 / 320.0).sqrt()).abs() < 1e-12);
}

#[test]
fn hopper_mha_prefill_runs_at_fa3s_measured_rate() {
    // Independent measurement: AIConfigurator 0.12.0's H200 SGLang `context_attention` fa3 row,
    // 16 query heads, 1 KV head, head_dim 192, one 8192-token prompt: 602.1 µs for
    // 2·(192 + 192) FLOP per pair and head. DeepSeek's MHA form is 2·(192 + 128): 501.8 µs a
    // layer, × 61 layers = 30.6 ms at the same FLOP rate.
    let want_ms = 602.1e-3 * (192.0 + 128.0) / (192.0 + 192.0) * 61.0;
    let got = attention_ms(&h200_cost(), 8192, 0);
    assert!(
        (got / want_ms - 1.0).abs() < 0.20,
        "{got:.1} ms against {want_ms:.1} ms at FA3's measured rate"
    );
}

#[test]
fn a_cached_prefix_adds_its_pairs_and_form() {
    let k = h200_cost();
    let first = attention_ms(&k, 8192, 0);
    // Σ prefix 8192 ≥ the threshold: still MHA; 8192 · (8192 + 4096) pairs, 3× the first
    // chunk's 8192² / 2, plus kv_b_proj over 8192 prefix rows (2 · 8192 · 512 · 4096 FLOP a
    // layer: 1% of the attention's 8192 · 12288 · 16 · 640).
    let second = attention_ms(&k, 8192, 8192);
    assert!((2.8..3.4).contains(&(second / first)), "{second} / {first}");
    // Σ prefix 4096 < 8192: absorbed, 8192 · (4096 + 4096) pairs (2× the first chunk) at
    // 2176 / 640 the FLOP per pair: 6.8× (the table's own rate at that length).
    let absorbed = attention_ms(&k, 8192, 4096);
    assert!(
        (5.8..7.8).contains(&(absorbed / first)),
        "{absorbed} / {first}"
    );
}

#[test]
fn the_chunked_prefix_cache_settings_change_the_form_as_each_release_reads_them() {
    // Read in the sglang wheels (deepseek_v2.py; model_runner.py), not in servesim.
    // 0.4.7–0.4.10 fa3: the `== 0` test sits inside `not disable_chunked_prefix_cache`, so with
    // the cache off every extend is absorbed, even without a prefix.
    let old = rules_with("0.4.10", "fa3", true, None);
    assert_eq!(old.form(0), Form::Absorbed);
    assert_eq!(old.form(20000), Form::Absorbed);
    // 0.4.x also turns the cache off by itself at page size > 1.
    let paged = ServerFlags {
        page_size: Some(64),
        ..Default::default()
    };
    let sc = scenario_with("h200-sxm-141gb", "0.4.10", Some("fa3"), paged);
    let r = MlaPrefill::of(&sc.hardware, &sc.model, &sc.server).unwrap();
    assert_eq!(r.form(0), Form::Absorbed);
    // 0.5.1+: with the cache off, MHA only at Σ prefix 0.
    let new = rules_with("0.5.3", "fa3", true, None);
    assert_eq!(new.form(0), Form::Mha);
    assert_eq!(new.form(20000), Form::Absorbed);
    assert_eq!(new.kv_b_rows(20000), 0.0);
    // SGL_CHUNKED_PREFIX_CACHE_THRESHOLD moves the threshold.
    let t = rules_with("0.5.3", "fa3", false, Some(4096));
    assert_eq!(t.form(4095), Form::Absorbed);
    assert_eq!(t.form(4096), Form::Mha);
    // flashinfer joins fa3's rule in 0.5.1 (read in the 0.5.1 wheel), not 0.5.3.
    let fi = rules_with("0.5.1", "flashinfer", false, None);
    assert_eq!(fi.form(100), Form::Absorbed);
    assert_eq!(fi.form(8192), Form::Mha);
    assert_eq!(
        rules_with("0.4.10", "flashinfer", false, None).form(8192),
        Form::Absorbed
    );
    // trtllm_mla: 0.5.2 ignores the flag; 0.5.3+ honours it (MHA only at Σ prefix 0).
    assert_eq!(
        rules_with("0.5.2", "trtllm_mla", true, None).form(100),
        Form::Mha
    );
    let trt = rules_with("0.5.6", "trtllm_mla", true, None);
    assert_eq!(trt.form(0), Form::Mha);
    assert_eq!(trt.form(100), Form::Absorbed);
}
