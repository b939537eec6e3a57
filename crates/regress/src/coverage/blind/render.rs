//! The blind spots on the terminal and in Markdown.

use std::fmt::Write as _;

use super::BlindSpots;
use crate::report::markdown::code;

/// Blind spots named in the terminal and in Markdown.
const SHOWN: usize = 30;

impl BlindSpots {
    /// The sentence that says it all.
    fn headline(&self) -> String {
        if let Some(reason) = &self.unknown {
            return format!("Blind spots unknown: {reason}.");
        }
        let functions = self.functions();
        if self.considered.is_empty() {
            return format!(
                "No compiled source changed ({} other files changed), so no blind spots.",
                self.other_files
            );
        }
        if self.changed == 0 {
            return format!(
                "No function changed: the {} changed files of compiled source change only \
                 declarations, data or comments outside functions, so no blind spots.",
                self.considered.len()
            );
        }
        if functions.is_empty() {
            return format!(
                "Every changed function is run by some harness ({} changed on BASE and HEAD, \
                 in {} files).",
                self.changed,
                self.considered.len()
            );
        }
        let mut text = format!(
            "{} changed function{} not run by any harness",
            functions.len(),
            if functions.len() == 1 { " is" } else { "s are" }
        );
        if self.run() == 0 {
            text.push_str(": no harness runs the changed code, so the counts say nothing about it");
        }
        text
    }

    /// The terminal lines.
    pub fn text(&self) -> String {
        let mut out = format!("\n{}\n", self.headline());
        if self.unknown.is_some() {
            return out;
        }
        for (side, spots) in [("head", &self.head), ("base", &self.base)] {
            for spot in spots.iter().take(SHOWN) {
                let _ = writeln!(
                    out,
                    "  {side}  {}  {}  (lines {})",
                    spot.function,
                    spot.file,
                    ranges(&spot.lines)
                );
            }
            if spots.len() > SHOWN {
                let _ = writeln!(out, "  {side}  … and {} more", spots.len() - SHOWN);
            }
        }
        if !self.considered.is_empty() {
            let _ = writeln!(
                out,
                "  files considered: {}{}",
                self.considered.join(", "),
                if self.other_files > 0 {
                    format!(
                        " ({} other changed files are not compiled source)",
                        self.other_files
                    )
                } else {
                    String::new()
                }
            );
        }
        out
    }

    /// The Markdown section; every name as code.
    pub fn markdown(&self) -> String {
        let mut out = "#### Blind spots\n\n".to_owned();
        let functions = self.functions();
        if self.unknown.is_some() || functions.is_empty() {
            let _ = writeln!(out, "{}", markdown_text(&self.headline()));
        } else {
            let named: Vec<String> = functions
                .iter()
                .take(SHOWN)
                .map(|(function, file)| format!("{} ({})", code(function), code(file)))
                .collect();
            let more = if functions.len() > SHOWN {
                format!(", and {} more", functions.len() - SHOWN)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "⚠️ {}: {}{more}.",
                markdown_text(&self.headline()),
                named.join(", ")
            );
            let _ = writeln!(
                out,
                "\n| side | function | file | changed lines |\n|:---|:---|:---|:---|"
            );
            for (side, spots) in [("head", &self.head), ("base", &self.base)] {
                for spot in spots.iter().take(SHOWN) {
                    let _ = writeln!(
                        out,
                        "| {side} | {} | {} | {} |",
                        code(&spot.function),
                        code(&spot.file),
                        ranges(&spot.lines)
                    );
                }
            }
        }
        if self.unknown.is_none() && !self.considered.is_empty() {
            let files: Vec<String> = self
                .considered
                .iter()
                .take(SHOWN)
                .map(|f| code(f))
                .collect();
            let _ = writeln!(
                out,
                "\n<sub>Files considered: {}{}{}.</sub>",
                files.join(", "),
                if self.considered.len() > SHOWN {
                    format!(" and {} more", self.considered.len() - SHOWN)
                } else {
                    String::new()
                },
                if self.other_files > 0 {
                    format!(
                        "; {} other changed files are not compiled source",
                        self.other_files
                    )
                } else {
                    String::new()
                }
            );
        }
        out
    }
}

/// The program's own sentence, made safe (it holds no untrusted text
/// except an unknown's reason, which is shown as code).
fn markdown_text(text: &str) -> String {
    match text.strip_prefix("Blind spots unknown: ") {
        Some(reason) => format!(
            "Blind spots unknown: {}.",
            code(reason.trim_end_matches('.'))
        ),
        None => text.to_owned(),
    }
}

/// `3, 5-9, 12`.
pub fn ranges(lines: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = lines.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        parts.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(", ")
}
