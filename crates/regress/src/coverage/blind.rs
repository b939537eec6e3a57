//! The blind spots of a diff: the changed functions of BASE and of HEAD
//! that no measured harness executed on that side.
//!
//! A diff that reports unchanged counts says nothing about code no harness
//! ran. So every diff reads what changed between its two revisions (`git
//! diff`: this workspace's two commits, or a `--library` checkout's two
//! revisions), keeps the files of compiled source ([`Scope`]), and finds for
//! each changed line its function in that side's source ([`super::source`]).
//! A changed function is a blind spot of a side when no harness measured on
//! that side executed any line of it (its own or inlined elsewhere: the
//! lines files keep the file and line inlined code came from). Changed lines
//! outside any function (declarations, comments between functions) are not
//! counted. A side whose harnesses lack line data (measured by a regress
//! from before line data was kept) makes the blind spots unknown, never
//! "none".

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use regress_source::git::Git;
use serde::{Deserialize, Serialize};

use super::lines::{self, Lines};
use super::report::ran;
use super::source::{self, is_compiled_source, Language, Span};
use crate::limits;
use crate::report::markdown::code;

/// Bounds on a report's blind spots (read back as hostile input).
pub const MAX_SPOTS: usize = 10_000;
pub const MAX_FILES: usize = 10_000;
const MAX_NAME: usize = 4_096;
const MAX_LINES: usize = 100_000;
/// Blind spots named in the terminal and in Markdown.
const SHOWN: usize = 30;
/// The largest source file read from a revision.
const MAX_SOURCE: usize = 16 << 20;

/// Which changed files are compiled source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// This workspace: the measured program's crates (`harnesses/src/`,
    /// `crates/measure/src/`).
    Workspace,
    /// A library's repository: C, Rust and assembly files outside its
    /// tests, benchmarks, examples, fuzzing, documentation and CI.
    Library,
}

/// Folders whose files are not the library's compiled source.
const NOT_COMPILED: [&str; 14] = [
    "tests",
    "test",
    "benches",
    "bench",
    "examples",
    "docs",
    "doc",
    "fuzz",
    ".github",
    "codebuild",
    "scripts",
    "ci-bench",
    "bogo",
    "compliance",
];

impl Scope {
    /// Whether the changed file `path` (relative to the repository) counts.
    pub fn considers(self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        if !is_compiled_source(path) || name == "build.rs" {
            return false;
        }
        match self {
            Scope::Workspace => {
                path.starts_with("harnesses/src/") || path.starts_with("crates/measure/src/")
            }
            Scope::Library => !path
                .split('/')
                .any(|segment| NOT_COMPILED.contains(&segment)),
        }
    }
}

/// The lines one file changed: BASE's removed or rewritten lines, and
/// HEAD's added or rewritten ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    pub base: Vec<u32>,
    pub head: Vec<u32>,
}

/// One revision of the repository a diff compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision<'a> {
    Commit(&'a str),
    /// The checkout's working tree as it is (tracked files).
    WorkingTree,
}

/// A changed function no harness ran.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlindSpot {
    pub file: String,
    pub function: String,
    /// The changed lines of it, on its side.
    pub lines: Vec<u32>,
}

/// What a diff's harnesses did not run of what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlindSpots {
    /// Why the blind spots are not known; the other fields then mean
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// The changed files of compiled source that were considered.
    pub considered: Vec<String>,
    /// How many other files changed (documentation, tests, CI, ...).
    pub other_files: usize,
    /// Changed functions, BASE's and HEAD's (a function changed on both
    /// sides counts twice).
    pub changed: usize,
    pub base: Vec<BlindSpot>,
    pub head: Vec<BlindSpot>,
}

impl BlindSpots {
    /// Blind spots that could not be found, and why.
    pub fn unknown(reason: impl Into<String>) -> BlindSpots {
        BlindSpots {
            unknown: Some(reason.into()),
            considered: Vec::new(),
            other_files: 0,
            changed: 0,
            base: Vec::new(),
            head: Vec::new(),
        }
    }

    /// The changed functions some harness ran.
    pub fn run(&self) -> usize {
        self.changed
            .saturating_sub(self.base.len() + self.head.len())
    }

    /// The distinct functions not run, on either side, as `(function, file)`.
    pub fn functions(&self) -> Vec<(&str, &str)> {
        let set: BTreeSet<(&str, &str)> = self
            .head
            .iter()
            .chain(&self.base)
            .map(|spot| (spot.function.as_str(), spot.file.as_str()))
            .collect();
        set.into_iter().collect()
    }

    /// The shards of one diff: a function is a blind spot when no shard's
    /// harnesses ran it.
    pub fn merge(self, other: BlindSpots) -> BlindSpots {
        if self.unknown.is_some() {
            return self;
        }
        if other.unknown.is_some() {
            return other;
        }
        let both = |a: Vec<BlindSpot>, b: &[BlindSpot]| -> Vec<BlindSpot> {
            a.into_iter().filter(|spot| b.contains(spot)).collect()
        };
        BlindSpots {
            base: both(self.base, &other.base),
            head: both(self.head, &other.head),
            ..self
        }
    }

    /// The blind spots of two checkouts of one diff (`--library` twice).
    pub fn join(mut self, other: BlindSpots) -> BlindSpots {
        if self.unknown.is_some() || other.unknown.is_some() {
            let reasons: Vec<String> = [self.unknown, other.unknown]
                .into_iter()
                .flatten()
                .collect();
            return BlindSpots::unknown(reasons.join("; "));
        }
        self.considered.extend(other.considered);
        self.other_files += other.other_files;
        self.changed += other.changed;
        self.base.extend(other.base);
        self.head.extend(other.head);
        self
    }

    /// Checks blind spots read back as hostile input.
    pub fn check(&self) -> Result<(), String> {
        if self.base.len() + self.head.len() > MAX_SPOTS || self.considered.len() > MAX_FILES {
            return Err(format!(
                "more than {MAX_SPOTS} blind spots or {MAX_FILES} files"
            ));
        }
        if self.changed < self.base.len() + self.head.len() {
            return Err("more blind spots than changed functions".to_owned());
        }
        let long = |text: &str| text.len() > MAX_NAME;
        if self.unknown.as_deref().is_some_and(long)
            || self.considered.iter().any(|f| long(f))
            || self
                .base
                .iter()
                .chain(&self.head)
                .any(|s| long(&s.file) || long(&s.function) || s.lines.len() > MAX_LINES)
        {
            return Err(format!(
                "a blind spot's text is longer than {MAX_NAME} bytes"
            ));
        }
        Ok(())
    }

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

/// The changed lines of `git diff --unified=0` output.
pub fn parse_diff(text: &str) -> Vec<ChangedFile> {
    let mut files: Vec<ChangedFile> = Vec::new();
    let mut old_path: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("diff --git ") {
            old_path = None;
            files.push(ChangedFile::default());
        } else if let Some(path) = line.strip_prefix("--- ") {
            old_path = path.strip_prefix("a/").map(str::to_owned);
        } else if let Some(path) = line.strip_prefix("+++ ") {
            let path = path
                .strip_prefix("b/")
                .map(str::to_owned)
                .or(old_path.take());
            if let (Some(file), Some(path)) = (files.last_mut(), path) {
                file.path = path;
            }
        } else if let Some(hunk) = line.strip_prefix("@@ -") {
            let Some(file) = files.last_mut() else {
                continue;
            };
            let mut fields = hunk.split_whitespace();
            let (Some(old), Some(new)) = (fields.next(), fields.next()) else {
                continue;
            };
            let range = |spec: &str| -> Vec<u32> {
                let mut parts = spec.splitn(2, ',');
                let start: u32 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                let length: u32 = parts
                    .next()
                    .map_or(Some(1), |s| s.parse().ok())
                    .unwrap_or(0);
                (start..start.saturating_add(length)).collect()
            };
            file.base.extend(range(old));
            file.head.extend(range(new.trim_start_matches('+')));
        }
    }
    // A file git could only quote (unusual characters) has no path here.
    files.retain(|file| !file.path.is_empty());
    files
}

/// The changed lines between two revisions of the repository `git`.
pub fn changes(git: &Git, base: &str, head: Revision<'_>) -> Result<Vec<ChangedFile>, String> {
    let mut args = vec![
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--unified=0",
        base,
    ];
    if let Revision::Commit(head) = head {
        args.push(head);
    }
    args.push("--");
    let output = git.run(&args).map_err(|error| error.to_string())?;
    Ok(parse_diff(&String::from_utf8_lossy(&output)))
}

/// The text of `path` at `revision`, if it exists there.
fn source_at(git: &Git, root: &Path, revision: Revision<'_>, path: &str) -> Option<String> {
    let text = match revision {
        Revision::Commit(commit) => {
            let bytes = git
                .run(["cat-file", "blob", &format!("{commit}:{path}")])
                .ok()?;
            if bytes.len() > MAX_SOURCE {
                return None;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Revision::WorkingTree => {
            if path.split('/').any(|segment| segment == "..") {
                return None;
            }
            limits::read_capped(&root.join(path), MAX_SOURCE as u64).ok()?
        }
    };
    Some(text)
}

/// One side of a diff as the blind spots need it.
pub struct Side<'a> {
    pub revision: Revision<'a>,
    /// The harnesses measured on this side.
    pub measured: &'a [String],
    /// The output folder holding their lines files.
    pub outputs: &'a Path,
}

/// The lines of `path` (relative to a repository) the harnesses of `all`
/// executed: every profile file whose path ends with it.
fn executed(all: &[Lines], path: &str) -> BTreeSet<u32> {
    let suffix = format!("/{path}");
    all.iter()
        .flat_map(|harness| harness.files.iter())
        .filter(|(file, _)| file.ends_with(&suffix) || file.as_str() == path)
        .flat_map(|(_, functions)| functions.values().flatten().copied())
        .collect()
}

/// The blind spots of a diff of the repository at `root`, from BASE
/// (`base`) to HEAD (`head`): never an error, an unknown instead.
pub fn find(root: &Path, git: &Git, scope: Scope, base: &Side<'_>, head: &Side<'_>) -> BlindSpots {
    let Revision::Commit(base_commit) = base.revision else {
        return BlindSpots::unknown("BASE is not a revision of the repository");
    };
    let read = |side: &Side<'_>, name: &str| -> Result<Vec<Lines>, String> {
        let all = lines::read_all(side.outputs).map_err(|e| e.to_string())?;
        let with: BTreeSet<&str> = all.iter().map(|l| l.harness.as_str()).collect();
        let missing = side
            .measured
            .iter()
            .filter(|h| !with.contains(h.as_str()))
            .count();
        if missing > 0 {
            return Err(format!(
                "{missing} of the {} harnesses measured on {name} have no line data \
                 (profiles measured before line data was kept; measure again)",
                side.measured.len()
            ));
        }
        Ok(all
            .into_iter()
            .filter(|l| side.measured.contains(&l.harness))
            .collect())
    };
    let (base_lines, head_lines) = match (read(base, "BASE"), read(head, "HEAD")) {
        (Ok(b), Ok(h)) => (b, h),
        (Err(reason), _) | (_, Err(reason)) => return BlindSpots::unknown(reason),
    };
    let changes = match changes(git, base_commit, head.revision) {
        Ok(changes) => changes,
        Err(reason) => {
            return BlindSpots::unknown(format!("the changes could not be read ({reason})"))
        }
    };
    let (considered, other): (Vec<ChangedFile>, Vec<ChangedFile>) = changes
        .into_iter()
        .partition(|file| scope.considers(&file.path));
    let mut spots = BlindSpots {
        unknown: None,
        considered: considered.iter().map(|f| f.path.clone()).collect(),
        other_files: other.len(),
        changed: 0,
        base: Vec::new(),
        head: Vec::new(),
    };
    for file in &considered {
        for (side, changed, all, list) in [
            (base, &file.base, &base_lines, &mut spots.base),
            (head, &file.head, &head_lines, &mut spots.head),
        ] {
            if changed.is_empty() {
                continue;
            }
            let Some(text) = source_at(git, root, side.revision, &file.path) else {
                continue;
            };
            let ran_lines = executed(all, &file.path);
            let spans = match Language::of(&file.path) {
                Some(language) => source::functions(&text, language),
                // Assembly: the file is one unit.
                None => vec![Span {
                    name: "(the whole file)".to_owned(),
                    start: 1,
                    end: u32::try_from(text.lines().count()).unwrap_or(u32::MAX),
                }],
            };
            let mut by_function: BTreeMap<&Span, Vec<u32>> = BTreeMap::new();
            for line in changed {
                if let Some(span) = source::enclosing(&spans, *line) {
                    by_function.entry(span).or_default().push(*line);
                }
            }
            for (span, lines) in by_function {
                spots.changed += 1;
                if !ran(&ran_lines, span) {
                    list.push(BlindSpot {
                        file: file.path.clone(),
                        function: span.name.clone(),
                        lines,
                    });
                }
            }
        }
    }
    spots
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/tls/s2n_psk.c b/tls/s2n_psk.c
index 1..2 100644
--- a/tls/s2n_psk.c
+++ b/tls/s2n_psk.c
@@ -10,2 +10,3 @@ int s2n_psk_init(void)
-a
-b
+a
+b
+c
@@ -40,0 +42 @@ int s2n_other(void)
+d
diff --git a/docs/USAGE.md b/docs/USAGE.md
deleted file mode 100644
--- a/docs/USAGE.md
+++ /dev/null
@@ -1 +0,0 @@
-gone
";

    #[test]
    fn a_diff_is_read_into_changed_lines_per_side() {
        let files = parse_diff(DIFF);
        assert_eq!(
            files,
            [
                ChangedFile {
                    path: "tls/s2n_psk.c".into(),
                    base: vec![10, 11],
                    head: vec![10, 11, 12, 42],
                },
                ChangedFile {
                    path: "docs/USAGE.md".into(),
                    base: vec![1],
                    head: vec![],
                },
            ]
        );
        assert_eq!(ranges(&[3, 5, 6, 7, 9]), "3, 5-7, 9");
    }

    #[test]
    fn only_compiled_source_is_considered() {
        assert!(Scope::Library.considers("tls/s2n_psk.c"));
        assert!(Scope::Library.considers("rustls/src/conn.rs"));
        assert!(!Scope::Library.considers("tests/unit/s2n_psk_test.c"));
        assert!(!Scope::Library.considers("rustls/tests/api.rs"));
        assert!(!Scope::Library.considers("docs/USAGE-GUIDE.md"));
        assert!(!Scope::Library.considers("rustls/build.rs"));
        assert!(!Scope::Library.considers("build.rs"));
        assert!(Scope::Workspace.considers("harnesses/src/s2n_tls/config_build.rs"));
        assert!(Scope::Workspace.considers("harnesses/src/s2n_tls/handshake.rs"));
        assert!(!Scope::Workspace.considers("crates/regress/src/diff/mod.rs"));
    }

    #[test]
    fn shards_merge_to_what_no_shard_ran_and_unknown_wins() {
        let spot = |f: &str| BlindSpot {
            file: "a.c".into(),
            function: f.into(),
            lines: vec![1],
        };
        let known = |head: Vec<BlindSpot>| BlindSpots {
            unknown: None,
            considered: vec!["a.c".into()],
            other_files: 0,
            changed: 3,
            base: Vec::new(),
            head,
        };
        let merged = known(vec![spot("f"), spot("g")]).merge(known(vec![spot("g")]));
        assert_eq!(merged.head, [spot("g")]);
        assert_eq!(merged.run(), 2);
        let unknown = known(vec![spot("f")]).merge(BlindSpots::unknown("no data"));
        assert_eq!(unknown.unknown.as_deref(), Some("no data"));
        assert!(unknown.text().contains("Blind spots unknown: no data"));
        assert!(!unknown.text().contains("none"));
    }
}
