//! `regress diff` and `regress diff-merge`: two commits, function by
//! function, and the merge of a sharded diff's reports.

use std::path::Path;
use std::time::Duration;

use regress::diff::library::{LibraryPlan, LibraryRequest};
use regress::diff::pipeline::{DiffRequest, Plan};
use regress::diff::report::DiffReport;
use regress::diff::{render, watch, Outcome as DiffOutcome};
use regress::measure::cachegrind;
use regress::measure::valgrind::Valgrind;
use regress::report::events::{Event, Listener};

use super::{write_file, Context, Outcome};
use crate::cli::{library_checkout, CommentArgs, DiffArgs, MergeArgs};

/// Runs a diff and writes its report.
pub fn diff(context: &Context, args: DiffArgs) -> anyhow::Result<Outcome> {
    if !args.libraries.is_empty() {
        return library_diff(context, args);
    }
    let Some(base) = args.base else {
        anyhow::bail!(
            "name the BASE commit to compare against (`regress diff main`), or give \
             --library NAME=PATH to compare revisions of a TLS library's checkout"
        );
    };
    // Refs first: a bad ref is refused before anything is created or
    // Valgrind is even looked for.
    let plan = Plan::resolve(
        &context.workspace,
        DiffRequest {
            base,
            head: args.head.unwrap_or_else(|| "HEAD".to_owned()),
            merge_base: args.merge_base,
            filters: args.filters.harnesses,
            shard: args.shard,
            target_dir: args.target_dir,
            allow_build_change: args.allow_build_change,
        },
    )?;
    measure(
        context,
        args.bmf.as_deref(),
        &args.accept,
        |valgrind, timeout| plan.run(valgrind, timeout, context.workers(), context.reporter),
    )
}

/// Finds Valgrind and its time limit (after the plan was checked), runs the
/// diff, and publishes its report.
fn measure(
    context: &Context,
    bmf: Option<&Path>,
    accept: &[String],
    run: impl FnOnce(&Valgrind, Duration) -> Result<DiffReport, regress::diff::DiffError>,
) -> anyhow::Result<Outcome> {
    let valgrind = context.valgrind()?;
    let timeout = cachegrind::timeout_from_env()?;
    let report = run(&valgrind, timeout)?;
    publish(context, &report, bmf, accept)
}

/// `regress diff --library NAME=PATH BASE [HEAD]`: the libraries and
/// revisions are checked before anything is created.
fn library_diff(context: &Context, args: DiffArgs) -> anyhow::Result<Outcome> {
    let (base, head) = if args.base_released {
        if args.head.is_some() {
            anyhow::bail!(
                "with --base-released the base is the locked release; give at most one \
                 revision, the HEAD"
            );
        }
        (None, args.base)
    } else {
        let Some(base) = args.base else {
            anyhow::bail!(
                "name the BASE revision of the library's checkout (`regress diff --library \
                 s2n-tls=PATH main`), or use --base-released"
            );
        };
        (Some(base), args.head)
    };
    let libraries: Vec<_> = args
        .libraries
        .iter()
        .map(|spec| library_checkout(spec))
        .collect::<Result<_, _>>()?;
    let request = LibraryRequest {
        libraries,
        base,
        head,
        merge_base: args.merge_base,
        filters: args.filters.harnesses,
        all_harnesses: args.all_harnesses,
        shard: args.shard,
        target_dir: args.target_dir,
    };
    if args.watch {
        return watch(context, request, &args.accept);
    }
    let plan = LibraryPlan::resolve(&context.workspace, request)?;
    measure(
        context,
        args.bmf.as_deref(),
        &args.accept,
        |valgrind, timeout| plan.run(valgrind, timeout, context.workers(), context.reporter),
    )
}

/// `--watch`: the library diff, then again after each change to the
/// checkouts' sources, until Ctrl-C (exit 130). A diff that fails (a build
/// error in the edit) is reported and the watch goes on.
fn watch(context: &Context, request: LibraryRequest, accept: &[String]) -> anyhow::Result<Outcome> {
    let reporter = context.reporter;
    let take = || {
        let mut all = watch::Snapshot::default();
        for checkout in &request.libraries {
            let seen = watch::Snapshot::take(&checkout.path, checkout.library.export);
            all = all.merged(seen);
        }
        all
    };
    let valgrind = context.valgrind()?;
    let timeout = cachegrind::timeout_from_env()?;
    let mut last = take();
    loop {
        let plan = LibraryPlan::resolve(&context.workspace, request.clone())?;
        match plan.run(&valgrind, timeout, context.workers(), reporter) {
            Ok(report) => {
                publish(context, &report, None, accept)?;
            }
            Err(regress::diff::DiffError::Interrupted) => {
                return Err(regress::diff::DiffError::Interrupted.into())
            }
            Err(error) => reporter.note(&format!("error: {error}")),
        }
        reporter.note(&format!(
            "watching {} source files of {} for changes (Ctrl-C to stop)",
            last.len(),
            request
                .libraries
                .iter()
                .map(|checkout| checkout.spec.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let seen = watch::wait_for_change(&last, take, watch::POLL)?;
        let changed = seen.changed_since(&last, 3);
        reporter.note(&format!(
            "changed: {}; diffing again",
            changed
                .iter()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        last = seen;
    }
}

/// Merges shard reports and writes the merged report.
pub fn merge(context: &Context, args: &MergeArgs) -> anyhow::Result<Outcome> {
    let reports = args
        .reports
        .iter()
        .map(|path| DiffReport::read(path))
        .collect::<Result<Vec<_>, _>>()?;
    let report = DiffReport::merge(reports)?;
    publish(context, &report, args.bmf.as_deref(), &args.accept)
}

/// Renders the pull request comment from a report read as hostile input.
pub fn comment(context: &Context, args: &CommentArgs) -> anyhow::Result<Outcome> {
    let report = DiffReport::read(&args.report)?;
    let Some(body) = render::comment(&report) else {
        anyhow::bail!(
            "the comment rendered from {} holds the comment marker twice; not writing it",
            args.report.display()
        );
    };
    match &args.out {
        Some(path) => write_file(context.reporter, path, &body)?,
        None => context.reporter.print(&body),
    }
    Ok(Outcome::Clean)
}

/// Writes `report.json` and `report.md`, the Bencher file if asked, and
/// prints the table.
fn publish(
    context: &Context,
    report: &DiffReport,
    bmf: Option<&Path>,
    accept: &[String],
) -> anyhow::Result<Outcome> {
    let reporter = context.reporter;
    let attention = report.attention();
    for name in accept {
        if !attention
            .iter()
            .any(|(harness, _)| harness.as_str() == name)
        {
            anyhow::bail!(
                "--accept {name}: that harness needs no acknowledgement in this diff (only a \
                 harness on one side only, or one whose count dropped by more than {} %, does)",
                regress::compare::IMPLAUSIBLE_DROP_PERCENT
            );
        }
    }
    let dir = context.workspace.perf_outputs_dir().join("diff");
    std::fs::create_dir_all(&dir)
        .map_err(|source| regress::MeasureError::io("create the folder", &dir, source))?;
    for (name, text) in [
        ("report.json", report.to_json()?),
        ("report.md", render::markdown(report)),
    ] {
        let path = dir.join(name);
        regress::atomic_file::write(&path, text.as_bytes())?;
        reporter.event(Event::Wrote(Path::new(
            &context.workspace.display_path(&path),
        )));
    }
    if let Some(path) = bmf {
        let mut text = serde_json::to_string_pretty(&render::bmf(report))?;
        text.push('\n');
        write_file(reporter, path, &text)?;
    }
    reporter.print(&render::text(report));
    for (harness, why) in &attention {
        let accepted = accept.iter().any(|name| name == harness.as_str());
        reporter.note(&format!(
            "{}: {harness} {why}{}",
            if accepted {
                "accepted"
            } else {
                "needs a maintainer"
            },
            if accepted {
                ""
            } else {
                " (acknowledge with --accept NAME once checked)"
            }
        ));
    }
    Ok(match report.outcome_accepting(accept) {
        DiffOutcome::Clean => Outcome::Clean,
        DiffOutcome::Regressed => Outcome::Regressed,
        DiffOutcome::Incomplete => Outcome::Failed,
    })
}
