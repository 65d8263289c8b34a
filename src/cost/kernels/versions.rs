//! Which SGLang version's kernel tables price a run. AIConfigurator measured SGLang's kernels
//! under several SGLang versions per GPU (`hardware-profiles/kernels/<system>/<version>/`,
//! e.g. h100_sxm: GEMM under 0.5.6.post2 and 0.5.14, fused MoE under 0.5.10 and 0.5.14), and
//! kernel timings change between versions (attention backends, MoE runners, GEMM libraries).
//! A run is priced by the tables of the version closest to the one it ran
//! (`--sglang-version`, or the default):
//! - per op, the nearest table version not newer than the run's, else the oldest newer one;
//! - a version directory may lack an op, or a shape of it: the op (and each lookup) falls back
//!   to the next version in that order ([`preference`]), so every version's measurements are
//!   used before the roofline is;
//! - every GPU applies the same order, so the cross-GPU envelope compares GPUs on the same
//!   table version wherever both have it ([`super::envelope`]).
//!
//! A run older or newer than every table version of its GPU (by release: 0.5.6 and
//! 0.5.6.post2 are one release) gets one note: "priced with SGLang X tables; run is Y".
use crate::spec::version::Version;

/// Indices of `available` in the order a run at `run` prefers them: the versions not newer
/// than `run`, newest first, then the newer ones, oldest first. Deterministic for any input
/// order (ties between equal versions keep their input order).
pub fn preference(run: Version, available: &[Version]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..available.len()).collect();
    idx.sort_by(|&a, &b| {
        let (va, vb) = (available[a], available[b]);
        match (va <= run, vb <= run) {
            (true, true) => vb.cmp(&va),
            (false, false) => va.cmp(&vb),
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
        }
    });
    idx
}

/// The release of `v` (`0.5.6.post2` → `0.5.6`): post-releases and release candidates share
/// their release's kernels.
fn release(v: Version) -> (u32, u32, u32) {
    (v.major, v.minor, v.patch)
}

/// The version-span note of a run at `run` priced with tables of versions `used` (the first
/// choice of each op) out of `available`: `Some` when `run`'s release lies outside the span
/// of `available`'s releases.
pub fn span_note(run: Version, used: &[Version], available: &[Version]) -> Option<String> {
    let lo = available.iter().copied().min()?;
    let hi = available.iter().copied().max()?;
    if (release(lo)..=release(hi)).contains(&release(run)) {
        return None;
    }
    let mut used = used.to_vec();
    used.sort();
    used.dedup();
    let mut names: Vec<String> = used.iter().map(|v| v.to_string()).collect();
    let last = names.pop()?;
    let names = match names.is_empty() {
        true => last,
        false => format!("{} and {last}", names.join(", ")),
    };
    let side = if release(run) < release(lo) {
        "older"
    } else {
        "newer"
    };
    Some(format!(
        "priced with SGLang {names} tables; run is {run} ({side} than every measured kernel table of this GPU, {lo} to {hi})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn order(run: &str, avail: &[&str]) -> Vec<String> {
        let vs: Vec<Version> = avail.iter().map(|s| v(s)).collect();
        preference(v(run), &vs)
            .into_iter()
            .map(|i| avail[i].to_string())
            .collect()
    }

    #[test]
    fn nearest_not_newer_first_then_the_oldest_newer() {
        let h100 = ["0.5.14", "0.5.6.post2", "0.5.10", "0.5.9"];
        // 0.5.8: 0.5.6.post2 is the only one not newer; then 0.5.9 < 0.5.10 < 0.5.14.
        assert_eq!(
            order("0.5.8", &h100),
            ["0.5.6.post2", "0.5.9", "0.5.10", "0.5.14"]
        );
        // 0.5.6 is older than 0.5.6.post2: every table is newer, the oldest first.
        assert_eq!(
            order("0.5.6", &h100),
            ["0.5.6.post2", "0.5.9", "0.5.10", "0.5.14"]
        );
        // An exact match wins; older ones (nearest first) before any newer one.
        assert_eq!(
            order("0.5.10", &h100),
            ["0.5.10", "0.5.9", "0.5.6.post2", "0.5.14"]
        );
        assert_eq!(
            order("0.6.0", &h100),
            ["0.5.14", "0.5.10", "0.5.9", "0.5.6.post2"]
        );
        // Nearest not newer beats a newer one that is closer (0.5.12 vs 0.5.10 and 0.5.14:
        // 0.5.10; 0.5.9 run with 0.5.6.post2 and 0.5.10: 0.5.6.post2 first).
        assert_eq!(order("0.5.12", &["0.5.14", "0.5.10"]), ["0.5.10", "0.5.14"]);
        assert_eq!(
            order("0.5.9", &["0.5.10", "0.5.6.post2"]),
            ["0.5.6.post2", "0.5.10"]
        );
        assert!(order("0.5.1", &[]).is_empty());
    }

    #[test]
    fn a_run_outside_the_span_gets_one_line() {
        let b200 = [v("0.5.9"), v("0.5.10"), v("0.5.14")];
        let note = span_note(v("0.4.7"), &[v("0.5.14"), v("0.5.9"), v("0.5.14")], &b200).unwrap();
        assert_eq!(
            note,
            "priced with SGLang 0.5.9 and 0.5.14 tables; run is 0.4.7 (older than every measured kernel table of this GPU, 0.5.9 to 0.5.14)"
        );
        assert!(span_note(
            v("0.5.6.post2"),
            &[v("0.5.14"), v("0.5.10"), v("0.5.9")],
            &b200
        )
        .unwrap()
        .starts_with(
            "priced with SGLang 0.5.9, 0.5.10 and 0.5.14 tables; run is 0.5.6.post2 (older"
        ));
        assert!(span_note(v("0.5.10"), &[v("0.5.10")], &b200).is_none());
        assert!(span_note(v("0.6.0"), &[v("0.5.14")], &b200)
            .unwrap()
            .contains("run is 0.6.0 (newer than"));
        // 0.5.6 is the release of 0.5.6.post2: inside H100's span.
        let h100 = [v("0.5.6.post2"), v("0.5.14")];
        assert!(span_note(v("0.5.6"), &[v("0.5.6.post2")], &h100).is_none());
        assert!(span_note(v("0.5.1"), &[], &[]).is_none());
    }
}
