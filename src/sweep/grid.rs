//! Sweep grids: any `servesim run` flag given as a list or a range, and the cartesian product
//! of those lists in a fixed order.
//!
//! Value syntax (one flag's value, items separated by commas, expanded left to right):
//! * `x` — a literal, passed to the flag as is (`inf`, `fcfs`, `h100-sxm5-80gb`, `0.5.6`);
//! * `a..b` — integers from `a` to `b` inclusive: the powers of two between them when both are
//!   powers of two (`4..512` = 4, 8, …, 512), otherwise every integer (`3..6` = 3, 4, 5, 6);
//! * `a:b:s` — the arithmetic range a, a+s, … up to b inclusive (`1:32:1`, `0.5:2:0.5`);
//!   `a:b` means step 1.
//!
//! An item that is not two integers around `..` or two or three numbers around `:` is a literal
//! (so paths such as `../models/x.yaml` stay literals). Empty lists and items, descending
//! ranges, zero or negative steps, duplicate values and unknown flags are errors. Switches
//! (`--disable-radix-cache`) take no value, or a list of `true`/`false`.
//!
//! Order: axes in command-line order, the first axis varying slowest, each axis's values in
//! the order written. Point `i` is the mixed-radix decomposition of `i`.
use crate::error::{Error, Result};
use crate::spec::workload::{ClientFlags, ScenarioFlags};
use clap::{Arg, ArgAction, ArgMatches, CommandFactory, Parser};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Largest number of points a grid may have.
pub const MAX_POINTS: usize = 1 << 20;

/// Prefix of the clap ids of grid flags (kept apart from the host command's own ids).
const ID_PREFIX: &str = "grid:";

/// The flags of one simulation point, parsed exactly as `servesim run` parses them.
#[derive(Parser, Debug, Clone, Default, PartialEq)]
#[command(no_binary_name = true, disable_help_flag = true)]
pub struct PointArgs {
    #[command(flatten)]
    pub flags: ScenarioFlags,
}

/// One flag a grid may vary.
#[derive(Debug, Clone)]
pub struct FlagInfo {
    /// Long name without dashes (`max-concurrency`).
    pub long: String,
    /// The clap id of the grid flag (`grid:max-concurrency`).
    id: String,
    /// Other accepted long names (`tp-size`).
    pub aliases: Vec<String>,
    /// A switch (`--disable-radix-cache`): no value, or `true`/`false` items.
    pub switch: bool,
    /// Values may start with `-` (`--chunked-prefill-size -1`).
    pub hyphen_values: bool,
    pub help: String,
    /// A bench_serving (client) flag.
    pub client: bool,
}

/// Every flag of [`PointArgs`], in declaration order.
pub fn run_flags() -> &'static [FlagInfo] {
    static FLAGS: OnceLock<Vec<FlagInfo>> = OnceLock::new();
    FLAGS.get_or_init(|| {
        let client_ids: Vec<String> =
            <ClientFlags as clap::Args>::augment_args(clap::Command::new("client"))
                .get_arguments()
                .map(|a| a.get_id().to_string())
                .collect();
        PointArgs::command()
            .get_arguments()
            .filter_map(|a| {
                let long = a.get_long()?.to_string();
                Some(FlagInfo {
                    aliases: a
                        .get_all_aliases()
                        .unwrap_or_default()
                        .into_iter()
                        .map(String::from)
                        .collect(),
                    switch: matches!(a.get_action(), ArgAction::SetTrue),
                    hyphen_values: a.is_allow_hyphen_values_set(),
                    help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                    client: client_ids.iter().any(|c| c == a.get_id().as_str()),
                    id: format!("{ID_PREFIX}{long}"),
                    long,
                })
            })
            .collect()
    })
}

/// The flag named `long` (or one of its aliases).
pub fn flag_info(long: &str) -> Option<&'static FlagInfo> {
    run_flags()
        .iter()
        .find(|f| f.long == long || f.aliases.iter().any(|a| a == long))
}

/// Grid flags as given on a command line: `(long name, value)` in command-line order.
/// Flattened into `sweep` and `plan`, it accepts every `run` flag with a list as its value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GridArgs {
    pub flags: Vec<(String, String)>,
}

impl clap::FromArgMatches for GridArgs {
    fn from_arg_matches(m: &ArgMatches) -> std::result::Result<Self, clap::Error> {
        let mut found: Vec<(usize, String, String)> = run_flags()
            .iter()
            .filter_map(|f| {
                let value = m.get_one::<String>(&f.id)?;
                Some((m.index_of(&f.id)?, f.long.clone(), value.clone()))
            })
            .collect();
        found.sort();
        Ok(GridArgs {
            flags: found.into_iter().map(|(_, f, v)| (f, v)).collect(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for GridArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        run_flags().iter().fold(cmd, |cmd, f| {
            let mut arg = Arg::new(f.id.as_str())
                .long(f.long.as_str())
                .aliases(f.aliases.iter().map(String::as_str))
                .action(ArgAction::Set)
                .allow_hyphen_values(f.hyphen_values)
                .help_heading(if f.client {
                    "Client flags (each a value, a list or a range)"
                } else {
                    "Hardware, model and server flags (each a value, a list or a range)"
                })
                .help(f.help.clone());
            arg = if f.switch {
                arg.num_args(0..=1)
                    .default_missing_value("true")
                    .value_name("true,false")
            } else {
                arg.value_name("LIST")
            };
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// One flag of a grid and its values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// Long flag name without dashes.
    pub flag: String,
    /// The value as written (`1,2,4..512`).
    pub spec: String,
    /// The expanded values, in order.
    pub values: Vec<String>,
}

/// A cartesian product of flag values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Grid {
    pub axes: Vec<Axis>,
}

impl Grid {
    /// [`Grid::parse`] of borrowed `(flag, value)` pairs.
    pub fn of(flags: &[(&str, &str)]) -> Result<Grid> {
        let owned: Vec<(String, String)> = flags
            .iter()
            .map(|(f, v)| (f.to_string(), v.to_string()))
            .collect();
        Self::parse(&owned)
    }

    /// Expands `(flag, value)` pairs into a grid, checking every flag and every value.
    pub fn parse(flags: &[(String, String)]) -> Result<Grid> {
        let mut axes: Vec<Axis> = Vec::new();
        for (name, spec) in flags {
            let info = flag_info(name).ok_or_else(|| {
                Error::Msg(format!(
                    "unknown flag `--{name}`: a sweep varies `servesim run` flags ({})",
                    run_flags()
                        .iter()
                        .map(|f| format!("--{}", f.long))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            if axes.iter().any(|a| a.flag == info.long) {
                return Err(Error::Msg(format!("--{} is given twice", info.long)));
            }
            let values = expand(&info.long, spec, info.switch)?;
            for v in &values {
                check_value(info, v)?;
            }
            axes.push(Axis {
                flag: info.long.clone(),
                spec: spec.clone(),
                values,
            });
        }
        let grid = Grid { axes };
        grid.checked_len()?;
        Ok(grid)
    }

    fn checked_len(&self) -> Result<usize> {
        self.axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
            .filter(|&n| n <= MAX_POINTS)
            .ok_or_else(|| {
                Error::Msg(format!(
                    "the grid has more than {MAX_POINTS} points; split it (e.g. with --shard) or narrow the ranges"
                ))
            })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    /// A grid always has at least one point (the empty grid is the single base scenario).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(flag, value)` of every axis at point `i` (the last axis varies fastest).
    pub fn point(&self, mut i: usize) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .axes
            .iter()
            .rev()
            .map(|a| {
                let n = a.values.len();
                let v = &a.values[i % n];
                i /= n;
                (a.flag.as_str(), v.as_str())
            })
            .collect();
        out.reverse();
        out
    }

    /// The flags of point `i` as `servesim run` arguments.
    pub fn argv(&self, i: usize) -> Vec<String> {
        self.point(i)
            .into_iter()
            .flat_map(|(flag, v)| point_flag(flag, v))
            .collect()
    }

    /// Point `i` parsed as `servesim run` flags.
    pub fn args(&self, i: usize) -> Result<PointArgs> {
        parse_point(&self.argv(i))
    }

    /// The axes with more than one value.
    pub fn varying(&self) -> impl Iterator<Item = &Axis> {
        self.axes.iter().filter(|a| a.values.len() > 1)
    }

    /// Whether the grid has an axis for `flag` (its name without `--`).
    pub fn sets_flag(&self, flag: &str) -> bool {
        self.axes.iter().any(|a| a.flag == flag)
    }
}

/// `--flag value`, or for a switch `--flag` when true and nothing when false.
fn point_flag(flag: &str, value: &str) -> Vec<String> {
    match flag_info(flag) {
        Some(f) if f.switch => match value {
            "true" => vec![format!("--{flag}")],
            _ => vec![],
        },
        _ => vec![format!("--{flag}"), value.to_string()],
    }
}

fn parse_point(argv: &[String]) -> Result<PointArgs> {
    PointArgs::try_parse_from(argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("invalid value");
        Error::Msg(first.trim_start_matches("error: ").to_string())
    })
}

/// Parses `value` alone with `--flag` so a bad value fails before anything runs.
fn check_value(info: &FlagInfo, value: &str) -> Result<()> {
    if info.switch && !["true", "false"].contains(&value) {
        return Err(Error::Msg(format!(
            "--{}: `{value}` is not true or false (a switch takes no value, or a list of true/false)",
            info.long
        )));
    }
    parse_point(&point_flag(&info.long, value))
        .map(|_| ())
        .map_err(|e| Error::Msg(format!("--{}: {e}", info.long)))
}

/// Expands one flag's value (see the module doc).
pub fn expand(flag: &str, spec: &str, switch: bool) -> Result<Vec<String>> {
    let err = |msg: String| Error::Msg(format!("--{flag} {spec}: {msg}"));
    if spec.trim().is_empty() {
        return Err(err("empty list".into()));
    }
    let mut out: Vec<String> = Vec::new();
    for item in spec.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(err("empty item in the list".into()));
        }
        let values = if switch {
            vec![item.to_string()]
        } else if let Some(r) = int_range(item).transpose() {
            r.map_err(err)?
        } else if let Some(r) = step_range(item).transpose() {
            r.map_err(err)?
        } else {
            vec![item.to_string()]
        };
        for v in values {
            if out.contains(&v) {
                return Err(err(format!("value {v} appears twice")));
            }
            out.push(v);
        }
    }
    Ok(out)
}

/// Most values one range may produce.
const MAX_RANGE: u64 = 1 << 16;

/// `a..b`, or `None` when `item` is not two integers around `..`.
fn int_range(item: &str) -> std::result::Result<Option<Vec<String>>, String> {
    let Some((a, b)) = item.split_once("..") else {
        return Ok(None);
    };
    let (Ok(a), Ok(b)) = (a.trim().parse::<u64>(), b.trim().parse::<u64>()) else {
        return Ok(None);
    };
    if a > b {
        return Err(format!("descending range {a}..{b} (write {b}..{a})"));
    }
    if a.is_power_of_two() && b.is_power_of_two() {
        let (lo, hi) = (a.trailing_zeros(), b.trailing_zeros());
        return Ok(Some((lo..=hi).map(|k| (1u64 << k).to_string()).collect()));
    }
    if b - a >= MAX_RANGE {
        return Err(format!("range {a}..{b} has more than {MAX_RANGE} values"));
    }
    Ok(Some((a..=b).map(|v| v.to_string()).collect()))
}

/// `a:b:s` or `a:b`, or `None` when `item` is not numbers around `:`.
fn step_range(item: &str) -> std::result::Result<Option<Vec<String>>, String> {
    let parts: Vec<&str> = item.split(':').map(str::trim).collect();
    if !(2..=3).contains(&parts.len()) {
        return Ok(None);
    }
    let nums: Vec<f64> = match parts.iter().map(|p| p.parse::<f64>()).collect() {
        Ok(n) => n,
        Err(_) => return Ok(None),
    };
    let (a, b, s) = (nums[0], nums[1], nums.get(2).copied().unwrap_or(1.0));
    if !(a.is_finite() && b.is_finite() && s.is_finite()) {
        return Ok(None);
    }
    if a > b {
        return Err(format!("descending range {item} (start above end)"));
    }
    if s <= 0.0 {
        return Err(format!(
            "range {item}: the step must be > 0, got {}",
            parts.get(2).unwrap_or(&"1")
        ));
    }
    let count = ((b - a) / s + 1e-9).floor() + 1.0;
    if count > MAX_RANGE as f64 {
        return Err(format!("range {item} has more than {MAX_RANGE} values"));
    }
    let integral = parts.iter().all(|p| p.parse::<i64>().is_ok());
    Ok(Some(
        (0..count as u64)
            .map(|i| {
                let v = a + i as f64 * s;
                if integral {
                    format!("{}", v.round() as i64)
                } else {
                    // Round away float noise (0.1 + 2·0.1 = 0.30000000000000004).
                    format!("{}", (v * 1e9).round() / 1e9)
                }
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(spec: &str) -> Vec<String> {
        expand("x", spec, false).unwrap()
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(ex("1,2,4..16"), ["1", "2", "4", "8", "16"]);
        assert_eq!(ex("3..6"), ["3", "4", "5", "6"]);
        assert_eq!(ex("1:4:1"), ["1", "2", "3", "4"]);
        assert_eq!(ex("1:4"), ["1", "2", "3", "4"]);
        assert_eq!(ex("0.1:0.5:0.1"), ["0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert_eq!(ex("inf,2"), ["inf", "2"]);
        assert_eq!(ex("../m.yaml"), ["../m.yaml"]);
        assert_eq!(ex("1:10:4"), ["1", "5", "9"]);
    }

    #[test]
    fn bad_specs() {
        for (spec, needle) in [
            ("", "empty list"),
            ("1,,2", "empty item"),
            ("8..1", "descending"),
            ("4:1:1", "descending"),
            ("1:4:0", "step must be > 0"),
            ("1,1", "appears twice"),
        ] {
            let e = expand("tp", spec, false).unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains("--tp"), "{spec}: {e}");
        }
    }

    #[test]
    fn product_order_is_row_major() {
        let g = Grid::parse(&[
            ("tp".into(), "1,2".into()),
            ("max-concurrency".into(), "1..4".into()),
        ])
        .unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(g.point(0), [("tp", "1"), ("max-concurrency", "1")]);
        assert_eq!(g.point(4), [("tp", "2"), ("max-concurrency", "2")]);
        assert_eq!(g.args(5).unwrap().flags.server.tp, Some(2));
    }

    #[test]
    fn flags_and_values_are_checked() {
        let e = Grid::parse(&[("tpp".into(), "1".into())]).unwrap_err();
        assert!(e.to_string().contains("unknown flag `--tpp`"), "{e}");
        let e = Grid::parse(&[("tp".into(), "1,x".into())]).unwrap_err();
        assert!(e.to_string().contains("--tp"), "{e}");
        let g = Grid::parse(&[("disable-radix-cache".into(), "true,false".into())]).unwrap();
        assert!(g.args(0).unwrap().flags.server.disable_radix_cache);
        assert!(!g.args(1).unwrap().flags.server.disable_radix_cache);
        let g = Grid::parse(&[("tp-size".into(), "2".into())]).unwrap();
        assert_eq!(g.axes[0].flag, "tp");
    }
}
