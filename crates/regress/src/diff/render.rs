//! A [`DiffReport`] for its three readers: a terminal, a pull request
//! comment (GitHub Markdown) and Bencher (Bencher Metric Format JSON).
//!
//! All three render the same report, so what the comment says is what the
//! terminal said. Every string that is not the program's own (refs,
//! function and file names, Valgrind's version, error messages, problems)
//! is untrusted text from the pull request's point of view: the Markdown
//! shows it only inside code spans and code blocks
//! ([`crate::report::markdown`]), so a crafted one can neither break the
//! table nor become markup, a mention or a link. Harness names are checked
//! names ([`crate::HarnessName`]) and are shown as code too.

use std::fmt::Write as _;

use super::report::DiffReport;
use super::Outcome;
use crate::compare::{HarnessDiff, Verdict};
use crate::coverage::BlindSpots;
use crate::format::{count, signed, signed_percent};
use crate::judge::Change;
use crate::report::html::svg::escape as html;
use crate::report::markdown::{block, code};
use crate::report::Table;

/// Functions listed per changed harness in the terminal.
const TEXT_FUNCTIONS: usize = 8;
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

/// The relative change, `+5.00%`, or `0.00%`, or `-` when there is none.
fn percent(harness: &HarnessDiff) -> String {
    match (harness.delta, harness.base, harness.head) {
        (Some(0), _, _) => "0.00%".to_owned(),
        (Some(_), Some(base), Some(head)) => signed_percent(base, head),
        _ => "-".to_owned(),
    }
}

fn optional(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), count)
}

fn change(harness: &HarnessDiff) -> String {
    match harness.delta {
        Some(0) => "0".to_owned(),
        Some(delta) => signed(delta),
        None => "-".to_owned(),
    }
}

/// `harness +300,000, aws-lc -1,200`: the largest parts of a change.
fn origins(harness: &HarnessDiff, limit: usize) -> String {
    harness
        .origins
        .iter()
        .take(limit)
        .map(|o| format!("{} {}", o.origin, signed(o.delta)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1 regressed, 2 unchanged`.
fn tally(report: &DiffReport) -> String {
    let parts: Vec<String> = report
        .tally()
        .into_iter()
        .map(|(verdict, n)| format!("{n} {}", verdict.label().to_lowercase()))
        .collect();
    if parts.is_empty() {
        "no harnesses".to_owned()
    } else {
        parts.join(", ")
    }
}

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
            super::render_figures::summary(harness),
        ]);
    }
    out.push_str(&table.to_text());

    for harness in &report.harnesses {
        if let Some(error) = &harness.error {
            let _ = writeln!(out, "\n{}: {error}", harness.harness);
        }
        let figures = super::render_figures::text(harness);
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
            super::render_figures::summary(harness),
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
        let details = details(harness) + &super::render_figures::markdown(harness);
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

/// What a clean verdict must add: that it covers only what the harnesses
/// run.
/// The path-name prefix of the hostile-peer paths (`Path::Hostile` in the
/// harnesses): each counts what one flight of a hostile client costs a
/// server.
const HOSTILE_PREFIX: &str = "hostile_";

/// The most hostile-peer harnesses a note names; the rest are counted.
const HOSTILE_NAMED: usize = 10;

/// The regressed hostile-peer harnesses, as `name (+1.2%)`, the first
/// [`HOSTILE_NAMED`] of them named with `name`, and how many more there are.
fn hostile_regressions(report: &DiffReport, name: impl Fn(&str) -> String) -> Option<String> {
    let regressed: Vec<&HarnessDiff> = report
        .harnesses
        .iter()
        .filter(|harness| {
            harness.regressed()
                && harness
                    .harness
                    .as_str()
                    .split_once("::")
                    .is_some_and(|(_, path)| path.starts_with(HOSTILE_PREFIX))
        })
        .collect();
    if regressed.is_empty() {
        return None;
    }
    let mut named: Vec<String> = regressed
        .iter()
        .take(HOSTILE_NAMED)
        .map(|harness| match (harness.base, harness.head) {
            (Some(base), Some(head)) => {
                format!(
                    "{} ({})",
                    name(harness.harness.as_str()),
                    signed_percent(base, head)
                )
            }
            _ => name(harness.harness.as_str()),
        })
        .collect();
    if regressed.len() > HOSTILE_NAMED {
        named.push(format!("{} more", regressed.len() - HOSTILE_NAMED));
    }
    Some(named.join(", "))
}

/// What the terminal and the comment say when a hostile-peer path
/// regressed: the change raises what a peer can make a server pay.
const HOSTILE_WORDS: &str = "this change raises what a hostile peer can make a server pay";

/// What the report says before the differences of the two sides' builds.
const BUILT_DIFFERENTLY: &str =
    "The two sides were measured with different builds or machines, which move counts \
     besides the change under review";
/// The most build differences a comment lists (a fingerprint has a few
/// dozen fields at most; this bounds a forged one).
const MAX_BUILT_LINES: usize = 20;

/// How HEAD's fingerprint differs from BASE's; `None` when they match or
/// are unknown.
fn built_differently(report: &DiffReport) -> Option<Vec<String>> {
    let differences = report.fingerprints.as_ref()?.differences();
    (!differences.is_empty()).then_some(differences)
}

fn blind_note(report: &DiffReport) -> String {
    let spots = blind_spots_of(report);
    if spots.unknown.is_some() {
        return " (blind spots unknown)".to_owned();
    }
    match spots.functions().len() {
        0 => String::new(),
        n if spots.run() == 0 => format!(
            ", but no harness runs the changed code ({n} changed function{})",
            if n == 1 { "" } else { "s" }
        ),
        n => format!(
            " in what the harnesses run; {n} changed function{} not run by any harness",
            if n == 1 { " is" } else { "s are" }
        ),
    }
}

/// The report's blind spots; a report without them has unknown ones.
fn blind_spots_of(report: &DiffReport) -> BlindSpots {
    report
        .blind_spots
        .clone()
        .unwrap_or_else(|| BlindSpots::unknown("this diff did not look for them"))
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

pub use super::bmf::bmf;

/// `, CPU profile no-avx` for a diff under a profile other than the
/// default; nothing for the default.
fn cpu_profile(report: &DiffReport) -> String {
    if report.cpu_profile.is_default() {
        String::new()
    } else {
        format!(", CPU profile {}", report.cpu_profile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::FunctionDelta;
    use crate::compare::Origin;
    use crate::diff::report::tests::report;
    use crate::diff::report::SideFingerprints;
    use crate::diff::shard::Shard;
    use crate::fixtures::name;
    use crate::judge::Threshold;

    fn spin_report() -> DiffReport {
        let functions = vec![FunctionDelta {
            file: "harnesses/src/calibration.rs".into(),
            function: "harnesses::calibration::spin".into(),
            origin: Origin::Harness,
            base: 6_000_000,
            head: 6_300_000,
            delta: 300_000,
        }];
        let mut regressed = HarnessDiff::compared(
            &name("calibration::spin_2m"),
            6_000_027,
            6_300_027,
            Threshold::default(),
            functions,
        );
        regressed.annotated_diff = Some("perf_outputs/diff/calibration.spin_2m.diff.txt".into());
        let same = HarnessDiff::compared(
            &name("calibration::spin_1m"),
            3_000_027,
            3_000_027,
            Threshold::default(),
            Vec::new(),
        );
        let added = HarnessDiff::one_sided(
            &name("rustls::handshake"),
            None,
            Some(76_533_873),
            Threshold::default(),
        );
        report(vec![regressed, same, added], Vec::new())
    }

    /// A regressed hostile-peer path is named in those words in the
    /// terminal and the comment; a regressed well-behaved path, or a
    /// hostile one that did not regress, is not.
    #[test]
    fn a_hostile_path_that_regressed_says_what_a_peer_can_make_a_server_pay() {
        let harness = |name_: &str, base: u64, head: u64| {
            HarnessDiff::compared(&name(name_), base, head, Threshold::default(), Vec::new())
        };
        let calm = report(
            vec![
                harness("s2n_tls::handshake_rsa4096", 1_000_000, 2_000_000),
                harness("openssl::hostile_hello_retry", 80_000, 80_000),
            ],
            Vec::new(),
        );
        assert!(!text(&calm).contains(HOSTILE_WORDS));
        assert!(!markdown(&calm).contains("hostile peer"));
        let raised = report(
            vec![
                harness("s2n_tls::handshake_rsa4096", 1_000_000, 1_000_000),
                harness("openssl::hostile_hello_retry", 80_000, 160_000),
            ],
            Vec::new(),
        );
        assert!(
            text(&raised).contains(
                "this change raises what a hostile peer can make a server pay: \
                 openssl::hostile_hello_retry (+100.00%)"
            ),
            "{}",
            text(&raised)
        );
        let md = markdown(&raised);
        assert!(
            md.contains(
                "> [!CAUTION]\n> This change raises what a hostile peer can make a server pay: \
                 `openssl::hostile_hello_retry` (+100.00%)."
            ),
            "{md}"
        );
        // Many at once: ten named, the rest counted.
        let many = report(
            (0..12)
                .map(|n| harness(&format!("rustls::hostile_p{n:02}"), 1_000_000, 2_000_000))
                .collect(),
            Vec::new(),
        );
        assert!(
            text(&many).contains("rustls::hostile_p09 (+100.00%), 2 more"),
            "{}",
            text(&many)
        );
    }

    #[test]
    fn text_has_the_table_and_the_functions() {
        let text = text(&spin_report());
        let row = |name: &str| -> Vec<String> {
            let line = text
                .lines()
                .find(|line| line.starts_with(name))
                .unwrap_or_else(|| panic!("no row for {name} in\n{text}"));
            line.split_whitespace().map(str::to_owned).collect()
        };
        assert_eq!(
            row("calibration::spin_2m"),
            [
                "calibration::spin_2m",
                "6,000,027",
                "6,300,027",
                "+300,000",
                "+5.00%",
                "±3,000",
                "REGRESSED",
                "-"
            ]
        );
        assert_eq!(
            row("calibration::spin_1m"),
            [
                "calibration::spin_1m",
                "3,000,027",
                "3,000,027",
                "0",
                "0.00%",
                "±1,500",
                "unchanged",
                "-"
            ]
        );
        assert_eq!(
            row("rustls::handshake"),
            [
                "rustls::handshake",
                "-",
                "76,533,873",
                "-",
                "-",
                "-",
                "added",
                "-"
            ]
        );
        assert!(text.contains("by origin: harness +300,000"), "{text}");
        assert!(
            text.contains(
                "    +300,000  harness          harnesses::calibration::spin  \
                 (harnesses/src/calibration.rs)"
            ),
            "{text}"
        );
        assert!(
            text.contains("a harness regressed beyond its threshold"),
            "{text}"
        );
    }

    /// A report at the limits `diff-comment` accepts (10,000 harnesses,
    /// each with functions, 100 problems of 16 KiB, every harness
    /// removed or added) renders a comment within GitHub's limit.
    #[test]
    fn the_comment_fits_at_the_validators_limits() {
        let functions: Vec<FunctionDelta> = (0..10)
            .map(|i| FunctionDelta {
                file: "f".repeat(4_000),
                function: format!("{}{i}", "g".repeat(4_000)),
                origin: Origin::Harness,
                base: 1,
                head: 100_000_001,
                delta: 100_000_000,
            })
            .collect();
        let mut harnesses = Vec::new();
        for i in 0..10_000 {
            let name = name(&format!("a{i}::very_long_harness_name_{i}"));
            harnesses.push(match i % 3 {
                0 => HarnessDiff::compared(
                    &name,
                    1_000_000_000,
                    1_100_000_000,
                    Threshold::default(),
                    functions.clone(),
                ),
                1 => HarnessDiff::one_sided(&name, Some(5), None, Threshold::default()),
                _ => HarnessDiff::one_sided(&name, None, Some(5), Threshold::default()),
            });
        }
        let mut report = report(harnesses, Vec::new());
        report.problems = (0..100)
            .map(|i| format!("{i}{}", "é".repeat(8_000)))
            .collect();
        crate::diff::untrusted::check(&report).expect("within the validator's limits");
        let body = comment(&report).expect("one marker");
        assert!(
            body.chars().count() <= MAX_COMMENT_CHARS,
            "{} characters",
            body.chars().count()
        );
        assert!(body.contains("do not fit in a comment"), "{body}");
        assert!(body.contains("need a maintainer's acknowledgement"));
    }

    #[test]
    fn markdown_is_a_comment_with_a_table_and_details() {
        let md = markdown(&spin_report());
        assert!(
            md.starts_with("### 🔴 Instruction counts: 1 regression beyond the threshold\n"),
            "{md}"
        );
        assert!(
            md.contains(
                "| `calibration::spin_2m` | 6,000,027 | 6,300,027 | **+300,000** | **+5.00%** | 🔴 regressed | harness +300,000 |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| `calibration::spin_1m` | 3,000,027 | 3,000,027 | 0 | 0.00% | ⚪ unchanged |  |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| `rustls::handshake` | - | 76,533,873 | - | - | ➕ added |  |"),
            "{md}"
        );
        assert!(md.contains("| +300,000 | harness | `harnesses::calibration::spin` | `harnesses/src/calibration.rs` |"), "{md}");
        assert!(md.contains("<details>") && md.contains("</details>"));
    }

    /// A harness with a differential flame graph links it from its details,
    /// relative to the report; a path that could not be a file name of ours
    /// is shown as code, not linked.
    #[test]
    fn markdown_links_the_flame_graph() {
        let mut report = spin_report();
        report.harnesses[0].flame_graph =
            Some("perf_outputs/diff/calibration.spin_2m.flame.diff.svg".into());
        let md = markdown(&report);
        assert!(
            md.contains("[Flame graph](calibration.spin_2m.flame.diff.svg) of head"),
            "{md}"
        );
        assert!(text(&report).contains(
            "flame graph (red grew, blue shrank): perf_outputs/diff/calibration.spin_2m.flame.diff.svg"
        ));
        report.harnesses[0].flame_graph = Some("perf_outputs/diff/x](javascript:y).svg".into());
        let md = markdown(&report);
        assert!(!md.contains("[Flame graph]("), "{md}");
        assert!(
            md.contains("Flame graph: `perf_outputs/diff/x](javascript:y).svg`"),
            "{md}"
        );
    }

    #[test]
    fn markdown_shows_untrusted_strings_only_as_code() {
        let mut report = spin_report();
        let hostile = "@octocat <img src=x> [x](https://evil.example) <!-- regress-diff --> |";
        report.base.reference = hostile.into();
        report.problems.push(format!("{hostile}\n### fake heading"));
        report.harnesses[0].functions[0].function = hostile.into();
        report.harnesses[0].functions[0].file = "`` <b>bold</b>".into();
        report.harnesses[0].error = Some(format!("```\n{hostile}\n```"));
        report.valgrind = "3.22.0".into();
        let md = markdown(&report);
        assert!(!md.contains("<!--"), "{md}");
        assert!(!md.contains("\n### fake"), "{md}");
        let outside = crate::report::markdown::outside_code(&md);
        for bad in ["@octocat", "<img", "](https", "<b>"] {
            assert!(!outside.contains(bad), "{bad:?} outside code in {outside}");
        }
        assert!(md.contains("> [!WARNING]\n> `"), "{md}");
    }

    #[test]
    fn blind_spots_are_named_everywhere_and_unknown_is_never_none() {
        use crate::coverage::{BlindSpot, BlindSpots};
        let mut report = spin_report();
        // A report that did not look for them: unknown, not none.
        assert!(text(&report).contains("Blind spots unknown"));
        assert!(markdown(&report).contains("Blind spots unknown"));

        let hostile = "s2n_psk <img src=x> @octocat |";
        report.blind_spots = Some(BlindSpots {
            unknown: None,
            considered: vec![
                "tls/s2n_psk.c".into(),
                "harnesses/src/calibration.rs".into(),
            ],
            other_files: 3,
            changed: 3,
            base: Vec::new(),
            head: vec![
                BlindSpot {
                    file: "tls/s2n_psk.c".into(),
                    function: "s2n_offered_psk_list_choose_psk".into(),
                    lines: vec![120, 121, 122, 130],
                },
                BlindSpot {
                    file: "tls/s2n_psk.c".into(),
                    function: hostile.into(),
                    lines: vec![7],
                },
            ],
        });
        let terminal = text(&report);
        assert!(
            terminal.contains("2 changed functions are not run by any harness"),
            "{terminal}"
        );
        assert!(
            terminal.contains(
                "head  s2n_offered_psk_list_choose_psk  tls/s2n_psk.c  (lines 120-122, 130)"
            ),
            "{terminal}"
        );
        assert!(
            terminal
                .contains("files considered: tls/s2n_psk.c, harnesses/src/calibration.rs (3 other"),
            "{terminal}"
        );
        let md = comment(&report).expect("one marker");
        assert!(
            md.contains("`s2n_offered_psk_list_choose_psk` (`tls/s2n_psk.c`)"),
            "{md}"
        );
        let outside = crate::report::markdown::outside_code(&md);
        for bad in ["@octocat", "<img"] {
            assert!(!outside.contains(bad), "{bad:?} outside code in {outside}");
        }

        // Every changed function unrun: the verdict says so.
        let mut all = report.clone();
        if let Some(spots) = all.blind_spots.as_mut() {
            spots.changed = 2;
        }
        // A clean diff: nothing regressed and nothing for a maintainer to
        // acknowledge (a harness on one side only would be).
        all.harnesses
            .retain(|h| !h.regressed() && h.attention().is_none());
        let terminal = text(&all);
        assert!(
            terminal.contains("no harness runs the changed code"),
            "{terminal}"
        );
        assert!(
            markdown(&all).contains("but no harness runs the changed code"),
            "{}",
            markdown(&all)
        );
    }

    #[test]
    fn sides_built_differently_are_named_everywhere_and_alike_sides_are_not() {
        let mut report = spin_report();
        let base = crate::fixtures::fingerprint("3.24.0");
        report.fingerprints = Some(SideFingerprints {
            base: base.clone(),
            head: base.clone(),
        });
        assert!(!text(&report).contains("different builds"));
        assert!(!markdown(&report).contains("different builds"));

        let mut head = base.clone();
        head.rustc = "rustc 1.96.0 `</details>`".into();
        head.libraries.insert("s2n-tls".into(), "0.3.48".into());
        report.fingerprints = Some(SideFingerprints { base, head });
        let terminal = text(&report);
        assert!(
            terminal.contains("measured with different builds"),
            "{terminal}"
        );
        assert!(
            terminal.contains("rustc: rustc 1.96.0 `</details>` in HEAD, rustc 1.95.0 in BASE"),
            "{terminal}"
        );
        assert!(
            terminal.contains("s2n-tls: 0.3.48 in HEAD, 0.3.47 in BASE"),
            "{terminal}"
        );
        let md = markdown(&report);
        assert!(md.contains("> [!IMPORTANT]"), "{md}");
        assert!(
            md.contains("> - `s2n-tls: 0.3.48 in HEAD, 0.3.47 in BASE`"),
            "{md}"
        );
        // The hostile rustc string is inside a code span, never markup.
        assert!(!md.contains("\n> - rustc"), "{md}");
        assert!(!md.contains("> - rustc: rustc 1.96.0 `</details>`"), "{md}");
    }

    #[test]
    fn markdown_warns_about_problems_and_errors() {
        let mut report = spin_report();
        report.problems.push("shard 2/2 did not report".into());
        report.harnesses.push(HarnessDiff::failed(
            &name("s2n_tls::handshake_rsa4096"),
            Some(1),
            None,
            Threshold::default(),
            "head: s2n_tls::handshake_rsa4096 failed under Valgrind".into(),
        ));
        report.shards = vec![Shard::new(1, 2).expect("shard")];
        let md = markdown(&report);
        assert!(
            md.starts_with("### ⚠️ Instruction counts: the diff is incomplete"),
            "{md}"
        );
        assert!(
            md.contains("> [!WARNING]\n> `shard 2/2 did not report`"),
            "{md}"
        );
        assert!(md.contains("failed under Valgrind"), "{md}");
    }
}
