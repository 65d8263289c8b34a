//! `servesim profiles`: the bundled hardware profiles (memory, HBM bandwidth, peak FLOP/s,
//! link, price) and models (layers, parameters, weights, KV bytes per token), as two tables or
//! as JSON.
use super::print::emit;
use crate::error::{Error, Result};
use crate::report::table::{Style, Table};
use crate::spec::bundled::{hardware_names, load_hardware, load_model, model_names};
use crate::spec::bundled_hf::bundled_hf;
use crate::spec::model::{KvDtype, WeightFormat};
use serde_json::{json, Value};
use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct ProfilesArgs {
    /// text (two tables) or json.
    #[arg(long, default_value = "text")]
    pub output_format: String,
}

/// One row per bundled hardware profile, as JSON objects (units in the key names).
fn hardware_rows() -> Result<Vec<Value>> {
    hardware_names()
        .into_iter()
        .map(|n| {
            let h = load_hardware(n)?;
            Ok(json!({
                "name": h.name,
                "memory_gib": h.memory.reported_total_mib / 1024.0,
                "hbm_bandwidth_bytes_per_s": h.memory.bandwidth_bytes_per_s,
                "bf16_flops_per_s": h.peaks.bf16_flops_per_s,
                "fp8_flops_per_s": h.peaks.fp8_flops_per_s,
                "link_bandwidth_bytes_per_s": h.link.bandwidth_bytes_per_s,
                "devices_per_node": h.link.devices_per_node,
                "cost_per_device_hour_usd": h.cost_per_device_hour_usd,
            }))
        })
        .collect()
}

/// One row per bundled model (the YAML models, then the bundled config.json files):
/// parameters counted at 2 bytes each (the bf16 weight size / 2).
fn model_rows() -> Result<Vec<Value>> {
    let hf: Vec<String> = bundled_hf().map(|b| b.short_name()).collect();
    model_names()
        .into_iter()
        .chain(hf.iter().map(String::as_str))
        .map(|n| {
            let m = load_model(n)?;
            Ok(json!({
                "name": m.name,
                "hf_id": m.hf_id,
                "layers": m.num_layers,
                "params": m.weight_bytes_per_rank(1, WeightFormat::Bf16) / 2.0,
                "weights_bytes": m.weight_bytes_per_rank(1, m.weights),
                "kv_bytes_per_token_bf16": m.kv_bytes_per_token_per_rank(1, KvDtype::Bf16),
                "context_length": m.context_length,
                "moe": m.moe.is_some(),
                "mla": m.mla.is_some(),
            }))
        })
        .collect()
}

/// `v` scaled by `div`, with `digits` decimals, or `-` when absent.
fn num(v: &Value, div: f64, digits: usize) -> String {
    v.as_f64()
        .map_or("-".into(), |x| format!("{:.digits$}", x / div))
}

fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        right: (0..header.len()).map(|i| i > 0).collect(),
        rows,
    }
    .render(Style::Text)
}

pub fn profiles(a: &ProfilesArgs, out: &mut dyn Write) -> Result<()> {
    let (hw, models) = (hardware_rows()?, model_rows()?);
    let text = match a.output_format.as_str() {
        "json" => format!("{:#}\n", json!({ "hardware": hw, "models": models })),
        "text" => {
            let hw_rows = hw
                .iter()
                .map(|h| {
                    vec![
                        h["name"].as_str().unwrap_or("").to_string(),
                        num(&h["memory_gib"], 1.0, 1),
                        num(&h["hbm_bandwidth_bytes_per_s"], 1e12, 2),
                        num(&h["bf16_flops_per_s"], 1e12, 0),
                        num(&h["fp8_flops_per_s"], 1e12, 0),
                        num(&h["link_bandwidth_bytes_per_s"], 1e9, 0),
                        h["devices_per_node"].to_string(),
                        num(&h["cost_per_device_hour_usd"], 1.0, 2),
                    ]
                })
                .collect();
            let model_rows = models
                .iter()
                .map(|m| {
                    vec![
                        m["name"].as_str().unwrap_or("").to_string(),
                        m["layers"].to_string(),
                        num(&m["params"], 1e9, 1),
                        num(&m["weights_bytes"], (1u64 << 30) as f64, 1),
                        num(&m["kv_bytes_per_token_bf16"], 1.0, 0),
                        m["context_length"].to_string(),
                    ]
                })
                .collect();
            format!(
                "hardware (per device):\n{}\nmodels (KV at bf16 on one rank, weights in the \
                 checkpoint's format):\n{}",
                table(
                    &[
                        "name",
                        "memory GiB",
                        "HBM TB/s",
                        "bf16 TFLOP/s",
                        "fp8 TFLOP/s",
                        "link GB/s",
                        "per node",
                        "USD/hour",
                    ],
                    hw_rows
                ),
                table(
                    &[
                        "name",
                        "layers",
                        "params B",
                        "weights GiB",
                        "KV bytes/token",
                        "context",
                    ],
                    model_rows
                )
            )
        }
        other => {
            return Err(Error::Unknown {
                kind: "output format",
                name: other.to_string(),
                available: "text, json".into(),
            })
        }
    };
    emit(out, &text)
}
