//! `regress noise`: measure every harness several times and print the
//! run-to-run spread, with the threshold each could live with.

use regress::format::count;
use regress::judge::noise::{FigureSpreads, Spread};
use regress::parallel;
use regress::report::events::{Event, Listener};
use regress::report::Table;
use regress::HarnessName;

use super::{harnesses, interrupted, Context, Outcome};
use crate::cli::NoiseArgs;

pub fn noise(context: &Context, args: &NoiseArgs) -> anyhow::Result<Outcome> {
    let runner = context.runner()?;
    let (program, names) = harnesses(&runner, &args.filters.harnesses)?;
    let reporter = context.reporter;
    let jobs: Vec<&HarnessName> = names
        .iter()
        .flat_map(|name| std::iter::repeat_n(name, args.runs as usize))
        .collect();
    let total = jobs.len();
    let results = parallel::measure_all(
        &jobs,
        context.workers(),
        reporter,
        |name| (None, *name),
        |name| runner.measure(name, program.path()),
    );
    interrupted()?;
    let mut spreads: Vec<Spread> = names
        .iter()
        .map(|name| Spread {
            harness: name.clone(),
            counts: Vec::new(),
        })
        .collect();
    let mut figures: Vec<FigureSpreads> = vec![FigureSpreads::default(); names.len()];
    let mut failures = 0;
    for (name, result) in jobs.iter().zip(results) {
        match result {
            Ok(measurement) => {
                if let Some(index) = spreads.iter().position(|s| &s.harness == *name) {
                    spreads[index].counts.push(measurement.instructions);
                    figures[index].add(&measurement.metrics);
                }
            }
            Err(error) => {
                failures += 1;
                reporter.event(Event::HarnessFailed {
                    side: None,
                    harness: name,
                    error: &error,
                });
            }
        }
    }
    let (spreads, figures): (Vec<Spread>, Vec<FigureSpreads>) = spreads
        .into_iter()
        .zip(figures)
        .filter(|(spread, _)| !spread.counts.is_empty())
        .unzip();
    reporter.note(&format!(
        "Valgrind {}, method {}",
        runner.valgrind.version, runner.valgrind.method
    ));
    reporter.table(&table(&spreads, &figures));
    if failures > 0 {
        reporter.note(&format!(
            "{failures} of {total} measurements failed; their harnesses have fewer runs above"
        ));
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Clean)
}

fn table(spreads: &[Spread], figures: &[FigureSpreads]) -> Table {
    let mut table = Table::new(&[
        "harness",
        "runs",
        "min",
        "max",
        "spread",
        "spread %",
        "recommended threshold",
        "figures",
        "figures' spread",
    ]);
    for (spread, figures) in spreads.iter().zip(figures) {
        let threshold = spread.recommended_threshold();
        let moved = figures.moved();
        let figures_spread = if moved.is_empty() {
            count(figures.largest_spread())
        } else {
            format!(
                "{} ({})",
                count(figures.largest_spread()),
                moved.iter().map(|m| m.key()).collect::<Vec<_>>().join(", ")
            )
        };
        table.row(vec![
            spread.harness.to_string(),
            spread.counts.len().to_string(),
            count(spread.min()),
            count(spread.max()),
            count(spread.spread()),
            format!("{:.4}", spread.spread_percent()),
            format!(
                "{}% / {}",
                threshold.relative_percent,
                count(threshold.absolute)
            ),
            figures.figures().to_string(),
            figures_spread,
        ]);
    }
    table
}
