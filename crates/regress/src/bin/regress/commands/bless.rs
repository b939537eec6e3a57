//! `regress bless`: write baselines from the latest measurements.

use anyhow::bail;
use regress::format::count;
use regress::judge::baseline::{self, Blessed};
use regress::workspace::Workspace;
use regress::{program, Measurement};

use super::{Context, Outcome};
use crate::cli::Filters;

pub fn bless(context: &Context, filters: &Filters) -> anyhow::Result<Outcome> {
    let workspace = &context.workspace;
    // Every record is read and checked first (one that does not load stops
    // the bless before anything is written), then the filters select as
    // they do for `run`.
    let all = Measurement::read_all(workspace)?;
    let wanted = program::select(
        all.iter().map(|m| m.harness.clone()).collect(),
        &filters.harnesses,
    );
    let records: Vec<Measurement> = all
        .into_iter()
        .filter(|m| wanted.contains(&m.harness))
        .collect();
    if records.is_empty() {
        bail!(
            "no measurements to bless in {}; run `ENABLE_VALGRIND=true cargo test` or \
             `cargo run -p regress -- run` first",
            workspace.display_path(&workspace.perf_outputs_dir())
        );
    }
    let outcomes = baseline::bless_all(&workspace.baselines_dir(), &records)?;
    let mut text = String::new();
    for (record, outcome) in records.iter().zip(&outcomes) {
        text.push_str(&format!(
            "{}: {}\n",
            record.harness,
            describe(workspace, outcome)
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
