//! SGLang / bench_serving versions as SGLang writes them (`0.5.1`, `0.5.6.post2`), ordered so
//! version-dependent behaviour can be selected with plain comparisons.
use std::fmt;
use std::str::FromStr;

/// A version `major.minor.patch[.postN]`; `rcN` parts sort before the release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// 0 for an `rc` pre-release, 1 for the release, 2 + N for `.postN`.
    pub stage: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version {
            major,
            minor,
            patch,
            stage: 1,
        }
    }
    pub const fn post(major: u32, minor: u32, patch: u32, post: u32) -> Self {
        Version {
            major,
            minor,
            patch,
            stage: 2 + post,
        }
    }
    /// The default SGLang version everywhere: the newest release on PyPI, 0.5.23. Server
    /// defaults and bench_serving rules were checked release by release up to the last of
    /// [`Version::KNOWN`] (PyPI packages of 0.5.8 … 0.5.23; see `spec::defaults`,
    /// `spec::graph_defaults`, `spec::version_rules` and README "SGLang versions after 0.5.8").
    pub const NEWEST: Version = Version::new(0, 5, 23);
    /// Versions servesim knows, oldest first (shown in errors and `--help`).
    pub const KNOWN: &'static [&'static str] = &[
        "0.3.0",
        "0.4.0",
        "0.4.1",
        "0.4.3",
        "0.4.5",
        "0.4.6",
        "0.4.7",
        "0.4.8",
        "0.4.9",
        "0.4.10",
        "0.5.0",
        "0.5.1",
        "0.5.2",
        "0.5.3",
        "0.5.4",
        "0.5.5",
        "0.5.6",
        "0.5.6.post2",
        "0.5.7",
        "0.5.8",
        "0.5.9",
        "0.5.10",
        "0.5.11",
        "0.5.12",
        "0.5.13",
        "0.5.13.post1",
        "0.5.14",
        "0.5.15",
        "0.5.15.post1",
        "0.5.16",
        "0.5.17",
        "0.5.18",
        "0.5.19",
        "0.5.20",
        "0.5.21",
        "0.5.22",
        "0.5.23",
    ];
}

/// Why SGLang releases after the newest of [`Version::KNOWN`] are refused: nobody has read
/// their server defaults, scheduler and bench_serving yet.
const NEWER_NOT_MODELLED: &str =
    "later releases' server defaults, scheduler and bench_serving are not checked yet";

impl Version {
    /// `self` if servesim models it: between the oldest and the newest of [`Version::KNOWN`]
    /// (versions in between, like 0.4.2, follow the rules of the nearest older one). Else an
    /// error naming `flag` and listing the known versions.
    pub fn check_known(self, flag: &str) -> crate::error::Result<Version> {
        let known = |i: usize| Version::KNOWN[i].parse::<Version>().ok();
        let (Some(oldest), Some(newest)) = (known(0), known(Version::KNOWN.len() - 1)) else {
            return Ok(self);
        };
        if (oldest..=newest).contains(&self) {
            return Ok(self);
        }
        let why = if self > newest {
            format!(" (the newest modelled release is {newest}; {NEWER_NOT_MODELLED})")
        } else {
            String::new()
        };
        Err(crate::error::Error::invalid(
            format!("{flag} {self}"),
            flag.trim_start_matches('-').replace('-', "_"),
            format!(
                "servesim models versions {oldest} to {newest}{why}; known: {}",
                Version::KNOWN.join(", ")
            ),
        ))
    }
}

impl FromStr for Version {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().trim_start_matches('v');
        let bad = || format!("`{s}` is not a version like 0.5.1 or 0.5.6.post2");
        let mut parts = t.split('.');
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let third = parts.next().unwrap_or("0");
        // `0.5.0rc2`: digits then an rc suffix.
        let digits: String = third.chars().take_while(|c| c.is_ascii_digit()).collect();
        let rest = &third[digits.len()..];
        let patch: u32 = digits.parse().map_err(|_| bad())?;
        let mut stage = 1;
        if rest.starts_with("rc") {
            stage = 0;
        } else if !rest.is_empty() {
            return Err(bad());
        }
        if let Some(p) = parts.next() {
            // `.postN`, or vLLM's plain fourth number (`0.10.1.1`), read as a post-release.
            let n: u32 = p
                .strip_prefix("post")
                .unwrap_or(p)
                .parse()
                .ok()
                .ok_or_else(bad)?;
            stage = 2 + n;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Version {
            major,
            minor,
            patch,
            stage,
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        match self.stage {
            0 => write!(f, "rc"),
            1 => Ok(()),
            n => write!(f, ".post{}", n - 2),
        }
    }
}

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Accept both `0.5.1` (string) and YAML floats like `0.5` are rejected as ambiguous.
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_and_orders() {
        let a: Version = "0.5.6".parse().unwrap();
        let b: Version = "0.5.6.post2".parse().unwrap();
        let c: Version = "0.5.0rc2".parse().unwrap();
        assert!(
            a < b
                && c < "0.5.0".parse().unwrap()
                && "0.4.10".parse::<Version>().unwrap() > "0.4.9".parse().unwrap()
        );
        assert_eq!(b.to_string(), "0.5.6.post2");
        assert_eq!(Version::NEWEST.to_string(), "0.5.23");
        assert!("0.5".parse::<Version>().is_ok());
        assert!("x.5".parse::<Version>().is_err());
        assert!("0.5.6.rc".parse::<Version>().is_err());
    }
    #[test]
    fn known_range_ends_at_the_newest_checked_release() {
        let ok = |s: &str| {
            s.parse::<Version>()
                .unwrap()
                .check_known("--sglang-version")
        };
        // Released after 0.5.8 and checked (every PyPI release up to 0.5.23): accepted, as
        // are post-releases in between.
        for s in [
            "0.5.9",
            "0.5.10.post1",
            "0.5.13.post1",
            "0.5.15.post1",
            "0.5.16",
            "0.5.19",
            "0.5.22",
            "0.5.23",
        ] {
            assert!(ok(s).is_ok(), "{s}");
        }
        assert_eq!(
            Version::KNOWN.last().unwrap().parse::<Version>().unwrap(),
            Version::new(0, 5, 23)
        );
        // The default is a release whose every changed rule is modelled.
        assert!(Version::KNOWN.contains(&Version::NEWEST.to_string().as_str()));
        // 0.5.24 (not read) is refused, naming the range and the newest modelled release.
        let e = ok("0.5.24").unwrap_err().to_string();
        assert!(
            e.contains("--sglang-version 0.5.24")
                && e.contains("0.3.0 to 0.5.23")
                && e.contains("newest modelled release is 0.5.23"),
            "{e}"
        );
    }
}
