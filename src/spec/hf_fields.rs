//! The typed, error-reporting view of a Hugging Face `config.json` that the config reader
//! ([`super::hf_config`]) and its per-concern modules (`hf_arch`, `hf_quant`, `hf_vision`) share:
//! a leaf module, so they import it and not each other.
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// A parsed config.json with typed, error-reporting accessors. JSON `null` counts as absent.
/// For the `text_config` of a multimodal wrapper, keys it lacks are looked up in the wrapper
/// (`outer`: `tie_word_embeddings`, `quantization_config`).
pub(super) struct Config<'a> {
    pub(super) obj: &'a Map<String, Value>,
    pub(super) outer: Option<&'a Map<String, Value>>,
    pub(super) source: String,
}

impl Config<'_> {
    pub(super) fn get(&self, key: &str) -> Option<&Value> {
        let own = self.obj.get(key).filter(|v| !v.is_null());
        own.or_else(|| self.outer?.get(key).filter(|v| !v.is_null()))
    }

    pub(super) fn missing(&self, key: &str) -> Error {
        Error::invalid(&self.source, key, "missing from config.json")
    }

    /// A required non-negative integer.
    pub(super) fn u64(&self, key: &str) -> Result<u64> {
        self.opt_u64(key)?.ok_or_else(|| self.missing(key))
    }

    pub(super) fn u64_or(&self, key: &str, default: u64) -> Result<u64> {
        Ok(self.opt_u64(key)?.unwrap_or(default))
    }

    pub(super) fn opt_u64(&self, key: &str) -> Result<Option<u64>> {
        self.get(key)
            .map(|v| as_u64(v).ok_or_else(|| self.bad(key, "a non-negative integer", v)))
            .transpose()
    }

    pub(super) fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| self.bad(key, "true or false", v)),
        }
    }

    pub(super) fn bad(&self, key: &str, expected: &str, got: &Value) -> Error {
        Error::invalid(&self.source, key, format!("must be {expected}, got {got}"))
    }
}

/// A JSON number that is a non-negative integer (also `4096.0`).
pub(super) fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1e18)
            .map(|f| f as u64)
    })
}
