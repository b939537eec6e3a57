//! The one judge of a change in instruction count, and what it judges with.
//!
//! Both the baseline gate ([`gate`]: a measurement against its committed
//! baseline) and `regress diff` (head against base, both measured now) ask
//! the same question: is the change from one count to another larger than
//! the harness's threshold allows? [`judge`] is the only place that answers
//! it, so the two can never disagree about what "regressed" means.
//!
//! Counts come from files (records, baselines, shard reports) and are
//! treated as hostile: the arithmetic is done in `i128`, where the
//! difference of two `u64` counts cannot overflow, and the allowance
//! saturates instead of wrapping.

pub mod baseline;
pub mod bless;
pub mod figures;
pub mod gate;
pub mod noise;

use serde::{Deserialize, Serialize};

/// When a change in count is worth failing for.
///
/// The counts repeat to the instruction, so the threshold is not a noise
/// margin; it is the smallest change worth a reviewer's attention. A change
/// counts when it exceeds the larger of the relative part of the baseline and
/// the absolute floor. The floor keeps tiny paths from failing on a handful
/// of instructions of allocator or harness drift.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Threshold {
    /// Percent of the baseline count, e.g. `0.05` for 0.05 %.
    pub relative_percent: f64,
    /// Instructions; changes up to this size never count.
    pub absolute: u64,
}

impl Default for Threshold {
    /// 0.05 % with a floor of 1,000 instructions. For the RSA-4096 handshake
    /// (~77 M) that is ~38 K instructions: a few hundred executed lines of C,
    /// well above the zero run-to-run spread and well below any change a
    /// maintainer would want to hear about.
    fn default() -> Threshold {
        Threshold {
            relative_percent: 0.05,
            absolute: 1_000,
        }
    }
}

impl Threshold {
    /// The threshold of heap figures (allocations, bytes): 0.1 %, the
    /// threshold rustls's ci-bench gates its heap figures with, and no
    /// floor. A floor is there for counts that move a little when code
    /// moves; heap figures do not (they are the sizes a program asks for,
    /// not where its code lies: a rebuild that moved instruction counts
    /// left every heap figure as it was), so any change beyond 0.1 % is a
    /// change in what the code allocates. On a handshake's ~50 KiB held per
    /// connection that is ~50 bytes: one small allocation more per
    /// connection, ~50 MB over a million idle connections. A path that
    /// allocates nothing fails on its first allocation.
    pub fn heap_default() -> Threshold {
        Threshold {
            relative_percent: 0.1,
            absolute: 0,
        }
    }

    /// The threshold a new baseline of `instructions` gets: the default,
    /// with the absolute floor lowered to 1 % of the count (but at least 10
    /// instructions) for paths so small that 1,000 instructions would be
    /// most of them: a 7,715-instruction X.509 parse must not be allowed
    /// to grow by 13 % unnoticed.
    pub fn for_count(instructions: u64) -> Threshold {
        let default = Threshold::default();
        Threshold {
            absolute: (instructions / 100).clamp(10, default.absolute),
            ..default
        }
    }

    /// The largest change, in instructions, that does not count for a
    /// baseline of `baseline` instructions. A relative part beyond `u64`
    /// (a hand-edited percentage) saturates; a negative or non-finite one
    /// (refused when a baseline loads) counts as zero.
    pub fn allowance(&self, baseline: u64) -> u64 {
        let relative = (baseline as f64 * self.relative_percent / 100.0).floor();
        // `as` saturates at both ends and maps NaN to 0.
        let relative = relative as u64;
        relative.max(self.absolute)
    }

    /// Checks a threshold read from a file: a percentage from 0 to 100 and
    /// an absolute floor below 2^63. A larger one would disable the gate
    /// without a word (a change of 1e300 % never counts), so it is refused.
    pub fn validate(&self) -> Result<(), ThresholdProblem> {
        let percent = self.relative_percent;
        if !(percent.is_finite() && (0.0..=MAX_PERCENT).contains(&percent)) {
            return Err(ThresholdProblem::Percent { value: percent });
        }
        if self.absolute > crate::limits::MAX_COUNT {
            return Err(ThresholdProblem::Absolute {
                value: self.absolute,
            });
        }
        Ok(())
    }
}

/// The largest relative threshold: a change of more than the whole count.
pub const MAX_PERCENT: f64 = 100.0;

/// A threshold that would make the gate meaningless.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ThresholdProblem {
    #[error("threshold.relative_percent must be a number from 0 to {MAX_PERCENT}, not {value}")]
    Percent { value: f64 },
    #[error(
        "threshold.absolute is {value}, more than any count ({})",
        crate::limits::MAX_COUNT
    )]
    Absolute { value: u64 },
}

/// How a count moved, as the judge sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// More instructions than the threshold allows: a failure.
    Regressed,
    /// Fewer instructions than the threshold allows: worth saying, never a
    /// failure.
    Improved,
    /// A change no larger than the threshold allows.
    WithinThreshold,
    /// Exactly the same count.
    Unchanged,
}

impl Change {
    /// Whether the change is beyond the threshold, either way.
    pub fn is_significant(self) -> bool {
        matches!(self, Change::Regressed | Change::Improved)
    }

    pub fn label(self) -> &'static str {
        match self {
            Change::Regressed => "REGRESSED",
            Change::Improved => "improved",
            Change::WithinThreshold => "within threshold",
            Change::Unchanged => "unchanged",
        }
    }
}

/// The judge's verdict on one pair of counts, with what it was judged by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub base: u64,
    pub head: u64,
    /// The largest change the threshold allows for `base`.
    pub allowance: u64,
    pub threshold: Threshold,
    pub change: Change,
}

impl Judgement {
    /// `head - base`, exact for any two `u64` counts.
    pub fn delta(&self) -> i128 {
        i128::from(self.head) - i128::from(self.base)
    }

    /// The size of the change, exact for any two `u64` counts.
    pub fn magnitude(&self) -> u64 {
        self.head.abs_diff(self.base)
    }

    /// The relative change in percent; `None` for a base of 0.
    pub fn percent(&self) -> Option<f64> {
        (self.base > 0).then(|| self.delta() as f64 / self.base as f64 * 100.0)
    }
}

/// Judges a change from `base` to `head` instructions: it counts when it is
/// larger than the threshold's allowance for `base`.
pub fn judge(base: u64, head: u64, threshold: Threshold) -> Judgement {
    let allowance = threshold.allowance(base);
    let magnitude = head.abs_diff(base);
    let change = if magnitude == 0 {
        Change::Unchanged
    } else if magnitude <= allowance {
        Change::WithinThreshold
    } else if head > base {
        Change::Regressed
    } else {
        Change::Improved
    };
    Judgement {
        base,
        head,
        allowance,
        threshold,
        change,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_by_the_larger_of_relative_and_absolute() {
        // 0.05 % of 77,000,000 is 38,500.
        let base = 77_000_000;
        let change = |head| judge(base, head, Threshold::default()).change;
        assert_eq!(change(base), Change::Unchanged);
        assert_eq!(change(base + 38_500), Change::WithinThreshold);
        assert_eq!(change(base - 38_500), Change::WithinThreshold);
        assert_eq!(change(base + 38_501), Change::Regressed);
        assert_eq!(change(base - 38_501), Change::Improved);
        assert_eq!(judge(base, base, Threshold::default()).allowance, 38_500);
        // A tiny path falls back on the 1,000-instruction floor.
        let small = judge(10_000, 10_900, Threshold::default());
        assert_eq!(
            (small.change, small.allowance),
            (Change::WithinThreshold, 1_000)
        );
        assert_eq!(small.delta(), 900);
        assert!((small.percent().expect("percent") - 9.0).abs() < 1e-9);
    }

    /// Hostile counts from a hand-edited file: no overflow, no panic, and
    /// the verdict still follows the sign of the change.
    #[test]
    fn extreme_counts_neither_overflow_nor_wrap() {
        let up = judge(0, u64::MAX, Threshold::default());
        assert_eq!(up.change, Change::Regressed);
        assert_eq!(up.delta(), i128::from(u64::MAX));
        assert_eq!(up.percent(), None);
        let down = judge(u64::MAX, 1, Threshold::default());
        assert_eq!(down.change, Change::Improved);
        assert_eq!(down.delta(), 1 - i128::from(u64::MAX));
        let broken = Threshold {
            relative_percent: f64::NAN,
            absolute: 7,
        };
        assert!(broken.validate().is_err());
        assert_eq!(broken.allowance(1_000_000), 7);
    }

    /// A threshold that would let any change through is refused, not
    /// applied: 1e300 % would judge every count "within threshold".
    #[test]
    fn thresholds_that_disable_the_gate_are_refused() {
        let with = |relative_percent, absolute| Threshold {
            relative_percent,
            absolute,
        };
        assert!(Threshold::default().validate().is_ok());
        assert!(with(100.0, crate::limits::MAX_COUNT).validate().is_ok());
        assert!(with(0.0, 0).validate().is_ok());
        for bad in [
            with(1e300, 0),
            with(100.01, 0),
            with(-1.0, 0),
            with(f64::INFINITY, 0),
            with(0.05, u64::MAX),
            with(0.05, crate::limits::MAX_COUNT + 1),
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        // Within the bounds, the arithmetic of the largest counts is exact.
        let max = crate::limits::MAX_COUNT;
        let widest = judge(max, 1, with(100.0, max));
        assert_eq!(widest.change, Change::WithinThreshold);
        assert_eq!(judge(1, max, with(100.0, 0)).change, Change::Regressed);
    }

    #[test]
    fn small_paths_get_a_proportionate_floor() {
        assert_eq!(Threshold::for_count(77_000_000), Threshold::default());
        assert_eq!(Threshold::for_count(100_000).absolute, 1_000);
        assert_eq!(Threshold::for_count(37_763).absolute, 377);
        assert_eq!(Threshold::for_count(947).absolute, 10);
        assert_eq!(Threshold::for_count(947).allowance(947), 10);
    }
}
