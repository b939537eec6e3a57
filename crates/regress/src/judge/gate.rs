//! Compares a measurement with its baseline and decides pass or fail.
//!
//! # What the gate does without a matching baseline
//!
//! A count can only be judged against a baseline measured under the same
//! fingerprint. When there is none (a missing file, or no entry for this
//! machine's Valgrind, compiler, CPU features or library versions), the gate
//! fails by default, saying which parts of the fingerprint differ and how to
//! bless an entry for this machine. Setting `REGRESS_UNMATCHED=warn` turns
//! that failure into a loud warning, for machines nobody keeps baselines for;
//! it is never a silent pass. A corrupt baseline always fails.

use std::fmt;

use super::baseline::{BaselineError, BaselineFile};
use super::figures::{Figures, FiguresMessage};
use super::{judge, Change, Judgement};
use crate::format::{count, signed, signed_percent};
use crate::harness_name::HarnessName;
use crate::measure::measurement::Measurement;
use crate::measure::MeasureError;

/// What the gate does when no baseline entry matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnmatchedPolicy {
    Fail,
    Warn,
}

impl UnmatchedPolicy {
    pub fn from_env() -> Result<UnmatchedPolicy, MeasureError> {
        UnmatchedPolicy::parse(std::env::var(crate::env::UNMATCHED).ok().as_deref())
    }

    /// The policy a value of [`crate::env::UNMATCHED`] names (`None`: unset).
    pub fn parse(value: Option<&str>) -> Result<UnmatchedPolicy, MeasureError> {
        crate::measure::setting::one_of(
            crate::env::UNMATCHED,
            value,
            &[
                ("fail", UnmatchedPolicy::Fail),
                ("warn", UnmatchedPolicy::Warn),
            ],
        )
    }
}

/// Why a measurement has no baseline to be judged against.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unmatched {
    #[error(
        "no baseline for {harness}: {path} does not exist.\n  \
         Measure it (ENABLE_VALGRIND=true cargo test) and record it with \
         `cargo run -p regress -- bless --harness {harness}`."
    )]
    NoBaseline {
        harness: HarnessName,
        path: std::path::PathBuf,
    },

    #[error(
        "no baseline entry of {harness} matches this machine ({}).\n  \
         Record one with `cargo run -p regress -- bless --harness {harness}`.",
        differences_text(differences)
    )]
    NoEntry {
        harness: HarnessName,
        /// How this machine differs from the closest entry; empty when the
        /// file has no entries at all.
        differences: Vec<String>,
    },

    #[error(
        "the baseline of {harness} was counted over {}, this measurement over {}: the \
         harness changed what one run does, so the counts cannot be compared.\n  \
         Record a new baseline with `cargo run -p regress -- bless --harness {harness}`.",
        calls(*baseline),
        calls(*measured)
    )]
    OperationsDiffer {
        harness: HarnessName,
        baseline: u64,
        measured: u64,
    },
}

fn differences_text(differences: &[String]) -> String {
    if differences.is_empty() {
        "the file has no entries".to_owned()
    } else {
        differences.join("; ")
    }
}

/// The gate's judgement of one measurement.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Judged against the baseline entry of this machine's fingerprint.
    Judged(Judgement),
    /// No baseline to compare with (missing file or entry).
    Unmatched(Unmatched),
}

impl Verdict {
    /// True when the gate must fail under `policy`.
    pub fn fails(&self, policy: UnmatchedPolicy) -> bool {
        match self {
            Verdict::Judged(judgement) => judgement.change == Change::Regressed,
            Verdict::Unmatched(_) => policy == UnmatchedPolicy::Fail,
        }
    }

    /// The short form for a summary table.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Judged(judgement) => judgement.change.label(),
            Verdict::Unmatched(_) => "NOT GATED",
        }
    }

    /// Whether a reader needs more than the table row: anything but an
    /// unchanged count or one within its threshold.
    pub fn deserves_a_message(&self) -> bool {
        match self {
            Verdict::Judged(judgement) => judgement.change.is_significant(),
            Verdict::Unmatched(_) => true,
        }
    }
}

/// The gate's judgement of a measurement: its count, and its other
/// figures ([`Figures`]: sides, stages, heap) when its entry was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    pub verdict: Verdict,
    pub figures: Figures,
}

impl Assessment {
    /// True when the gate must fail under `policy`: the count or a figure
    /// regressed, or something could not be judged and the policy fails
    /// on that.
    pub fn fails(&self, policy: UnmatchedPolicy) -> bool {
        self.verdict.fails(policy)
            || self.figures.regressed().next().is_some()
            || (self.figures.unmatched() && policy == UnmatchedPolicy::Fail)
    }

    /// The short form for a summary table: the count's verdict, unless a
    /// figure says more.
    pub fn label(&self) -> String {
        let regressed: Vec<&str> = self.figures.regressed().map(|(m, _)| m.key()).collect();
        match &self.verdict {
            Verdict::Judged(judgement) if judgement.change == Change::Regressed => {
                "REGRESSED".to_owned()
            }
            _ if !regressed.is_empty() => format!("REGRESSED ({})", regressed.join(", ")),
            Verdict::Unmatched(_) => "NOT GATED".to_owned(),
            _ if self.figures.unmatched() => "NOT GATED (figures)".to_owned(),
            verdict => verdict.label().to_owned(),
        }
    }

    /// Whether a reader needs more than the table row.
    pub fn deserves_a_message(&self) -> bool {
        self.verdict.deserves_a_message() || self.figures.deserves_a_message()
    }
}

/// Judges `measurement` against the result of loading its baseline
/// (`Ok(None)`: there is no baseline file): its count and its figures.
///
/// A corrupt or unreadable baseline is returned as an error: it must be
/// fixed, never judged around.
pub fn evaluate(
    measurement: &Measurement,
    baseline: Result<Option<BaselineFile>, BaselineError>,
) -> Result<Assessment, BaselineError> {
    let baseline = baseline?;
    let verdict = count_verdict(measurement, baseline.as_ref());
    let figures = match (&verdict, &baseline) {
        (Verdict::Judged(_), Some(file)) => file
            .entry_for(&measurement.fingerprint)
            .map(|entry| Figures::judge(measurement, entry, file))
            .unwrap_or_default(),
        _ => Figures::default(),
    };
    Ok(Assessment { verdict, figures })
}

/// The count's verdict.
fn count_verdict(measurement: &Measurement, baseline: Option<&BaselineFile>) -> Verdict {
    let Some(file) = baseline else {
        return Verdict::Unmatched(Unmatched::NoBaseline {
            path: BaselineFile::path(std::path::Path::new("baselines"), &measurement.harness),
            harness: measurement.harness.clone(),
        });
    };
    let harness = measurement.harness.clone();
    let Some(entry) = file.entry_for(&measurement.fingerprint) else {
        let differences = file
            .closest(&measurement.fingerprint)
            .map(|(_, differences)| differences)
            .unwrap_or_default();
        return Verdict::Unmatched(Unmatched::NoEntry {
            harness,
            differences,
        });
    };
    if entry.operations_per_run != measurement.operations_per_run {
        return Verdict::Unmatched(Unmatched::OperationsDiffer {
            harness,
            baseline: entry.operations_per_run,
            measured: measurement.operations_per_run,
        });
    }
    Verdict::Judged(judge(
        entry.instructions,
        measurement.instructions,
        file.threshold,
    ))
}

/// `1 call per run`, `16 calls per run`.
fn calls(operations: u64) -> String {
    match operations {
        1 => "1 call per run".to_owned(),
        n => format!("{n} calls per run"),
    }
}

/// A verdict with the context a reader needs: which harness, and where its
/// annotated profile is; then what its figures' verdicts say, if anything.
pub struct VerdictMessage<'a> {
    pub harness: &'a HarnessName,
    pub verdict: &'a Verdict,
    pub annotated: &'a str,
    /// The figures' verdicts, when the count was judged.
    pub figures: Option<&'a Figures>,
}

impl fmt::Display for VerdictMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.count(f)?;
        if let Some(figures) = self.figures.filter(|figures| figures.deserves_a_message()) {
            let message = FiguresMessage {
                harness: self.harness,
                figures,
            };
            write!(f, "\n{message}")?;
        }
        Ok(())
    }
}

impl VerdictMessage<'_> {
    /// The count's verdict.
    fn count(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let harness = self.harness;
        let judgement = match self.verdict {
            Verdict::Unmatched(reason) => return write!(f, "{harness}: NOT GATED: {reason}"),
            Verdict::Judged(judgement) => judgement,
        };
        let Judgement {
            base,
            head,
            allowance,
            threshold,
            change,
        } = *judgement;
        match change {
            Change::Unchanged => write!(
                f,
                "{harness}: {} instructions, identical to the baseline",
                count(head)
            ),
            Change::WithinThreshold => write!(
                f,
                "{harness}: {} instructions, {} ({}) from the baseline, within the allowed {}",
                count(head),
                signed(judgement.delta()),
                signed_percent(base, head),
                count(allowance)
            ),
            Change::Regressed => write!(
                f,
                "instruction count of {harness} rose by {} ({}) to {}, over the threshold of {} \
                 (the larger of {}% and {} instructions); see {}",
                count(judgement.magnitude()),
                signed_percent(base, head),
                count(head),
                count(allowance),
                threshold.relative_percent,
                count(threshold.absolute),
                self.annotated
            ),
            Change::Improved => write!(
                f,
                "instruction count of {harness} fell by {} ({}) to {}, more than the threshold of \
                 {}. Lock the improvement in with `cargo run -p regress -- bless --harness {harness}`",
                count(judgement.magnitude()),
                signed_percent(base, head),
                count(head),
                count(allowance)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    const HARNESS: &str = "s2n_tls::handshake_rsa4096";

    fn measurement(instructions: u64) -> Measurement {
        fixtures::measurement(HARNESS, instructions, None)
    }

    fn file(instructions: u64) -> Option<BaselineFile> {
        Some(fixtures::baseline(HARNESS, &[("3.19.0", instructions)]))
    }

    fn message(verdict: &Verdict) -> String {
        VerdictMessage {
            harness: &fixtures::name(HARNESS),
            verdict,
            annotated: "perf_outputs/s2n_tls.handshake_rsa4096.annotated.txt",
            figures: None,
        }
        .to_string()
    }

    /// The count's verdict, as the tests below look at it.
    fn evaluate(
        measurement: &Measurement,
        baseline: Result<Option<BaselineFile>, BaselineError>,
    ) -> Result<Verdict, BaselineError> {
        super::evaluate(measurement, baseline).map(|assessment| assessment.verdict)
    }

    #[test]
    fn the_gate_uses_the_one_judge() {
        let verdict = evaluate(&measurement(77_038_501), Ok(file(77_000_000))).expect("verdict");
        assert_eq!(
            verdict,
            Verdict::Judged(judge(77_000_000, 77_038_501, Default::default()))
        );
        assert_eq!(verdict.label(), "REGRESSED");
        let within = evaluate(&measurement(77_038_500), Ok(file(77_000_000))).expect("verdict");
        assert!(!within.fails(UnmatchedPolicy::Fail) && !within.deserves_a_message());
        assert!(message(&within).contains("+38,500 (+0.05%) from the baseline"));
    }

    #[test]
    fn regression_message_names_the_rise_threshold_and_profile() {
        let verdict = evaluate(&measurement(77_051_176), Ok(file(77_000_000))).expect("verdict");
        assert!(verdict.fails(UnmatchedPolicy::Warn));
        let text = message(&verdict);
        assert!(
            text.starts_with(
                "instruction count of s2n_tls::handshake_rsa4096 rose by 51,176 (+0.07%)"
            ),
            "{text}"
        );
        assert!(text.contains("over the threshold of 38,500"), "{text}");
        assert!(
            text.contains("see perf_outputs/s2n_tls.handshake_rsa4096.annotated.txt"),
            "{text}"
        );
    }

    #[test]
    fn improvement_passes_and_says_how_to_bless() {
        let verdict = evaluate(&measurement(70_000_000), Ok(file(77_000_000))).expect("verdict");
        assert!(!verdict.fails(UnmatchedPolicy::Fail));
        let text = message(&verdict);
        assert!(text.contains("fell by 7,000,000"), "{text}");
        assert!(
            text.contains("regress -- bless --harness s2n_tls::handshake_rsa4096"),
            "{text}"
        );
    }

    #[test]
    fn unmatched_fingerprint_is_visible_and_fails_by_default() {
        let mut other = measurement(77_000_000);
        other.fingerprint = fixtures::fingerprint("3.24.0");
        let verdict = evaluate(&other, Ok(file(77_000_000))).expect("verdict");
        let Verdict::Unmatched(Unmatched::NoEntry { differences, .. }) = &verdict else {
            panic!("expected no entry, got {verdict:?}");
        };
        assert!(
            differences.contains(&"valgrind: 3.24.0 here, 3.19.0 in the baseline".to_owned()),
            "{differences:?}"
        );
        assert!(verdict.fails(UnmatchedPolicy::Fail));
        assert!(!verdict.fails(UnmatchedPolicy::Warn));
        assert!(message(&verdict).contains("NOT GATED: no baseline entry"));
    }

    #[test]
    fn missing_baseline_is_unmatched_but_corrupt_is_an_error() {
        let verdict = evaluate(&measurement(1), Ok(None)).expect("verdict");
        let text = message(&verdict);
        assert!(matches!(
            verdict,
            Verdict::Unmatched(Unmatched::NoBaseline { .. })
        ));
        assert!(
            text.contains("baselines/s2n_tls.handshake_rsa4096.json does not exist"),
            "{text}"
        );
        let corrupt = BaselineError::Invalid {
            path: "baselines/x.y.json".into(),
            problem: crate::judge::baseline::Problem::ZeroCount { entry: 0 },
        };
        assert!(evaluate(&measurement(1), Err(corrupt)).is_err());
    }

    /// A baseline counted with another number of calls per run is not a
    /// baseline for this measurement, however close the counts.
    #[test]
    fn another_number_of_operations_per_run_is_unmatched() {
        let mut repeated = measurement(77_000_000);
        repeated.operations_per_run = 1_024;
        let verdict = evaluate(&repeated, Ok(file(77_000_000))).expect("verdict");
        let reason = message(&verdict);
        assert!(
            reason
                .contains("counted over 1 call per run, this measurement over 1024 calls per run"),
            "{reason}"
        );
        assert!(
            reason.contains("bless --harness s2n_tls::handshake_rsa4096"),
            "{reason}"
        );
        assert!(verdict.fails(UnmatchedPolicy::Fail));
    }

    #[test]
    fn the_policy_is_fail_unless_warn_is_asked_for() {
        assert_eq!(
            UnmatchedPolicy::parse(None).ok(),
            Some(UnmatchedPolicy::Fail)
        );
        assert_eq!(
            UnmatchedPolicy::parse(Some("")).ok(),
            Some(UnmatchedPolicy::Fail)
        );
        assert_eq!(
            UnmatchedPolicy::parse(Some("warn")).ok(),
            Some(UnmatchedPolicy::Warn)
        );
        let error = UnmatchedPolicy::parse(Some("yes")).unwrap_err().to_string();
        assert!(error.contains("REGRESS_UNMATCHED=\"yes\""), "{error}");
        assert!(error.contains("`fail` or `warn`"), "{error}");
    }
}
