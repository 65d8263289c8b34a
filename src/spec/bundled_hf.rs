//! The Hugging Face `config.json` files bundled in `models/hf/` (verbatim copies from
//! aiconfigurator-core 0.12.0 and aiconfigurator 0.7.0 and 0.10.0, `scripts/import_model_configs.py`), embedded in the binary so a
//! run names them by Hugging Face id (`moonshotai/Kimi-K2-Instruct`, as a log's `--model-path`
//! gives it), by short name (`kimi-k2-instruct`) or by a local path ending in that name, with
//! no file at hand. The bundled YAML models (`models/*.yaml`) keep priority: [`super::bundled`]
//! consults this table only for names they do not resolve.
use super::hf_config::model_from_hf_config;
use super::model::ModelSpec;
use crate::error::Result;
use std::path::PathBuf;

/// Defines `HF_DIR` and `HF_MODELS`, the `(org--name, config.json text)` pairs.
macro_rules! bundle_hf {
    ($($stem:literal),+ $(,)?) => {
        const HF_DIR: &str = "models/hf";
        const HF_MODELS: &[(&str, &str)] =
            &[$(($stem, include_str!(concat!("../../models/hf/", $stem, ".json")))),+];
    };
}

bundle_hf!(
    "MiniMaxAI--MiniMax-M2.5",
    "MiniMaxAI--MiniMax-M2.7",
    "Qwen--Qwen3-0.6B",
    "Qwen--Qwen3-1.7B",
    "Qwen--Qwen3-VL-2B-Instruct",
    "Qwen--Qwen3-VL-4B-Instruct",
    "Qwen--Qwen3-VL-8B-Instruct",
    "Qwen--Qwen3-VL-32B-Instruct",
    "Qwen--Qwen3-VL-32B-Thinking",
    "Qwen--Qwen3-VL-30B-A3B-Instruct",
    "Qwen--Qwen3-VL-235B-A22B-Instruct",
    "deepseek-ai--DeepSeek-R1",
    "meta-llama--Meta-Llama-3.1-405B",
    "mistralai--Mixtral-8x7B-v0.1",
    "mistralai--Mixtral-8x22B-v0.1",
    "moonshotai--Kimi-K2-Instruct",
    "moonshotai--Kimi-K2.5",
    "Qwen--Qwen2.5-1.5B",
    "Qwen--Qwen2.5-7B",
    "Qwen--Qwen2.5-32B",
    "Qwen--Qwen2.5-72B",
    "meta-llama--Llama-2-7b-hf",
    "meta-llama--Llama-2-13b-hf",
    "meta-llama--Llama-2-70b-hf",
    "meta-llama--Llama-4-Scout-17B-16E-Instruct",
    "meta-llama--Llama-4-Maverick-17B-128E-Instruct",
    "Qwen--Qwen3.5-27B",
    "Qwen--Qwen3.5-35B-A3B",
    "Qwen--Qwen3.5-397B-A17B",
    "Qwen--Qwen3.5-122B-A10B",
);

/// A bundled config: its file stem `org--name` and its text.
#[derive(Clone, Copy)]
pub struct BundledHf {
    stem: &'static str,
    pub text: &'static str,
}

impl BundledHf {
    /// A key unique to this entry for the process's parse cache (two configs may have the same
    /// text, as Qwen3-VL-32B Instruct and Thinking do, and share one embedded string).
    pub fn cache_key(&self) -> &'static str {
        self.stem
    }

    /// The Hugging Face id, `org/name`.
    pub fn hf_id(&self) -> String {
        self.stem.replacen("--", "/", 1)
    }

    /// The short name: the id's name part, lower-cased (`kimi-k2-instruct`).
    pub fn short_name(&self) -> String {
        let name = self.stem.split_once("--").map_or(self.stem, |(_, n)| n);
        name.to_ascii_lowercase()
    }

    /// Parses and validates the config; the model is named by its short name and id.
    pub fn load(&self) -> Result<ModelSpec> {
        let origin = PathBuf::from(format!("<bundled>/{HF_DIR}/{}.json", self.stem));
        let mut m = model_from_hf_config(self.text, &origin)?;
        m.name = self.short_name();
        m.hf_id = Some(self.hf_id());
        Ok(m)
    }
}

/// Every bundled config, in table order.
pub fn bundled_hf() -> impl Iterator<Item = BundledHf> {
    HF_MODELS
        .iter()
        .map(|&(stem, text)| BundledHf { stem, text })
}

/// The bundled config `name` names, case aside: its Hugging Face id, its short name, or a path
/// whose last component is the short name (`/models/Kimi-K2-Instruct/`).
pub fn find_hf(name: &str) -> Option<BundledHf> {
    let lower = name.to_ascii_lowercase();
    let last = lower
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("");
    bundled_hf().find(|b| b.hf_id().to_ascii_lowercase() == lower || b.short_name() == last)
}
