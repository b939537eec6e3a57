//! `regress coverage`: what the measured harnesses execute, per library
//! and per file, from the lines files of an output folder
//! ([`super::lines`]).
//!
//! For a file whose source can be read (the path the debug information
//! names, or for aws-lc's `/aws-lc/…` the `aws-lc-sys` package in cargo's
//! registry), its functions are read from the source ([`super::source`]):
//! a function ran when any harness executed one of its lines, inlined or
//! not; the others are listed as not run. For a TLS library (and this
//! workspace), the compiled-source files in the folders of the files that
//! ran, and that no harness ran, are listed too. Without a source, the
//! functions are the symbols the profiles name.
//!
//! The pieces: `finder.rs` finds a file's source on this machine
//! ([`SourceFinder`]) and reads its functions; `render.rs` shows a
//! [`Coverage`] on the terminal, in Markdown and as JSON. What ran, merged
//! over the harnesses, is here.

mod finder;
mod render;

pub use finder::{spans_of, SourceFinder};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::CoverageError;
use super::lines::{self, Lines};
use super::origin::{classify, Origin};
use super::source::{self, Language, Span};
use crate::harness_name::HarnessName;

/// The version of `regress coverage --format json`.
pub const COVERAGE_SCHEMA: u32 = 1;

/// What the harnesses of one output folder execute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub schema: u32,
    /// The harnesses whose line data was read.
    pub harnesses: Vec<HarnessName>,
    pub libraries: Vec<LibraryCoverage>,
}

/// One library's files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryCoverage {
    pub library: Origin,
    /// The files at least one harness executed.
    pub files: Vec<FileCoverage>,
    /// Compiled-source files (not headers) in the same folders that no
    /// harness executed (TLS libraries and this workspace, where the
    /// source was found).
    pub files_not_run: Vec<String>,
}

/// A function of a file: its name and first line (0 when the name is a
/// profile's symbol and the source was not read).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub line: u32,
}

/// One executed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileCoverage {
    /// The path inside its library (`tls/s2n_psk.c`).
    pub file: String,
    /// The path the debug information names.
    pub path: String,
    /// The source read for its functions; `None` when it was not found.
    pub source: Option<String>,
    /// How many harnesses executed some line of it.
    pub harnesses: usize,
    /// How many of its lines were executed.
    pub lines: usize,
    pub functions_run: Vec<Function>,
    /// Empty when the source was not read.
    pub functions_not_run: Vec<Function>,
}

impl LibraryCoverage {
    pub fn functions_run(&self) -> usize {
        self.files.iter().map(|f| f.functions_run.len()).sum()
    }

    pub fn functions_not_run(&self) -> usize {
        self.files.iter().map(|f| f.functions_not_run.len()).sum()
    }

    pub fn lines_run(&self) -> usize {
        self.files.iter().map(|f| f.lines).sum()
    }

    pub fn sources_read(&self) -> usize {
        self.files.iter().filter(|f| f.source.is_some()).count()
    }
}

/// Whether any of `executed` lies in `span`.
pub fn ran(executed: &BTreeSet<u32>, span: &Span) -> bool {
    executed.range(span.start..=span.end).next().is_some()
}

/// Every file of the line data, merged over the harnesses.
#[derive(Default)]
struct Merged {
    lines: BTreeSet<u32>,
    symbols: BTreeSet<String>,
    harnesses: BTreeSet<HarnessName>,
}

/// The coverage of the lines files in `dir`, of `only` when given.
pub fn coverage(
    dir: &Path,
    only: Option<Origin>,
    finder: &SourceFinder,
) -> Result<Coverage, CoverageError> {
    let all = lines::read_all(dir)?;
    if all.is_empty() {
        return Err(CoverageError::NoMeasurements {
            dir: dir.to_path_buf(),
        });
    }
    Ok(of_lines(&all, only, finder))
}

/// The coverage of `all`.
pub fn of_lines(all: &[Lines], only: Option<Origin>, finder: &SourceFinder) -> Coverage {
    let mut merged: BTreeMap<&str, Merged> = BTreeMap::new();
    for harness in all {
        for (file, functions) in &harness.files {
            let entry = merged.entry(file).or_default();
            entry.harnesses.insert(harness.harness.clone());
            for (function, lines) in functions {
                entry.symbols.insert(function.clone());
                entry.lines.extend(lines.iter().copied());
            }
        }
    }
    let mut libraries: BTreeMap<Origin, LibraryCoverage> = BTreeMap::new();
    // Folders (on disk, and inside the library) of files whose source was read.
    let mut folders: BTreeMap<Origin, BTreeMap<PathBuf, String>> = BTreeMap::new();
    let mut read: BTreeSet<PathBuf> = BTreeSet::new();
    for (path, merged) in merged {
        let place = classify(path);
        if only.is_some_and(|only| only != place.origin) {
            continue;
        }
        let found = finder.find(path);
        let spans = found.as_deref().and_then(spans_of);
        let (functions_run, functions_not_run) = match &spans {
            Some(spans) => {
                // C defines one function once per preprocessor branch
                // (`#if`/`#else`): a name ran when any of its definitions did.
                let c = Language::of(path) == Some(Language::C);
                let ran_names: BTreeSet<&str> = spans
                    .iter()
                    .filter(|span| ran(&merged.lines, span))
                    .map(|span| span.name.as_str())
                    .collect();
                let mut seen: BTreeSet<&str> = BTreeSet::new();
                let (run, not): (Vec<&Span>, Vec<&Span>) = spans
                    .iter()
                    .filter(|span| !c || seen.insert(span.name.as_str()))
                    .partition(|span| {
                        if c {
                            ran_names.contains(span.name.as_str())
                        } else {
                            ran(&merged.lines, span)
                        }
                    });
                let function = |span: &&Span| Function {
                    name: span.name.clone(),
                    line: span.start,
                };
                (
                    run.iter().map(function).collect(),
                    not.iter().map(function).collect(),
                )
            }
            None => (
                merged
                    .symbols
                    .iter()
                    .map(|name| Function {
                        name: name.clone(),
                        line: 0,
                    })
                    .collect(),
                Vec::new(),
            ),
        };
        if let Some(found) = &found {
            read.insert(found.clone());
            if let (Some(dir), Some(inside)) = (found.parent(), Path::new(&place.relative).parent())
            {
                folders
                    .entry(place.origin)
                    .or_default()
                    .insert(dir.to_path_buf(), inside.to_string_lossy().into_owned());
            }
        }
        libraries
            .entry(place.origin)
            .or_insert_with(|| LibraryCoverage {
                library: place.origin,
                files: Vec::new(),
                files_not_run: Vec::new(),
            })
            .files
            .push(FileCoverage {
                file: place.relative,
                path: path.to_owned(),
                source: spans
                    .is_some()
                    .then(|| found.as_ref().map(|f| f.display().to_string()))
                    .flatten(),
                harnesses: merged.harnesses.len(),
                lines: merged.lines.len(),
                functions_run,
                functions_not_run,
            });
    }
    for (origin, dirs) in folders {
        if !(origin.is_tls_library() || origin == Origin::Workspace) {
            continue;
        }
        let Some(library) = libraries.get_mut(&origin) else {
            continue;
        };
        let mut not_run = BTreeSet::new();
        for (dir, inside) in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                // Headers hold declarations and inline code that runs as
                // part of the files that include them.
                let header = name.ends_with(".h") || name.ends_with(".inc");
                if path.is_file()
                    && source::is_compiled_source(&name)
                    && !header
                    && !read.contains(&path)
                {
                    not_run.insert(if inside.is_empty() {
                        name
                    } else {
                        format!("{inside}/{name}")
                    });
                }
            }
        }
        library.files_not_run = not_run.into_iter().collect();
    }
    let mut libraries: Vec<LibraryCoverage> = libraries.into_values().collect();
    for library in &mut libraries {
        library.files.sort_by(|a, b| a.file.cmp(&b.file));
    }
    Coverage {
        schema: COVERAGE_SCHEMA,
        harnesses: all.iter().map(|l| l.harness.clone()).collect(),
        libraries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regress_profile::callgrind_out::Costs;

    /// A library in s2n-tls's layout on disk, and lines that ran part of it.
    #[test]
    fn functions_and_files_not_run_are_named_from_the_source() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lib = dir.path().join("s2n-tls-sys-0.3.47/lib/tls");
        std::fs::create_dir_all(&lib).expect("mkdir");
        std::fs::write(
            lib.join("s2n_psk.c"),
            "int s2n_run(void)\n{\n    return 1;\n}\n\nint s2n_not(void)\n{\n    return 2;\n}\n",
        )
        .expect("write");
        std::fs::write(lib.join("s2n_other.c"), "int f(void) { return 0; }\n").expect("write");
        std::fs::write(lib.join("README.md"), "not source\n").expect("write");
        let psk = lib.join("s2n_psk.c").display().to_string();
        let mut costs = Costs::new();
        costs
            .entry((psk.clone(), "s2n_caller".to_owned()))
            .or_default()
            .insert(3, 5);
        costs
            .entry(("./malloc/malloc.c".to_owned(), "malloc".to_owned()))
            .or_default()
            .insert(10, 1);
        let lines = Lines::from_costs(&HarnessName::new("s2n_tls::a").expect("name"), &costs);

        let coverage = of_lines(std::slice::from_ref(&lines), None, &SourceFinder::default());
        assert_eq!(coverage.libraries.len(), 2);
        let s2n = &coverage.libraries[0];
        assert_eq!(s2n.library, Origin::S2nTls);
        let file = &s2n.files[0];
        assert_eq!(file.file, "tls/s2n_psk.c");
        // Line 3, inlined into another symbol, is s2n_run's.
        assert_eq!(
            file.functions_run,
            [Function {
                name: "s2n_run".into(),
                line: 1
            }]
        );
        assert_eq!(
            file.functions_not_run,
            [Function {
                name: "s2n_not".into(),
                line: 6
            }]
        );
        assert_eq!(s2n.files_not_run, ["tls/s2n_other.c"]);
        let system = &coverage.libraries[1];
        assert_eq!(system.files[0].source, None);
        assert_eq!(system.files[0].functions_run[0].name, "malloc");

        let text = coverage.text();
        assert!(
            text.contains(
                "tls/s2n_psk.c  1 harnesses, 1 lines, 1 functions run, 1 not run: s2n_not"
            ),
            "{text}"
        );
        assert!(text.contains("files not run: tls/s2n_other.c"), "{text}");
        let markdown = coverage.markdown();
        assert!(
            markdown.contains("| `tls/s2n_psk.c` | 1 | 1 | 1 | 1: `s2n_not` |"),
            "{markdown}"
        );

        let only = of_lines(&[lines], Some(Origin::System), &SourceFinder::default());
        assert_eq!(only.libraries.len(), 1);
        assert_eq!(only.libraries[0].library, Origin::System);
    }

    #[test]
    fn no_line_data_says_what_to_run_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let error = coverage(dir.path(), None, &SourceFinder::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("`regress run`"), "{error}");
    }
}
