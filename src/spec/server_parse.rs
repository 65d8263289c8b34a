//! Checks and parses of single SGLang server flags (ranges, enum names) into typed values
//! ([`SchedulePolicy`] among them), each failing with one line naming the flag and its limit.
//! Combining them with the version defaults into a
//! [`ServerConfig`](super::server::ServerConfig) is `spec::server`.
use super::load_balance::LoadBalanceMethod;
use super::model::KvDtype;
use super::version::Version;
use crate::error::{Error, Result};
use serde::Serialize;

/// Waiting-queue order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulePolicy {
    Fcfs,
    Lpm,
    Lof,
    Random,
    DfsWeight,
}

/// `--dp`: 1 when absent, else 1 … 65536.
pub(super) fn dp(flag: Option<u64>) -> Result<u64> {
    let dp = flag.unwrap_or(1);
    if dp == 0 || dp > 1 << 16 {
        return Err(Error::invalid(
            "--dp",
            "dp",
            format!("must be between 1 and 65536, got {dp}"),
        ));
    }
    Ok(dp)
}

/// `--load-balance-method` (round robin when absent).
pub(super) fn router(flag: Option<&str>) -> Result<LoadBalanceMethod> {
    match flag {
        None => Ok(LoadBalanceMethod::RoundRobin),
        Some(m) => LoadBalanceMethod::parse(m).ok_or_else(|| Error::Unknown {
            kind: "load balance method",
            name: m.into(),
            available: "round_robin, shortest_queue".into(),
        }),
    }
}

/// `--tp`: 1 when absent; a size no deployment has is refused (the model's own divisibility
/// check is `ModelSpec::check_tp`).
pub(super) fn tp(flag: Option<u64>) -> Result<u64> {
    let tp = flag.unwrap_or(1);
    if tp > 1 << 20 {
        return Err(Error::invalid(
            "--tp",
            "tp",
            format!("{tp} is not a plausible TP size"),
        ));
    }
    Ok(tp)
}

/// `--kv-cache-dtype` (`auto` or absent: the model's own).
pub(super) fn kv_dtype(flag: Option<&str>, model_default: KvDtype) -> Result<KvDtype> {
    match flag {
        None | Some("auto") => Ok(model_default),
        Some("bf16") | Some("bfloat16") | Some("fp16") => Ok(KvDtype::Bf16),
        Some("fp8") | Some("fp8_e4m3") | Some("fp8_e5m2") => Ok(KvDtype::Fp8),
        Some(o) => Err(Error::Unknown {
            kind: "kv cache dtype",
            name: o.into(),
            available: "auto, bf16, fp8_e4m3, fp8_e5m2".into(),
        }),
    }
}

/// `--fused-moe-config`: `Some(true)` tuned, `Some(false)` default, `None` absent.
pub(super) fn fused_moe_tuned(flag: Option<&str>) -> Result<Option<bool>> {
    match flag {
        None => Ok(None),
        Some("tuned") => Ok(Some(true)),
        Some("default") => Ok(Some(false)),
        Some(other) => Err(Error::invalid(
            "--fused-moe-config",
            "fused_moe_config",
            format!("must be tuned or default, got {other:?}"),
        )),
    }
}

/// `--chunked-prefill-size`: `None` (chunking off) for ≤ 0, `default()` when absent.
pub(super) fn chunked_prefill_size(
    flag: Option<i64>,
    default: impl FnOnce() -> u64,
) -> Result<Option<u64>> {
    match flag {
        Some(c) if c <= 0 => Ok(None),
        Some(c) if c as u64 > 1 << 40 => Err(Error::invalid(
            "--chunked-prefill-size",
            "chunked_prefill_size",
            format!("must be ≤ 2^40 (or -1 to disable chunking), got {c}"),
        )),
        Some(c) => Ok(Some(c as u64)),
        None => Ok(Some(default())),
    }
}

/// `--mem-fraction-static`: in (0, 1), `default()` when absent.
pub(super) fn mem_fraction_static(flag: Option<f64>, default: impl FnOnce() -> f64) -> Result<f64> {
    match flag {
        Some(f) if !(f.is_finite() && f > 0.0 && f < 1.0) => Err(Error::invalid(
            "--mem-fraction-static",
            "mem_fraction_static",
            format!("must be in (0, 1), got {f}"),
        )),
        Some(f) => Ok(f),
        None => Ok(default()),
    }
}

/// SGLang's server_args asserts `chunked_prefill_size % page_size == 0` at startup; a smaller
/// or unaligned chunk would leave a page-rounded prompt no whole page to prefill, and the
/// scheduler would stall.
pub(super) fn check_chunk_fits_pages(chunk: Option<u64>, page_size: u64) -> Result<()> {
    match chunk.filter(|c| c % page_size != 0) {
        Some(c) => Err(Error::invalid(
            "--chunked-prefill-size",
            "chunked_prefill_size",
            format!(
                "must be a multiple of --page-size {page_size} (SGLang asserts \
                 `chunked_prefill_size % page_size == 0`), got {c}"
            ),
        )),
        None => Ok(()),
    }
}

/// `--schedule-policy` (fcfs from 0.4.5, lpm before).
pub(super) fn schedule_policy(flag: Option<&str>, version: Version) -> Result<SchedulePolicy> {
    Ok(match flag {
        None if version < Version::new(0, 4, 5) => SchedulePolicy::Lpm,
        None | Some("fcfs") => SchedulePolicy::Fcfs,
        Some("lpm") => SchedulePolicy::Lpm,
        Some("lof") => SchedulePolicy::Lof,
        Some("random") => SchedulePolicy::Random,
        Some("dfs-weight") => SchedulePolicy::DfsWeight,
        Some(o) => {
            return Err(Error::Unknown {
                kind: "schedule policy",
                name: o.into(),
                available: "fcfs, lpm, lof, random, dfs-weight".into(),
            })
        }
    })
}

/// `--schedule-conservativeness` as given (1 when absent): finite and > 0.
pub(super) fn schedule_conservativeness(flag: Option<f64>) -> Result<f64> {
    let c = flag.unwrap_or(1.0);
    if !(c.is_finite() && c > 0.0) {
        return Err(Error::invalid(
            "--schedule-conservativeness",
            "schedule_conservativeness",
            "must be a finite number > 0",
        ));
    }
    Ok(c)
}

/// A count flag that must be > 0 and ≤ 2^40 when given.
pub(super) fn positive_flag(flag: &str, v: Option<u64>) -> Result<Option<u64>> {
    match v {
        Some(0) => Err(Error::invalid(
            flag,
            flag.trim_start_matches('-').replace('-', "_"),
            "must be > 0",
        )),
        Some(x) if x > 1 << 40 => Err(Error::invalid(
            flag,
            flag.trim_start_matches('-').replace('-', "_"),
            "must be ≤ 2^40",
        )),
        o => Ok(o),
    }
}
