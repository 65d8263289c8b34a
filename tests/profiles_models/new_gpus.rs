//! The Blackwell profiles added after B200 (b300-sxm-288gb, gb200-186gb): their datasheet
//! figures equal the published system numbers divided by hand (one table), the memory SGLang
//! keys its defaults on is what nvidia-smi logs, SGLang's defaults for them are the values read
//! in its source, and a DeepSeek-V3 TP8 run on B300 is priced by B300's own measured tables.
use super::sourced::{assert_sourced, explain_small_run, Sourced};
use super::*;
use servesim::spec::hardware::Arch;
use servesim::spec::server::{ServerConfig, ServerFlags};

const DGX_B300: &str = "NVIDIA DGX B300 datasheet (Feb 2026, doc 4868000)";
const AIC_B300: &str = "AIConfigurator 0.12.0 systems/b300_sxm.yaml";
const HGX_B300: &str = "HGX B300: up to 8 TB/s per GPU";
const NVL72: &str = "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (72 GPUs)";
const SMI: &str = "nvidia-smi memory.total in public logs";
const B300: &str = "b300-sxm-288gb";
const GB200: &str = "gb200-186gb";

/// Every datasheet figure of the new profiles, with the published number it comes from.
/// DGX / HGX B300 = 8 GPUs: FP8 72 and FP16/BF16 36 PFLOPS with sparsity (dense = half), FP4
/// 108 PFLOPS dense, NVLink 14.4 TB/s (both ways). GB200 NVL72 = 72 GPUs: FP4 1440, FP8 and INT8
/// 720, BF16 360 PFLOPS with sparsity, 576 TB/s HBM, 1.8 TB/s NVLink per GPU both ways.
const SOURCED: &[Sourced] = &[
    (B300, "fp8", 72e15, 16.0, DGX_B300),
    (B300, "bf16", 36e15, 16.0, "HGX B300 spec table"),
    (B300, "int8", 307e12, 2.0, AIC_B300),
    (B300, "fp4", 108e15, 8.0, DGX_B300),
    (B300, "nvlink", 14.4e12, 16.0, DGX_B300),
    (B300, "hbm", 8.0e12, 1.0, HGX_B300),
    (B300, "total_mib", 275040.0, 1.0, SMI),
    (
        B300,
        "inter_node",
        800e9,
        8.0,
        "ConnectX-8 800 Gb/s per GPU",
    ),
    (GB200, "fp8", 720e15, 144.0, NVL72),
    (GB200, "bf16", 360e15, 144.0, NVL72),
    (GB200, "int8", 720e15, 144.0, NVL72),
    (GB200, "fp4", 1440e15, 144.0, NVL72),
    (GB200, "hbm", 576e12, 72.0, NVL72),
    (GB200, "nvlink", 1.8e12, 2.0, NVL72),
    (GB200, "total_mib", 189471.0, 1.0, SMI),
];

#[test]
fn new_blackwell_profiles_carry_the_published_figures() {
    assert_sourced(SOURCED, 1e-9);
    // SGLang's sm100 branches test the compute-capability major only (10 for sm100 and sm103).
    for name in [B300, GB200] {
        assert_eq!(load_hardware(name).unwrap().arch, Arch::Blackwell, "{name}");
    }
}

/// SGLang 0.5.9 `_handle_gpu_memory_settings` (server_args.py), by hand: ≥ 160 GiB gives chunk
/// 16384 and cuda_graph_max_bs 512; reserved MiB = 512 + 1.5 × 16384 + 2 × 512 + tp / 8 × 1024
/// (at least 10240), mem_fraction_static = round((gpu_mem − reserved) / gpu_mem, 3).
#[test]
fn sglang_0_5_9_defaults_on_b300_and_gb200_are_the_source_values() {
    let model = load_model("qwen3-8b").unwrap();
    // (profile, tp, mem_fraction_static by hand)
    let cases = [
        // (275040 − 26240) / 275040 = 0.90460
        ("b300-sxm-288gb", 1, 0.905),
        // (275040 − 27136) / 275040 = 0.90134
        ("b300-sxm-288gb", 8, 0.901),
        // (189471 − 26240) / 189471 = 0.86151
        ("gb200-186gb", 1, 0.862),
        // (189471 − 26624) / 189471 = 0.85948
        ("gb200-186gb", 4, 0.859),
    ];
    for (name, tp, mfs) in cases {
        let hw = load_hardware(name).unwrap();
        let flags = ServerFlags {
            tp: Some(tp),
            sglang_version: Some("0.5.9".parse().unwrap()),
            ..Default::default()
        };
        let sc = ServerConfig::resolve(&flags, &hw, &model).unwrap();
        assert_eq!(sc.chunked_prefill_size, Some(16384), "{name} tp {tp}");
        assert_eq!(
            sc.cuda_graph_batch_sizes.iter().max(),
            Some(&512),
            "{name} tp {tp}"
        );
        assert_eq!(sc.mem_fraction_static, mfs, "{name} tp {tp}");
        // sm100 with SGLang 0.5.6.post1+: trtllm_mha for an MHA model (A.6), page 64.
        assert_eq!(sc.attention_backend, "trtllm_mha", "{name}");
    }
}

#[test]
fn deepseek_v3_tp8_on_b300_is_priced_by_the_b300_tables() {
    let out = explain_small_run("b300-sxm-288gb", "deepseek-v3", "8");
    assert!(out.contains("8 × b300-sxm-288gb (tp 8)"), "{out}");
    assert!(out.contains("attention_backend=trtllm_mla"), "{out}");
    assert!(out.contains("kernels b300_sxm sglang 0.5.14"), "{out}");
    assert!(out.contains("generation_mla"), "{out}");
}
