//! Two counted runs, function by function and line by line.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use regress_profile::callgrind_out::Costs;

/// The most differing lines kept per function (the count of the function
/// says the rest).
pub const MAX_LINES: usize = 20;

/// A function whose self cost differs between two runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionDiff {
    pub function: String,
    pub file: String,
    /// Its self cost in the first run and in the second.
    pub counts: [i64; 2],
    /// The lines whose cost differs (line 0: no line data), at most
    /// [`MAX_LINES`].
    pub lines: Vec<LineDiff>,
}

/// A source line whose self cost differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineDiff {
    pub line: u64,
    pub counts: [i64; 2],
}

/// Every function (by file and name) whose self cost, or the cost of any
/// of its lines, differs between `a` and `b`, largest difference first.
/// Every function is compared, however small.
pub fn compare(a: &Costs, b: &Costs) -> Vec<FunctionDiff> {
    let keys: BTreeSet<&(String, String)> = a.keys().chain(b.keys()).collect();
    let mut diffs = Vec::new();
    for key in keys {
        let empty = Default::default();
        let (la, lb) = (a.get(key).unwrap_or(&empty), b.get(key).unwrap_or(&empty));
        if la == lb {
            continue;
        }
        let lines: BTreeSet<&u64> = la.keys().chain(lb.keys()).collect();
        let mut differing = Vec::new();
        for line in lines {
            let counts = [
                la.get(line).copied().unwrap_or(0),
                lb.get(line).copied().unwrap_or(0),
            ];
            if counts[0] != counts[1] {
                differing.push(LineDiff {
                    line: *line,
                    counts,
                });
            }
        }
        if differing.is_empty() {
            continue; // only zero-cost entries differ
        }
        differing.truncate(MAX_LINES);
        diffs.push(FunctionDiff {
            file: key.0.clone(),
            function: key.1.clone(),
            counts: [la.values().sum(), lb.values().sum()],
            lines: differing,
        });
    }
    diffs.sort_by_key(|diff| std::cmp::Reverse((diff.counts[0] - diff.counts[1]).unsigned_abs()));
    diffs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs(entries: &[(&str, u64, i64)]) -> Costs {
        let mut costs = Costs::new();
        for (function, line, cost) in entries {
            *costs
                .entry(("f.c".to_owned(), (*function).to_owned()))
                .or_default()
                .entry(*line)
                .or_default() += cost;
        }
        costs
    }

    #[test]
    fn equal_runs_have_no_difference() {
        let a = costs(&[("f", 1, 10), ("g", 2, 1)]);
        assert!(compare(&a, &a.clone()).is_empty());
    }

    #[test]
    fn a_moved_cost_is_found_by_line_even_when_the_function_total_is_equal() {
        let a = costs(&[("f", 1, 10), ("f", 2, 5), ("g", 1, 3)]);
        let b = costs(&[("f", 1, 11), ("f", 2, 4), ("g", 1, 3), ("h", 9, 1)]);
        let diffs = compare(&a, &b);
        assert_eq!(diffs.len(), 2);
        let f = diffs.iter().find(|d| d.function == "f").expect("f");
        assert_eq!(f.counts, [15, 15]);
        assert_eq!(f.lines.len(), 2);
        let h = diffs.iter().find(|d| d.function == "h").expect("h");
        assert_eq!(h.counts, [0, 1]);
    }
}
