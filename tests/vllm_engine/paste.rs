//! A pasted `vllm serve` command runs servesim's vLLM engine with that command's flags.
use crate::common::servesim;

#[test]
fn a_pasted_vllm_serve_command_is_the_vllm_engine_with_its_flags() {
    let client = "--dataset-name random --random-input-len 1000 --random-output-len 200 \
                  --num-prompts 40 --max-concurrency 8";
    let pasted = format!(
        "vllm serve Qwen/Qwen3-8B -tp 2 --max-num-seqs 64 --kv-cache-dtype fp8 \
         --no-enable-prefix-caching --port 8000 --disable-log-requests && \
         vllm bench serve --model Qwen/Qwen3-8B {client}"
    );
    let (code, out, err) = servesim(&["run", "--hardware", "h100-sxm5-80gb", "--", &pasted]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("vLLM 0.33.0 (V1) defaults"), "{out}");
    assert!(out.contains("max_num_seqs=64"), "{out}");
    assert!(
        err.contains("ignored: --port 8000 --disable-log-requests"),
        "{err}"
    );
    assert!(!err.contains("not simulated"), "{err}");
    // The same run spelled with servesim's flags (vLLM's names under --engine vllm).
    let mut args = vec![
        "run",
        "--hardware",
        "h100-sxm5-80gb",
        "--engine",
        "vllm",
        "--model",
        "qwen3-8b",
        "--tp",
        "2",
        "--max-num-seqs",
        "64",
        "--kv-cache-dtype",
        "fp8",
        "--no-enable-prefix-caching",
        "--client",
        "vllm",
        "--seed",
        "0",
    ];
    args.extend(client.split_whitespace());
    let (code, spelled, err) = servesim(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, spelled);
}
