//! A [`DiffReport`] for its three readers: a terminal, a pull request
//! comment (GitHub Markdown) and Bencher (Bencher Metric Format JSON).
//!
//! All three render the same report, so what the comment says is what the
//! terminal said. Names that come from the measured code (function and file
//! names) are untrusted text from the pull request's point of view: the
//! Markdown puts them in code spans with `|` escaped, so a crafted name can
//! neither break the table nor inject markup.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::compare::{HarnessDiff, Verdict};
use super::report::DiffReport;
use super::Outcome;
use crate::format::{count, signed, signed_percent};
use crate::judge::Change;
use crate::report::Table;

/// Functions listed per changed harness in the terminal.
const TEXT_FUNCTIONS: usize = 8;
/// Functions listed per changed harness in the Markdown.
const MARKDOWN_FUNCTIONS: usize = 15;
/// GitHub refuses comments over 65,536 characters; the per-harness details
/// stop well before, and the table always fits.
const MARKDOWN_BUDGET: usize = 60_000;
/// Longer names are cut in the Markdown (C++-style generic names run to
/// hundreds of characters).
const MARKDOWN_NAME_LIMIT: usize = 160;

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
        "Valgrind {} ({} method){shards}\n",
        report.valgrind, report.method
    );

    let mut table = Table::new(&[
        "harness",
        "base",
        "head",
        "change",
        "change %",
        "threshold",
        "verdict",
    ]);
    for harness in &report.harnesses {
        table.row(vec![
            harness.harness.clone(),
            optional(harness.base),
            optional(harness.head),
            change(harness),
            percent(harness),
            harness
                .allowance
                .map_or_else(|| "-".to_owned(), |a| format!("±{}", count(a))),
            harness.verdict.label().to_owned(),
        ]);
    }
    out.push_str(&table.to_text());

    for harness in &report.harnesses {
        if let Some(error) = &harness.error {
            let _ = writeln!(out, "\n{}: {error}", harness.harness);
        }
        if harness.delta.is_none_or(|delta| delta == 0) {
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
    }

    for problem in &report.problems {
        let _ = writeln!(out, "\nproblem: {problem}");
    }
    let verdict = match report.outcome() {
        Outcome::Clean => "nothing regressed beyond its threshold",
        Outcome::Regressed => "a harness regressed beyond its threshold",
        Outcome::Incomplete => "the diff is incomplete (see the errors above)",
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

/// `text` as an inline code span that is safe inside a table cell.
fn code(text: &str) -> String {
    let mut text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > MARKDOWN_NAME_LIMIT {
        text = text.chars().take(MARKDOWN_NAME_LIMIT - 1).collect();
        text.push('…');
    }
    let text = text.replace('|', "\\|");
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `text` inside HTML (a `<summary>`): a report read back by `diff-merge`
/// may hold any harness name.
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A fenced code block for free text (error messages).
fn block(text: &str) -> String {
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}text\n{}\n{fence}\n", text.trim_end())
}

/// The pull request comment (and job summary).
pub fn markdown(report: &DiffReport) -> String {
    let regressions = report
        .tally()
        .get(&Verdict::REGRESSED)
        .copied()
        .unwrap_or(0);
    let headline = match report.outcome() {
        Outcome::Incomplete => "⚠️ Instruction counts: the diff is incomplete".to_owned(),
        Outcome::Regressed => format!(
            "🔴 Instruction counts: {regressions} regression{} beyond the threshold",
            if regressions == 1 { "" } else { "s" }
        ),
        Outcome::Clean => {
            "🟢 Instruction counts: nothing regressed beyond its threshold".to_owned()
        }
    };
    let mut out = format!("### {headline}\n\n");
    let shards = if report.shards.is_empty() {
        String::new()
    } else {
        format!(", {} shards", report.shards.len())
    };
    let _ = writeln!(
        out,
        "Head {} ({}) against base {} ({}), measured with Valgrind {} ({}{shards}). {}. \
         A change counts when it is larger than the harness's threshold (by default the \
         larger of 0.05% and 1,000 instructions).\n",
        code(&report.head.reference),
        code(report.head.short()),
        code(&report.base.reference),
        code(report.base.short()),
        report.valgrind,
        report.method,
        tally(report),
    );
    for problem in &report.problems {
        let _ = writeln!(out, "> [!WARNING]\n> {}\n", problem.replace('\n', " "));
    }

    out.push_str("| harness | base | head | change | % | verdict | mostly in |\n");
    out.push_str("|:---|---:|---:|---:|---:|:---|:---|\n");
    for harness in &report.harnesses {
        let (change, percent) = if harness.significant {
            (
                format!("**{}**", change(harness)),
                format!("**{}**", percent(harness)),
            )
        } else {
            (change(harness), percent(harness))
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {change} | {percent} | {} {} | {} |",
            code(&harness.harness),
            optional(harness.base),
            optional(harness.head),
            emoji(harness.verdict),
            harness.verdict.label().to_lowercase(),
            origins(harness, 2),
        );
    }

    let mut omitted = 0;
    for harness in &report.harnesses {
        let details = details(harness);
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
    let _ = writeln!(
        out,
        "\n<sub>Per-function diffs (`cg_annotate`), raw profiles and `report.json` are in \
         `perf_outputs/diff/` (in CI, the run's artifacts). Reproduce locally with \
         `scripts/perf-diff.sh {} {}`.</sub>",
        report.base.short(),
        report.head.short()
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
    out.push_str("\n</details>\n");
    out
}

/// Bencher Metric Format: `{ "<harness>": { "instructions": { "value": N } } }`,
/// the head's count of every harness head has.
pub fn bmf(report: &DiffReport) -> serde_json::Value {
    let metrics: BTreeMap<&str, serde_json::Value> = report
        .harnesses
        .iter()
        .filter_map(|harness| {
            let value = harness.head?;
            Some((
                harness.harness.as_str(),
                serde_json::json!({ "instructions": { "value": value } }),
            ))
        })
        .collect();
    serde_json::json!(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::attribution::Origin;
    use crate::diff::compare::FunctionDelta;
    use crate::diff::report::tests::report;
    use crate::diff::shard::Shard;
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
            "calibration::spin_2m",
            6_000_027,
            6_300_027,
            Threshold::default(),
            functions,
        );
        regressed.annotated_diff = Some("perf_outputs/diff/calibration.spin_2m.diff.txt".into());
        let same = HarnessDiff::compared(
            "calibration::spin_1m",
            3_000_027,
            3_000_027,
            Threshold::default(),
            Vec::new(),
        );
        let added = HarnessDiff::one_sided(
            "rustls::handshake",
            None,
            Some(76_533_873),
            Threshold::default(),
        );
        report(vec![regressed, same, added], Vec::new())
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
                "REGRESSED"
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
                "unchanged"
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
                "added"
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

    #[test]
    fn markdown_escapes_untrusted_names() {
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("uses `tick`"), "`` uses `tick` ``");
        assert_eq!(code("`start"), "`` `start ``");
        assert_eq!(code("line\nbreak"), "`line break`");
        let long = "x".repeat(500);
        assert_eq!(code(&long).chars().count(), MARKDOWN_NAME_LIMIT + 2);
        assert!(block("say ```hi```").starts_with("````text\n"));
        assert_eq!(html("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
    }

    #[test]
    fn markdown_warns_about_problems_and_errors() {
        let mut report = spin_report();
        report.problems.push("shard 2/2 did not report".into());
        report.harnesses.push(HarnessDiff::failed(
            "s2n_tls::handshake_rsa4096",
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
            md.contains("> [!WARNING]\n> shard 2/2 did not report"),
            "{md}"
        );
        assert!(md.contains("failed under Valgrind"), "{md}");
    }

    #[test]
    fn bmf_has_the_head_counts() {
        let value = bmf(&spin_report());
        assert_eq!(
            value,
            serde_json::json!({
                "calibration::spin_1m": { "instructions": { "value": 3_000_027 } },
                "calibration::spin_2m": { "instructions": { "value": 6_300_027 } },
                "rustls::handshake": { "instructions": { "value": 76_533_873 } },
            })
        );
        let removed = report(
            vec![HarnessDiff::one_sided(
                "a::gone",
                Some(5),
                None,
                Threshold::default(),
            )],
            Vec::new(),
        );
        assert_eq!(bmf(&removed), serde_json::json!({}));
    }
}
