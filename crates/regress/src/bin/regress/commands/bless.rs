//! `regress bless`: write baselines from the latest measurements.

use anyhow::bail;
use regress::format::count;
use regress::judge::baseline::{self, Blessed};
use regress::workspace::Workspace;
use regress::Measurement;

use super::{Context, Outcome};
use crate::cli::Filters;

pub fn bless(context: &Context, filters: &Filters) -> anyhow::Result<Outcome> {
    let workspace = &context.workspace;
    let records: Vec<Measurement> = Measurement::read_all(workspace)?
        .into_iter()
        .filter(|m| {
            filters.harnesses.is_empty()
                || filters
                    .harnesses
                    .iter()
                    .any(|f| m.harness.contains(f.as_str()))
        })
        .collect();
    if records.is_empty() {
        bail!(
            "no measurements to bless in {}; run `ENABLE_VALGRIND=true cargo test` or \
             `cargo run -p regress -- run` first",
            workspace.display_path(&workspace.perf_outputs_dir())
        );
    }
    let mut text = String::new();
    for record in &records {
        let outcome = baseline::bless(&workspace.baselines_dir(), record)?;
        text.push_str(&format!(
            "{}: {}\n",
            record.harness,
            describe(workspace, &outcome)
        ));
    }
    context.reporter.print(&text);
    Ok(Outcome::Clean)
}

fn describe(workspace: &Workspace, outcome: &Blessed) -> String {
    match outcome {
        Blessed::Created { path, instructions } => format!(
            "created {} with {}",
            workspace.display_path(path),
            count(*instructions)
        ),
        Blessed::Added { path, instructions } => format!(
            "added an entry for this machine to {}: {}",
            workspace.display_path(path),
            count(*instructions)
        ),
        Blessed::Updated { path, from, to } => format!(
            "updated {}: {} -> {}",
            workspace.display_path(path),
            count(*from),
            count(*to)
        ),
        Blessed::Unchanged { path, instructions } => format!(
            "{} already holds {}",
            workspace.display_path(path),
            count(*instructions)
        ),
    }
}
