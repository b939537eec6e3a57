//! `regress run`: measure harnesses in parallel and gate each against its
//! baseline, with one summary table.

use regress::format::count;
use regress::judge::baseline::BaselineFile;
use regress::judge::gate::{self, Assessment, UnmatchedPolicy, Verdict, VerdictMessage};
use regress::report::events::{Event, Listener};
use regress::report::Table;
use regress::{parallel, Measurement};

use super::{harnesses, interrupted, Context, Outcome};
use crate::cli::Filters;

pub fn run(context: &Context, filters: &Filters) -> anyhow::Result<Outcome> {
    let policy = UnmatchedPolicy::from_env()?;
    let runner = context.runner()?;
    let (program, names) = harnesses(&runner, &filters.harnesses)?;
    let reporter = context.reporter;
    let results = parallel::measure_all(
        &names,
        context.workers(),
        reporter,
        |name| (None, name),
        |name| runner.measure(name, program.path()),
    );
    interrupted()?;

    let mut table = Table::new(&["harness", "instructions", "per byte", "baseline", "verdict"]);
    let (mut regressed, mut errors) = (0, 0);
    for (name, result) in names.iter().zip(results) {
        let judged = result.map_err(anyhow::Error::from).and_then(|measurement| {
            let loaded =
                BaselineFile::load(&runner.workspace.baselines_dir(), &measurement.harness);
            let assessment = gate::evaluate(&measurement, loaded)?;
            Ok((measurement, assessment))
        });
        let (measurement, assessment) = match judged {
            Ok(judged) => judged,
            Err(error) => {
                errors += 1;
                reporter.event(Event::HarnessFailed {
                    side: None,
                    harness: name,
                    error: &error,
                });
                table.row(vec![
                    name.to_string(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "ERROR".into(),
                ]);
                continue;
            }
        };
        if assessment.deserves_a_message() {
            reporter.event(Event::Verdict(&VerdictMessage {
                harness: name,
                verdict: &assessment.verdict,
                annotated: &measurement.annotated.display().to_string(),
                figures: Some(&assessment.figures),
            }));
        }
        if assessment.fails(policy) {
            regressed += 1;
        }
        table.row(row(&measurement, &assessment));
    }
    reporter.table(&table);
    Ok(if errors > 0 {
        Outcome::Failed
    } else if regressed > 0 {
        Outcome::Regressed
    } else {
        Outcome::Clean
    })
}

/// A harness's line of the summary table.
fn row(measurement: &Measurement, assessment: &Assessment) -> Vec<String> {
    let baseline = match &assessment.verdict {
        Verdict::Judged(judgement) => count(judgement.base),
        Verdict::Unmatched(_) => "none".into(),
    };
    let per_byte = measurement
        .instructions_per_byte()
        .map_or_else(|| "-".into(), |per_byte| format!("{per_byte:.3}"));
    vec![
        measurement.harness.to_string(),
        count(measurement.instructions),
        per_byte,
        baseline,
        assessment.label(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress::fixtures;

    #[test]
    fn a_row_shows_the_count_the_baseline_and_the_verdict() {
        let measurement =
            fixtures::measurement("s2n_tls::record_aes128gcm_1k", 2_000_000, Some(1_000_000));
        let verdict = gate::evaluate(
            &measurement,
            Ok(Some(fixtures::baseline(
                "s2n_tls::record_aes128gcm_1k",
                &[("3.19.0", 1_000_000)],
            ))),
        )
        .expect("verdict");
        assert_eq!(
            row(&measurement, &verdict),
            [
                "s2n_tls::record_aes128gcm_1k",
                "2,000,000",
                "2.000",
                "1,000,000",
                "REGRESSED"
            ]
        );
        let unmatched = gate::evaluate(&measurement, Ok(None)).expect("verdict");
        assert_eq!(row(&measurement, &unmatched)[3..], ["none", "NOT GATED"]);
    }
}
