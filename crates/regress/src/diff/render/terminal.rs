//! The terminal summary of a diff.

use std::fmt::Write as _;

use super::{
    blind_note, blind_spots_of, built_differently, change, cpu_profile, hostile_regressions,
    optional, origins, percent, tally, BUILT_DIFFERENTLY, HOSTILE_WORDS,
};
use crate::compare::HarnessDiff;
use crate::diff::report::DiffReport;
use crate::diff::Outcome;
use crate::format::{count, signed};
use crate::report::Table;

/// Functions listed per changed harness in the terminal.
const TEXT_FUNCTIONS: usize = 8;

/// The terminal summary: a table sorted by the size of the change, then
/// where each change is.
pub fn text(report: &DiffReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "base  {}  {}",
        report.base.short(),
        report.base.reference
    );
    let _ = writeln!(
        out,
        "head  {}  {}",
        report.head.short(),
        report.head.reference
    );
    let shards = if report.shards.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = report.shards.iter().map(ToString::to_string).collect();
        format!("; shard {}", list.join(", "))
    };
    let _ = writeln!(
        out,
        "Valgrind {} ({} method){}{shards}\n",
        report.valgrind,
        report.method,
        cpu_profile(report)
    );
    if let Some(sources) = &report.sources {
        let _ = writeln!(out, "{}", sources.text());
    }
    if let Some(built) = built_differently(report) {
        let _ = writeln!(out, "{BUILT_DIFFERENTLY}:");
        for difference in built {
            let _ = writeln!(out, "  {difference}");
        }
        out.push('\n');
    }

    let mut table = Table::new(&[
        "harness",
        "base",
        "head",
        "change",
        "change %",
        "threshold",
        "verdict",
        "figures beyond threshold",
    ]);
    for harness in &report.harnesses {
        table.row(vec![
            harness.harness.to_string(),
            optional(harness.base),
            optional(harness.head),
            change(harness),
            percent(harness),
            harness
                .allowance
                .map_or_else(|| "-".to_owned(), |a| format!("±{}", count(a))),
            harness.verdict.label().to_owned(),
            crate::diff::render_figures::summary(harness),
        ]);
    }
    out.push_str(&table.to_text());

    for harness in &report.harnesses {
        if let Some(error) = &harness.error {
            let _ = writeln!(out, "\n{}: {error}", harness.harness);
        }
        let figures = crate::diff::render_figures::text(harness);
        if harness.delta.is_none_or(|delta| delta == 0) {
            if !figures.is_empty() {
                let _ = writeln!(out, "\n{}  count unchanged", harness.harness);
                out.push_str(&figures);
            }
            continue;
        }
        let judged = if harness.verdict.is_significant() {
            "beyond"
        } else {
            "within"
        };
        let _ = writeln!(
            out,
            "\n{}  {} ({}), {judged} the threshold of ±{}",
            harness.harness,
            change(harness),
            percent(harness),
            count(harness.allowance.unwrap_or_default())
        );
        if !harness.origins.is_empty() {
            let _ = writeln!(out, "  by origin: {}", origins(harness, usize::MAX));
        }
        let shown = &harness.functions[..harness.functions.len().min(TEXT_FUNCTIONS)];
        let width = shown
            .iter()
            .map(|f| signed(f.delta).len())
            .max()
            .unwrap_or(0);
        for function in shown {
            let _ = writeln!(
                out,
                "    {:>width$}  {:<15}  {}  ({})",
                signed(function.delta),
                function.origin.label(),
                function.function,
                function.file
            );
        }
        if harness.functions.len() > TEXT_FUNCTIONS {
            let _ = writeln!(
                out,
                "    … and {} more functions",
                harness.functions.len() - TEXT_FUNCTIONS
            );
        }
        if let Some(path) = &harness.annotated_diff {
            let _ = writeln!(out, "  per-function diff: {path}");
        }
        if let Some(path) = &harness.flame_graph {
            let _ = writeln!(out, "  flame graph (red grew, blue shrank): {path}");
        }
        out.push_str(&figures);
    }

    out.push_str(&blind_spots_of(report).text());
    for problem in &report.problems {
        let _ = writeln!(out, "\nproblem: {problem}");
    }
    let attention = report.attention();
    for (harness, why) in &attention {
        let _ = writeln!(out, "\nneeds a maintainer: {harness} {why}");
    }
    if let Some(hostile) = hostile_regressions(report, str::to_owned) {
        let _ = writeln!(out, "\n{HOSTILE_WORDS}: {hostile}");
    }
    let regressions = report.harnesses.iter().any(HarnessDiff::regressed);
    let verdict = match report.outcome() {
        Outcome::Clean => format!(
            "nothing regressed beyond its threshold{}",
            blind_note(report)
        ),
        Outcome::Regressed if regressions => "a harness regressed beyond its threshold".to_owned(),
        Outcome::Regressed => "nothing regressed beyond its threshold, but a harness needs a \
                               maintainer's acknowledgement (--accept NAME)"
            .to_owned(),
        Outcome::Incomplete => "the diff is incomplete (see the errors above)".to_owned(),
    };
    let _ = writeln!(out, "\n{}: {verdict}", tally(report));
    out
}
