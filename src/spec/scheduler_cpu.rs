//! How SGLang's scheduler spends CPU time per step, by version group: whether the overlap
//! ("zero-overhead") scheduler hides the CPU work of one step under the GPU work of the
//! previous one by default, and whether that overlap runs the forward pass on a second Python
//! thread (which takes turns with the scheduler thread on the GIL) or on a CUDA stream of the
//! scheduler's own thread. The CPU time itself (`overheads.step_cpu_ns`,
//! `overheads.per_request_cpu_ns`) is a property of the host and stays in the hardware profile,
//! expressed for the single-thread loop; the worker-thread era multiplies it by the profile's
//! bounded `overheads.worker_thread_cpu_scale`. [`crate::cost::overheads::Overheads`] adds it
//! serially when overlap is off, else takes the larger of CPU and GPU time.
//!
//! Other version differences the issue lists are modelled elsewhere: the CUDA-graph capture
//! lists by version in [`super::defaults::capture_batch_sizes`] (decode batches above the list
//! run eagerly and pay `eager_layer_ns` per layer), and torch.compile (only up to batch 32,
//! and only with `--enable-torch-compile`, off by default) is not modelled.
use super::version::Version;

/// One version group: the versions from `since` up to the next group's `since`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedulerGroup {
    pub since: Version,
    /// The overlap scheduler runs unless disabled.
    pub overlap_by_default: bool,
    /// When the overlap scheduler runs, the forward pass is launched from a second Python
    /// thread (`tp_worker_overlap_thread.py`) that shares the GIL with the scheduler thread.
    pub overlap_on_worker_thread: bool,
    /// Where the behaviour is documented.
    pub source: &'static str,
}

/// Version groups, oldest first.
pub const SCHEDULER_GROUPS: &[SchedulerGroup] = &[
    SchedulerGroup {
        since: Version::new(0, 0, 0),
        overlap_by_default: false,
        overlap_on_worker_thread: true,
        source: "before 0.3.6 the overlap scheduler was opt-in (--enable-overlap-schedule, \
                 experimental; PR #1738 2024-10-21), on the worker thread of PR #1687",
    },
    SchedulerGroup {
        since: Version::new(0, 3, 6),
        overlap_by_default: true,
        overlap_on_worker_thread: true,
        source: "SGLang PR #2067 'Enable overlap by default' (2024-11-18), first released in \
                 0.3.6; --disable-overlap-schedule turns it off; the forward pass still runs \
                 on the overlap worker thread (GIL contention: SGLang issue #2573)",
    },
    SchedulerGroup {
        since: Version::new(0, 5, 4),
        overlap_by_default: true,
        overlap_on_worker_thread: false,
        source: "SGLang PR #11210 'Remove overlap thread' (2025-10-04), first released in \
                 0.5.4: the overlap runs on a CUDA forward stream of the scheduler thread \
                 (FutureMap), one Python thread",
    },
];

/// The group `version` belongs to.
pub fn group(version: Version) -> &'static SchedulerGroup {
    SCHEDULER_GROUPS
        .iter()
        .rev()
        .find(|g| version >= g.since)
        .unwrap_or(&SCHEDULER_GROUPS[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_default_from_0_3_6() {
        assert!(!group("0.3.0".parse().unwrap()).overlap_by_default);
        assert!(!group("0.3.5".parse().unwrap()).overlap_by_default);
        assert!(group("0.3.6".parse().unwrap()).overlap_by_default);
        assert!(group(Version::NEWEST).overlap_by_default);
        // The worker thread: from PR #1687 up to 0.5.3, gone in 0.5.4 (PR #11210).
        assert!(group("0.4.6".parse().unwrap()).overlap_on_worker_thread);
        assert!(group("0.5.3".parse().unwrap()).overlap_on_worker_thread);
        assert!(!group("0.5.4".parse().unwrap()).overlap_on_worker_thread);
        assert!(!group(Version::NEWEST).overlap_on_worker_thread);
        let mut since: Vec<Version> = SCHEDULER_GROUPS.iter().map(|g| g.since).collect();
        since.sort();
        assert_eq!(
            since,
            SCHEDULER_GROUPS.iter().map(|g| g.since).collect::<Vec<_>>()
        );
    }
}
