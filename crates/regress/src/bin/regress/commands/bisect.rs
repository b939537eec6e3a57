//! `regress bisect`: the first revision that moved one harness's count.

use regress::bisect::{BisectRequest, Plan};
use regress::measure::cachegrind;

use super::{write_file, Context, Outcome};
use crate::cli::library_checkout;
use crate::cli_history::BisectArgs;

pub fn bisect(context: &Context, args: &BisectArgs) -> anyhow::Result<Outcome> {
    // Refs and line first (the harness name was checked when the
    // arguments were parsed): a bad ref is refused before anything is
    // created or Valgrind is looked for.
    let plan = Plan::resolve(
        &context.workspace,
        &BisectRequest {
            good: args.good.clone(),
            bad: args.bad.clone(),
            harness: args.harness.clone(),
            library: args.library.as_deref().map(library_checkout).transpose()?,
            by: args.by,
            target_dir: args.target_dir.clone(),
        },
    )?;
    let valgrind = context.valgrind()?;
    let timeout = cachegrind::timeout_from_env()?;
    let reporter = context.reporter;
    let result = plan.run(&valgrind, timeout, &|line| reporter.note(line))?;
    reporter.print(&result.summary);
    reporter.print(&format!(
        "{} revisions on the line; {} measured ({} counts kept from earlier runs), {} built now, \
         {} skipped; {:.0} s",
        result.revisions,
        result.measured,
        result.cached_measurements,
        result.builds,
        result.skipped.len(),
        result.elapsed.as_secs_f64()
    ));
    let json = serde_json::json!({
        "schema": 1,
        "culprit": result.culprit,
        "revisions": result.revisions,
        "measured": result.measured,
        "cached_measurements": result.cached_measurements,
        "builds": result.builds,
        "skipped": result.skipped.iter().map(|(title, _)| title).collect::<Vec<_>>(),
        "seconds": result.elapsed.as_secs_f64(),
    });
    let path = context
        .workspace
        .perf_outputs_dir()
        .join("bisect")
        .join("result.json");
    write_file(
        reporter,
        &path,
        &format!("{}\n", serde_json::to_string_pretty(&json)?),
    )?;
    Ok(if result.culprit.is_some() {
        Outcome::Clean
    } else {
        Outcome::Regressed
    })
}
