//! servesim: a deterministic discrete-event simulator of LLM serving.
//!
//! Layers, bottom first; each module imports only the ones before it (checked in CI by
//! `scripts/rust_imports.py --cycles --upward`): `error`, `spec` (pure data: hardware, model,
//! server, workload), `cost` (batch shape → ns), `metrics` (bench_serving's aggregates),
//! `client` (datasets, arrivals, RNGs), `engine` (event loop, SGLang scheduler, router),
//! `report` (text, JSON, tables, SVG, HTML pieces), `simulation` (scenario → run → metrics),
//! then the studies `validate`, `sweep`, `calibrate`, `plan`, and `cli` on top.
//!
//! Reading guide: where is ...
//! - a scenario resolved from flags and files: `spec::server::ServerConfig::resolve`,
//!   `spec::workload`, `simulation::Scenario::resolve`;
//! - the KV pool sized: `spec::server` (`ServerConfig::resolve`, SGLang's
//!   `profile_max_num_token`; single-flag checks in `spec::server_parse`), with the version
//!   defaults in `spec::defaults` (+ `spec::piecewise_defaults`, `spec::backend_defaults`; versions
//!   accepted: `spec::version`, 0.3.0 to 0.5.23, default 0.5.23); the prefill CUDA graph
//!   (piecewise 0.5.10–0.5.15, breakable 0.5.16+) and its reserve: `spec::graph_defaults`;
//!   `--enable-torch-compile` (accepted, not modelled, one note): `spec::torch_compile`;
//!   window models' hybrid pools (SGLang's full + SWA pools per release, vLLM's hybrid KV
//!   groups sharing one block pool): `spec::hybrid_kv`, the window groups' blocks in vLLM's
//!   scheduler: `engine::window_kv`, SGLang's SWA pool beside the full one:
//!   `engine/scheduler/swa.rs`;
//!   scheduler rules changed after 0.5.15 (0.5.22's full `ignore_eos` reserve, no ride for
//!   finishing requests): `spec::version_rules`; what DP attention sets per release:
//!   `spec::dp_attention_rules`;
//! - admission decided (refused, clipped, or never admitted): `engine::admission`, called by
//!   the event loop (`engine::sim`) and the up-front check (`simulation::sanity`); the
//!   per-iteration budgets (PrefillAdder) in `engine::scheduler::adder`, their per-release
//!   rules in `engine::scheduler::adder_rules`, when admission resumes after a decode finish
//!   in `engine/scheduler/batch_full.rs`;
//! - the next batch formed (prefill first, chunking, mixed): `engine::scheduler` (`mod.rs`),
//!   decode memory and retraction in `engine/scheduler/decode.rs`;
//! - the decode (or any) step priced: every step goes through the `cost::StepCost` trait
//!   (`step_time`, called by the event loop in `engine::sim`; the backend is picked by
//!   `Scenario::step_cost` / `cost::select`): `cost::kernels` (the default where the profile names
//!   `kernel_tables`; each op's tables of the SGLang version nearest the run's,
//!   `cost::kernels::versions`), bounded across GPUs by `cost::kernels::envelope`, or `cost::roofline`
//!   (`Roofline::gpu_ns`, `step_time`; Ascend, `--cost-model roofline`; H20 and H800 take a
//!   same-architecture donor's tables moved to their datasheet, `cost::kernels::transfer`; `cost::select`
//!   says which and why); known
//!   SGLang software gaps by version and GPU (untuned fused MoE: which release ships which
//!   tuned config, `cost/moe_configs.txt`): `cost::moe_config`; the MoE tables' synthetic
//!   power-law routing repriced to independent tokens' distinct experts:
//!   `cost::kernels::moe_routing`; SGLang's flashinfer decode where the tables have no
//!   flashinfer rows (A100), at FlashInfer's published bandwidth:
//!   `cost::kernels::flashinfer_decode`; which kernel runs MXFP4
//!   (gpt-oss) experts per engine × GPU and its rates where no table row exists (vLLM's Marlin
//!   on A100, and on sm90 up to vLLM 0.11.0; SGLang's on A100 per release stack): `cost::mxfp4`;
//!   the form (absorbed or MHA) an MLA prefill runs in vs the one the tables timed:
//!   `cost::kernels::mla_form`, with the chunked prefix cache's flag, env threshold and
//!   auto-off rules per release in `spec::chunked_prefix`; gated delta-net layers (Qwen3.5,
//!   Qwen3-Next) from the measured GDN kernels: `cost::kernels::gdn_tables` (roofline where
//!   no table: `cost::gdn`); accelerator families (NVLink or PCIe): `spec::arch`; sliding-window layers per attention kernel (SGLang's triton
//!   extend runs the window layers' extend triangle in full): `cost::window`; vLLM's Triton
//!   unified attention (gpt-oss's sinks on sm80) and its tile-rate-bound prefill:
//!   `cost::unified_attention`; SGLang's triton extend kernel at DeepSeek's MLA prefill
//!   (0.4.6–0.4.10, Hopper/Blackwell) and its measured rate: `cost::triton_mla_prefill`; the
//!   static-split triton MLA decode kernel of 0.4.1–0.4.4.post1 and its cost per context token
//!   × head: `cost::triton_mla_decode`; a built
//!   kernel deployment reused across runs of one process: `cost::kernels::memo`;
//! - one named step priced without a run (`run --explain-step decode:BxL`, the shapes of
//!   `sglang.bench_one_batch`, checked against its logs in `tests/step_bench.rs`):
//!   `simulation::explain`;
//! - the scheduler's CPU time per step by SGLang version (overlap on or off, on a worker thread
//!   before 0.5.4): `spec::scheduler_cpu`, added to the step by `cost::overheads`; the host
//!   time of SGLang's eager extend per layer kind (MLA, MoE, dense; the low-load TTFT) and
//!   what 0.5.10+ piecewise prefill graphs leave of it: `cost::eager_host`, `cost::overheads`;
//! - an NPU graph replay waiting for the host's per-layer attention-task update (Ascend verify,
//!   draft extend, MLA decode): `cost::npu_graph_update`;
//! - the radix cache: `engine::radix`; the running batch as O(1) aggregates:
//!   `engine::running`; hits left by earlier runs on the same server (`--prior-runs`):
//!   `client::prior`;
//! - the client's semaphore, sends and token streams: `engine::client_loop` (one client loop
//!   for the unified and the PD event loops), `engine::stream`;
//! - bench_serving's numbers computed: `metrics::aggregate`; printed: `report::text`;
//! - `--client vllm` (`vllm bench serve` / `benchmark_serving.py`): versions in
//!   `client::vllm::flavour`, its random/ShareGPT/prefix_repetition datasets (`random`,
//!   `sharegpt`, `prefix_repetition`, with the dataset notes in `notes`) and send times in
//!   `client::vllm`, numbers in
//!   `metrics::vllm`, printed block and JSON in `report::vllm`, its logs read in `validate::vllm`;
//! - comparison with real logs: `validate::compare`; fitting profiles: `calibrate`
//!   (`calibrate --cost-model` prices the runs with either backend and writes a kernel-priced
//!   fit into the profile's `kernels_overheads:` block, `calibrate::backend`,
//!   `spec::hardware_backend`, the sourced tokenization rate in `spec::tokenize_cost`;
//!   `vllm bench serve` blocks
//!   in `calibrate::vllm_runs`, which constants act on which engine in
//!   `calibrate::engine_scope`); the held-out public runs: `validation/public/` (`validate --manifest`, never fitted), and
//!   `validation/gpustack/` (vLLM-client logs for either engine: `validate::vllm::entry`);
//! - speculative decoding: flags and memory in `spec::speculative` (+ `spec::server`), spec v1
//!   or the overlapped spec v2 per version in `spec::speculative_v2`, a target's own MTP layer
//!   as the draft (DeepSeek, GLM) in `spec::mtp_draft`, the
//!   iteration's price in `cost::speculative`, the per-verify gain and accept length in
//!   `engine::scheduler::speculative`, multi-token steps in `engine::running` (`step_by`);
//! - the vLLM engine: chosen in `spec::engine`, configured in `spec::vllm` (defaults by
//!   version in `spec::vllm::defaults`, KV sizing in `spec::vllm::resolve`, MXFP4 experts'
//!   backend per GPU and version and their loaded bytes in `spec::vllm::mxfp4`), scheduled in
//!   `engine::vllm` (`schedule.rs`: budget, preemption, admission; V0's rules and the CUDA-graph
//!   rule by version in `VllmSchedConfig`, async scheduling's staged arrivals and wasted slots),
//!   driven through `engine::dispatch::EngineScheduler`; vLLM's CPU per step in
//!   `spec::vllm::overheads`, piecewise graphs priced through `cost::Launch`; its API-server
//!   front end (per request in, per streamed token out, the tokenizer's micro-batch window,
//!   0.11.0's chat-template parse) in `spec::vllm::frontend`, chosen per scenario in
//!   `simulation::vllm::frontend_costs`, queued in `engine::frontend`;
//! - prefill/decode disaggregation: `spec::pd` (flags, link), `engine::pd` (the event loop,
//!   per-stage times, DP ranks and DP-attention lockstep inside a server, the decode step in
//!   `engine/pd/decode.rs`), the decode side's pre-allocation and PREBUILT steps in
//!   `engine/scheduler/prebuilt.rs`, planning xPyD in `plan::pd`, launch commands in
//!   `plan::launch_pd`;
//! - a pasted bench_serving / launch_server command turned into `run` flags: `cli::paste`
//!   (`vllm serve`: `cli::paste_vllm`); a TP group on nodes (`--nnodes`): `spec::nodes`;
//! - which MoE runner (table lane) a release runs on sm100: `cost::moe_lane`;
//!   bench_serving's accepted-and-ignored and refused flags: `cli::bench_compat`; its
//!   `--output-file` line: `report::jsonl`; a Hugging Face id → bundled model:
//!   `spec::bundled::load_model` by name (`spec::checkpoint_name`: prefix, same-architecture
//!   builds, a `-FP8` suffix), the bundled config.json files `spec::bundled_hf`;
//! - a Hugging Face config.json read: `spec::hf_config` (entry, multimodal wrappers),
//!   `spec::hf_arch` (per-architecture layer rules; Gemma-3's defaults, window layers and
//!   replicated embedding in `spec::hf_gemma3`; Llama 4's chunked attention and interleaved
//!   MoE in `spec::hf_llama4`), `spec::hf_quant` (weight formats),
//!   `spec::hf_refuse` (architectures refused, with the mechanism), `spec::hf_vision` (vision
//!   towers in weight memory); a ShareGPT table borrowed by a model without its own:
//!   `client::dataset::sharegpt_table::borrowed_table_note`;
//! - expert parallelism (`--ep-size`, DeepEP, EPLB, vLLM's `--enable-expert-parallel`): flags,
//!   version rules and expert bytes per rank in `spec::expert_parallel`, the MoE layer's busiest
//!   rank and all-to-all in `cost::expert_parallel`;
//! - an all-reduce across nodes priced: `cost::collective`; a big run estimated (and the event
//!   cap scaled): `simulation::estimate`; tok/s per GPU vs per user and cost per 1M tokens:
//!   `sweep::frontier`; the SGLang launch command of a plan: `plan::launch`.
pub mod calibrate;
pub mod cli;
pub mod client;
pub mod cost;
pub mod engine;
pub mod error;
pub mod metrics;
pub mod plan;
pub mod report;
pub mod simulation;
pub mod spec;
pub mod sweep;
pub mod validate;
