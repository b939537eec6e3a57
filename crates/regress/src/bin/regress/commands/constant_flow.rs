//! `regress constant-flow`: measure every constant-flow operation's
//! variants under Callgrind, compare them function by function, and write
//! `perf_outputs/constant-flow/report.{json,md}`. Exit 0 when every
//! comparison is clean (allowed differences included), 1 on a finding, 2 on
//! an error.

use regress::constant_flow::{self, Allowlist, Request};
use regress::program;
use regress::report::events::{Event, Listener};

use super::{interrupted, Context, Outcome};
use crate::cli::ConstantFlowArgs;

pub fn constant_flow(context: &Context, args: &ConstantFlowArgs) -> anyhow::Result<Outcome> {
    let started = std::time::Instant::now();
    // The allowlist first: a broken one is reported before anything runs.
    let allowlist_path = context
        .workspace
        .root()
        .join(constant_flow::allowlist::PATH);
    let allowlist = Allowlist::load(&allowlist_path)?;
    let runner = context.runner()?;
    // The same staged program `run` measures; its constant-flow entries
    // only.
    let (program, _) = super::harnesses(&runner, &[])?;
    let names = program::list_all(program.path())?;
    let variants = constant_flow::select(&names, args.operation.as_deref())?;
    let reporter = context.reporter;
    let report = constant_flow::check(&Request {
        runner: &runner,
        binary: program.path(),
        variants: &variants,
        runs: args.runs,
        allowlist: &allowlist,
        all_operations: args.operation.is_none(),
        workers: context.workers(),
        listener: reporter,
    });
    interrupted()?;
    let report = report?;
    reporter.table(&report.table());
    let details = report.findings_text();
    if !details.is_empty() {
        reporter.print(&details);
    }
    let written = report.write(&runner.output_dir().join("constant-flow"))?;
    for path in &written {
        reporter.event(Event::Wrote(path));
    }
    let findings = report.findings();
    reporter.note(&format!(
        "{} variant(s) of {} operation(s), {} run(s) each, Valgrind {}: {findings} finding(s), \
         {} stale allowlist entr(ies); {:.1} s",
        variants.len(),
        report.operations.len(),
        args.runs,
        runner.valgrind.version,
        report.stale.len(),
        started.elapsed().as_secs_f64()
    ));
    Ok(if findings > 0 {
        Outcome::Regressed
    } else {
        Outcome::Clean
    })
}
