//! The pull request comment: its Markdown (also the job summary), each
//! part within a budget so that it always fits GitHub's limit.

use std::fmt::Write as _;

use super::{
    blind_note, blind_spots_of, built_differently, change, cpu_profile, hostile_regressions,
    optional, origins, percent, tally, BUILT_DIFFERENTLY, HOSTILE_WORDS, MAX_BUILT_LINES,
};
use crate::compare::{HarnessDiff, Verdict};
use crate::diff::report::DiffReport;
use crate::diff::Outcome;
use crate::format::signed;
use crate::judge::Change;
use crate::report::html::svg::escape as html;
use crate::report::markdown::{block, code};

/// Functions listed per changed harness in the Markdown.
const MARKDOWN_FUNCTIONS: usize = 15;
/// GitHub refuses comments over 65,536 characters. The parts of the
/// comment have budgets in bytes (a character is at least one), which
/// together stay below it with room for the fixed text: the problems, the
/// harnesses that need acknowledging, the table, then the details.
const PROBLEMS_BUDGET: usize = 8_000;
const ATTENTION_BUDGET: usize = 14_000;
const TABLE_BUDGET: usize = 44_000;
const MARKDOWN_BUDGET: usize = 60_000;
/// GitHub's limit on a comment's length, in characters.
pub const MAX_COMMENT_CHARS: usize = 65_536;

fn emoji(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Judged(Change::Regressed) => "🔴",
        Verdict::Judged(Change::Improved) => "🟢",
        Verdict::Judged(Change::WithinThreshold) => "🟡",
        Verdict::Judged(Change::Unchanged) => "⚪",
        Verdict::Added => "➕",
        Verdict::Removed => "➖",
        Verdict::Failed => "⚠️",
    }
}

/// The hidden line a pull request comment of this runner starts with; the
/// comment workflow finds its own comment by it.
pub const COMMENT_MARKER: &str = "<!-- regress-diff -->";

/// The pull request comment: [`COMMENT_MARKER`], then [`markdown`]. Since
/// every untrusted string is shown as code, the marker occurs once, at
/// the start; `None` should it ever occur elsewhere (the comment must then
/// not be posted).
pub fn comment(report: &DiffReport) -> Option<String> {
    let mut body = format!("{COMMENT_MARKER}\n{}", markdown(report));
    if body.chars().count() > MAX_COMMENT_CHARS {
        // The budgets keep every report below the limit; should one not
        // be, the comment still fits and says where everything is.
        body = format!(
            "{COMMENT_MARKER}\n### Instruction counts: {}\n\nThe full report does not fit in \
             a comment: `report.md` and `report.json` are in the run's artifacts.\n",
            tally(report)
        );
    }
    (body.matches(COMMENT_MARKER).count() == 1 && !body[COMMENT_MARKER.len()..].contains("<!--"))
        .then_some(body)
}

/// Keeps `items` (rendered lines) while `out` stays under `budget` bytes;
/// returns how many did not fit.
fn push_within(out: &mut String, items: impl Iterator<Item = String>, budget: usize) -> usize {
    let mut omitted = 0;
    for item in items {
        if omitted > 0 || out.len() + item.len() > budget {
            omitted += 1;
            continue;
        }
        out.push_str(&item);
    }
    omitted
}

/// The pull request comment's Markdown (and the job summary).
pub fn markdown(report: &DiffReport) -> String {
    let regressions = report
        .tally()
        .get(&Verdict::REGRESSED)
        .copied()
        .unwrap_or(0);
    let headline = match report.outcome() {
        Outcome::Incomplete => "⚠️ Instruction counts: the diff is incomplete".to_owned(),
        Outcome::Regressed if regressions == 0 => {
            "🟠 Instruction counts: a harness needs a maintainer's acknowledgement".to_owned()
        }
        Outcome::Regressed => format!(
            "🔴 Instruction counts: {regressions} regression{} beyond the threshold",
            if regressions == 1 { "" } else { "s" }
        ),
        Outcome::Clean => format!(
            "🟢 Instruction counts: nothing regressed beyond its threshold{}",
            blind_note(report)
        ),
    };
    let mut out = format!("### {headline}\n\n");
    let shards = if report.shards.is_empty() {
        String::new()
    } else {
        format!(", {} shards", report.shards.len())
    };
    let _ = writeln!(
        out,
        "Head {} ({}) against base {} ({}), measured with Valgrind {} ({}{}{shards}). {}. \
         A change counts when it is larger than the harness's threshold (by default the \
         larger of 0.05% and 1,000 instructions).\n",
        code(&report.head.reference),
        code(report.head.short()),
        code(&report.base.reference),
        code(report.base.short()),
        code(&report.valgrind),
        report.method,
        cpu_profile(report),
        tally(report),
    );
    if let Some(hostile) = hostile_regressions(report, code) {
        let mut words = HOSTILE_WORDS.to_owned();
        words[..1].make_ascii_uppercase();
        let _ = writeln!(out, "> [!CAUTION]\n> {words}: {hostile}.\n");
    }
    if let Some(sources) = &report.sources {
        out.push_str(&sources.markdown());
    }
    if let Some(built) = built_differently(report) {
        let _ = writeln!(out, "> [!IMPORTANT]\n> {BUILT_DIFFERENTLY}:");
        for difference in built.iter().take(MAX_BUILT_LINES) {
            let _ = writeln!(out, "> - {}", code(difference));
        }
        if built.len() > MAX_BUILT_LINES {
            let _ = writeln!(out, "> - … and {} more", built.len() - MAX_BUILT_LINES);
        }
        out.push('\n');
    }
    // Each part has a budget, so that the comment always fits GitHub's
    // limit whatever the report holds (100 problems of 16 KiB, 10,000
    // harnesses): what does not fit is counted, and `report.json` (the
    // run's artifact) has it all.
    let omitted = push_within(
        &mut out,
        report
            .problems
            .iter()
            .map(|problem| format!("> [!WARNING]\n> {}\n\n", code(problem))),
        PROBLEMS_BUDGET,
    );
    if omitted > 0 {
        let _ = writeln!(
            out,
            "> [!WARNING]\n> {omitted} more problems do not fit in a comment; `report.json` \
             has them all.\n"
        );
    }
    let attention = report.attention();
    if !attention.is_empty() {
        let _ = writeln!(
            out,
            "> [!CAUTION]\n> {} harness{} need{} a maintainer's acknowledgement before the gate \
             passes (`--accept NAME`):",
            attention.len(),
            if attention.len() == 1 { "" } else { "es" },
            if attention.len() == 1 { "s" } else { "" },
        );
        let omitted = push_within(
            &mut out,
            attention
                .iter()
                .map(|(harness, why)| format!("> - {} {why}\n", code(harness))),
            ATTENTION_BUDGET,
        );
        if omitted > 0 {
            let _ = writeln!(out, "> - and {omitted} more (see `report.json`)");
        }
        out.push('\n');
    }

    out.push_str(
        "| harness | base | head | change | % | verdict | mostly in | figures beyond threshold |\n",
    );
    out.push_str("|:---|---:|---:|---:|---:|:---|:---|:---|\n");
    let rows = report.harnesses.iter().map(|harness| {
        let (change, percent) = if harness.significant {
            (
                format!("**{}**", change(harness)),
                format!("**{}**", percent(harness)),
            )
        } else {
            (change(harness), percent(harness))
        };
        format!(
            "| {} | {} | {} | {change} | {percent} | {} {} | {} | {} |\n",
            code(&harness.harness),
            optional(harness.base),
            optional(harness.head),
            emoji(harness.verdict),
            harness.verdict.label().to_lowercase(),
            origins(harness, 2),
            crate::diff::render_figures::summary(harness),
        )
    });
    let omitted = push_within(&mut out, rows, TABLE_BUDGET);
    if omitted > 0 {
        let _ = writeln!(
            out,
            "\n_{omitted} more harnesses (the smallest changes) do not fit in a comment; \
             `report.json` and `report.md` in the run's artifacts have them all._"
        );
    }

    let mut omitted = 0;
    for harness in &report.harnesses {
        let details = details(harness) + &crate::diff::render_figures::markdown(harness);
        if details.is_empty() {
            continue;
        }
        if out.len() + details.len() > MARKDOWN_BUDGET {
            omitted += 1;
            continue;
        }
        out.push('\n');
        out.push_str(&details);
    }
    if omitted > 0 {
        let _ = writeln!(
            out,
            "\n_The details of {omitted} more harnesses do not fit in a comment; \
             `report.json` has them all._"
        );
    }
    out.push('\n');
    out.push_str(&blind_spots_of(report).markdown());
    let reproduce = match &report.sources {
        None => format!(
            "`scripts/perf-diff.sh {} {}`",
            report.base.short(),
            report.head.short()
        ),
        Some(sources) => {
            let libraries: Vec<String> = sources
                .libraries
                .iter()
                .map(|l| format!("--library {}=<checkout>", l.library))
                .collect();
            code(&format!(
                "regress diff {} {} {}",
                libraries.join(" "),
                report.base.short(),
                report.head.short()
            ))
        }
    };
    let _ = writeln!(
        out,
        "\n<sub>Per-function diffs (`cg_annotate`), raw profiles and `report.json` are in \
         `perf_outputs/diff/` (in CI, the run's artifacts). Reproduce locally with \
         {reproduce}.</sub>"
    );
    out
}

/// The collapsible section of one harness: its error, or the functions
/// whose cost changed.
fn details(harness: &HarnessDiff) -> String {
    let mut out = String::new();
    if let Some(error) = &harness.error {
        let _ = writeln!(
            out,
            "<details><summary>{} <code>{}</code>: error</summary>\n\n{}\n</details>",
            emoji(Verdict::Failed),
            html(&harness.harness),
            block(error)
        );
    }
    if harness.functions.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "<details><summary>{} <code>{}</code> {} ({}): the functions that changed</summary>\n",
        emoji(harness.verdict),
        html(&harness.harness),
        change(harness),
        percent(harness),
    );
    out.push_str("| change | where | function | file |\n|---:|:---|:---|:---|\n");
    for function in harness.functions.iter().take(MARKDOWN_FUNCTIONS) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            signed(function.delta),
            function.origin.label(),
            code(&function.function),
            code(&function.file),
        );
    }
    if harness.functions.len() > MARKDOWN_FUNCTIONS {
        let _ = writeln!(
            out,
            "\n… and {} more functions; the full list is in `report.json`.",
            harness.functions.len() - MARKDOWN_FUNCTIONS
        );
    }
    if let Some(path) = &harness.annotated_diff {
        let _ = writeln!(out, "\n`cg_annotate` diff: {}", code(path));
    }
    out.push_str(&flame_link(harness));
    out.push_str("\n</details>\n");
    out
}

/// The link to a harness's differential flame graph, relative to the
/// report (both are in the diff's output folder).
fn flame_link(harness: &HarnessDiff) -> String {
    let Some(path) = &harness.flame_graph else {
        return String::new();
    };
    let file = std::path::Path::new(path)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A harness name is letters, digits, `_`, `.` and `:` (checked), so the
    // file name needs no escaping in a link; checked again here.
    if file.is_empty()
        || !file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return format!("\nFlame graph: {}\n", code(path));
    }
    format!(
        "\n[Flame graph]({file}) of head, coloured by its change against base \
         (red grew, blue shrank; call paths rebuilt from Callgrind's call graph, see the README).\n"
    )
}
