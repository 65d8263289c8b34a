//! One EAGLE3 cycle of SGLang on an Ascend NPU: which stages replay a captured graph and which
//! of those wait for the host's per-layer attention-task update (`cost::npu_graph_update`),
//! checked against the sources read (SGLang 0.5.6.post2 wheel and Ascend/sglang@98a107d, the
//! release and commit of the runs in validation/public/p017-ascend-notes.md; torch_npu 2.8.0),
//! and a hand calculation of the update term of one cycle.
use servesim::cost::breakdown::Component;
use servesim::cost::npu_graph_update::{replay_ns, replay_updates_attention};
use servesim::cost::speculative::draft_extend_graphed;
use servesim::cost::BatchShape;
use servesim::simulation::Scenario;
use servesim::spec::hardware::Arch;
use servesim::spec::server::ServerFlags;
use servesim::spec::speculative::SpeculativeFlags;
use servesim::spec::workload::{ClientFlags, ScenarioFile};

/// vllm-ascend issue #13058 (2026-09-01), 910B3: 3.68 ms of update for 20 layers per step.
const UPDATE_NS_PER_TASK: f64 = 3.68e6 / 20.0;

/// A stage of one EAGLE3 cycle as read in the sources: does it replay a graph on NPU, and does
/// its replay carry fused-attention (FIA) tasks that the host updates?
struct Stage {
    name: &'static str,
    spec_v2: bool,
    graphed: bool,
    updates_attention: bool,
    /// Query tokens per request of the stage (N for the verify, K + 1 / N for the extend).
    width: u64,
}

const STAGES: [Stage; 5] = [
    // Target verify: NPUGraphRunner captures TARGET_VERIFY (npu_graph_runner.py@98a107d,
    // `replay`: `forward_mode.is_target_verify()` → seq_lens + num_tokens_per_bs); its attention
    // is `forward_mtp`'s npu_fused_infer_attention_score, TND layout
    // (hardware_backend/npu/attention/ascend_backend.py@98a107d l. 899).
    Stage {
        name: "verify",
        spec_v2: true,
        graphed: true,
        updates_attention: true,
        width: 5,
    },
    // Draft passes: EAGLEDraftNpuGraphRunner (eagle_worker_v2.py@98a107d l. 233–247, captured
    // when num_steps > 1); one token per request, so `forward_decode_graph`:
    // _npu_paged_attention (ascend_backend.py@98a107d l. 1126), which torch_npu's
    // _GraphDispatchMode does not record (graphs.py l. 139–171: FIA names only). Below the
    // attention-TP batch it takes FIA (l. 1055, "PA will support bs<tp in the later version of
    // CANN"); servesim leaves that case unpriced (physics: a larger batch is never cheaper).
    Stage {
        name: "draft pass, batch ≥ attention TP",
        spec_v2: true,
        graphed: true,
        updates_attention: false,
        width: 1,
    },
    // Draft extend, spec v2: EAGLEDraftExtendNpuGraphRunner, captured on NPU
    // (eagle_worker_v2.py, 0.5.6.post2 l. 255 `if self.draft_extend_attn_backend and _is_npu`;
    // @98a107d l. 258–262); attention in `forward_mtp` (draft extend): FIA.
    Stage {
        name: "draft extend (v2)",
        spec_v2: true,
        graphed: true,
        updates_attention: true,
        width: 4,
    },
    // Draft extend, spec v1: never captured on NPU (eagle_worker.py, 0.5.6.post2 l. 248 /
    // @98a107d l. 257 `if self.draft_extend_attn_backend and not _is_npu`): eager.
    Stage {
        name: "draft extend (v1)",
        spec_v2: false,
        graphed: false,
        updates_attention: false,
        width: 5,
    },
    // Target verify under spec v1: the same NPUGraphRunner (the worker does not change it).
    Stage {
        name: "verify (v1)",
        spec_v2: false,
        graphed: true,
        updates_attention: true,
        width: 5,
    },
];

#[test]
fn each_stage_of_an_npu_eagle3_cycle_is_graphed_and_updated_as_read() {
    // Qwen3-32B: a dense MHA model.
    for st in &STAGES {
        if st.name.starts_with("draft extend") {
            assert_eq!(
                draft_extend_graphed(true, st.spec_v2),
                st.graphed,
                "{}",
                st.name
            );
        }
        let updates = st.graphed && replay_updates_attention(st.width, false);
        assert_eq!(updates, st.updates_attention, "{}", st.name);
    }
    // On a GPU the draft extend replays its graph under either worker.
    assert!(draft_extend_graphed(false, false) && draft_extend_graphed(false, true));
    // An MLA model's decode is FIA at any batch (ascend_backend.py@98a107d l. 1167).
    assert!(replay_updates_attention(1, true));
}

/// SGLang 0.5.6.post2 (spec v1, as servesim reads the p017 recipes), Qwen3-32B BF16 TP8 on A3.
fn a3_qwen3_32b_eagle3() -> Scenario {
    let draft = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/validation/public/models/qwen3-32b-eagle3.yaml"
    );
    let server = ServerFlags {
        tp: Some(8),
        sglang_version: Some("0.5.6.post2".parse().unwrap()),
        speculative: SpeculativeFlags {
            speculative_algorithm: Some("EAGLE3".into()),
            speculative_draft_model_path: Some(draft.into()),
            speculative_num_steps: Some(4),
            speculative_eagle_topk: Some(1),
            speculative_num_draft_tokens: Some(5),
            speculative_accept_length: Some(2.03),
            ..Default::default()
        },
        ..Default::default()
    };
    let client = ClientFlags {
        num_prompts: Some(4),
        random_input_len: Some(4000),
        random_output_len: Some(1500),
        random_range_ratio: Some(1.0),
        max_concurrency: Some(1),
        ..Default::default()
    };
    Scenario::resolve(
        &ScenarioFile::default(),
        Some("ascend-a3"),
        Some("qwen3-32b"),
        &server,
        &client,
    )
    .expect("scenario resolves")
}

fn decode(sc: &Scenario, bs: u64, ctx: u64) -> BatchShape {
    BatchShape {
        decode_reqs: bs,
        decode_ctx_sum: bs * ctx,
        graph_bs: sc.server.graph_batch_size(bs),
        ..Default::default()
    }
}

#[test]
fn one_npu_cycle_at_batch_1_is_held_to_the_hand_computed_host_chain() {
    let sc = a3_qwen3_32b_eagle3();
    assert_eq!(
        sc.hardware.overheads.graph_task_update_ns,
        UPDATE_NS_PER_TASK
    );
    let b = sc.step_cost().unwrap().explain(&decode(&sc, 1, 4700));
    // By hand: Qwen3-32B has 64 layers, one FIA task each in the verify graph:
    // 64 × 184 µs = 11.776 ms of host chain.
    let chain_ns = 64.0 * 184e3;
    assert!((replay_ns(0.0, 64.0, UPDATE_NS_PER_TASK) - chain_ns).abs() < 1.0);
    // At batch 1 the device's verify is shorter than that, so the target part of the cycle
    // (every GPU item but the draft's) is exactly the chain.
    let target_ns: f64 = b
        .items
        .iter()
        .filter(|i| !matches!(i.component, Component::Cpu | Component::Draft))
        .map(|i| i.time_ns)
        .sum();
    assert!((target_ns - chain_ns).abs() < 1e3, "{target_ns} ns");
    let item = b
        .items
        .iter()
        .find(|i| i.detail.contains("graph_task_update_ns"))
        .expect("--explain names the term and its profile field");
    assert!(
        item.detail.contains("64 attention tasks"),
        "{}",
        item.detail
    );
}

#[test]
fn the_chain_is_a_floor_that_a_long_device_step_hides() {
    let sc = a3_qwen3_32b_eagle3();
    let mut off = a3_qwen3_32b_eagle3();
    off.hardware.overheads.graph_task_update_ns = 0.0;
    let (on, off) = (sc.step_cost().unwrap(), off.step_cost().unwrap());
    // Batch 1: the floor binds; the step grows by less than the whole chain (it replaces the
    // device's verify time, it does not add to it).
    let s1 = decode(&sc, 1, 4700);
    let grow = on.step_time(&s1).total_ns - off.step_time(&s1).total_ns;
    assert!(grow > 0.0 && grow < 64.0 * 184e3, "{grow}");
    // Batch 32 at a 6k context: the device's verify of 160 tokens is longer than the chain.
    let s32 = decode(&sc, 32, 6000);
    assert_eq!(on.step_time(&s32), off.step_time(&s32));
    // Prefill steps run eagerly: no graph, no update.
    let prefill = BatchShape {
        prefill_reqs: 1,
        prefill_tokens: 4000,
        prefill_kv_tokens: 4000,
        ..Default::default()
    };
    assert_eq!(on.step_time(&prefill), off.step_time(&prefill));
}

#[test]
fn a_gpu_never_pays_the_npu_update() {
    // Every NVIDIA profile leaves the field at its default, 0.
    let h100 = servesim::spec::bundled::load_hardware("h100-sxm5-80gb").unwrap();
    assert_eq!(h100.overheads.graph_task_update_ns, 0.0);
    // And the term acts on `arch: ascend` only: the same profile relabelled as a GPU prices the
    // batch-1 cycle as it does with the field at 0.
    let mut gpu = a3_qwen3_32b_eagle3();
    gpu.hardware.arch = Arch::Hopper;
    let mut off = a3_qwen3_32b_eagle3();
    off.hardware.arch = Arch::Hopper;
    off.hardware.overheads.graph_task_update_ns = 0.0;
    let s1 = decode(&gpu, 1, 4700);
    let (a, b) = (gpu.step_cost().unwrap(), off.step_cost().unwrap());
    assert_eq!(a.step_time(&s1), b.step_time(&s1));
}
