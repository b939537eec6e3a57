//! `regress report`: the HTML page and its SVG charts.

use anyhow::bail;
use regress::report::compare::Comparison;
use regress::report::events::{Event, Listener};
use regress::report::html;

use super::{Context, Outcome};
use crate::cli::ReportArgs;

pub fn report(context: &Context, args: &ReportArgs) -> anyhow::Result<Outcome> {
    let workspace = &context.workspace;
    let comparison = Comparison::from_records(workspace)?;
    let scalings = html::read_scalings(workspace)?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| workspace.perf_outputs_dir().join("report"));
    // The history of published versions (`baselines/history/`) has a page of its
    // own, drawn whenever there is one.
    let history = regress::history::chart::write(
        &regress::history::history_root(workspace.root()),
        &workspace.baselines_dir(),
        &dir,
    )?;
    if comparison.paths.is_empty() && scalings.is_empty() {
        let Some(history) = history else {
            bail!("nothing to report: run `cargo run -p regress -- run` (and `scale`) first");
        };
        context.reporter.event(Event::Wrote(&history));
        return Ok(Outcome::Clean);
    }
    let index = html::write(&dir, &workspace.perf_outputs_dir(), &comparison, &scalings)?;
    context.reporter.event(Event::Wrote(&index));
    if let Some(history) = history {
        context.reporter.event(Event::Wrote(&history));
    }
    Ok(Outcome::Clean)
}
