//! Run-to-run spread of repeated measurements: of the count, and of every
//! other figure (sides, stages, heap).

use std::collections::BTreeMap;

use crate::harness_name::HarnessName;
use crate::judge::Threshold;
use crate::measure::metrics::{Metric, Metrics};

/// The counts of one harness over repeated runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub harness: HarnessName,
    pub counts: Vec<u64>,
}

impl Spread {
    pub fn min(&self) -> u64 {
        self.counts.iter().copied().min().unwrap_or(0)
    }

    pub fn max(&self) -> u64 {
        self.counts.iter().copied().max().unwrap_or(0)
    }

    /// Largest minus smallest count: zero when the counts repeat exactly.
    pub fn spread(&self) -> u64 {
        self.max() - self.min()
    }

    /// Spread relative to the smallest count, in percent.
    pub fn spread_percent(&self) -> f64 {
        if self.min() == 0 {
            return 0.0;
        }
        self.spread() as f64 / self.min() as f64 * 100.0
    }

    /// A threshold this harness can live with: the default for its size
    /// ([`Threshold::for_count`]), unless the
    /// measured spread is so large that the default would flag noise, in
    /// which case four times the spread, so that noise alone never fails.
    pub fn recommended_threshold(&self) -> Threshold {
        let default = Threshold::for_count(self.min());
        let noisy = self.spread().saturating_mul(4);
        if noisy <= default.allowance(self.min()) {
            return default;
        }
        let relative = if self.min() == 0 {
            default.relative_percent
        } else {
            // Round up to two decimals so the printed value still covers it.
            (noisy as f64 / self.min() as f64 * 100.0 * 100.0).ceil() / 100.0
        };
        Threshold {
            relative_percent: relative
                .max(default.relative_percent)
                .min(super::MAX_PERCENT),
            absolute: default.absolute.max(noisy),
        }
    }
}

/// The spread of each figure over repeated runs of one harness.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FigureSpreads {
    values: BTreeMap<Metric, (u64, u64)>,
    runs: usize,
    /// Figures some runs had and others did not.
    inconsistent: Vec<Metric>,
}

impl FigureSpreads {
    /// Adds one run's figures.
    pub fn add(&mut self, metrics: &Metrics) {
        if self.runs > 0 {
            for metric in Metric::ALL {
                if self.values.contains_key(&metric) != metrics.contains_key(&metric)
                    && !self.inconsistent.contains(&metric)
                {
                    self.inconsistent.push(metric);
                }
            }
        }
        for (metric, value) in metrics {
            let range = self.values.entry(*metric).or_insert((*value, *value));
            *range = (range.0.min(*value), range.1.max(*value));
        }
        self.runs += 1;
    }

    /// How many figures the runs had.
    pub fn figures(&self) -> usize {
        self.values.len()
    }

    /// The largest spread (max - min) of any figure.
    pub fn largest_spread(&self) -> u64 {
        self.values
            .values()
            .map(|(min, max)| max - min)
            .max()
            .unwrap_or(0)
    }

    /// The figures that moved, or that only some runs had.
    pub fn moved(&self) -> Vec<Metric> {
        let mut moved: Vec<Metric> = self
            .values
            .iter()
            .filter(|(_, (min, max))| min != max)
            .map(|(metric, _)| *metric)
            .collect();
        moved.extend(self.inconsistent.iter().copied());
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_spreads_name_what_moved() {
        let mut spreads = FigureSpreads::default();
        spreads.add(&Metrics::from([
            (Metric::Server, 10),
            (Metric::ServerHeld, 5),
        ]));
        spreads.add(&Metrics::from([
            (Metric::Server, 10),
            (Metric::ServerHeld, 7),
        ]));
        assert_eq!(spreads.figures(), 2);
        assert_eq!(spreads.largest_spread(), 2);
        assert_eq!(spreads.moved(), [Metric::ServerHeld]);
        spreads.add(&Metrics::from([(Metric::Server, 10)]));
        assert_eq!(spreads.moved(), [Metric::ServerHeld, Metric::ServerHeld]);
    }

    #[test]
    fn zero_spread_keeps_the_default() {
        let spread = Spread {
            harness: crate::fixtures::name("a::b"),
            counts: vec![77_000_000; 10],
        };
        assert_eq!(spread.spread(), 0);
        assert_eq!(spread.recommended_threshold(), Threshold::default());
    }

    #[test]
    fn a_noisy_harness_gets_room_for_four_spreads() {
        let spread = Spread {
            harness: crate::fixtures::name("a::b"),
            counts: vec![96_000_000, 96_150_000, 96_085_000],
        };
        assert_eq!(spread.spread(), 150_000);
        let threshold = spread.recommended_threshold();
        assert!(threshold.allowance(96_000_000) >= 600_000, "{threshold:?}");
    }
}
