//! The measured-kernel cost backend: bundled tables against values read independently from
//! AIConfigurator's parquet files (tests/data/kernel_vectors.txt, written by
//! scripts/import_aiconfigurator.py), monotonicity of every bundled model × system, agreement
//! in magnitude with the roofline, `--explain` consistency, and bad `--kernel-db` input.
//! Decode-step bounds and the MoE / overhead repricings in `decode.rs`; which rows price
//! MXFP4 experts in `mxfp4.rs`.
#[path = "../common/mod.rs"]
mod common;

use common::fails_with;
use servesim::cost::kernels::db::KernelDb;
use servesim::cost::{build, BatchShape, CostChoice, CostModel, StepCost};
use servesim::spec::bundled::{load_hardware, load_model, model_names};
use servesim::spec::server::{ServerConfig, ServerFlags};

mod decode;
mod mxfp4;
mod nvfp4;

#[test]
fn bundled_tables_hold_the_parquet_values() {
    let text = include_str!("../data/kernel_vectors.txt");
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        // "<system>/<SGLang version> <op> <key...> @ <axis> = <ms> ms"
        let (lhs, rhs) = line.split_once(" @ ").unwrap();
        let mut f = lhs.split_whitespace();
        let (path, op) = (f.next().unwrap(), f.next().unwrap());
        let (system, version) = path.split_once('/').unwrap();
        let key: Vec<&str> = f.collect();
        let (x, ms) = rhs.split_once(" = ").unwrap();
        let x: f64 = x.parse().unwrap();
        let ms: f64 = ms.trim_end_matches(" ms").parse().unwrap();
        // A run at exactly the table's version prefers that version's table.
        let db = KernelDb::bundled(system, version.parse().unwrap()).unwrap();
        let t = db.table(op).unwrap();
        assert!(t.sglang.starts_with(version), "{line}: {}", t.sglang);
        let rows = t.rows();
        let row = rows.iter().find(|r| r.key == key).expect("row present");
        let j = t.grid.iter().position(|&g| g == x).expect("grid point");
        let ns = row.values_ns[j].unwrap();
        // Stored with 4 significant digits.
        assert!(
            (ns / (ms * 1e6) - 1.0).abs() < 6e-4,
            "{line}: table holds {ns} ns"
        );
        checked += 1;
    }
    assert!(checked >= 12, "{checked} vectors");
}

/// (kernels backend, roofline backend, resolved server) of one deployment.
type Deployment = (Box<dyn StepCost>, Box<dyn StepCost>, ServerConfig);

fn deployment(hw: &str, model: &str, tp: u64) -> Option<Deployment> {
    let h = load_hardware(hw).unwrap();
    let m = load_model(model).unwrap();
    let flags = ServerFlags {
        tp: Some(tp),
        ..Default::default()
    };
    let server = ServerConfig::resolve(&flags, &h, &m).ok()?;
    let choice = |c| CostChoice {
        model: Some(c),
        kernel_db: None,
    };
    Some((
        build(&h, &m, &server, &choice(CostModel::Kernels)).unwrap(),
        build(&h, &m, &server, &choice(CostModel::Roofline)).unwrap(),
        server,
    ))
}

fn decode(server: &ServerConfig, bs: u64, ctx: u64) -> BatchShape {
    BatchShape {
        decode_reqs: bs,
        decode_ctx_sum: bs * ctx,
        graph_bs: server.graph_batch_size(bs),
        ..Default::default()
    }
}

fn prefill(tokens: u64, prefix: u64) -> BatchShape {
    let mut s = BatchShape::default();
    s.add_prefill(tokens, prefix, None);
    s
}

#[test]
fn every_bundled_table_is_well_formed() {
    use servesim::cost::kernels::db::{bundled_systems, bundled_versions, OPS};
    let mut checked = 0;
    for system in bundled_systems() {
        let versions = bundled_versions(system);
        let dirs: Vec<String> = if versions.is_empty() {
            vec![system.to_string()]
        } else {
            versions
                .iter()
                .map(|(v, _)| format!("{system}/{v}"))
                .collect()
        };
        for dir in dirs {
            for op in OPS {
                let path = format!("hardware-profiles/kernels/{dir}/{op}.txt");
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let t = servesim::cost::kernels::table::Table::parse(
                    &text,
                    std::path::Path::new(&path),
                )
                .unwrap();
                assert_eq!((t.system.as_str(), t.op.as_str()), (system, *op));
                // The header names the version directory it sits in.
                if let Some((_, v)) = dir.split_once('/') {
                    assert!(t.sglang.starts_with(v), "{path}: sglang {}", t.sglang);
                }
                assert!(!t.rows().is_empty());
                checked += 1;
            }
        }
    }
    // 16 systems' tables: 8 × SGLang's latest (6 + 7 × 8, plus context_gdn and generation_gdn
    // on each: 2 × 8) + the other versions' 17 + vLLM's 47 (l40s: 0.5.10 and 0.5.12
    // all-reduce, no vLLM all-reduce; rtx_pro_6000_server: 0.5.10) + the triton fused-MoE
    // lane's moe_triton on b200_sxm, b300_sxm and gb200 under 0.5.9 and 0.5.14 (6).
    assert_eq!(checked, 62 + 16 + 17 + 47 + 6);
}

#[test]
fn step_time_never_decreases_with_batch_tokens_or_context() {
    let mut deployments = 0;
    for hw in ["a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"] {
        for model in model_names() {
            for tp in [1, 2, 4, 8] {
                let Some((k, _, server)) = deployment(hw, model, tp) else {
                    continue;
                };
                deployments += 1;
                let gpu = |s: &BatchShape| k.step_time(s).gpu_ns;
                let mut last = 0.0;
                for bs in [1, 2, 3, 8, 17, 64, 100, 256, 600, 1500, 3000] {
                    let t = gpu(&decode(&server, bs, 1000));
                    assert!(
                        t >= last,
                        "{hw} {model} tp{tp}: decode bs {bs} {t} < {last}"
                    );
                    last = t;
                }
                last = 0.0;
                for ctx in [1, 100, 1000, 5000, 30000, 200_000] {
                    let t = gpu(&decode(&server, 32, ctx));
                    assert!(t >= last, "{hw} {model} tp{tp}: ctx {ctx} {t} < {last}");
                    last = t;
                }
                last = 0.0;
                for tokens in [1, 16, 100, 1000, 4096, 8192, 20000, 40000] {
                    let t = gpu(&prefill(tokens, 0));
                    assert!(
                        t >= last,
                        "{hw} {model} tp{tp}: prefill {tokens} {t} < {last}"
                    );
                    last = t;
                }
                last = 0.0;
                for prefix in [0, 1000, 10000, 100_000] {
                    let t = gpu(&prefill(2048, prefix));
                    assert!(
                        t >= last,
                        "{hw} {model} tp{tp}: prefix {prefix} {t} < {last}"
                    );
                    last = t;
                }
            }
        }
    }
    assert!(deployments > 40, "{deployments} deployments checked");
}

#[test]
fn kernels_and_roofline_agree_in_magnitude_on_a_dense_decode_step() {
    for (hw, model, tp) in [
        ("h100-sxm5-80gb", "qwen3-8b", 1),
        ("h100-sxm5-80gb", "llama-3.1-70b", 8),
        ("a100-sxm4-80gb", "qwen3-32b", 2),
    ] {
        let (k, r, server) = deployment(hw, model, tp).unwrap();
        for bs in [1, 32, 256] {
            let s = decode(&server, bs, 2000);
            let ratio = k.step_time(&s).gpu_ns / r.step_time(&s).gpu_ns;
            assert!(
                (0.5..2.0).contains(&ratio),
                "{hw} {model} tp{tp} bs {bs}: kernels/roofline = {ratio}"
            );
        }
    }
}

#[test]
fn explain_items_sum_to_the_step_gpu_time() {
    for (hw, model, tp) in [
        ("h100-sxm5-80gb", "qwen3-8b", 1),
        ("h200-sxm-141gb", "deepseek-v3", 8),
        ("a100-sxm4-80gb", "qwen3-30b-a3b", 2),
        ("h100-sxm5-80gb", "gpt-oss-20b", 1),
    ] {
        let (k, r, server) = deployment(hw, model, tp).unwrap();
        for s in [decode(&server, 48, 1500), prefill(8192, 100)] {
            for (name, cost) in [("kernels", &k), ("roofline", &r)] {
                let b = cost.explain(&s);
                assert_eq!(b.backend, name);
                assert_eq!(b.time, cost.step_time(&s));
                let sum = b.gpu_items_ns();
                assert!(
                    (sum - b.time.gpu_ns).abs() <= 1e-6 * b.time.gpu_ns,
                    "{hw} {model} {name}: items {sum} vs gpu {}",
                    b.time.gpu_ns
                );
                assert!(b
                    .items
                    .iter()
                    .all(|i| i.time_ns >= 0.0 && !i.detail.is_empty()));
            }
        }
    }
}

#[test]
fn ops_without_tables_fall_back_to_the_roofline_and_say_so() {
    // a100_sxm's SGLang tables have head_dim 128 attention only and no MXFP4 MoE: gpt-oss
    // (head_dim 64, MXFP4 experts) is priced by the roofline for those two ops.
    let (k, r, server) = deployment("a100-sxm4-80gb", "gpt-oss-20b", 1).unwrap();
    let s = decode(&server, 8, 500);
    let (kb, rb) = (k.explain(&s), r.explain(&s));
    let item = |b: &servesim::cost::breakdown::StepBreakdown, name: &str| {
        b.items
            .iter()
            .find(|i| i.component.name() == name)
            .unwrap()
            .clone()
    };
    for name in ["attention", "moe"] {
        let (ki, ri) = (item(&kb, name), item(&rb, name));
        assert!(ki.detail.contains("roofline"), "{name}: {}", ki.detail);
        // The roofline's price, unless a measurement on another GPU floors it (the envelope).
        if ki
            .detail
            .contains("FLOOR: no table here, raised to the dearest price measured")
        {
            assert!(ki.time_ns > ri.time_ns, "{name}");
        } else {
            assert!(
                (ki.time_ns - ri.time_ns).abs() <= 1e-9 * ri.time_ns,
                "{name}: {}",
                ki.detail
            );
        }
    }
    // MLA on H200 is priced from SGLang's MLA tables.
    let (k, _, server) = deployment("h200-sxm-141gb", "deepseek-v3", 8).unwrap();
    let b = k.explain(&decode(&server, 8, 500));
    let attn = item(&b, "attention");
    assert!(attn.detail.contains("generation_mla"), "{}", attn.detail);
}

#[test]
fn bad_kernel_db_gives_one_line_naming_file_and_row() {
    fails_with(
        &[
            "run",
            "--hardware",
            "h100-sxm5-80gb",
            "--model",
            "qwen2.5-0.5b",
            "--num-prompts",
            "2",
            "--kernel-db",
            "tests/fixtures/bad/kernel-db",
        ],
        &["gemm.txt:10", "expected 3 keys + 2 grid values"],
    );
    fails_with(
        &["run", "--kernel-db", "tests/fixtures/bad/no-such-dir"],
        &["--kernel-db", "not a directory"],
    );
    fails_with(
        &["run", "--cost-model", "magic"],
        &["cost model", "roofline, kernels"],
    );
}

#[test]
fn the_envelope_ladder_comes_from_the_datasheet_figures() {
    use servesim::cost::kernels::envelope::weaker_with_tables;
    let weaker = |hw: &str| -> Vec<String> {
        weaker_with_tables(&load_hardware(hw).unwrap())
            .iter()
            .map(|h| h.name.clone())
            .collect()
    };
    // HBM 2.0 < 3.35 < 4.8 < 8.0 TB/s, BF16 312 < 989 = 989 < 2250 TFLOPs, NVLink 300 < 450 =
    // 450 < 900 GB/s (the profiles' datasheet figures).
    assert_eq!(
        weaker("b200-sxm-180gb"),
        ["a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"]
    );
    assert_eq!(
        weaker("h200-sxm-141gb"),
        ["a100-sxm4-80gb", "h100-sxm5-80gb"]
    );
    assert_eq!(weaker("h100-sxm5-80gb"), ["a100-sxm4-80gb"]);
    assert!(weaker("a100-sxm4-80gb").is_empty());
    // L40S is below H100 and RTX PRO 6000 on every datasheet figure but takes part in pricing
    // no other GPU (`envelope_floor: false`): it bounds nothing, and nothing weaker bounds it.
    assert!(weaker("l40s-48gb").is_empty());
    assert!(weaker("rtx-pro-6000-96gb").is_empty());
    // H20: more HBM bandwidth than A100 but a fifth of its BF16 FLOPs: no GPU is weaker.
    assert!(weaker("h20-96gb").is_empty());
}

#[test]
fn a_weaker_gpus_guess_never_undercuts_a_stronger_gpus_measurement() {
    // qwen3-30b-a3b at TP 8, one request: A100 has no bf16 fused-MoE rows for E=128 at
    // moe_tp 8 (its roofline prices the experts), H100 has them. A100 is no stronger than
    // H100, H200 or B200 on any datasheet figure, so the law "a stronger GPU is never slower"
    // bounds A100's price below by each of their measurements: its guess is raised to the
    // dearest of them, and that raised price cannot cap H100's own measurement any more (until
    // s32 the floor was the cheapest measurement anywhere, so A100's guess, raised only to
    // B200's price, bounded H100's experts below its own table).
    let moe = |hw: &str| {
        let (k, _, server) = deployment(hw, "qwen3-30b-a3b", 8).unwrap();
        k.explain(&decode(&server, 1, 64))
            .items
            .into_iter()
            .find(|i| i.component.name() == "moe")
            .unwrap()
    };
    let (a, h) = (moe("a100-sxm4-80gb"), moe("h100-sxm5-80gb"));
    assert!(!h.detail.contains("ENVELOPE"), "{}", h.detail);
    assert!(!h.detail.contains("roofline"), "{}", h.detail);
    assert!(
        a.detail
            .contains("FLOOR: no table here, raised to the dearest price measured"),
        "{}",
        a.detail
    );
    let stronger: Vec<f64> = ["h100-sxm5-80gb", "h200-sxm-141gb", "b200-sxm-180gb"]
        .iter()
        .map(|g| moe(g))
        .filter(|i| !i.detail.contains("roofline"))
        .map(|i| i.time_ns)
        .collect();
    let dearest = stronger.iter().cloned().fold(0.0, f64::max);
    assert!(a.time_ns >= dearest, "{} < {dearest}", a.time_ns);
    assert!(a.time_ns >= h.time_ns);
}

/// The kernels backend of `model` on `hw` at TP `tp` for a run at SGLang `version`.
fn at_version(hw: &str, model: &str, tp: u64, version: &str) -> (Box<dyn StepCost>, ServerConfig) {
    let h = load_hardware(hw).unwrap();
    let m = load_model(model).unwrap();
    let flags = ServerFlags {
        tp: Some(tp),
        sglang_version: Some(version.parse().unwrap()),
        ..Default::default()
    };
    let server = ServerConfig::resolve(&flags, &h, &m).unwrap();
    let choice = CostChoice {
        model: Some(CostModel::Kernels),
        kernel_db: None,
    };
    (build(&h, &m, &server, &choice).unwrap(), server)
}

#[test]
fn a_run_takes_each_ops_tables_from_the_nearest_sglang_version_and_explain_names_them() {
    // H100 holds GEMM tables of SGLang 0.5.6.post2 and 0.5.14, fused MoE of 0.5.10 and 0.5.14,
    // attention of 0.5.14 only. A run at 0.5.6 has no table version at or before it: each op
    // takes the oldest newer one that has it (GEMM 0.5.6.post2, MoE 0.5.10, attention 0.5.14).
    let (k, server) = at_version("h100-sxm5-80gb", "qwen3-30b-a3b", 1, "0.5.6");
    let b = k.explain(&decode(&server, 16, 1000));
    let detail = |name: &str| {
        b.items
            .iter()
            .find(|i| i.component.name() == name)
            .unwrap()
            .detail
            .clone()
    };
    let gemm = detail("gemm");
    assert!(gemm.contains("tables SGLang 0.5.6.post2"), "{gemm}");
    assert!(!gemm.contains("0.5.14"), "{gemm}");
    assert!(
        detail("moe").contains("tables SGLang 0.5.10"),
        "{}",
        detail("moe")
    );
    assert!(
        detail("attention").contains("tables SGLang 0.5.14"),
        "{}",
        detail("attention")
    );
    // The same deployment from a one-version directory (`--kernel-db` of the 0.5.14 tables)
    // prices the GEMMs differently: the version choice reaches the step time (0.5.6.post2's
    // bf16 4096×4096 GEMM at m=64 is 8.97 µs, 0.5.14's 17.3 µs: tests/data/kernel_vectors.txt).
    let h = load_hardware("h100-sxm5-80gb").unwrap();
    let m = load_model("qwen3-30b-a3b").unwrap();
    let only_new = CostChoice {
        model: Some(CostModel::Kernels),
        kernel_db: Some("hardware-profiles/kernels/h100_sxm/0.5.14".into()),
    };
    let k14 = build(&h, &m, &server, &only_new).unwrap();
    let item = |c: &dyn StepCost| {
        c.explain(&decode(&server, 16, 1000))
            .items
            .into_iter()
            .find(|i| i.component.name() == "gemm")
            .unwrap()
    };
    let g14 = item(k14.as_ref());
    assert!(
        g14.detail.contains("tables SGLang 0.5.14"),
        "{}",
        g14.detail
    );
    assert!(item(k.as_ref()).time_ns < g14.time_ns);
    // A user directory with a version per subdirectory (the bundled layout) is chosen from
    // by the same rule.
    let versioned = CostChoice {
        model: Some(CostModel::Kernels),
        kernel_db: Some("hardware-profiles/kernels".into()),
    };
    let kv = build(&h, &m, &server, &versioned).unwrap();
    let b = kv.explain(&decode(&server, 16, 1000));
    let has = |name: &str, v: &str| {
        b.items
            .iter()
            .any(|i| i.component.name() == name && i.detail.contains(v))
    };
    assert!(has("gemm", "tables SGLang 0.5.6.post2") && has("moe", "tables SGLang 0.5.10"));
}

#[test]
fn a_run_outside_the_table_versions_gets_one_note() {
    let args = |hw: &'static str, version: &'static str| {
        [
            "run",
            "--hardware",
            hw,
            "--model",
            "qwen2.5-0.5b",
            "--sglang-version",
            version,
            "--dataset-name",
            "random",
            "--num-prompts",
            "4",
            "--random-input-len",
            "64",
            "--random-output-len",
            "4",
        ]
    };
    // B200's tables were measured under SGLang 0.5.9 (custom all-reduce), 0.5.10 and 0.5.14.
    let (code, _, err) = common::servesim(&args("b200-sxm-180gb", "0.4.7"));
    assert_eq!(code, 0, "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("priced with")).collect();
    assert_eq!(
        notes,
        ["note: priced with SGLang 0.5.9 and 0.5.14 tables; run is 0.4.7 (older than every measured kernel table of this GPU, 0.5.9 to 0.5.14)"]
    );
    // H100 at 0.5.6: 0.5.6.post2's release, inside its span; the roofline never notes it.
    let (code, _, err) = common::servesim(&args("h100-sxm5-80gb", "0.5.6"));
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("priced with"), "{err}");
    let mut roof = args("b200-sxm-180gb", "0.4.7").to_vec();
    roof.extend(["--cost-model", "roofline"]);
    let (_, _, err) = common::servesim(&roof);
    assert!(!err.contains("priced with"), "{err}");
}

#[test]
fn a_memoised_deployment_prices_as_a_fresh_build_and_only_for_its_own_inputs() {
    // Seed 001's deployment (qwen2.5-0.5b on one H100): A100's instance has no head_dim-64
    // attention rows, so its fallback's floor builds every ladder GPU. `build` keeps built
    // deployments process-wide (cost::kernels::memo); whatever ran before, each must price
    // exactly as a deployment built from nothing, a changed hardware constant or server
    // setting included (a memo keyed on less would hand back the first one).
    use servesim::cost::kernels::KernelCost;
    let h = load_hardware("h100-sxm5-80gb").unwrap();
    let m = load_model("qwen2.5-0.5b").unwrap();
    let kernels = CostChoice {
        model: Some(CostModel::Kernels),
        kernel_db: None,
    };
    let mut slower = h.clone();
    slower.overheads.graph_step_ns *= 2.0;
    let server = |tp| {
        let flags = ServerFlags {
            tp: Some(tp),
            ..Default::default()
        };
        ServerConfig::resolve(&flags, &h, &m).unwrap()
    };
    let cases = [(&h, server(1)), (&slower, server(1)), (&h, server(2))];
    let mut first = None;
    for (hw, sv) in &cases {
        let db = KernelDb::bundled("h100_sxm", sv.version).unwrap();
        let fresh = KernelCost::new(hw, &m, sv, &db)
            .unwrap()
            .with_envelope(hw, &m, sv, |w, s| {
                KernelDb::bundled(w.kernel_tables.as_deref().unwrap_or_default(), s.version)
            });
        let shapes = [
            decode(sv, 1, 70),
            decode(sv, 16, 300),
            prefill(512, 0),
            prefill(2048, 1024),
        ];
        let price = |c: &dyn StepCost| -> Vec<u64> {
            shapes
                .iter()
                .map(|s| c.step_time(s).total_ns.to_bits())
                .collect()
        };
        let want = price(&fresh);
        for _ in 0..2 {
            let memo = build(hw, &m, sv, &kernels).unwrap();
            assert_eq!(price(memo.as_ref()), want, "{} tp {}", hw.name, sv.tp);
            assert_eq!(memo.explain(&shapes[1]), fresh.explain(&shapes[1]));
        }
        // Each case prices differently, so a reused entry could not pass.
        match &first {
            None => first = Some(want),
            Some(f) => assert_ne!(&want, f, "{} tp {}", hw.name, sv.tp),
        }
    }
}

#[test]
fn a100_flashinfer_decode_is_priced_by_flashinfers_measured_bandwidth_not_the_fa3_rows() {
    // AIConfigurator measured A100's SGLang decode attention only with SGLang's FA3 backend on
    // sm80 (lane `flash_attention`); SGLang runs flashinfer on A100, on its tensor-core decode
    // path at Qwen3-8B's GQA group 32/8 = 4 (`should_use_tensor_core`: group >= 4). Priced by
    // FlashInfer's own batch-GQA decode measurement (blog 2024-02-02, Fig. 9, A100: 82% of HBM
    // + 26 µs a call). Batch 128 × context 2048: KV 262,144 tokens × 8 heads × 128 × (K, V) ×
    // 2 B = 1,073,741,824 B a layer / (0.82 × 2.039 TB/s) = 642.20 µs + 26 = 668.20 µs, × 36
    // layers = 24.055 ms (the FA2 rows' 645.1 µs a layer gave 23.22 ms; the FA3 row's 914.7
    // µs would give 32.93 ms).
    let (k, _, server) = deployment("a100-sxm4-80gb", "qwen3-8b", 1).unwrap();
    assert_eq!(server.attention_backend, "flashinfer");
    let attention = |b: servesim::cost::breakdown::StepBreakdown| {
        b.items
            .into_iter()
            .find(|i| i.component.name() == "attention")
            .unwrap()
    };
    let d = attention(k.explain(&decode(&server, 128, 2048)));
    let hand_ns = 36.0 * (1_073_741_824.0 / (0.82 * 2.039e12) * 1e9 + 26_000.0);
    assert!(
        (d.time_ns / hand_ns - 1.0).abs() < 1e-3,
        "{} vs hand {hand_ns}: {}",
        d.time_ns,
        d.detail
    );
    assert!(
        d.detail
            .contains("bounded roofline for SGLang's flashinfer")
            && d.detail.contains("Fig. 9"),
        "{}",
        d.detail
    );
    // More context or batch is never cheaper.
    let t = |bs, ctx| attention(k.explain(&decode(&server, bs, ctx))).time_ns;
    assert!(t(128, 2049) > t(128, 2048) && t(129, 2048) > t(128, 2048));
    // Prefill still takes SGLang's own (FA3) rows; H100's fa3 server its own fa3 decode rows.
    let p = attention(k.explain(&prefill(4096, 0)));
    assert!(p.detail.contains("lane flash_attention"), "{}", p.detail);
    let (h, _, h_server) = deployment("h100-sxm5-80gb", "qwen3-8b", 1).unwrap();
    assert_eq!(h_server.attention_backend, "fa3");
    let hd = attention(h.explain(&decode(&h_server, 128, 2048)));
    assert!(hd.detail.contains("lane fa3,"), "{}", hd.detail);
}
