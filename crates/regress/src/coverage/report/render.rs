//! A [`Coverage`] on the terminal, in Markdown and as JSON.

use std::fmt::Write as _;

use super::{Coverage, Function, LibraryCoverage};
use crate::format::count;
use crate::report::markdown::code;

/// Function names shown per file in the terminal and in Markdown.
const SHOWN: usize = 12;

fn names(functions: &[Function], limit: usize) -> String {
    let mut shown: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
    shown.dedup();
    let more = shown.len().saturating_sub(limit);
    shown.truncate(limit);
    let mut text = shown.join(", ");
    if more > 0 {
        let _ = write!(text, " … and {more} more");
    }
    text
}

fn summary(library: &LibraryCoverage) -> String {
    let mut text = format!(
        "{} files run, {} lines, {} functions run",
        count(library.files.len() as u64),
        count(library.lines_run() as u64),
        count(library.functions_run() as u64),
    );
    if library.sources_read() > 0 {
        let _ = write!(
            text,
            ", {} not run (source read for {} of {} files)",
            count(library.functions_not_run() as u64),
            count(library.sources_read() as u64),
            count(library.files.len() as u64)
        );
    } else {
        text.push_str(" (no source found: the functions are the profiles' symbols)");
    }
    if !library.files_not_run.is_empty() {
        let _ = write!(
            text,
            "; {} compiled files in the same folders not run",
            count(library.files_not_run.len() as u64)
        );
    }
    text
}

impl Coverage {
    /// The terminal text: per library a summary, then per file.
    pub fn text(&self) -> String {
        let mut out = format!(
            "Source executed by {} measured harnesses\n",
            self.harnesses.len()
        );
        for library in &self.libraries {
            let _ = writeln!(out, "\n{}: {}", library.library, summary(library));
            for file in &library.files {
                let _ = write!(
                    out,
                    "  {}  {} harnesses, {} lines, {} functions run",
                    file.file,
                    file.harnesses,
                    count(file.lines as u64),
                    file.functions_run.len()
                );
                if file.source.is_some() {
                    let _ = write!(out, ", {} not run", file.functions_not_run.len());
                    if !file.functions_not_run.is_empty() {
                        let _ = write!(out, ": {}", names(&file.functions_not_run, SHOWN));
                    }
                }
                out.push('\n');
            }
            if !library.files_not_run.is_empty() {
                let _ = writeln!(out, "  files not run: {}", library.files_not_run.join(", "));
            }
        }
        out
    }

    /// Markdown: a table per library; every name as code.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## Source executed by {} measured harnesses\n",
            self.harnesses.len()
        );
        let codes = |functions: &[Function]| {
            let mut shown: Vec<String> = functions
                .iter()
                .take(SHOWN)
                .map(|f| code(&f.name))
                .collect();
            if functions.len() > SHOWN {
                shown.push(format!("… and {} more", functions.len() - SHOWN));
            }
            shown.join(", ")
        };
        for library in &self.libraries {
            let _ = writeln!(
                out,
                "\n### {}\n\n{}.\n\n| file | harnesses | lines run | functions run | functions not run |\n|:---|---:|---:|---:|:---|",
                library.library,
                summary(library)
            );
            for file in &library.files {
                let not_run = if file.source.is_none() {
                    "(source not found)".to_owned()
                } else if file.functions_not_run.is_empty() {
                    "none".to_owned()
                } else {
                    format!(
                        "{}: {}",
                        file.functions_not_run.len(),
                        codes(&file.functions_not_run)
                    )
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {not_run} |",
                    code(&file.file),
                    file.harnesses,
                    count(file.lines as u64),
                    file.functions_run.len()
                );
            }
            if !library.files_not_run.is_empty() {
                let files: Vec<String> = library.files_not_run.iter().map(|f| code(f)).collect();
                let _ = writeln!(out, "\nFiles not run: {}.", files.join(", "));
            }
        }
        out
    }

    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}
