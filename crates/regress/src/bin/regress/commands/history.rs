//! `regress history`: a library's paths over its published versions (or a
//! checkout's revisions), kept in `baselines/history/`.

use regress::history::{table, HistoryRequest, Plan, Revs};
use regress::measure::cachegrind;

use super::{Context, Outcome};
use crate::cli::LibrarySpecError;
use crate::cli_history::{HistoryArgs, HistoryLibrary};

pub fn history(context: &Context, args: &HistoryArgs) -> anyhow::Result<Outcome> {
    if args.versions.is_none() && args.revs.is_none() && !args.markdown {
        anyhow::bail!(
            "name what to measure: --versions A..=B (published versions) or --revs A..B (with \
             --library NAME=PATH), or --markdown to print the stored history"
        );
    }
    // The library's name and the range were read as the arguments were
    // parsed; here, whether --library has the form the range needs.
    let (library, revs) = match (&args.library, &args.revs) {
        (HistoryLibrary::Checkout(checkout), Some((from, to))) => (
            checkout.library,
            Some(Revs {
                checkout: checkout.clone(),
                from: from.clone(),
                to: to.clone(),
            }),
        ),
        (HistoryLibrary::Named(library), Some(_)) => {
            return Err(LibrarySpecError::without_checkout(library.name).into())
        }
        (HistoryLibrary::Named(library), None) => (*library, None),
        (HistoryLibrary::Checkout(checkout), None) => anyhow::bail!(
            "--library {:?}: with --versions (or --markdown alone) give the library's name \
             alone (--library {}); NAME=PATH of a checkout goes with --revs.\n  \
             `regress history --help` shows the forms.",
            checkout.spec,
            checkout.library
        ),
    };
    let plan = Plan::resolve(
        &context.workspace,
        &HistoryRequest {
            library,
            versions: args.versions.clone(),
            newest_patch: args.newest_patch,
            revs,
            every: args.every,
            tags: args.tags,
            filters: args.harnesses.clone(),
            dir: args.dir.clone(),
            target_dir: args.target_dir.clone(),
        },
    )?;
    let reporter = context.reporter;
    let mut revisions = Vec::new();
    if plan.measures() {
        let valgrind = context.valgrind()?;
        let timeout = cachegrind::timeout_from_env()?;
        let result = plan.run(&valgrind, timeout, context.workers(), &|line| {
            reporter.note(line)
        })?;
        reporter.note(&format!(
            "{} revisions in the range: {} measured now, {} skipped; {} builds, {} measurements, \
             {:.0} s",
            result.revisions.len(),
            result.measured.len(),
            result.skipped.len(),
            result.builds,
            result.measurements,
            result.elapsed.as_secs_f64()
        ));
        for (revision, reason) in &result.skipped {
            let first = regress::history::skip_headline(reason);
            reporter.note(&format!("  skipped {revision}: {first}"));
        }
        revisions = result.revisions;
    }
    let records = plan.records(&revisions)?;
    match table::setup(&records) {
        Some(setup) => reporter.print(&table::markdown(
            plan.library().name,
            &records,
            &setup,
            &context.workspace.baselines_dir(),
        )),
        None => reporter.note(&format!(
            "no measurement of {} is stored in {}",
            plan.library(),
            context.workspace.display_path(plan.store().dir())
        )),
    }
    Ok(Outcome::Clean)
}
