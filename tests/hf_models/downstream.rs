//! Everything downstream works for the bundled Hugging Face models: every one runs under both
//! cost models without a panic; a model with no ShareGPT table of its own says which table it
//! borrowed; an MoE shape the kernel tables lack is priced by the roofline, and `--explain`
//! says so.
use super::common::servesim;
use servesim::spec::bundled_hf::bundled_hf;

fn run_ok(args: &[&str]) -> (String, String) {
    let (code, out, err) = servesim(args);
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert_eq!(code, 0, "{args:?}: {err}");
    (out, err)
}

#[test]
fn every_bundled_config_runs_under_both_cost_models() {
    for b in bundled_hf() {
        let id = b.hf_id();
        // The widest TP the heads divide (Qwen2.5-1.5B's 12 heads stop at 4).
        let model = b.load().unwrap();
        let tp = [8, 4, 2, 1]
            .into_iter()
            .find(|&t| model.check_tp(t).is_ok())
            .unwrap()
            .to_string();
        for cost_model in ["kernels", "roofline"] {
            let args = [
                "run",
                "--model",
                &id,
                "--hardware",
                "h200-sxm-141gb",
                "--tp",
                &tp,
                "--num-prompts",
                "24",
                "--cost-model",
                cost_model,
            ];
            let (out, _) = run_ok(&args);
            assert!(
                out.contains("Output token throughput"),
                "{id} {cost_model}: {out}"
            );
        }
    }
}

#[test]
fn sharegpt_without_its_own_table_names_the_borrowed_one() {
    // Bundled tables' base vocabularies: qwen 151,643, o200k_harmony 199,998, llama3 128,000.
    // Nearest on a log scale: Mixtral 32,000 → llama3 (ln 4.00 = 1.39 < ln 4.74 = 1.56);
    // MiniMax-M2 200,064 → o200k_harmony; Kimi-K2 163,840 → qwen (ln 1.080 = 0.077 < ln 1.221
    // = 0.199); DeepSeek-R1 129,280 → llama3 (ln 1.010).
    for (model, table) in [
        ("mistralai/Mixtral-8x7B-v0.1", "llama3"),
        ("MiniMaxAI/MiniMax-M2.5", "o200k_harmony"),
        ("moonshotai/Kimi-K2-Instruct", "qwen"),
        ("deepseek-ai/DeepSeek-R1", "llama3"),
    ] {
        let args = [
            "run",
            "--model",
            model,
            "--hardware",
            "h200-sxm-141gb",
            "--tp",
            "8",
            "--dataset-name",
            "sharegpt",
            "--num-prompts",
            "24",
        ];
        let (_, err) = run_ok(&args);
        let want = format!("borrowed from the {table} table");
        assert!(err.contains(&want), "{model}: {err}");
    }
    // Qwen3-VL uses Qwen's tokenizer: its own table, no note.
    let args = [
        "run",
        "--model",
        "Qwen/Qwen3-VL-8B-Instruct",
        "--hardware",
        "h200-sxm-141gb",
        "--dataset-name",
        "sharegpt",
        "--num-prompts",
        "24",
    ];
    let (_, err) = run_ok(&args);
    assert!(!err.contains("borrowed"), "{err}");
}

#[test]
fn an_moe_shape_without_table_rows_is_priced_by_the_stated_roofline() {
    // A100's tables (AIConfigurator's a100_sxm) hold no FP8 MoE rows: MiniMax-M2's E=256
    // experts fall back to the roofline, and --explain names the missing shape.
    let args = [
        "run",
        "--model",
        "minimax-m2.5",
        "--hardware",
        "a100-sxm4-80gb",
        "--tp",
        "8",
        "--num-prompts",
        "24",
        "--explain",
    ];
    let (out, err) = run_ok(&args);
    let all = format!("{out}{err}");
    assert!(
        all.contains("roofline: no fp8_block moe rows for hidden 3072 inter 1536 E=256 top-8"),
        "{all}"
    );
}
