//! Datasheet figures of a bundled profile against the published numbers they come from: the
//! rows of `new_gpus.rs` and `pcie_gpus.rs` (profile, field, published number, divisor,
//! source), the profile value equal to `published / divisor`; and the small `--explain` run
//! both files read to see which tables price a new GPU.
use servesim::spec::bundled::load_hardware;
use servesim::spec::hardware::HardwareProfile;

/// (profile, field, published number, divisor, source).
pub type Sourced = (&'static str, &'static str, f64, f64, &'static str);

/// The profile figure `name` names (`link` and `nvlink` are the node link).
pub fn field(hw: &HardwareProfile, name: &str) -> f64 {
    match name {
        "fp8" => hw.peaks.fp8_flops_per_s.unwrap(),
        "bf16" => hw.peaks.bf16_flops_per_s,
        "int8" => hw.peaks.int8_ops_per_s.unwrap(),
        "fp4" => hw.peaks.fp4_flops_per_s.unwrap(),
        "nvlink" | "link" => hw.link.bandwidth_bytes_per_s,
        "hbm" => hw.memory.bandwidth_bytes_per_s,
        "total_mib" => hw.memory.reported_total_mib,
        "inter_node" => hw.link.inter_node_bandwidth_bytes_per_s.unwrap(),
        other => panic!("no field {other}"),
    }
}

/// Every row's profile value equals `published / divisor` within `rel_tol`.
pub fn assert_sourced(rows: &[Sourced], rel_tol: f64) {
    for &(profile, name, published, divisor, source) in rows {
        let hw = load_hardware(profile).unwrap();
        let want = published / divisor;
        let got = field(&hw, name);
        assert!(
            (got - want).abs() <= rel_tol * want,
            "{profile} {name}: {got:e} != {want:e} ({source})"
        );
    }
}

/// `servesim run --explain` of 20 random 500/50 prompts at concurrency 8: its stdout.
pub fn explain_small_run(hardware: &str, model: &str, tp: &str) -> String {
    let (code, out, err) =
        super::common::explain_small(&["--hardware", hardware, "--model", model, "--tp", tp]);
    assert_eq!(code, 0, "{hardware} {model} tp {tp}: {err}");
    out
}
