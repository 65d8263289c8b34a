//! The exact ShareGPT path: token counts of a user's ShareGPT JSON file under the model's own
//! Hugging Face tokenizer (`--dataset-path FILE --tokenizer PATH/tokenizer.json`).
//!
//! Counts are what bench_serving's `len(tokenizer.encode(text))` gives: special tokens added
//! (a Llama-3 BOS, for instance), added-token strings in the text matched as single tokens,
//! no truncation, no padding. Only the first two turns of conversations with at least two
//! turns are read (the key `conversations`, or `conversation` as bench_serving also accepts);
//! the file is streamed, never held whole, and tokenized in parallel batches.
//!
//! Tokenizing the full ShareGPT file takes a while, so the counts are cached as a length
//! table ([`super::sharegpt_table`] format) named by hashes of the dataset file and of the
//! tokenizer file: only the first run tokenizes. The cache directory is
//! `$SERVESIM_CACHE_DIR`, else `$XDG_CACHE_HOME/servesim`, else `~/.cache/servesim`; a cache
//! that cannot be written is skipped silently (it only saves time).
use super::sharegpt_table::LengthTable;
use crate::error::{Error, Result};
use serde::de::{DeserializeSeed, Error as _, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use tokenizers::Tokenizer;

/// Conversations tokenized per parallel batch.
const BATCH: usize = 1024;

/// The ShareGPT pairs' token counts, from the default cache directory or by tokenizing.
pub fn sharegpt_pairs(dataset: &Path, tokenizer: &Path) -> Result<LengthTable> {
    Ok(count_pairs(dataset, tokenizer, default_cache_dir().as_deref())?.0)
}

/// The default cache directory (see the module docs); `None` when no home is known.
pub fn default_cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("SERVESIM_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("servesim")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("servesim")))
}

/// Token counts of `dataset`'s pairs under `tokenizer` (a `tokenizer.json` or a directory
/// holding one), read from / written to `cache_dir` when given. The flag is true when the
/// counts came from the cache.
pub fn count_pairs(
    dataset: &Path,
    tokenizer: &Path,
    cache_dir: Option<&Path>,
) -> Result<(LengthTable, bool)> {
    let tok_path = if tokenizer.is_dir() {
        tokenizer.join("tokenizer.json")
    } else {
        tokenizer.to_path_buf()
    };
    let tok_bytes = std::fs::read(&tok_path).map_err(|e| Error::Io {
        path: tok_path.clone(),
        op: "read",
        reason: format!(
            "{e} (--tokenizer takes a local tokenizer.json or a directory holding one; \
                 servesim downloads nothing)"
        ),
    })?;
    let (data_hash, data_len) = hash_file(dataset)?;
    let cache_file = cache_dir.map(|d| {
        d.join(format!(
            "sharegpt-v1-{data_hash:016x}-{data_len}-{:016x}.lens",
            fnv1a(FNV_OFFSET, &tok_bytes)
        ))
    });
    if let Some(cached) = cache_file.as_deref().and_then(read_cache) {
        return Ok((cached, true));
    }
    let mut tok = Tokenizer::from_bytes(&tok_bytes).map_err(|e| Error::Parse {
        path: tok_path.clone(),
        line: None,
        reason: format!("not a Hugging Face tokenizer.json: {e}"),
    })?;
    // transformers' `encode` neither truncates nor pads, whatever the file configures.
    tok.with_truncation(None)
        .map_err(|e| Error::Msg(e.to_string()))?;
    tok.with_padding(None);
    let table = tokenize_file(dataset, &tok)?;
    if let Some(f) = cache_file {
        write_cache(&f, &table);
    }
    Ok((table, false))
}

fn read_cache(path: &Path) -> Option<LengthTable> {
    let bytes = std::fs::read(path).ok()?;
    LengthTable::parse(&bytes, &path.display().to_string()).ok()
}

/// Writes atomically (temporary file, then rename); failures only cost time later.
fn write_cache(path: &Path, table: &LengthTable) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, table.to_bytes()).is_ok() && std::fs::rename(&tmp, path).is_ok() {
        return;
    }
    let _ = std::fs::remove_file(&tmp);
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64-bit, continued from `h`.
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// FNV-1a hash and length of a file, streamed.
fn hash_file(path: &Path) -> Result<(u64, u64)> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut h, mut len) = (FNV_OFFSET, 0u64);
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            return Ok((h, len));
        }
        h = fnv1a(h, &buf[..n]);
        len += n as u64;
    }
}

/// Streams the JSON array of `path`, tokenizing each record's first two turns.
fn tokenize_file(path: &Path, tok: &Tokenizer) -> Result<LengthTable> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 20, file));
    let mut c = Collector {
        tok,
        pending: Vec::with_capacity(BATCH),
        table: LengthTable::default(),
    };
    let parse_err = |e: serde_json::Error| Error::Parse {
        path: path.to_path_buf(),
        line: (e.line() > 0).then_some(e.line()),
        reason: format!("not a ShareGPT JSON array: {e}"),
    };
    (&mut c).deserialize(&mut de).map_err(parse_err)?;
    de.end().map_err(parse_err)?;
    c.flush().map_err(|reason| Error::Parse {
        path: path.to_path_buf(),
        line: None,
        reason,
    })?;
    Ok(c.table)
}

/// Accumulates pairs and tokenizes them in batches.
struct Collector<'a> {
    tok: &'a Tokenizer,
    pending: Vec<(String, String)>,
    table: LengthTable,
}

impl Collector<'_> {
    fn flush(&mut self) -> std::result::Result<(), String> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = self
            .pending
            .iter()
            .flat_map(|(p, c)| [p.as_str(), c.as_str()])
            .collect();
        let enc = self
            .tok
            .encode_batch_fast(texts, true)
            .map_err(|e| format!("tokenizer failed: {e}"))?;
        let len = |i: usize| u32::try_from(enc[i].len()).unwrap_or(u32::MAX);
        self.table
            .pairs
            .extend((0..self.pending.len()).map(|i| (len(2 * i), len(2 * i + 1))));
        self.pending.clear();
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for &mut Collector<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for &mut Collector<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of ShareGPT records")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while let Some(rec) = seq.next_element::<Record>()? {
            if let Some(pair) = rec.conversations.or(rec.conversation).and_then(|t| t.0) {
                self.pending.push(pair);
                if self.pending.len() >= BATCH {
                    self.flush().map_err(A::Error::custom)?;
                }
            }
        }
        Ok(())
    }
}

/// One record: only its turns matter.
#[derive(Deserialize)]
struct Record {
    #[serde(default)]
    conversations: Option<FirstTwo>,
    #[serde(default)]
    conversation: Option<FirstTwo>,
}

/// The texts of turns 0 and 1 when there are at least two turns; later turns are skipped.
struct FirstTwo(Option<(String, String)>);

#[derive(Deserialize)]
struct Turn {
    value: String,
}

impl<'de> Deserialize<'de> for FirstTwo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FirstTwo;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of turns")
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> std::result::Result<FirstTwo, A::Error> {
                let first = s.next_element::<Turn>()?;
                let second = match first {
                    Some(_) => s.next_element::<Turn>()?,
                    None => None,
                };
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstTwo(first.zip(second).map(|(a, b)| (a.value, b.value))))
            }
        }
        d.deserialize_seq(V)
    }
}
