//! `regress history`: every path of a library, measured for each published
//! version (`--versions A..=B`) or each revision of a checkout (`--revs
//! A..B`), kept in `baselines/history/` and drawn as a table and a chart.
//!
//! A wall-clock history needs many runs per version and still drifts with
//! the machine; an instruction count is exact, so one build and one
//! measurement per version is the whole cost, and a version measured once
//! never needs measuring again. The pieces:
//!
//! - [`versions`] asks cargo which versions crates.io has in the range;
//! - [`crate::program::revision`] builds each (a scratch copy of this workspace
//!   locked to it; a checkout's commit exported and patched in) and keeps
//!   builds and measurements;
//! - [`store`] is the committed data, one file per version, read back as
//!   hostile input;
//! - [`moved`] finds each step's most-moved function from the region
//!   profiles of two neighbouring versions;
//! - [`table`] writes the Markdown table (and the README's sections),
//!   [`chart`] the report's page.

pub mod chart;
mod error;
pub mod moved;
pub mod store;
pub mod table;
pub mod versions;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regress_source::{Checkout, Library, Options, SourceDirs};

pub use error::HistoryError;
use store::{Entry, HistoryDir, Kind, PathCount, Record, HISTORY_SCHEMA};
use versions::VersionRange;

use crate::harness_name::HarnessName;
use crate::measure::valgrind::Valgrind;
use crate::program::revision::{
    self, Builder, Built, LibraryRevisions, Program, PublishedVersions,
};
use crate::program::LibraryCheckout;
use crate::workspace::Workspace;

/// A revision and, for a commit, its title.
type Titled = (String, Option<String>);

/// The folder of committed histories in a workspace: `baselines/history/`,
/// beside the baselines (which are files of `baselines/` itself, so the
/// baseline loader passes the folder by).
pub fn history_root(workspace: &Path) -> PathBuf {
    workspace.join("baselines").join(HISTORY_FOLDER)
}

/// The name of the histories' folder inside `baselines/`.
pub const HISTORY_FOLDER: &str = "history";

/// What the user asked for, typed: the command line's text is read at the
/// binary's edge (`--library` into a [`Library`] or a checkout, `--versions`
/// into a [`VersionRange`], `--revs A..B` into its two revisions), so a
/// plan starts from values that are already checked.
#[derive(Debug, Clone)]
pub struct HistoryRequest {
    /// The library. With `revs`, the library of its checkout (a request
    /// naming two libraries is refused).
    pub library: &'static Library,
    /// Published versions to measure (with neither this nor `revs`: only
    /// read the stored history).
    pub versions: Option<VersionRange>,
    /// With `versions`: only the newest patch release of each minor one.
    pub newest_patch: bool,
    pub revs: Option<Revs>,
    pub every: Option<u64>,
    pub tags: bool,
    pub filters: Vec<String>,
    pub dir: Option<PathBuf>,
    /// The cargo target folder of the builds (default:
    /// `target/regress-source/target`).
    pub target_dir: Option<PathBuf>,
}

/// `--revs A..B` of a library's checkout (`--library NAME=PATH`).
#[derive(Debug, Clone)]
pub struct Revs {
    pub checkout: LibraryCheckout,
    /// `A`: the line starts after it (a revision as given; git resolves
    /// it, as it does a bisect's GOOD).
    pub from: String,
    /// `B`: the line's last revision, as given.
    pub to: String,
}

enum Source {
    /// The range, and whether only each minor release's newest patch.
    Published(VersionRange, bool),
    Revisions {
        checkout: Checkout,
        /// `(commit, title)`, oldest first.
        commits: Vec<(String, String)>,
    },
    /// Nothing to measure (`--markdown` alone).
    Stored,
}

/// A history whose library and range have been checked (nothing created).
pub struct Plan {
    workspace: Workspace,
    library: &'static Library,
    source: Source,
    filters: Vec<String>,
    dir: PathBuf,
    target_dir: Option<PathBuf>,
    options: Options,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct HistoryResult {
    /// The revisions of the range, oldest first.
    pub revisions: Vec<String>,
    /// Revisions measured now (not kept from an earlier run).
    pub measured: Vec<String>,
    /// `(revision, reason)` of those that were skipped.
    pub skipped: Vec<(String, String)>,
    /// Programs built by this run.
    pub builds: usize,
    /// Measurements made (not taken from the cache).
    pub measurements: usize,
    pub elapsed: Duration,
}

impl Plan {
    pub fn resolve(workspace: &Workspace, request: &HistoryRequest) -> Result<Plan, HistoryError> {
        let options = revision::options();
        let (library, source) = match (&request.versions, &request.revs) {
            (Some(_), Some(_)) => {
                return Err(HistoryError::Request(
                    "give --versions or --revs, not both".to_owned(),
                ))
            }
            (_, Some(Revs { checkout, from, to })) => {
                let library = checkout.library;
                if library.name != request.library.name {
                    return Err(HistoryError::Request(format!(
                        "--revs of a checkout of {library} cannot make a history of {}",
                        request.library
                    )));
                }
                let checkout = Checkout::open(library, &checkout.path, &options)?;
                let line =
                    crate::program::line::resolve(checkout.root(), from, to, options.git_limits())?;
                let tagged = if request.tags {
                    Some(tagged_commits(checkout.root(), &options)?)
                } else {
                    None
                };
                let commits = every_nth_or_tagged(line.revisions, request.every, tagged.as_deref())
                    .into_iter()
                    .map(|revision| (revision.commit, revision.title))
                    .collect();
                (library, Source::Revisions { checkout, commits })
            }
            (versions, None) => {
                let source = match versions {
                    Some(range) => Source::Published(range.clone(), request.newest_patch),
                    None => Source::Stored,
                };
                (request.library, source)
            }
        };
        Ok(Plan {
            dir: request
                .dir
                .clone()
                .unwrap_or_else(|| history_root(workspace.root())),
            workspace: workspace.clone(),
            library,
            source,
            filters: request.filters.clone(),
            target_dir: request.target_dir.clone(),
            options,
        })
    }

    pub fn library(&self) -> &'static Library {
        self.library
    }

    /// The library's history folder.
    pub fn store(&self) -> HistoryDir {
        HistoryDir::new(&self.dir, self.library)
    }

    /// Whether there is anything to measure (not `--markdown` alone).
    pub fn measures(&self) -> bool {
        !matches!(self.source, Source::Stored)
    }

    /// The kind of records this plan reads and writes.
    pub fn kind(&self) -> Kind {
        match self.source {
            Source::Revisions { .. } => Kind::Commit,
            _ => Kind::Published,
        }
    }

    /// The records of the plan's revisions (all stored versions when it
    /// measures nothing), oldest first.
    pub fn records(&self, revisions: &[String]) -> Result<Vec<Record>, HistoryError> {
        let store = self.store();
        if revisions.is_empty() {
            return Ok(store.published()?);
        }
        let mut records = Vec::new();
        for revision in revisions {
            if let Some(record) = store.load(self.kind(), revision)? {
                records.push(record);
            }
        }
        Ok(records)
    }

    /// Builds and measures every revision of the range that this Valgrind
    /// has not measured yet, and the steps between them.
    pub fn run(
        &self,
        valgrind: &Valgrind,
        timeout: Duration,
        workers: usize,
        progress: &dyn Fn(&str),
    ) -> Result<HistoryResult, HistoryError> {
        let started = Instant::now();
        let root = self.workspace.root();
        let (state, _lock) = revision::hold(root, progress)?;
        let dirs = SourceDirs::new(root)?;
        let (builder, revisions): (Box<dyn Builder>, Vec<Titled>) = match &self.source {
            Source::Stored => return Ok(HistoryResult::default()),
            Source::Published(range, newest_patch) => {
                let Some(builder) = PublishedVersions::new(
                    self.library,
                    dirs,
                    self.target_dir.as_deref(),
                    self.options,
                )?
                else {
                    return Err(HistoryError::Request(format!(
                        "{} has no published versions the harnesses say they cover",
                        self.library
                    )));
                };
                progress(&format!(
                    "asking cargo which versions of {} crates.io has in {range}",
                    builder.krate()
                ));
                let found = versions::published(
                    root,
                    &state.join("probe"),
                    builder.krate(),
                    range,
                    &self.options,
                )?;
                let found = if *newest_patch {
                    versions::newest_patch(found, builder.coverage())
                } else {
                    found
                };
                if found.is_empty() {
                    return Err(HistoryError::NoPublishedVersion {
                        krate: builder.krate().to_owned(),
                        range: range.to_string(),
                    });
                }
                progress(&format!(
                    "published: {}",
                    found
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                let revisions = found.iter().map(|v| (v.to_string(), None)).collect();
                (Box::new(builder), revisions)
            }
            Source::Revisions { checkout, commits } => (
                Box::new(LibraryRevisions::new(
                    checkout.clone(),
                    dirs,
                    self.target_dir.as_deref(),
                    self.options,
                )?),
                commits
                    .iter()
                    .map(|(commit, title)| (commit.clone(), Some(title.clone())))
                    .collect(),
            ),
        };
        let mut walk = Walk {
            plan: self,
            builder: builder.as_ref(),
            state: &state,
            outputs: self
                .workspace
                .perf_outputs_dir()
                .join("history")
                .join(self.library.name),
            valgrind,
            timeout,
            workers,
            progress,
            measured_here: BTreeMap::new(),
            result: HistoryResult {
                revisions: revisions.iter().map(|(r, _)| r.clone()).collect(),
                ..HistoryResult::default()
            },
        };
        let mut previous: Option<String> = None;
        for (revision, title) in &revisions {
            if walk.revision(revision, title.as_deref(), previous.as_deref())? {
                previous = Some(revision.clone());
            }
        }
        walk.result.elapsed = started.elapsed();
        Ok(walk.result)
    }

    fn wanted(&self, name: &HarnessName) -> bool {
        self.library.affects_harness(name)
            && (self.filters.is_empty()
                || crate::program::select(vec![name.clone()], &self.filters).len() == 1)
    }
}

/// The walk over a range's revisions.
struct Walk<'a> {
    plan: &'a Plan,
    builder: &'a dyn Builder,
    state: &'a Path,
    outputs: PathBuf,
    valgrind: &'a Valgrind,
    timeout: Duration,
    workers: usize,
    progress: &'a dyn Fn(&str),
    /// Revisions whose region profiles this run has in `outputs`, with the
    /// harnesses measured.
    measured_here: BTreeMap<String, Vec<HarnessName>>,
    result: HistoryResult,
}

impl Walk<'_> {
    /// Brings `revision`'s record up to date; `false` when it was skipped
    /// (it does not build), so the next step starts from `previous` still.
    fn revision(
        &mut self,
        revision: &str,
        title: Option<&str>,
        previous: Option<&str>,
    ) -> Result<bool, HistoryError> {
        let store = self.plan.store();
        let kind = self.plan.kind();
        let setup = (self.valgrind.version.to_string(), self.valgrind.method);
        let mut record = store.load(kind, revision)?.unwrap_or_else(|| Record {
            schema: HISTORY_SCHEMA,
            library: self.plan.library.name.to_owned(),
            kind,
            revision: revision.to_owned(),
            title: title.map(|t| t.chars().filter(|c| !c.is_control()).take(200).collect()),
            entries: Vec::new(),
        });
        let kept = record.entry(&setup).filter(|entry| {
            entry.paths.keys().any(|name| self.plan.wanted(name))
                && entry.step.as_ref().map(|s| s.from.as_str()) == previous
        });
        if kept.is_some() {
            (self.progress)(&format!(
                "{revision}: kept (measured before with this Valgrind)"
            ));
            return Ok(true);
        }
        let Some(names) = self.measure(revision)? else {
            return Ok(false);
        };
        let step = match previous {
            Some(previous) => {
                let before = match self.measured_here.get(previous) {
                    Some(names) => names.clone(),
                    None => self.measure(previous)?.unwrap_or_default(),
                };
                Some(moved::step(
                    previous,
                    &self.outputs.join(previous),
                    &self.outputs.join(revision),
                    &before,
                    &names,
                ))
            }
            None => None,
        };
        let mut paths = BTreeMap::new();
        let mut fingerprint = None;
        for name in &names {
            let record_path = name.file_in(&self.outputs.join(revision), ".json");
            let measurement = crate::Measurement::read(&record_path)?;
            fingerprint.get_or_insert(measurement.fingerprint.clone());
            paths.insert(
                name.clone(),
                PathCount {
                    instructions: measurement.instructions,
                    bytes_per_run: measurement.bytes_per_run,
                    operations_per_run: measurement.operations_per_run,
                },
            );
        }
        let Some(fingerprint) = fingerprint else {
            let reason = "it has none of the library's harnesses".to_owned();
            (self.progress)(&format!("{revision}: skipped, {reason}"));
            self.result.skipped.push((revision.to_owned(), reason));
            return Ok(false);
        };
        record.put(Entry {
            fingerprint,
            paths,
            step: step.filter(|step| !step.from.is_empty()),
        });
        let path = store.save(&record)?;
        (self.progress)(&format!(
            "{revision}: wrote {}",
            self.plan.workspace.display_path(&path)
        ));
        Ok(true)
    }

    /// Builds `revision` (or takes the kept build) and measures the
    /// library's harnesses into `outputs/<revision>/`; `None` when it does
    /// not build (reported).
    fn measure(&mut self, revision: &str) -> Result<Option<Vec<HarnessName>>, HistoryError> {
        if let Some(names) = self.measured_here.get(revision) {
            return Ok(Some(names.clone()));
        }
        if let Some(reason) = self.builder.refuses(revision) {
            (self.progress)(&format!("{revision}: skipped, {reason}"));
            self.result.skipped.push((revision.to_owned(), reason));
            return Ok(None);
        }
        (self.progress)(&format!("{revision}: building"));
        let started = Instant::now();
        let built = revision::program(self.builder, self.state, revision)?;
        if !built.cached() {
            self.result.builds += 1;
        }
        let program: Program = match built {
            Built::Program(program) => program,
            Built::DoesNotBuild { reason, .. } => {
                let first = skip_headline(&reason);
                (self.progress)(&format!("{revision}: skipped, {first}"));
                self.result.skipped.push((revision.to_owned(), reason));
                return Ok(None);
            }
        };
        let names: Vec<HarnessName> = program
            .names
            .iter()
            .filter(|name| self.plan.wanted(name))
            .cloned()
            .collect();
        let outputs = self.outputs.join(revision);
        let _ = std::fs::remove_dir_all(&outputs);
        let (runner, cache) = revision::runner(
            &self.plan.workspace,
            &program,
            self.valgrind,
            self.timeout,
            &outputs,
        )?;
        let results = crate::parallel::map(
            &names,
            self.workers,
            |name| revision::measure(&runner, &cache, &program, name),
            |_, _, _| {},
        );
        let mut made = 0;
        for result in results {
            if !result?.cached {
                made += 1;
            }
        }
        self.result.measurements += made;
        if made > 0 {
            self.result.measured.push(revision.to_owned());
        }
        (self.progress)(&format!(
            "{revision}: {} paths measured ({made} now, {} kept), {:.0} s",
            names.len(),
            names.len() - made,
            started.elapsed().as_secs_f64()
        ));
        self.measured_here
            .insert(revision.to_owned(), names.clone());
        Ok(Some(names))
    }
}

/// A skipped revision's reason in one line: its first line, and when that
/// introduces what a tool said ("the harnesses do not compile against …:
/// harnesses says"), the first line the tool said too (the compiler's
/// first error), which is the part a reader needs.
pub fn skip_headline(reason: &str) -> String {
    let mut lines = reason
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty());
    let first = lines.next().unwrap_or_default();
    match lines.next() {
        Some(said) if first.ends_with(" says") => format!("{first} {said}"),
        _ => first.to_owned(),
    }
}

/// The revisions of a line a `--revs` history measures: every one, every
/// `every`-th (counting from the first), or those in `tagged`; the last
/// (B) always.
fn every_nth_or_tagged(
    line: Vec<crate::program::line::Revision>,
    every: Option<u64>,
    tagged: Option<&[String]>,
) -> Vec<crate::program::line::Revision> {
    let last = line.len().saturating_sub(1);
    line.into_iter()
        .enumerate()
        .filter(|(index, revision)| {
            *index == last
                || match (tagged, every) {
                    (Some(tagged), _) => tagged.contains(&revision.commit),
                    (None, Some(every)) => (*index as u64).is_multiple_of(every),
                    (None, None) => true,
                }
        })
        .map(|(_, revision)| revision)
        .collect()
}

/// The commits a tag points at, in the checkout at `root`.
fn tagged_commits(root: &Path, options: &Options) -> Result<Vec<String>, HistoryError> {
    let git = regress_source::git::Git::work_tree(root, options.git_limits());
    let text = git.text([
        "for-each-ref",
        "--format=%(objectname) %(*objectname)",
        "refs/tags",
    ])?;
    Ok(text
        .lines()
        .flat_map(|line| line.split_whitespace())
        .filter(|id| regress_source::git::is_object_name(id))
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests;
