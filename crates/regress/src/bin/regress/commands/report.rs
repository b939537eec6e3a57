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
    if comparison.paths.is_empty() && scalings.is_empty() {
        bail!("nothing to report: run `cargo run -p regress -- run` (and `scale`) first");
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| workspace.perf_outputs_dir().join("report"));
    let index = html::write(&dir, &comparison, &scalings)?;
    context.reporter.event(Event::Wrote(&index));
    Ok(Outcome::Clean)
}
