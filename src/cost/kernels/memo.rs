//! Process-wide memo of built deployments on the bundled tables: the same (hardware, model,
//! server) resolved again (the replays of one deployment in `validate`, a sweep's points that
//! differ only in the client, a bench's iterations) reuses the curves, the resolve-time graph
//! table and the envelope's ladder instances instead of building them again. An entry is
//! reused only for inputs equal to its own on every field (the derived `PartialEq` of the
//! three specs; a NaN anywhere never matches, so such inputs are simply built again), so the
//! output cannot depend on what ran before; the memo only ever saves time. The lookup compares
//! the stored specs field by field (no key is formatted: the `Debug` text of the three specs
//! cost ~0.1 M instructions, more than the rest of a small run's step pricing), and a hit
//! shares the built deployment ([`Shared`]) instead of copying its curves. Bounded: it is
//! emptied when it reaches [`MAX_ENTRIES`] (a calibration's thousands of candidate profiles
//! never hit it twice anyway).
use super::KernelCost;
use crate::cost::breakdown::StepBreakdown;
use crate::cost::{BatchShape, StepCost, StepTime};
use crate::error::Result;
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use std::sync::{Arc, Mutex, OnceLock};

/// Entries kept before the memo is emptied.
pub const MAX_ENTRIES: usize = 64;

/// A memo entry: the inputs it was built from and the deployment.
type Entry = (HardwareProfile, ModelSpec, ServerConfig, Shared);

/// A built deployment shared by every run that resolves the same inputs.
#[derive(Debug, Clone)]
pub struct Shared(Arc<KernelCost>);

impl StepCost for Shared {
    fn step_time(&self, shape: &BatchShape) -> StepTime {
        self.0.step_time(shape)
    }
    fn explain(&self, shape: &BatchShape) -> StepBreakdown {
        self.0.explain(shape)
    }
    fn group_step_time(&self, shapes: &[BatchShape]) -> StepTime {
        self.0.group_step_time(shapes)
    }
}

/// The deployment `build` makes for (`hw`, `model`, `server`), built once per process.
pub fn deployment(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
    build: impl FnOnce() -> Result<KernelCost>,
) -> Result<Shared> {
    static MEMO: OnceLock<Mutex<Vec<Entry>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Mutex::default);
    let same = |e: &&Entry| e.0 == *hw && e.1 == *model && e.2 == *server;
    if let Some(c) = memo
        .lock()
        .ok()
        .and_then(|m| m.iter().find(same).map(|e| e.3.clone()))
    {
        return Ok(c);
    }
    let cost = Shared(Arc::new(build()?));
    if let Ok(mut m) = memo.lock() {
        if m.len() >= MAX_ENTRIES {
            m.clear();
        }
        m.push((hw.clone(), model.clone(), server.clone(), cost.clone()));
    }
    Ok(cost)
}
