//! The hardware profiles and models shipped inside the binary (`hardware-profiles/*.yaml`,
//! `models/*.yaml`, embedded with `include_str!` so the binary works from any directory), and
//! the loaders that accept either a bundled name or a path: a YAML file, or for models a
//! Hugging Face `config.json` (or a directory holding one).
use super::bundled_hf::{find_hf, BundledHf};
use super::checkpoint_name;
use super::hardware::HardwareProfile;
use super::hf_config::model_from_hf_config;
use super::load::{from_yaml_str, read_text};
use super::model::ModelSpec;
use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Defines `$dir_const` (a directory relative to the crate root) and `$table`, the
/// `(name, yaml text)` pairs of the files `DIR/NAME.yaml`.
macro_rules! bundle {
    ($table:ident, $dir_const:ident = $dir:literal: $($name:literal),+ $(,)?) => {
        const $dir_const: &str = $dir;
        const $table: &[(&str, &str)] =
            &[$(($name, include_str!(concat!("../../", $dir, "/", $name, ".yaml")))),+];
    };
}

bundle!(HARDWARE, HARDWARE_DIR = "hardware-profiles":
    "a100-sxm4-80gb",
    "h100-sxm5-80gb",
    "h200-sxm-141gb",
    "b200-sxm-180gb",
    "b300-sxm-288gb",
    "gb200-186gb",
    "l40s-48gb",
    "rtx-pro-6000-96gb",
    "h20-96gb",
    "h800-sxm5-80gb",
    "ascend-910b2",
    "ascend-a3",
);

bundle!(MODELS, MODEL_DIR = "models":
    "qwen2.5-0.5b",
    "qwen3-8b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "qwen3-coder-480b-a35b",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "deepseek-v3",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.2-3b",
    "qwen3-14b",
    "llama-3.2-1b",
    "qwen3-4b",
    "glm-4.5",
    "glm-4.5-air",
    "glm-4.6",
    "mistral-7b-v0.1",
    "mistral-7b-v0.3",
    "mistral-nemo-base-2407",
    "gemma-3-1b-it",
    "gemma-3-4b-it",
    "gemma-3-12b-it",
    "gemma-3-27b-it",
    "phi-4",
    "mistral-small-24b-instruct-2501",
    "qwen3-next-80b-a3b",
);

// Speculative-decoding draft heads (`--speculative-draft-model-path NAME`): loadable by name
// like the models, but not servable models themselves, so not in `model_names`.
bundle!(DRAFT_MODELS, DRAFT_DIR = "models/draft":
    "qwen3-8b-eagle3",
);

/// Names of the bundled draft heads.
pub fn draft_model_names() -> Vec<&'static str> {
    names(DRAFT_MODELS)
}

fn names(table: &[(&'static str, &'static str)]) -> Vec<&'static str> {
    table.iter().map(|(n, _)| *n).collect()
}

fn lookup(table: &[(&'static str, &'static str)], name: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Names of the bundled hardware profiles, in table order.
pub fn hardware_names() -> Vec<&'static str> {
    names(HARDWARE)
}

/// Names of the bundled models, in table order.
pub fn model_names() -> Vec<&'static str> {
    names(MODELS)
}

/// The YAML text of a bundled hardware profile.
pub fn hardware_yaml(name: &str) -> Option<&'static str> {
    lookup(HARDWARE, name)
}

/// The YAML text of a bundled model.
pub fn model_yaml(name: &str) -> Option<&'static str> {
    lookup(MODELS, name)
}

/// What a `name_or_path` argument refers to.
enum Source {
    Bundled(&'static str, PathBuf),
    File(PathBuf),
}

/// Resolves a bundled name first; anything that exists on disk, contains a path separator or
/// has a file extension is a path; otherwise the name is unknown.
fn resolve(
    table: &[(&'static str, &'static str)],
    dir: &str,
    kind: &'static str,
    name_or_path: &str,
) -> Result<Source> {
    if let Some(text) = lookup(table, name_or_path) {
        let origin = PathBuf::from(format!("<bundled>/{dir}/{name_or_path}.yaml"));
        return Ok(Source::Bundled(text, origin));
    }
    let path = Path::new(name_or_path);
    let looks_like_path = name_or_path.contains(['/', '\\'])
        || path.extension().is_some_and(|e| !e.is_empty())
        || path.exists();
    let mut available = names(table).join(", ");
    if kind == "model" {
        // The bundled config.json files resolve by Hugging Face id too.
        for hf in super::bundled_hf::bundled_hf() {
            available += &format!(", {}", hf.hf_id());
        }
    }
    if looks_like_path && !name_or_path.is_empty() {
        // An id like `Qwen/Qwen2.5-72B-Instruct` that is no file here: say what to pass.
        let file_ext = path
            .extension()
            .is_some_and(|e| ["yaml", "yml", "json"].contains(&&*e.to_string_lossy()));
        let owner_and_name = matches!(name_or_path.split_once('/'),
            Some((owner, name)) if !owner.is_empty() && !name.is_empty() && !name.contains('/'));
        let hf_id =
            kind == "model" && owner_and_name && !file_ext && !name_or_path.starts_with('.');
        if hf_id && !path.exists() {
            return Err(Error::Msg(format!(
                "model `{name_or_path}` is neither bundled nor a file here: servesim reads no \
                 network; download its config.json (https://huggingface.co/{name_or_path}/blob/main/config.json) \
                 and pass its path; bundled: {available}"
            )));
        }
        return Ok(Source::File(path.to_path_buf()));
    }
    // `H100` for `h100-sxm5-80gb`: the one bundled name containing it, case aside.
    let lower = name_or_path.to_lowercase();
    let close: Vec<&str> = names(table)
        .into_iter()
        .filter(|n| !lower.is_empty() && n.contains(lower.as_str()))
        .collect();
    if let [one] = close[..] {
        return Err(Error::Msg(format!(
            "unknown {kind} `{name_or_path}`: did you mean `{one}`? available: {available}"
        )));
    }
    Err(Error::Unknown {
        kind,
        name: name_or_path.to_string(),
        available,
    })
}

/// Parses the YAML of a resolved source (reading the file if it is one).
fn load_yaml<T: DeserializeOwned>(source: Source) -> Result<(T, PathBuf)> {
    match source {
        Source::Bundled(text, origin) => Ok((from_yaml_str(text, &origin)?, origin)),
        Source::File(path) => Ok((from_yaml_str(&read_text(&path)?, &path)?, path)),
    }
}

/// Bundled specs already parsed and validated in this process, by the address of their
/// embedded text (which never changes): `validate`, `replay` and sweeps resolve the same
/// names once per run, and parsing a profile's YAML costs more than simulating a small run.
/// Files on disk are read and parsed every time.
type Parsed<T> = OnceLock<Mutex<Vec<(usize, T)>>>;

/// The spec of the bundled `text`, parsed by `parse` on its first use in the process.
fn parsed_once<T: Clone>(
    cache: &Parsed<T>,
    text: &'static str,
    parse: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let key = text.as_ptr() as usize;
    let cache = cache.get_or_init(Mutex::default);
    let hit = |c: &Vec<(usize, T)>| c.iter().find(|e| e.0 == key).map(|e| e.1.clone());
    if let Some(v) = cache.lock().ok().and_then(|c| hit(&c)) {
        return Ok(v);
    }
    let v = parse()?;
    if let Ok(mut c) = cache.lock() {
        c.push((key, v.clone()));
    }
    Ok(v)
}

/// The one bundled profile a GPU's short name names (`H100`, `B200`, `h100-sxm`, `NVIDIA
/// L40S`): lower-cased, spaces and `_` read as `-`, a leading `nvidia-` dropped; its first
/// token equal to the profile name's first token and every other token the start of one of the
/// profile name's tokens (so `H100-PCIe` or `A100-40GB` name none: they are other GPUs).
fn hardware_by_short_name(name: &str) -> Option<&'static str> {
    let norm = name.trim().to_lowercase().replace([' ', '_'], "-");
    let norm = norm.strip_prefix("nvidia-").unwrap_or(&norm);
    let mut tokens = norm.split('-').filter(|t| !t.is_empty());
    let first = tokens.next()?;
    let rest: Vec<&str> = tokens.collect();
    let mut found = hardware_names().into_iter().filter(|n| {
        n.split('-').next() == Some(first)
            && rest.iter().all(|t| n.split('-').any(|o| o.starts_with(t)))
    });
    match (found.next(), found.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Loads and validates a hardware profile: a bundled name, a GPU's short name naming one
/// bundled profile ([`hardware_by_short_name`], with a note saying which), or a path to a YAML
/// file.
pub fn load_hardware(name_or_path: &str) -> Result<HardwareProfile> {
    if lookup(HARDWARE, name_or_path).is_none() && !Path::new(name_or_path).exists() {
        if let Some(bundled) = hardware_by_short_name(name_or_path) {
            let mut hw = load_hardware(bundled)?;
            hw.notes.push(format!(
                "hardware `{name_or_path}` is the bundled profile {bundled} ({}); pass another \
                 profile YAML if the GPU differs (PCIe or NVL cards, other memory sizes)",
                hw.description
            ));
            return Ok(hw);
        }
    }
    static PARSED: Parsed<HardwareProfile> = OnceLock::new();
    let load = |source: Source| {
        let (hw, origin): (HardwareProfile, _) = load_yaml(source)?;
        hw.validate(&origin.display().to_string())?;
        Ok(hw)
    };
    match resolve(HARDWARE, HARDWARE_DIR, "hardware profile", name_or_path)? {
        Source::Bundled(text, origin) => {
            parsed_once(&PARSED, text, || load(Source::Bundled(text, origin)))
        }
        source => load(source),
    }
}

/// The last path component of a model argument, lower-cased, without Meta's `meta-` prefix
/// (`meta-llama/Meta-Llama-3.1-8B/` → `llama-3.1-8b`).
fn checkpoint_last(path: &str) -> Option<String> {
    let last = path
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()?
        .to_lowercase();
    Some(
        last.strip_prefix("meta-")
            .map(str::to_string)
            .unwrap_or(last),
    )
}

/// The bundled model whose name `last` is or starts with, followed by `-` (the longest).
fn bundled_prefix_of(last: &str) -> Option<&'static str> {
    model_names()
        .into_iter()
        .filter(|n| checkpoint_name::names_build_of(last, n))
        .max_by_key(|n| n.len())
}

/// The bundled model a Hugging Face id or path names, when obvious (`Qwen/Qwen3-8B` →
/// `qwen3-8b`, as in a log's `model=` or a pasted `--model-path`): the last path component,
/// lower-cased, equal to a bundled name or starting with one followed by `-`
/// (`Qwen3-Coder-480B-A35B-Instruct-w8a8` → `qwen3-coder-480b-a35b`).
pub fn model_from_path(path: &str) -> Option<&'static str> {
    bundled_prefix_of(&checkpoint_last(path)?)
}

/// A checkpoint named by id or path with no file here, resolved by name
/// ([`checkpoint_name`]): a same-architecture build is replaced by its bundled stand-in, then
/// the bundled model or bundled config the name starts with is loaded, and what the rest of
/// the name states (its weight format) applied. `None` when no bundled model fits.
fn by_checkpoint_name(name_or_path: &str) -> Result<Option<ModelSpec>> {
    let Some(last) = checkpoint_last(name_or_path) else {
        return Ok(None);
    };
    if let Some((arch, why)) = checkpoint_name::refused_by_name(&last) {
        return Err(Error::Msg(format!(
            "model `{name_or_path}` ({arch}): {why}, which servesim does not price"
        )));
    }
    if let Some(why) = super::checkpoint_name::mixed_precision(&last) {
        return Err(Error::Msg(format!(
            "model `{name_or_path}`: {why}; pass another build (the bf16 or FP8 checkpoint)"
        )));
    }
    if let Some(why) = checkpoint_name::other_model(&last) {
        return Err(Error::Msg(format!(
            "model `{name_or_path}`: {why}; servesim bundles no config for it: pass its \
             config.json"
        )));
    }
    let (base, note) = match checkpoint_name::same_architecture(&last) {
        Some((base, note)) => (base, Some(note)),
        None => (last.clone(), None),
    };
    let (mut model, suffix) = if let Some(name) = bundled_prefix_of(&base) {
        (load_model(name)?, base[name.len()..].to_string())
    } else if let Some((hf, matched)) = find_hf_prefix(&base) {
        (parsed_once_hf(hf)?, base[matched..].to_string())
    } else {
        return Ok(None);
    };
    checkpoint_name::apply_suffix(&mut model, name_or_path, &suffix)?;
    model.notes.extend(note);
    if let Some((tokens, note)) = super::checkpoint_context::own_context(&last) {
        model.context_length = tokens;
        model.notes.push(note);
    }
    // The checkpoint is the one named (`zai-org/GLM-4.6-FP8`), not the stand-in it is priced
    // with: `plan`'s launch command and the draft-is-target check name it.
    if super::hf_config::looks_like_hub_id(name_or_path) {
        model.hf_id = Some(name_or_path.to_string());
    }
    Ok(Some(model))
}

/// The bundled config whose short name `last` is or starts with, followed by `-` (the
/// longest), and the length of that short name as matched: without Meta's `meta-` prefix, as
/// `last` lost it (`meta-llama-3.1-405b`).
fn find_hf_prefix(last: &str) -> Option<(BundledHf, usize)> {
    super::bundled_hf::bundled_hf()
        .filter_map(|b| {
            let short = b.short_name();
            let short = short.strip_prefix("meta-").unwrap_or(&short);
            checkpoint_name::names_build_of(last, short).then_some((b, short.len()))
        })
        .max_by_key(|&(_, len)| len)
}

static PARSED_MODELS: Parsed<ModelSpec> = OnceLock::new();

fn parsed_once_hf(hf: BundledHf) -> Result<ModelSpec> {
    parsed_once(&PARSED_MODELS, hf.cache_key(), || hf.load())
}

/// Loads and validates a model: a bundled name, a path to a YAML file, or a Hugging Face
/// `config.json` (a `.json` file, or a directory containing `config.json`).
/// A Hugging Face id that is no file here (`Qwen/Qwen3-8B`) maps to the bundled model it
/// names ([`model_from_path`]); failing that, to a bundled config.json
/// ([`super::bundled_hf::find_hf`]: `moonshotai/Kimi-K2-Instruct`, `kimi-k2-instruct`).
pub fn load_model(name_or_path: &str) -> Result<ModelSpec> {
    if let Some(text) = lookup(DRAFT_MODELS, name_or_path) {
        return parsed_once(&PARSED_MODELS, text, || {
            let origin = PathBuf::from(format!("<bundled>/{DRAFT_DIR}/{name_or_path}.yaml"));
            let model: ModelSpec = from_yaml_str(text, &origin)?;
            model.validate(&origin.display().to_string())?;
            Ok(model)
        });
    }
    let unbundled = lookup(MODELS, name_or_path).is_none() && !Path::new(name_or_path).exists();
    if unbundled {
        if let Some(hf) = find_hf(name_or_path) {
            return parsed_once_hf(hf);
        }
        if let Some(model) = by_checkpoint_name(name_or_path)? {
            return Ok(model);
        }
    }
    let source = resolve(MODELS, MODEL_DIR, "model", name_or_path)?;
    if let Source::Bundled(text, origin) = source {
        return parsed_once(&PARSED_MODELS, text, || {
            let (model, origin): (ModelSpec, _) = load_yaml(Source::Bundled(text, origin))?;
            model.validate(&origin.display().to_string())?;
            Ok(model)
        });
    }
    let (model, origin): (ModelSpec, _) = match source {
        Source::File(path) if path.is_dir() || is_json(&path) => {
            let path = if path.is_dir() {
                path.join("config.json")
            } else {
                path
            };
            (model_from_hf_config(&read_text(&path)?, &path)?, path)
        }
        source => load_yaml(source)?,
    };
    model.validate(&origin.display().to_string())?;
    Ok(model)
}

fn is_json(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}
