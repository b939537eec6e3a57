//! The gate of a run's other figures: the instructions of each side, stage
//! and the glue, and the heap figures, each against its baseline entry.
//!
//! Every figure is judged by the one [`judge`], with the harness's
//! instruction threshold for instructions and its heap threshold for
//! allocations and bytes. An entry blessed before a figure existed still
//! gates the count, and for that figure asks for a bless: it is *not
//! gated*, which the gate's unmatched policy turns into a failure (the
//! default) or a loud warning, never a silent pass.

use std::fmt;

use super::baseline::{BaselineEntry, BaselineFile};
use super::{judge, Change, Judgement};
use crate::format::{count, signed_percent};
use crate::harness_name::HarnessName;
use crate::measure::measurement::Measurement;
use crate::measure::metrics::Metric;

/// The verdicts on a run's figures.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figures {
    /// Figures both the run and the entry have, judged.
    pub judged: Vec<(Metric, Judgement)>,
    /// Figures the run has and the entry does not (blessed before them).
    pub not_blessed: Vec<Metric>,
    /// Figures the entry has and the run does not.
    pub not_measured: Vec<Metric>,
}

impl Figures {
    /// Judges `measurement`'s figures against `entry`, an entry of `file`.
    pub fn judge(measurement: &Measurement, entry: &BaselineEntry, file: &BaselineFile) -> Figures {
        let mut figures = Figures::default();
        for metric in Metric::ALL {
            let threshold = metric.threshold(file.threshold, file.heap_threshold);
            match (entry.metrics.get(&metric), measurement.metrics.get(&metric)) {
                (Some(base), Some(head)) => figures
                    .judged
                    .push((metric, judge(*base, *head, threshold))),
                (None, Some(_)) => figures.not_blessed.push(metric),
                (Some(_), None) => figures.not_measured.push(metric),
                (None, None) => {}
            }
        }
        figures
    }

    /// The figures that regressed.
    pub fn regressed(&self) -> impl Iterator<Item = &(Metric, Judgement)> {
        self.judged
            .iter()
            .filter(|(_, judgement)| judgement.change == Change::Regressed)
    }

    /// The figures that improved beyond their threshold.
    pub fn improved(&self) -> impl Iterator<Item = &(Metric, Judgement)> {
        self.judged
            .iter()
            .filter(|(_, judgement)| judgement.change == Change::Improved)
    }

    /// Whether some figure could not be judged.
    pub fn unmatched(&self) -> bool {
        !self.not_blessed.is_empty() || !self.not_measured.is_empty()
    }

    /// Whether anything here needs more than the table row.
    pub fn deserves_a_message(&self) -> bool {
        self.unmatched() || self.judged.iter().any(|(_, j)| j.change.is_significant())
    }
}

/// What the figures' verdicts say, one line each, for `harness`.
pub struct FiguresMessage<'a> {
    pub harness: &'a HarnessName,
    pub figures: &'a Figures,
}

impl fmt::Display for FiguresMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let harness = self.harness;
        let mut lines = Vec::new();
        for (metric, judgement) in self.figures.regressed() {
            lines.push(format!(
                "{} of {harness} rose by {} ({}) to {}, over the threshold of {}",
                metric.label(),
                count(judgement.magnitude()),
                signed_percent(judgement.base, judgement.head),
                count(judgement.head),
                count(judgement.allowance)
            ));
        }
        for (metric, judgement) in self.figures.improved() {
            lines.push(format!(
                "{} of {harness} fell by {} ({}) to {}, more than the threshold of {}",
                metric.label(),
                count(judgement.magnitude()),
                signed_percent(judgement.base, judgement.head),
                count(judgement.head),
                count(judgement.allowance)
            ));
        }
        if !self.figures.not_blessed.is_empty() {
            lines.push(format!(
                "{harness}: NOT GATED: its baseline entry has no {} (blessed before these \
                 figures existed); the instruction count was judged. Record them with \
                 `cargo run -p regress -- bless --harness {harness}`",
                names(&self.figures.not_blessed)
            ));
        }
        if !self.figures.not_measured.is_empty() {
            lines.push(format!(
                "{harness}: NOT GATED: its baseline entry has {}, which this measurement does \
                 not report (the program predates them, or the harness no longer marks its \
                 sides). Bless again if that is intended: `cargo run -p regress -- bless \
                 --harness {harness}`",
                names(&self.figures.not_measured)
            ));
        }
        if lines
            .iter()
            .any(|line| line.contains(" rose by ") || line.contains(" fell by "))
        {
            lines.push(format!(
                "see the figures in the header of perf_outputs/{}.annotated.txt",
                harness.replace("::", ".")
            ));
        }
        f.write_str(&lines.join("\n"))
    }
}

fn names(metrics: &[Metric]) -> String {
    metrics
        .iter()
        .map(|metric| metric.key())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use crate::judge::Threshold;
    use crate::measure::metrics::Metrics;

    const HARNESS: &str = "s2n_tls::handshake_rsa4096";

    fn metrics(server: u64, held: u64) -> Metrics {
        Metrics::from([
            (Metric::Client, 600),
            (Metric::Server, server),
            (Metric::Glue, 400 - server),
            (Metric::ClientHello, 100),
            (Metric::ClientFinish, 500),
            (Metric::ServerFlight, server),
            (Metric::ServerFinish, 0),
            (Metric::ServerHeld, held),
        ])
    }

    #[test]
    fn each_figure_is_judged_with_its_own_kind_of_threshold() {
        let file = fixtures::baseline(HARNESS, &[("3.19.0", 1_000)]);
        let mut entry = file.entries[0].clone();
        entry.metrics = metrics(300, 50_000);
        let mut measurement = fixtures::measurement(HARNESS, 1_000, None);
        measurement.metrics = metrics(300, 50_051);
        let figures = Figures::judge(&measurement, &entry, &file);
        assert!(!figures.unmatched());
        // 51 bytes on 50,000 is over 0.1 % (50): the heap threshold has no
        // floor; the instruction figures moved by nothing.
        let regressed: Vec<Metric> = figures.regressed().map(|(m, _)| *m).collect();
        assert_eq!(regressed, [Metric::ServerHeld]);
        let text = FiguresMessage {
            harness: &fixtures::name(HARNESS),
            figures: &figures,
        }
        .to_string();
        assert!(
            text.starts_with("bytes the server holds after the handshake of s2n_tls::handshake_rsa4096 rose by 51"),
            "{text}"
        );
        assert_eq!(file.heap_threshold, Threshold::heap_default());
    }

    /// An entry from before the figures gates its count and asks for a
    /// bless for the rest: never a silent pass.
    #[test]
    fn an_entry_from_before_the_figures_asks_for_a_bless() {
        let file = fixtures::baseline(HARNESS, &[("3.19.0", 1_000)]);
        let mut measurement = fixtures::measurement(HARNESS, 1_000, None);
        measurement.metrics = metrics(300, 50_000);
        let figures = Figures::judge(&measurement, &file.entries[0], &file);
        assert!(figures.unmatched() && figures.deserves_a_message());
        assert_eq!(figures.not_blessed.len(), 8);
        let text = FiguresMessage {
            harness: &fixtures::name(HARNESS),
            figures: &figures,
        }
        .to_string();
        assert!(
            text.contains("NOT GATED: its baseline entry has no client, server"),
            "{text}"
        );
        assert!(
            text.contains("bless --harness s2n_tls::handshake_rsa4096"),
            "{text}"
        );
        // And the other way round: figures the run no longer reports.
        let mut entry = file.entries[0].clone();
        entry.metrics = metrics(300, 50_000);
        let bare = fixtures::measurement(HARNESS, 1_000, None);
        let figures = Figures::judge(&bare, &entry, &file);
        assert_eq!(figures.not_measured.len(), 8);
    }
}
