//! What the constant-flow check found: the report, as JSON
//! (`perf_outputs/constant-flow/report.json`), as Markdown (`report.md`,
//! every name from the program or the allowlist escaped) and as a table.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::allowlist::Entry;
use super::compare::FunctionDiff;
use crate::format::count;
use crate::measure::Result;
use crate::report::{markdown, Table};

/// The version of the report's JSON.
pub const SCHEMA: u32 = 1;

/// Differing functions shown per comparison in Markdown and on the
/// terminal (the JSON has them all).
pub const SHOWN: usize = 12;

/// The whole check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub schema: u32,
    /// Valgrind's version.
    pub valgrind: String,
    /// Runs per variant.
    pub runs: u32,
    pub operations: Vec<OperationReport>,
    /// Allowlist entries that cover a checked operation but matched no
    /// difference (a warning).
    pub stale: Vec<Entry>,
}

/// One operation and its variants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationReport {
    /// `<library>::<operation>`.
    pub operation: String,
    /// What was compared: `run` or `server_flight`.
    pub scope: String,
    pub variants: Vec<VariantReport>,
    pub comparisons: Vec<Comparison>,
}

/// One variant: its counts, run by run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantReport {
    pub variant: String,
    pub group: String,
    /// The compared scope's instructions, one per run.
    pub instructions: Vec<u64>,
    pub operations_per_run: u64,
    /// The first run that differed from the first, if any.
    pub unstable: Option<Unstable>,
}

/// A run of a variant that did not repeat its first run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unstable {
    /// Which run (the first is 1).
    pub run: u32,
    pub differences: Vec<FunctionDiff>,
}

/// Two variants compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub groups: [String; 2],
    pub differences: Vec<Difference>,
}

/// A function that differs, and the allowlist's reason when it may.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    #[serde(flatten)]
    pub diff: FunctionDiff,
    pub allowed: Option<String>,
    /// Allowed as a known finding (secret-dependent, accepted for now).
    #[serde(default)]
    pub known: bool,
}

impl Comparison {
    /// The differences no allowlist entry excuses.
    pub fn findings(&self) -> impl Iterator<Item = &Difference> {
        self.differences.iter().filter(|d| d.allowed.is_none())
    }

    fn kind(&self) -> &'static str {
        if self.groups[0] == self.groups[1] {
            "within group"
        } else {
            "across groups"
        }
    }
}

impl OperationReport {
    /// Unexcused differences between variants, plus variants whose runs
    /// did not repeat.
    pub fn findings(&self) -> usize {
        let between: usize = self.comparisons.iter().map(|c| c.findings().count()).sum();
        between
            + self
                .variants
                .iter()
                .filter(|v| v.unstable.is_some())
                .count()
    }

    fn allowed(&self) -> usize {
        self.comparisons
            .iter()
            .map(|c| c.differences.len() - c.findings().count())
            .sum::<usize>()
            - self.known()
    }

    /// Differences the allowlist accepts as known findings.
    pub fn known(&self) -> usize {
        self.comparisons
            .iter()
            .flat_map(|c| &c.differences)
            .filter(|d| d.known)
            .count()
    }

    /// `library` of `library::operation`.
    pub fn library(&self) -> &str {
        self.operation.split("::").next().unwrap_or_default()
    }

    /// One line: what was found.
    pub fn verdict(&self) -> String {
        let findings = self.findings();
        let allowed = self.allowed();
        let spread = self
            .variants
            .iter()
            .map(|v| {
                v.instructions.iter().max().unwrap_or(&0)
                    - v.instructions.iter().min().unwrap_or(&0)
            })
            .max()
            .unwrap_or(0);
        let known = self.known();
        let mut verdict = if findings > 0 {
            format!("FINDING: {findings} difference(s)")
        } else if known > 0 {
            format!("KNOWN FINDING: {known} difference(s) accepted by the allowlist")
        } else if allowed > 0 {
            format!("constant flow but for {allowed} allowed function difference(s)")
        } else {
            "constant flow: every function equal".to_owned()
        };
        if self.variants.iter().any(|v| v.instructions.len() > 1) {
            verdict.push_str(&format!(", spread {spread}"));
        }
        verdict
    }
}

impl Report {
    /// Every unexcused difference and unrepeatable variant.
    pub fn findings(&self) -> usize {
        self.operations.iter().map(OperationReport::findings).sum()
    }

    /// The summary table: one row per operation.
    pub fn table(&self) -> Table {
        let mut table = Table::new(&[
            "operation",
            "compared",
            "variants (instructions)",
            "verdict",
        ]);
        for operation in &self.operations {
            let variants = operation
                .variants
                .iter()
                .map(|v| {
                    format!(
                        "{} ({}) {}",
                        v.variant,
                        v.group,
                        count(v.instructions.first().copied().unwrap_or(0))
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            table.row(vec![
                operation.operation.clone(),
                operation.scope.clone(),
                variants,
                operation.verdict(),
            ]);
        }
        table
    }

    /// Plain-text details of every finding, for the terminal.
    pub fn findings_text(&self) -> String {
        let mut out = String::new();
        for operation in &self.operations {
            for comparison in &operation.comparisons {
                let findings: Vec<&Difference> = comparison.findings().collect();
                if findings.is_empty() {
                    continue;
                }
                out.push_str(&format!(
                    "FINDING {}: {} ({}) vs {} ({}), {}: {} function(s) differ\n",
                    operation.operation,
                    comparison.a,
                    comparison.groups[0],
                    comparison.b,
                    comparison.groups[1],
                    comparison.kind(),
                    findings.len()
                ));
                for difference in findings.iter().take(SHOWN) {
                    out.push_str(&format!("  {}\n", describe(&difference.diff)));
                }
            }
            for variant in &operation.variants {
                if let Some(unstable) = &variant.unstable {
                    out.push_str(&format!(
                        "FINDING {}: {} counted differently in run {} than in run 1: {} function(s)\n",
                        operation.operation,
                        variant.variant,
                        unstable.run,
                        unstable.differences.len()
                    ));
                    for diff in unstable.differences.iter().take(SHOWN) {
                        out.push_str(&format!("  {}\n", describe(diff)));
                    }
                }
            }
        }
        for operation in &self.operations {
            let known = operation.known();
            if known > 0 {
                let functions: Vec<&str> = operation
                    .comparisons
                    .iter()
                    .flat_map(|c| &c.differences)
                    .filter(|d| d.known)
                    .map(|d| d.diff.function.as_str())
                    .take(SHOWN)
                    .collect();
                out.push_str(&format!(
                    "KNOWN FINDING {} (accepted by the allowlist): {known} difference(s) in {}\n",
                    operation.operation,
                    functions.join(", ")
                ));
            }
        }
        for entry in &self.stale {
            out.push_str(&format!(
                "warning: stale allowlist entry (matched no difference): operation {:?}, between {:?}, functions {:?}\n",
                entry.operation, entry.between, entry.functions
            ));
        }
        out
    }

    /// The Markdown summary. Every name that came from the program or the
    /// allowlist is a table cell or a code span ([`markdown`]).
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("## Constant-flow check\n\n");
        out.push_str(&format!(
            "Valgrind {}, Callgrind, {} run(s) per variant. Within a group every variant is \
             compared with the group's first; across groups the groups' first variants are \
             compared; every further run with the variant's first run. Every function is \
             compared, with no threshold.\n\n",
            markdown::code(&self.valgrind),
            self.runs
        ));
        let mut table = Table::new(&[
            "operation",
            "compared",
            "variant",
            "group",
            "instructions",
            "verdict",
        ]);
        for operation in &self.operations {
            for (index, variant) in operation.variants.iter().enumerate() {
                let counts = &variant.instructions;
                let min = counts.iter().min().copied().unwrap_or(0);
                let max = counts.iter().max().copied().unwrap_or(0);
                let shown = if min == max {
                    count(min)
                } else {
                    format!("{} to {}", count(min), count(max))
                };
                table.row(vec![
                    if index == 0 {
                        operation.operation.clone()
                    } else {
                        String::new()
                    },
                    if index == 0 {
                        operation.scope.clone()
                    } else {
                        String::new()
                    },
                    variant.variant.clone(),
                    variant.group.clone(),
                    shown,
                    if index == 0 {
                        operation.verdict()
                    } else {
                        String::new()
                    },
                ]);
            }
        }
        out.push_str(&table.to_markdown());
        let findings = self.findings();
        out.push_str(&format!("\n{findings} finding(s).\n"));
        for (title, kind) in [
            ("Findings", 0),
            (
                "Known findings (secret-dependent, accepted by the allowlist)",
                1,
            ),
            ("Allowed differences (public data)", 2),
        ] {
            let allowed = kind > 0;
            let mut section = String::new();
            for operation in &self.operations {
                for comparison in &operation.comparisons {
                    let shown: Vec<&Difference> = comparison
                        .differences
                        .iter()
                        .filter(|d| match kind {
                            0 => d.allowed.is_none(),
                            1 => d.known,
                            _ => d.allowed.is_some() && !d.known,
                        })
                        .collect();
                    if shown.is_empty() {
                        continue;
                    }
                    section.push_str(&format!(
                        "\n{} {} ({}) vs {} ({}), {}:\n\n",
                        markdown::code(&operation.operation),
                        markdown::code(&comparison.a),
                        markdown::code(&comparison.groups[0]),
                        markdown::code(&comparison.b),
                        markdown::code(&comparison.groups[1]),
                        comparison.kind()
                    ));
                    let mut rows = Table::new(&[
                        "function",
                        "file",
                        "a",
                        "b",
                        "lines (line: a / b)",
                        "reason",
                    ]);
                    for difference in shown.iter().take(SHOWN) {
                        let diff = &difference.diff;
                        rows.row(vec![
                            diff.function.clone(),
                            diff.file.clone(),
                            count(diff.counts[0].max(0) as u64),
                            count(diff.counts[1].max(0) as u64),
                            lines(diff),
                            difference.allowed.clone().unwrap_or_default(),
                        ]);
                    }
                    section.push_str(&rows.to_markdown());
                    if shown.len() > SHOWN {
                        section.push_str(&format!(
                            "\n… and {} more (report.json has them all).\n",
                            shown.len() - SHOWN
                        ));
                    }
                }
                if !allowed {
                    for variant in &operation.variants {
                        if let Some(unstable) = &variant.unstable {
                            section.push_str(&format!(
                                "\n{} {}: run {} differs from run 1 in {} function(s), first {}\n",
                                markdown::code(&operation.operation),
                                markdown::code(&variant.variant),
                                unstable.run,
                                unstable.differences.len(),
                                unstable
                                    .differences
                                    .first()
                                    .map(|d| markdown::code(&d.function))
                                    .unwrap_or_default()
                            ));
                        }
                    }
                }
            }
            if !section.is_empty() {
                out.push_str(&format!("\n### {title}\n{section}"));
            }
        }
        if !self.stale.is_empty() {
            out.push_str("\n### Stale allowlist entries (warning)\n\n");
            for entry in &self.stale {
                out.push_str(&format!(
                    "- operation {}, between {} and {}, functions {}\n",
                    markdown::code(&entry.operation),
                    markdown::code(&entry.between[0]),
                    markdown::code(&entry.between[1]),
                    entry
                        .functions
                        .iter()
                        .map(|f| markdown::code(f))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        out
    }

    /// Writes `report.json` and `report.md` into `dir`, each whole.
    pub fn write(&self, dir: &Path) -> Result<[PathBuf; 2]> {
        std::fs::create_dir_all(dir)
            .map_err(|source| crate::MeasureError::io("create the output folder", dir, source))?;
        let json_path = dir.join("report.json");
        let mut json = serde_json::to_string_pretty(self).map_err(|source| {
            crate::MeasureError::Serialize {
                what: "constant-flow report",
                source,
            }
        })?;
        json.push('\n');
        crate::atomic_file::write(&json_path, json.as_bytes())?;
        let md_path = dir.join("report.md");
        crate::atomic_file::write(&md_path, self.to_markdown().as_bytes())?;
        Ok([json_path, md_path])
    }
}

/// `function (file): a -> b`, on one line.
fn describe(diff: &FunctionDiff) -> String {
    format!(
        "{} ({}): {} -> {}; lines {}",
        diff.function,
        diff.file,
        diff.counts[0],
        diff.counts[1],
        lines(diff)
    )
}

fn lines(diff: &FunctionDiff) -> String {
    diff.lines
        .iter()
        .map(|line| format!("{}: {} / {}", line.line, line.counts[0], line.counts[1]))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constant_flow::compare::LineDiff;

    fn report(function: &str, allowed: Option<&str>) -> Report {
        Report {
            schema: SCHEMA,
            valgrind: "3.19.0".into(),
            runs: 2,
            operations: vec![OperationReport {
                operation: "fixture::aead_open".into(),
                scope: "run".into(),
                variants: vec![
                    VariantReport {
                        variant: "tag_first_byte".into(),
                        group: "rejected".into(),
                        instructions: vec![100, 100],
                        operations_per_run: 1,
                        unstable: None,
                    },
                    VariantReport {
                        variant: "tag_last_byte".into(),
                        group: "rejected".into(),
                        instructions: vec![130, 130],
                        operations_per_run: 1,
                        unstable: None,
                    },
                ],
                comparisons: vec![Comparison {
                    a: "tag_first_byte".into(),
                    b: "tag_last_byte".into(),
                    groups: ["rejected".into(), "rejected".into()],
                    differences: vec![Difference {
                        diff: FunctionDiff {
                            function: function.into(),
                            file: "x.rs".into(),
                            counts: [10, 40],
                            lines: vec![LineDiff {
                                line: 3,
                                counts: [10, 40],
                            }],
                        },
                        allowed: allowed.map(str::to_owned),
                        known: false,
                    }],
                }],
            }],
            stale: Vec::new(),
        }
    }

    #[test]
    fn a_difference_is_a_finding_unless_allowed() {
        let found = report("leaky::tags_equal", None);
        assert_eq!(found.findings(), 1);
        assert!(found.findings_text().contains("leaky::tags_equal"));
        assert!(found.operations[0].verdict().starts_with("FINDING"));
        let allowed = report("leaky::tags_equal", Some("public"));
        assert_eq!(allowed.findings(), 0);
        assert!(allowed.operations[0].verdict().contains("allowed"));
    }

    #[test]
    fn hostile_names_cannot_become_markup() {
        let hostile = "f](https://evil)<img src=x>|@user\n# heading";
        let markdown = report(hostile, None).to_markdown();
        let outside = crate::report::markdown::outside_code(&markdown);
        for forbidden in ["](https", "<img", "@user", "\n# heading"] {
            assert!(!outside.contains(forbidden), "{forbidden} in {outside}");
        }
    }

    #[test]
    fn reports_round_trip_through_json() {
        let report = report("f", None);
        let json = serde_json::to_string(&report).expect("json");
        assert_eq!(serde_json::from_str::<Report>(&json).expect("back"), report);
    }
}
