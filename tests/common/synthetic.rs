//! Synthetic calibration runs: manifest-like runs whose "real" values are simulated with known
//! constants, so a fit's answer can be checked against the truth.
use servesim::calibrate::runs::FitRun;
use servesim::simulation::{run, Scenario};
use servesim::spec::hardware::HardwareProfile;
use servesim::spec::workload::ScenarioFile;
use servesim::validate::replay::{LengthSource, Replay};

/// Runs of `workloads` on bundled `hardware` (index `hw` of a joint fit), whose "real" values
/// are simulated with `truth`.
pub fn runs_on(
    hardware: &str,
    hw: usize,
    truth: &HardwareProfile,
    workloads: &[&str],
) -> Vec<FitRun> {
    workloads
        .iter()
        .enumerate()
        .map(|(i, client)| {
            let yaml = format!(
                "hardware: {hardware}\nmodel: qwen3-8b\nserver: {{tp: 1}}\nclient: {client}\n"
            );
            let file: ScenarioFile = serde_norway::from_str(&yaml).unwrap();
            let sc = Scenario::resolve(&file, None, None, &Default::default(), &Default::default())
                .unwrap();
            let mut real_sc = sc.clone();
            real_sc.hardware = truth.clone();
            let m = run(&real_sc).unwrap().metrics;
            FitRun::sglang(
                format!("syn-{hw}-{i}"),
                "qwen3-8b".into(),
                Replay {
                    scenario: sc,
                    lengths: LengthSource::Random,
                    notes: Vec::new(),
                    server_flags: file.server.clone(),
                },
                [m.output_throughput, m.tpot_ms.median, m.ttft_ms.mean],
                false,
                hw,
            )
        })
        .collect()
}
