//! Finding a diff's blind spots: which changed files are compiled source,
//! the lines each side changed, the function each changed line is in, and
//! which of those functions no harness measured on that side ran.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use regress_source::git::Git;
use regress_source::SourceError;

use super::{BlindSpot, BlindSpots};
use crate::coverage::lines::{self, Lines};
use crate::coverage::report::ran;
use crate::coverage::source::{self, is_compiled_source, Language, Span};
use crate::coverage::CoverageError;
use crate::harness_name::HarnessName;
use crate::limits;

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
pub fn changes(git: &Git, base: &str, head: Revision<'_>) -> Result<Vec<ChangedFile>, SourceError> {
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
    let output = git.run(&args)?;
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
    pub measured: &'a [HarnessName],
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

/// Why a side's executed lines cannot be read: the blind spots are then
/// unknown, for this reason.
#[derive(Debug, thiserror::Error)]
enum NoLineData {
    #[error(transparent)]
    Unreadable(#[from] CoverageError),
    #[error(
        "{missing} of the {measured} harnesses measured on {side} have no line data \
         (profiles measured before line data was kept; measure again)"
    )]
    Missing {
        missing: usize,
        measured: usize,
        side: &'static str,
    },
}

/// The blind spots of a diff of the repository at `root`, from BASE
/// (`base`) to HEAD (`head`): never an error, an unknown instead.
pub fn find(root: &Path, git: &Git, scope: Scope, base: &Side<'_>, head: &Side<'_>) -> BlindSpots {
    let Revision::Commit(base_commit) = base.revision else {
        return BlindSpots::unknown("BASE is not a revision of the repository");
    };
    let read = |side: &Side<'_>, name: &'static str| -> Result<Vec<Lines>, NoLineData> {
        let all = lines::read_all(side.outputs)?;
        let with: BTreeSet<&HarnessName> = all.iter().map(|l| &l.harness).collect();
        let missing = side.measured.iter().filter(|h| !with.contains(h)).count();
        if missing > 0 {
            return Err(NoLineData::Missing {
                missing,
                measured: side.measured.len(),
                side: name,
            });
        }
        Ok(all
            .into_iter()
            .filter(|l| side.measured.contains(&l.harness))
            .collect())
    };
    let (base_lines, head_lines) = match (read(base, "BASE"), read(head, "HEAD")) {
        (Ok(b), Ok(h)) => (b, h),
        (Err(reason), _) | (_, Err(reason)) => return BlindSpots::unknown(reason.to_string()),
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
