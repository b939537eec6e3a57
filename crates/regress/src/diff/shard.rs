//! Splitting the harnesses across CI runners.
//!
//! A diff measures every harness twice, one Valgrind process per core; with
//! many harnesses a pull request waits on one runner. `--shard K/N` measures
//! only the K-th of N deterministic parts of the sorted harness list, so N
//! runners can share the work, and `regress diff-merge` puts their reports
//! back together ([`super::report::DiffReport::merge`]).
//!
//! The split deals the sorted names out round-robin: every runner computes
//! the same list (it depends only on the two commits and the filters), each
//! name lands in exactly one shard, and neighbours in the list, which are
//! usually harnesses of the same library with similar costs, land in
//! different shards.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The most shards a diff may be split into (CI uses a handful).
pub const MAX_SHARDS: usize = 256;

/// Shard `index` of `count`, 1-based as people count. Read from a report,
/// it is checked like one given on the command line ([`Shard::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "RawShard")]
pub struct Shard {
    index: usize,
    count: usize,
}

/// A shard as it stands in a file, before it is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShard {
    index: usize,
    count: usize,
}

impl TryFrom<RawShard> for Shard {
    type Error = ShardError;

    fn try_from(raw: RawShard) -> Result<Shard, ShardError> {
        Shard::new(raw.index, raw.count)
    }
}

/// A `--shard` that names no shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("{text:?} is not a shard: expected K/N, e.g. 2/3 for the second of three")]
    Syntax { text: String },
    #[error("the number of shards must be at least 1")]
    NoShards,
    #[error("{count} shards are too many: at most {MAX_SHARDS}")]
    TooMany { count: usize },
    #[error("shard {index} of {count} does not exist: shards are numbered 1 to {count}")]
    OutOfRange { index: usize, count: usize },
}

impl Shard {
    pub fn new(index: usize, count: usize) -> Result<Shard, ShardError> {
        if count == 0 {
            return Err(ShardError::NoShards);
        }
        if count > MAX_SHARDS {
            return Err(ShardError::TooMany { count });
        }
        if index == 0 || index > count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard { index, count })
    }

    /// Which shard this is, from 1.
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many shards there are.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The items of this shard, from a list every shard sees in the same
    /// order.
    pub fn select<T: Clone>(&self, sorted: &[T]) -> Vec<T> {
        sorted
            .iter()
            .enumerate()
            .filter(|(position, _)| position % self.count == self.index - 1)
            .map(|(_, item)| item.clone())
            .collect()
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// Parses `K/N`, e.g. `2/3`.
    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let invalid = || ShardError::Syntax {
            text: text.to_owned(),
        };
        let (index, count) = text.trim().split_once('/').ok_or_else(invalid)?;
        let index = index.trim().parse().map_err(|_| invalid())?;
        let count = count.trim().parse().map_err(|_| invalid())?;
        Shard::new(index, count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(" 1 / 1 ".parse::<Shard>(), Ok(Shard { index: 1, count: 1 }));
        for bad in [
            "0/3",
            "4/3",
            "1/0",
            "3",
            "a/b",
            "-1/2",
            "1/2/3",
            "",
            "1/1000000000000000",
        ] {
            assert!(bad.parse::<Shard>().is_err(), "{bad:?} must be refused");
        }
        let error = "0/3".parse::<Shard>().unwrap_err();
        assert_eq!(error, ShardError::OutOfRange { index: 0, count: 3 });
        assert!(error.to_string().contains("numbered 1 to 3"), "{error}");
        assert!(matches!(
            "x/2".parse::<Shard>(),
            Err(ShardError::Syntax { .. })
        ));
    }

    /// A shard read from a report is checked like one from the command
    /// line: 10^15 shards would make a merge count to 10^15.
    #[test]
    fn a_deserialised_shard_is_checked() {
        let shard: Shard = serde_json::from_str(r#"{"index":2,"count":3}"#).expect("valid");
        assert_eq!((shard.index(), shard.count()), (2, 3));
        for bad in [
            r#"{"index":1,"count":1000000000000000}"#,
            r#"{"index":0,"count":3}"#,
            r#"{"index":4,"count":3}"#,
            r#"{"index":1,"count":0}"#,
            r#"{"index":1,"count":2,"x":1}"#,
        ] {
            assert!(serde_json::from_str::<Shard>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_item_lands_in_exactly_one_shard() {
        let names: Vec<String> = (0..11).map(|n| format!("lib::h{n:02}")).collect();
        for count in 1..=5 {
            let mut seen: Vec<String> = (1..=count)
                .flat_map(|index| Shard::new(index, count).expect("shard").select(&names))
                .collect();
            seen.sort();
            assert_eq!(seen, names, "{count} shards");
        }
    }

    #[test]
    fn deals_round_robin_and_deterministically() {
        let names = ["a", "b", "c", "d", "e"];
        let first = Shard::new(1, 2).expect("shard");
        assert_eq!(first.select(&names), vec!["a", "c", "e"]);
        assert_eq!(
            Shard::new(2, 2).expect("shard").select(&names),
            vec!["b", "d"]
        );
        assert_eq!(first.select(&names), first.select(&names));
        // More shards than harnesses: some are empty, which is not an error.
        assert!(Shard::new(7, 7).expect("shard").select(&names).is_empty());
        assert_eq!(first.to_string(), "1/2");
    }
}
