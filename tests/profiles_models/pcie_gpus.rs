//! The PCIe profiles (l40s-48gb, rtx-pro-6000-96gb): their datasheet figures equal the published
//! numbers divided by hand, the memory SGLang keys its defaults on is what nvidia-smi logs,
//! SGLang 0.5.14's defaults for them are the values read in its source (server_args.py
//! `_handle_gpu_memory_settings`, `_get_default_attn_backend`), an all-reduce over PCIe is
//! priced as SGLang runs it (custom kernel at TP 2 only, NCCL above; hand calculation and the
//! measured AIConfigurator row), and a run is priced by each GPU's own measured tables.
use super::sourced::{assert_sourced, explain_small_run, Sourced};
use super::*;
use servesim::cost::breakdown::Component;
use servesim::cost::BatchShape;
use servesim::simulation::Scenario;
use servesim::spec::hardware::Arch;
use servesim::spec::server::{ServerConfig, ServerFlags};
use servesim::spec::workload::{ClientFlags, ScenarioFile};

const L40S: &str = "l40s-48gb";
const RTX: &str = "rtx-pro-6000-96gb";

/// (profile, field, published number, divisor, source): the profile value must equal
/// `published / divisor`.
const SOURCED: &[Sourced] = &[
    // The datasheet prints dense | sparse*: "BFLOAT16 362.05 | 733*", "FP8 733 | 1,466*".
    (
        L40S,
        "bf16",
        362.05e12,
        1.0,
        "L40S datasheet: 362.05 | 733*",
    ),
    (L40S, "fp8", 733e12, 1.0, "L40S datasheet: 733 | 1,466*"),
    (L40S, "hbm", 864e9, 1.0, "L40S datasheet: 864GB/s"),
    (
        L40S,
        "link",
        64e9,
        2.0,
        "L40S datasheet: PCIe Gen4 x16 64GB/s bidirectional",
    ),
    (
        L40S,
        "total_mib",
        46068.0,
        1.0,
        "nvidia-smi 0MiB / 46068MiB (L40S)",
    ),
    // 188 SMs × 1024 dense BF16 FLOP per SM-clock × 2.43 GHz (the Server Edition's max SM
    // clock, AIConfigurator systems/rtx_pro_6000_server.yaml); FP8 2×, FP4 4× that.
    (
        RTX,
        "bf16",
        188.0 * 1024.0 * 2.43e9,
        1.0,
        "188 SMs x 1024 x 2.43 GHz",
    ),
    (
        RTX,
        "fp8",
        188.0 * 2048.0 * 2.43e9,
        1.0,
        "188 SMs x 2048 x 2.43 GHz",
    ),
    (
        RTX,
        "fp4",
        188.0 * 4096.0 * 2.43e9,
        1.0,
        "188 SMs x 4096 x 2.43 GHz",
    ),
    // 512-bit GDDR7 at 28 Gb/s.
    (RTX, "hbm", 512.0 * 28e9, 8.0, "512-bit x 28 Gb/s / 8 bits"),
    (
        RTX,
        "link",
        128e9,
        2.0,
        "PCIe Gen5 x16 128 GB/s bidirectional",
    ),
    (
        RTX,
        "total_mib",
        97887.0,
        1.0,
        "nvidia-smi 97,887 MiB (Server Edition)",
    ),
];

#[test]
fn pcie_profiles_carry_the_published_figures() {
    // The RTX tensor rates are printed to 0.1 TFLOPS in the profile (467.8e12).
    assert_sourced(SOURCED, 1e-4);
    let (l40s, rtx) = (load_hardware(L40S).unwrap(), load_hardware(RTX).unwrap());
    assert_eq!(l40s.arch, Arch::Ada);
    assert_eq!(rtx.arch, Arch::Sm120);
    // Neither board has NVLink; every SXM profile does.
    assert!(!Arch::Ada.has_nvlink() && !Arch::Sm120.has_nvlink());
    assert!(Arch::Hopper.has_nvlink() && Arch::Blackwell.has_nvlink());
}

/// SGLang 0.5.14 `_handle_gpu_memory_settings`, by hand. Tiers: 46068 MiB < 60 GiB gives
/// chunk 4096 and cuda_graph_max_bs 32 (tp < 4) or 160; 97887 MiB in [90, 160) GiB gives 8192
/// and 256 or 512. Reserved MiB = 512 + 1.5 × chunk + 2 × max_bs + tp / 8 × 1024 + 8 × (piecewise
/// prefill graph sizes: 50 up to 4096 tokens, 58 up to 8192), at least 10240 above 60 GiB;
/// mem_fraction_static = round((gpu_mem − reserved) / gpu_mem, 3).
#[test]
fn sglang_0_5_14_defaults_on_the_pcie_gpus_are_the_source_values() {
    let model = load_model("qwen3-8b").unwrap();
    // (profile, tp, chunk, max_bs, mem_fraction_static by hand)
    let cases = [
        // 512 + 6144 + 64 + 128 + 400 = 7248; (46068 − 7248) / 46068 = 0.84267
        (L40S, 1, 4096, 32, 0.843),
        // 512 + 6144 + 64 + 256 + 400 = 7376; 38692 / 46068 = 0.83989
        (L40S, 2, 4096, 32, 0.840),
        // 512 + 6144 + 320 + 512 + 400 = 7888; 38180 / 46068 = 0.82877
        (L40S, 4, 4096, 160, 0.829),
        // 512 + 12288 + 512 + 128 + 464 = 13904; 83983 / 97887 = 0.85796
        (RTX, 1, 8192, 256, 0.858),
        // 512 + 12288 + 1024 + 512 + 464 = 14800; 83087 / 97887 = 0.84880
        (RTX, 4, 8192, 512, 0.849),
        // 512 + 12288 + 1024 + 1024 + 464 = 15312; 82575 / 97887 = 0.84357
        (RTX, 8, 8192, 512, 0.844),
    ];
    for (name, tp, chunk, max_bs, mfs) in cases {
        let hw = load_hardware(name).unwrap();
        let flags = ServerFlags {
            tp: Some(tp),
            sglang_version: Some("0.5.14".parse().unwrap()),
            ..Default::default()
        };
        let sc = ServerConfig::resolve(&flags, &hw, &model).unwrap();
        assert_eq!(sc.chunked_prefill_size, Some(chunk), "{name} tp {tp}");
        assert_eq!(
            sc.cuda_graph_batch_sizes.iter().max(),
            Some(&max_bs),
            "{name} tp {tp}"
        );
        assert_eq!(sc.mem_fraction_static, mfs, "{name} tp {tp}");
        // Neither Hopper nor sm100: flashinfer for an MHA model.
        assert_eq!(sc.attention_backend, "flashinfer", "{name}");
    }
    // gpt-oss: triton off sm90 / sm100 (its own branch in server_args.py).
    let gpt_oss = load_model("gpt-oss-20b").unwrap();
    for name in [L40S, RTX] {
        let flags = ServerFlags {
            sglang_version: Some("0.5.14".parse().unwrap()),
            ..Default::default()
        };
        let sc = ServerConfig::resolve(&flags, &load_hardware(name).unwrap(), &gpt_oss).unwrap();
        assert_eq!(sc.attention_backend, "triton", "{name}");
    }
}

/// qwen3-8b (36 layers, hidden 4096) on `hw` at `tp` under `backend`, eager decode of 8
/// requests: the all-reduce time of one step (two per layer), ns.
fn all_reduce_ns(hw: &str, tp: u64, backend: &str, graph: bool) -> f64 {
    let flags = ServerFlags {
        tp: Some(tp),
        cost_model: Some(backend.into()),
        ..Default::default()
    };
    let sc = Scenario::resolve(
        &ScenarioFile::default(),
        Some(hw),
        Some("qwen3-8b"),
        &flags,
        &ClientFlags::default(),
    )
    .unwrap();
    let shape = BatchShape {
        decode_reqs: 8,
        decode_ctx_sum: 8 * 1024,
        graph_bs: graph.then_some(8),
        ..Default::default()
    };
    let b = sc.step_cost().unwrap().explain(&shape);
    b.items
        .iter()
        .filter(|i| i.component == Component::AllReduce)
        .map(|i| i.time_ns)
        .sum()
}

/// 8 tokens × 4096 × 2 bytes = 65536 bytes per all-reduce, 72 per step. Roofline on L40S
/// (PCIe 32 GB/s): at TP 4 SGLang's custom kernel is off (more than two PCIe-only GPUs), so
/// NCCL's ring: 3 peers × 3230 ns + 1.5 × 65536 B / (32 GB/s × 0.63); at TP 2 the custom
/// kernel: 5400 ns + 65536 B / (32 GB/s × 0.57). Measured kernels: AIConfigurator's l40s
/// all-reduce row at 4 GPUs, graph lane, 32768 elements: 38.73 µs.
#[test]
fn pcie_all_reduce_is_priced_as_sglang_runs_it() {
    let ring = 72.0 * (3.0 * 3230.0 + 1.5 * 65536.0 / (32e9 * 0.63) * 1e9);
    let got = all_reduce_ns(L40S, 4, "roofline", false);
    assert!((got - ring).abs() < 1.0, "tp 4 roofline {got} != {ring}");
    let custom = 72.0 * (5400.0 + 65536.0 / (32e9 * 0.57) * 1e9);
    let got = all_reduce_ns(L40S, 2, "roofline", false);
    assert!(
        (got - custom).abs() < 1.0,
        "tp 2 roofline {got} != {custom}"
    );
    let table = 72.0 * 38.73e3;
    let got = all_reduce_ns(L40S, 4, "kernels", true);
    assert!(
        (got - table).abs() < 1e-3 * table,
        "tp 4 kernels {got} != {table}"
    );
}

#[test]
fn a_qwen3_8b_run_on_each_pcie_gpu_is_priced_by_its_own_tables() {
    for (hw, tables) in [(L40S, "l40s"), (RTX, "rtx_pro_6000_server")] {
        let out = explain_small_run(hw, "qwen3-8b", "2");
        assert!(out.contains(&format!("2 × {hw} (tp 2)")), "{out}");
        assert!(out.contains("attention_backend=flashinfer"), "{out}");
        assert!(
            out.contains(&format!("kernels {tables} sglang 0.5.14")),
            "{out}"
        );
    }
}
