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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::CoverageError;
use super::lines::{self, Lines};
use super::origin::{classify, Origin};
use super::source::{self, Language, Span};
use crate::format::count;
use crate::limits;
use crate::report::markdown::code;

/// The version of `regress coverage --format json`.
pub const COVERAGE_SCHEMA: u32 = 1;
/// The largest source file read.
const MAX_SOURCE: u64 = 16 << 20;
/// Function names shown per file in the terminal and in Markdown.
const SHOWN: usize = 12;

/// What the harnesses of one output folder execute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub schema: u32,
    /// The harnesses whose line data was read.
    pub harnesses: Vec<String>,
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

/// Where the source of a profile's file is on this machine.
#[derive(Debug, Clone, Default)]
pub struct SourceFinder {
    /// `$CARGO_HOME/registry/src/*`.
    registries: Vec<PathBuf>,
    /// The versions of `aws-lc-sys` and `openssl-src` the harnesses were
    /// built with (their debug paths name no version, or a build folder
    /// that is gone).
    versions: BTreeMap<String, String>,
}

/// The packages whose sources are found in cargo's registry by version.
const PACKAGES: [&str; 2] = ["aws-lc-sys", "openssl-src"];

impl SourceFinder {
    /// Looks in cargo's registry (`CARGO_HOME`, else `~/.cargo`), for the
    /// versions of `aws-lc-sys` and `openssl-src` that `lock` (the text of
    /// a `Cargo.lock`) pins.
    pub fn new(lock: &str) -> SourceFinder {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
        let mut registries: Vec<PathBuf> = home
            .and_then(|home| std::fs::read_dir(home.join("registry/src")).ok())
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect();
        registries.sort();
        SourceFinder {
            registries,
            versions: locked_versions(lock),
        }
    }

    /// The source file of `path`, if it is on this machine.
    pub fn find(&self, path: &str) -> Option<PathBuf> {
        let direct = Path::new(path);
        if direct.is_absolute() && direct.is_file() {
            return Some(direct.to_path_buf());
        }
        let (package, rest) = if let Some(rest) = path.strip_prefix("/aws-lc/") {
            ("aws-lc-sys", format!("aws-lc/{rest}"))
        } else if let Some((_, rest)) = path.split_once("/openssl-build/build/src/") {
            ("openssl-src", format!("openssl/{rest}"))
        } else {
            return None;
        };
        if rest.split('/').any(|segment| segment == "..") {
            return None;
        }
        let version = self.versions.get(package)?;
        self.registries
            .iter()
            .map(|registry| registry.join(format!("{package}-{version}")).join(&rest))
            .find(|candidate| candidate.is_file())
    }
}

/// The versions of [`PACKAGES`] in the text of a `Cargo.lock`.
fn locked_versions(lock: &str) -> BTreeMap<String, String> {
    let mut versions = BTreeMap::new();
    let mut name: Option<&str> = None;
    for line in lock.lines() {
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"'));
        } else if let (Some(value), Some(package)) = (line.strip_prefix("version = "), name) {
            let version = value.trim_matches('"');
            if PACKAGES.contains(&package)
                && !version.is_empty()
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
            {
                versions.insert(package.to_owned(), version.to_owned());
            }
            name = None;
        }
    }
    versions
}

/// The functions of the source at `path` (none for a language whose
/// functions are not read, or a file that cannot be read).
pub fn spans_of(path: &Path) -> Option<Vec<Span>> {
    let language = Language::of(&path.to_string_lossy())?;
    let text = limits::read_capped(path, MAX_SOURCE).ok()?;
    Some(source::functions(&text, language))
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
    harnesses: BTreeSet<String>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness_name::HarnessName;
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
    fn registry_packages_are_found_in_the_locked_version() {
        let lock = "[[package]]\nname = \"aws-lc-sys\"\nversion = \"0.47.0\"\n\n\
                    [[package]]\nname = \"openssl-src\"\nversion = \"300.5.5+3.5.5\"\n\n\
                    [[package]]\nname = \"other\"\nversion = \"1.0.0\"\n";
        let versions = locked_versions(lock);
        assert_eq!(versions.len(), 2, "{versions:?}");
        assert_eq!(versions["openssl-src"], "300.5.5+3.5.5");
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir
            .path()
            .join("openssl-src-300.5.5+3.5.5/openssl/ssl/s3_lib.c");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, "int f(void) { return 0; }\n").expect("write");
        let finder = SourceFinder {
            registries: vec![dir.path().to_path_buf()],
            versions,
        };
        assert_eq!(
            finder.find(
                "/w/target/debug/build/openssl-sys-1/out/openssl-build/build/src/ssl/s3_lib.c"
            ),
            Some(file)
        );
        assert_eq!(
            finder.find("/w/out/openssl-build/build/src/../../etc/passwd"),
            None
        );
        assert_eq!(finder.find("/aws-lc/crypto/mem.c"), None);
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
