//! Process-wide memo of built deployments on the bundled tables: the same (hardware, model,
//! server) resolved again (the replays of one deployment in `validate`, a sweep's points that
//! differ only in the client, a bench's iterations) reuses the curves, the resolve-time graph
//! table and the envelope's ladder instances instead of building them again. The key is the
//! full `Debug` text of the three inputs (every field, floats round-trip exact), so an entry
//! is only reused for identical inputs and the output cannot depend on what ran before; the
//! memo only ever saves time. Bounded: it is emptied when it reaches [`MAX_ENTRIES`] (a
//! calibration's thousands of candidate profiles never hit it twice anyway).
use super::KernelCost;
use crate::error::Result;
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Entries kept before the memo is emptied.
pub const MAX_ENTRIES: usize = 64;

/// The deployment `build` makes for (`hw`, `model`, `server`), built once per process.
pub fn deployment(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
    build: impl FnOnce() -> Result<KernelCost>,
) -> Result<KernelCost> {
    static MEMO: OnceLock<Mutex<HashMap<String, KernelCost>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Mutex::default);
    let key = format!("{hw:?}\n{model:?}\n{server:?}");
    if let Some(c) = memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(c);
    }
    let cost = build()?;
    if let Ok(mut m) = memo.lock() {
        if m.len() >= MAX_ENTRIES {
            m.clear();
        }
        m.insert(key, cost.clone());
    }
    Ok(cost)
}
