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

use crate::baseline::{BaselineError, BaselineFile, Threshold};
use crate::measurement::Measurement;
use crate::report::{count, signed, signed_percent};

/// `fail` (default) or `warn`: what an unmatched fingerprint does.
pub const ENV_UNMATCHED: &str = "REGRESS_UNMATCHED";

/// What the gate does when no baseline entry matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnmatchedPolicy {
    Fail,
    Warn,
}

impl UnmatchedPolicy {
    pub fn from_env() -> Result<UnmatchedPolicy, String> {
        match std::env::var(ENV_UNMATCHED).as_deref() {
            Err(_) | Ok("") | Ok("fail") => Ok(UnmatchedPolicy::Fail),
            Ok("warn") => Ok(UnmatchedPolicy::Warn),
            Ok(other) => Err(format!(
                "{ENV_UNMATCHED}={other:?} must be `fail` or `warn`"
            )),
        }
    }
}

/// The gate's judgement of one measurement.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Exactly the baseline count.
    Unchanged { instructions: u64 },
    /// A change no larger than the threshold allows.
    WithinThreshold {
        baseline: u64,
        instructions: u64,
        allowance: u64,
    },
    /// More instructions than the threshold allows: fails.
    Regressed {
        baseline: u64,
        instructions: u64,
        allowance: u64,
        threshold: Threshold,
    },
    /// Fewer instructions than the threshold allows: passes, and says so.
    Improved {
        baseline: u64,
        instructions: u64,
        allowance: u64,
    },
    /// No baseline to compare with (missing file or entry).
    Unmatched { reason: String },
}

impl Verdict {
    /// True when the gate must fail under `policy`.
    pub fn fails(&self, policy: UnmatchedPolicy) -> bool {
        match self {
            Verdict::Regressed { .. } => true,
            Verdict::Unmatched { .. } => policy == UnmatchedPolicy::Fail,
            _ => false,
        }
    }
}

/// Judges `measurement` against the result of loading its baseline.
///
/// A corrupt or unreadable baseline is returned as an error: it must be
/// fixed, never judged around.
pub fn evaluate(
    measurement: &Measurement,
    baseline: Result<BaselineFile, BaselineError>,
) -> Result<Verdict, BaselineError> {
    let file = match baseline {
        Ok(file) => file,
        Err(missing @ BaselineError::Missing { .. }) => {
            return Ok(Verdict::Unmatched {
                reason: missing.to_string(),
            })
        }
        Err(other) => return Err(other),
    };
    let Some(entry) = file.entry_for(&measurement.fingerprint) else {
        let closest = file
            .closest(&measurement.fingerprint)
            .map(|(_, differences)| differences.join("; "))
            .unwrap_or_else(|| "the file has no entries".to_owned());
        return Ok(Verdict::Unmatched {
            reason: format!(
                "no baseline entry of {} matches this machine ({closest}).\n  \
                 Record one with `cargo run -p regress -- bless --harness {}`.",
                measurement.harness, measurement.harness
            ),
        });
    };
    if entry.operations_per_run != measurement.operations_per_run {
        return Ok(Verdict::Unmatched {
            reason: format!(
                "the baseline of {} was counted over {}, this measurement over {}: the \
                 harness changed what one run does, so the counts cannot be compared.\n  \
                 Record a new baseline with `cargo run -p regress -- bless --harness {}`.",
                measurement.harness,
                calls(entry.operations_per_run),
                calls(measurement.operations_per_run),
                measurement.harness
            ),
        });
    }
    let baseline = entry.instructions;
    let instructions = measurement.instructions;
    let allowance = file.threshold.allowance(baseline);
    let delta = instructions.abs_diff(baseline);
    Ok(if delta == 0 {
        Verdict::Unchanged { instructions }
    } else if delta <= allowance {
        Verdict::WithinThreshold {
            baseline,
            instructions,
            allowance,
        }
    } else if instructions > baseline {
        Verdict::Regressed {
            baseline,
            instructions,
            allowance,
            threshold: file.threshold,
        }
    } else {
        Verdict::Improved {
            baseline,
            instructions,
            allowance,
        }
    })
}

/// `1 call per run`, `16 calls per run`.
fn calls(operations: u64) -> String {
    match operations {
        1 => "1 call per run".to_owned(),
        n => format!("{n} calls per run"),
    }
}

/// A verdict with the context a reader needs: which harness, and where its
/// annotated profile is.
pub struct VerdictMessage<'a> {
    pub harness: &'a str,
    pub verdict: &'a Verdict,
    pub annotated: &'a str,
}

impl fmt::Display for VerdictMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let harness = self.harness;
        match *self.verdict {
            Verdict::Unchanged { instructions } => write!(
                f,
                "{harness}: {} instructions, identical to the baseline",
                count(instructions)
            ),
            Verdict::WithinThreshold {
                baseline,
                instructions,
                allowance,
            } => write!(
                f,
                "{harness}: {} instructions, {} ({}) from the baseline, within the allowed {}",
                count(instructions),
                signed(instructions as i64 - baseline as i64),
                signed_percent(baseline, instructions),
                count(allowance)
            ),
            Verdict::Regressed {
                baseline,
                instructions,
                allowance,
                threshold,
            } => write!(
                f,
                "instruction count of {harness} rose by {} ({}) to {}, over the threshold of {} \
                 (the larger of {}% and {} instructions); see {}",
                count(instructions - baseline),
                signed_percent(baseline, instructions),
                count(instructions),
                count(allowance),
                threshold.relative_percent,
                count(threshold.absolute),
                self.annotated
            ),
            Verdict::Improved {
                baseline,
                instructions,
                allowance,
            } => write!(
                f,
                "instruction count of {harness} fell by {} ({}) to {}, more than the threshold of \
                 {}. Lock the improvement in with `cargo run -p regress -- bless --harness {harness}`",
                count(baseline - instructions),
                signed_percent(baseline, instructions),
                count(instructions),
                count(allowance)
            ),
            Verdict::Unmatched { ref reason } => write!(f, "{harness}: NOT GATED: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::{BaselineEntry, BASELINE_SCHEMA};
    use crate::fingerprint::Fingerprint;
    use crate::valgrind::Method;
    use std::path::PathBuf;

    fn fingerprint(valgrind: &str) -> Fingerprint {
        Fingerprint {
            valgrind: valgrind.into(),
            method: Method::Subtraction,
            rustc: "rustc 1.95.0".into(),
            target: "x86_64-unknown-linux-gnu".into(),
            cpu_features: vec!["aes".into()],
            libraries: Default::default(),
        }
    }

    fn measurement(instructions: u64) -> Measurement {
        Measurement {
            schema: crate::measurement::MEASUREMENT_SCHEMA,
            harness: "s2n_tls::handshake_rsa4096".into(),
            instructions,
            bytes_per_run: None,
            operations_per_run: 1,
            fingerprint: fingerprint("3.19.0"),
            annotated: PathBuf::from("perf_outputs/s2n_tls.handshake_rsa4096.annotated.txt"),
            profile: PathBuf::from("perf_outputs/s2n_tls.handshake_rsa4096.cachegrind.out"),
        }
    }

    fn file(instructions: u64) -> BaselineFile {
        BaselineFile {
            schema: BASELINE_SCHEMA,
            harness: "s2n_tls::handshake_rsa4096".into(),
            threshold: Threshold::default(),
            entries: vec![BaselineEntry {
                fingerprint: fingerprint("3.19.0"),
                instructions,
                bytes_per_run: None,
                operations_per_run: 1,
            }],
        }
    }

    #[test]
    fn judges_by_the_larger_of_relative_and_absolute() {
        // 0.05 % of 77,000,000 is 38,500.
        let base = 77_000_000;
        let judge = |n| evaluate(&measurement(n), Ok(file(base))).expect("verdict");
        assert_eq!(judge(base), Verdict::Unchanged { instructions: base });
        assert!(matches!(
            judge(base + 38_500),
            Verdict::WithinThreshold {
                allowance: 38_500,
                ..
            }
        ));
        assert!(matches!(judge(base + 38_501), Verdict::Regressed { .. }));
        assert!(matches!(judge(base - 38_501), Verdict::Improved { .. }));
        // A tiny path falls back on the 1,000-instruction floor.
        let small = evaluate(&measurement(10_900), Ok(file(10_000))).expect("verdict");
        assert!(matches!(
            small,
            Verdict::WithinThreshold {
                allowance: 1_000,
                ..
            }
        ));
    }

    #[test]
    fn regression_message_names_the_rise_threshold_and_profile() {
        let verdict = evaluate(&measurement(77_051_176), Ok(file(77_000_000))).expect("verdict");
        assert!(verdict.fails(UnmatchedPolicy::Warn));
        let text = VerdictMessage {
            harness: "s2n_tls::handshake_rsa4096",
            verdict: &verdict,
            annotated: "perf_outputs/s2n_tls.handshake_rsa4096.annotated.txt",
        }
        .to_string();
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
        let text = VerdictMessage {
            harness: "s2n_tls::handshake_rsa4096",
            verdict: &verdict,
            annotated: "",
        }
        .to_string();
        assert!(text.contains("fell by 7,000,000"), "{text}");
        assert!(
            text.contains("regress -- bless --harness s2n_tls::handshake_rsa4096"),
            "{text}"
        );
    }

    #[test]
    fn unmatched_fingerprint_is_visible_and_fails_by_default() {
        let mut other = measurement(77_000_000);
        other.fingerprint = fingerprint("3.24.0");
        let verdict = evaluate(&other, Ok(file(77_000_000))).expect("verdict");
        let Verdict::Unmatched { ref reason } = verdict else {
            panic!("expected unmatched, got {verdict:?}");
        };
        assert!(
            reason.contains("valgrind: 3.24.0 here, 3.19.0 in the baseline"),
            "{reason}"
        );
        assert!(verdict.fails(UnmatchedPolicy::Fail));
        assert!(!verdict.fails(UnmatchedPolicy::Warn));
    }

    #[test]
    fn missing_baseline_is_unmatched_but_corrupt_is_an_error() {
        let missing = BaselineError::Missing {
            harness: "x::y".into(),
            path: PathBuf::from("baselines/x.y.json"),
        };
        let verdict = evaluate(&measurement(1), Err(missing)).expect("verdict");
        assert!(matches!(verdict, Verdict::Unmatched { .. }));
        let corrupt = BaselineError::Invalid {
            path: PathBuf::from("baselines/x.y.json"),
            reason: "bad".into(),
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
        let Verdict::Unmatched { reason } = &verdict else {
            panic!("expected unmatched, got {verdict:?}");
        };
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
}
