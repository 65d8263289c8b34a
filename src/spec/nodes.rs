//! How one tensor-parallel group sits on nodes: SGLang's `--nnodes`.
//!
//! SGLang launches `tp / nnodes` ranks of the group on each node
//! (`launch_tensor_parallel_group`, entrypoints/engine.py and managers/data_parallel_controller.py
//! at 0.5.9: `nnodes_per_tp_group = max(nnodes // pp_size, 1)`,
//! `tp_size_per_node = tp_size // nnodes_per_tp_group`; servesim has no pipeline parallelism,
//! so pp = 1). With plain data parallelism every replica's group is laid out the same way. So
//! `--tp 8 --nnodes 2` is 4 GPUs on each of two nodes, and every all-reduce crosses the network,
//! although 8 GPUs would fit one node. Without the flag servesim packs the group onto as few
//! nodes as hold it (what a user sweeping `--tp` means).
use super::hardware::HardwareProfile;
use crate::error::{Error, Result};

/// `--nnodes` checked against the group and the node: `None` when not given.
pub fn resolve(nnodes: Option<u64>, tp: u64, hw: &HardwareProfile) -> Result<Option<u64>> {
    let Some(n) = nnodes else {
        return Ok(None);
    };
    let per_node = u64::from(hw.link.devices_per_node.max(1));
    let bad = |why: String| Err(Error::invalid("--nnodes", "nnodes", why));
    if n == 0 {
        return bad("must be at least 1".into());
    }
    if tp % n != 0 {
        return bad(format!(
            "SGLang runs tp / nnodes ranks on each node, so --tp {tp} must be a multiple of \
             --nnodes {n}"
        ));
    }
    if tp / n > per_node {
        return bad(format!(
            "--tp {tp} over {n} node(s) puts {} ranks on a node, but a {} node has {per_node} \
             devices; use --nnodes {}",
            tp / n,
            hw.name,
            tp.div_ceil(per_node)
        ));
    }
    Ok(Some(n))
}

/// Ranks of a `tp` group on one node: `tp / nnodes` when given, else the node's devices
/// (the group packed onto as few nodes as hold it).
pub fn group_ranks_per_node(nnodes: Option<u64>, tp: u64, devices_per_node: u32) -> u64 {
    match nnodes {
        Some(n) if n > 0 => (tp / n).max(1),
        _ => u64::from(devices_per_node.max(1)),
    }
}
