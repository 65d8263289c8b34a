//! Scale-out: `--shard I/N` takes the points whose grid index is `I` modulo `N` (0 ≤ I < N,
//! so `I` can be a Slurm array task id or a Kubernetes job completion index as they are), and
//! `sweep::merge` joins the shards' files back into the file the whole sweep would have written.
//! Interleaving (rather than contiguous blocks) spreads cheap and expensive points evenly.
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Slice `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: write I/N with 0 ≤ I < N (e.g. 0/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<usize>().map_err(|_| bad())?,
            n.trim().parse::<usize>().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(format!(
                "shard {s}: the index must be between 0 and N-1 (shards are numbered from 0)"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// The grid indices of this shard, ascending.
    pub fn indices(&self, points: usize) -> Vec<usize> {
        (self.index..points).step_by(self.count).collect()
    }
}

/// Grid indices of a whole grid or of one shard.
pub fn indices(points: usize, shard: Option<Shard>) -> Vec<usize> {
    match shard {
        Some(s) => s.indices(points),
        None => (0..points).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_grid() {
        let all: Vec<usize> = (0..4)
            .flat_map(|i| Shard { index: i, count: 4 }.indices(10))
            .collect();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_eq!("1/4".parse::<Shard>().unwrap().indices(10), [1, 5, 9]);
        for bad in ["4/4", "1", "a/b", "0/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
