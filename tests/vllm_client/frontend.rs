//! vLLM's API-server front end as the benchmark client sees it (`spec::vllm::frontend`).

/// A vLLM 0.11.0 server behind `vllm bench serve` at concurrency 1: `--backend openai-chat`
/// costs each request exactly the chat-template parse of `spec::vllm::frontend` (8.8 ms,
/// measured; 0.11.0's uncached `resolve_chat_template_kwargs`) more TTFT than `openai`, as
/// nothing else differs and the engine is idle when each request arrives; 0.11.1 caches the
/// parse, so there the two endpoints cost the same; gpt-oss (Harmony) never parses it.
#[test]
fn vllm_0_11_0_chat_requests_pay_the_template_parse_once_each() {
    use servesim::spec::server::ServerFlags;
    use servesim::spec::vllm_client::{ClientKind, VllmClientFlags};
    use servesim::spec::workload::{ClientFlags, ScenarioFile};
    let mean_ttft_ms = |vllm: &str, model: &str, backend: &str| {
        let client = ClientFlags {
            num_prompts: Some(4),
            max_concurrency: Some(1),
            random_input_len: Some(128),
            random_output_len: Some(4),
            backend: Some(backend.into()),
            bench_version: Some("0.11.0".parse().unwrap()),
            vllm: VllmClientFlags {
                client: Some(ClientKind::Vllm),
                ..Default::default()
            },
            ..Default::default()
        };
        let server = ServerFlags {
            engine: Some("vllm".into()),
            vllm_version: Some(vllm.parse().unwrap()),
            ..Default::default()
        };
        let sc = servesim::simulation::Scenario::resolve(
            &ScenarioFile::default(),
            Some("h100-sxm5-80gb"),
            Some(model),
            &server,
            &client,
        )
        .unwrap();
        servesim::simulation::vllm::run_vllm(&sc)
            .unwrap()
            .metrics
            .summaries[0]
            .mean_ms
    };
    let chat = mean_ttft_ms("0.11.0", "qwen3-8b", "openai-chat");
    let comp = mean_ttft_ms("0.11.0", "qwen3-8b", "openai");
    assert!((chat - comp - 8.8).abs() < 1e-3, "{chat} vs {comp}");
    let cached = mean_ttft_ms("0.11.1", "qwen3-8b", "openai-chat");
    assert!((cached - mean_ttft_ms("0.11.1", "qwen3-8b", "openai")).abs() < 1e-9);
    let harmony = mean_ttft_ms("0.11.0", "gpt-oss-20b", "openai-chat");
    assert!((harmony - mean_ttft_ms("0.11.0", "gpt-oss-20b", "openai")).abs() < 1e-9);
}
