//! `--params` lists: comma-separated constant names, each optionally `@hw` / `@shared`,
//! parsed into [`Param`]s for a fit of one or several profiles.
use super::params::Param;
use crate::error::{Error, Result};
use crate::spec::hardware::HardwareProfile;

/// Parses a comma-separated `--params` list (duplicates are an error).
pub fn parse_list(list: &str, profile: &HardwareProfile) -> Result<Vec<Param>> {
    parse_list_of(list, std::slice::from_ref(profile))
}

/// Parses a comma-separated `--params` list for a fit of `profiles` (duplicates are an error).
pub fn parse_list_of(list: &str, profiles: &[HardwareProfile]) -> Result<Vec<Param>> {
    let mut out: Vec<Param> = Vec::new();
    for name in list.split(',').filter(|s| !s.trim().is_empty()) {
        let p = Param::parse(name, profiles)?;
        if out.iter().any(|q| q.name == p.name) {
            return Err(Error::invalid(
                "--params",
                &p.name,
                "listed twice".to_string(),
            ));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(Error::invalid("--params", "params", "no parameter given"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::params::{all_params, AtBound, Param, Sharing};

    #[test]
    fn sharing_suffixes_and_bounds() {
        let h = crate::spec::bundled::load_hardware("a100-sxm4-80gb").unwrap();
        let ps = parse_list_of(
            "memory,step_cpu_ns,gemm@shared,stream_latency_ns@hw",
            std::slice::from_ref(&h),
        )
        .unwrap();
        let sharing: Vec<Sharing> = ps.iter().map(|p| p.sharing).collect();
        use Sharing::*;
        assert_eq!(sharing, [PerHardware, Shared, Shared, PerHardware]);
        assert_eq!(ps[2].sharing_why, "as --params asks");
        assert!(parse_list_of("memory@everywhere", std::slice::from_ref(&h)).is_err());
        assert!(parse_list_of("attention.fa3.decode", std::slice::from_ref(&h)).is_err());
        // Every prior lies inside its bounds, and every bound has a reason.
        for p in all_params(&h) {
            assert!(p.lo <= p.prior && p.prior <= p.hi, "{}", p.name);
            assert!(!p.bounds_why.is_empty() && !p.sharing_why.is_empty());
        }
        let c = Param::parse("collective", std::slice::from_ref(&h)).unwrap();
        assert_eq!(c.at_bound(0.3), Some(AtBound::Lower));
        assert_eq!(c.at_bound(0.5), None);
        let floor = Param::parse("moe_layer_ns", std::slice::from_ref(&h)).unwrap();
        assert_eq!(floor.at_bound(0.0), None, "no floor at all is allowed");
        assert!(c.bound_note(0.95).unwrap().contains("at upper bound 0.95"));
    }
}
