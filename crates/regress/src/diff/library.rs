//! `regress diff --library NAME=PATH BASE [HEAD]`: two revisions of a TLS
//! library's own repository, with this workspace's harnesses built against
//! each, measured and compared like two commits of this workspace.
//!
//! The people this project serves change the library, not this workspace,
//! so each side is "this workspace, with the library at revision R of the
//! user's checkout" ([`regress_source`] turns that into an export under
//! `target/regress-source/exports/`, a patch set and a scratch copy of the
//! workspace). Neither repository is edited: the checkout is only read
//! (its index, stash, untracked files and uncommitted changes stay as they
//! are), and this workspace is copied, not patched.
//!
//! - BASE is a revision of the checkout (with `--merge-base`, its merge base
//!   with HEAD), or, with `--base-released`, the release this workspace's
//!   `Cargo.lock` pins (crates.io's crates, no patch).
//! - HEAD is a revision, or by default the checkout's working tree as it is,
//!   uncommitted edits and untracked files included: "what did my edit to
//!   `s2n_record_write.c` cost?".
//! - `--library` is repeatable: every library's BASE and HEAD are resolved in
//!   its own checkout, and each side patches them all.
//!
//! Only the harnesses a patched library's code reaches are measured
//! ([`regress_source::Library::affects_harness`]): a rustls change does not
//! re-measure OpenSSL. The report lists the groups left out
//! (`--all-harnesses` measures them too).
//!
//! Each side's measurements are kept, keyed by the measured program and the
//! Valgrind ([`super::cache`]), so the edit loop against an unchanged BASE
//! rebuilds nothing there (cargo finds it fresh) and measures only HEAD.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regress_source::features::check_coverage;
use regress_source::{
    export, Checkout, Options, PatchSet, Revision as SourceRevision, RevisionRequest,
    ScratchWorkspace, Side as SourceSide, SourceDirs,
};

use super::assemble::{self, Commits, SideBuild};
use super::error::DiffError;
use super::interrupt;
use super::kept::{keep, PatchedSide};
use super::pipeline::choose;
use super::report::DiffReport;
use super::scratch::{begin, target_dir, RemoveOnDrop};
use super::shard::Shard;
use super::sources::{self, LibrarySides, Sources};
use crate::coverage::blind::Revision;
use crate::coverage::{BlindSpots, Scope};
use crate::harness_name::HarnessName;
use crate::measure::valgrind::Valgrind;
use crate::program::Commit;
use crate::program::Side;
use crate::program::{isolation, Isolation, LibraryCheckout, MeasurementCache, PROGRAM};
use crate::report::events::{DiffStep, Event, Listener};
use crate::workspace::Workspace;
use crate::Runner;

/// The key and label of the base side with `--base-released`.
const RELEASED: &str = "released";

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct LibraryRequest {
    /// Each library's checkout (`--library NAME=PATH`), once per library.
    pub libraries: Vec<LibraryCheckout>,
    /// The base revision; `None` with `--base-released`.
    pub base: Option<String>,
    /// The head revision; `None`: each checkout's working tree as it is.
    pub head: Option<String>,
    pub merge_base: bool,
    /// Only harnesses whose names contain one of these.
    pub filters: Vec<String>,
    /// Measure every harness, not only those a patched library reaches.
    pub all_harnesses: bool,
    pub shard: Option<Shard>,
    /// The cargo target folder both sides build in (default:
    /// `target/regress-source/target`).
    pub target_dir: Option<PathBuf>,
}

/// One library's checkout and its two revisions.
#[derive(Debug)]
struct LibrarySource {
    checkout: Checkout,
    /// `None`: the released crates this workspace locks.
    base: Option<SourceRevision>,
    head: SourceRevision,
}

/// A from-source diff whose libraries and revisions have been checked.
#[derive(Debug)]
pub struct LibraryPlan {
    workspace: Workspace,
    sources: Vec<LibrarySource>,
    request: LibraryRequest,
    options: Options,
}

impl LibraryPlan {
    /// Checks every `--library` and both revisions in each checkout. Only
    /// reads: nothing is created, in either repository or anywhere else.
    pub fn resolve(
        workspace: &Workspace,
        request: LibraryRequest,
    ) -> Result<LibraryPlan, DiffError> {
        let options = Options {
            cancelled: Some(interrupt::requested),
            echo: true,
            ..Options::default()
        };
        if request.libraries.is_empty() {
            return Err(DiffError::LibraryRevisions {
                what: "no --library was given".to_owned(),
            });
        }
        let mut seen: Vec<(&'static str, &str)> = Vec::new();
        let mut sources = Vec::new();
        for LibraryCheckout {
            library,
            path,
            spec,
        } in &request.libraries
        {
            if let Some((_, first)) = seen.iter().find(|(name, _)| *name == library.name) {
                return Err(DiffError::LibraryTwice {
                    library: library.name,
                    first: (*first).to_owned(),
                    second: spec.clone(),
                });
            }
            seen.push((library.name, spec));
            let checkout = Checkout::open(library, path, &options)?;
            let head_request = match &request.head {
                Some(head) => RevisionRequest::Reference(head),
                None => RevisionRequest::WorkingTree,
            };
            let (base, head) = match &request.base {
                Some(base) => {
                    let sides = checkout.sides(
                        RevisionRequest::Reference(base),
                        head_request,
                        request.merge_base,
                    )?;
                    (Some(sides.base), sides.head)
                }
                None => {
                    if request.merge_base {
                        return Err(DiffError::LibraryRevisions {
                            what: "--merge-base needs a BASE revision, and --base-released \
                                   names none"
                                .to_owned(),
                        });
                    }
                    let head = match head_request {
                        RevisionRequest::Reference(head) => {
                            checkout.resolve(SourceSide::Head, head)?
                        }
                        RevisionRequest::WorkingTree => SourceRevision::WorkingTree,
                    };
                    (None, head)
                }
            };
            sources.push(LibrarySource {
                checkout,
                base,
                head,
            });
        }
        Ok(LibraryPlan {
            workspace: workspace.clone(),
            sources,
            request,
            options,
        })
    }

    /// Exports, builds, measures and compares, telling `listener` each step.
    pub fn run(
        self,
        valgrind: &Valgrind,
        timeout: Duration,
        workers: usize,
        listener: &dyn Listener,
    ) -> Result<DiffReport, DiffError> {
        interrupt::guard(listener, || {
            self.run_interruptible(valgrind, timeout, workers, listener)
        })
    }

    fn run_interruptible(
        self,
        valgrind: &Valgrind,
        timeout: Duration,
        workers: usize,
        listener: &dyn Listener,
    ) -> Result<DiffReport, DiffError> {
        let note = |step: DiffStep<'_>| listener.event(Event::Diff(step));
        let root = self.workspace.root();
        let outputs = self.workspace.perf_outputs_dir().join("diff");
        let (_, mut lock) = begin(root, &outputs, || note(DiffStep::WaitingForLock))?;
        let dirs = SourceDirs::new(root)?;
        // The same rule as a diff of two commits, the scratch copies in
        // place of the worktrees.
        let target_dir = target_dir(
            self.request.target_dir.as_deref(),
            dirs.state(),
            &dirs.build_target(),
            &self.workspace,
            listener,
        )?;
        let bin_dir = RemoveOnDrop::fresh(dirs.state().join("bin"));

        // Both sides' sources first: a version the harnesses do not cover,
        // on either side, is refused before anything is built.
        let mut described: Vec<(Vec<PatchSet>, String)> = Vec::new();
        for side in Side::BOTH {
            interrupt::check()?;
            let (sets, key) = self.patch_sets(side, &dirs)?;
            check_coverage(&sets).map_err(regress_source::SourceError::from)?;
            described.push((sets, key));
        }
        let mut sides = Vec::new();
        for (side, (sets, key)) in Side::BOTH.into_iter().zip(&described) {
            interrupt::check()?;
            sides.push(self.build_side(
                side,
                sets,
                key,
                &dirs,
                &target_dir,
                &bin_dir.0,
                valgrind,
                timeout,
                &outputs,
                listener,
            )?);
        }
        let (harnesses, not_measured) = self.select(&sides, listener)?;
        let revisions = self.revisions(&described);
        let mut report = assemble::measure_and_compare(
            &Commits {
                base: &revisions[0],
                head: &revisions[1],
                shard: self.request.shard,
                workspace: &self.workspace,
            },
            valgrind,
            workers,
            &sides,
            &harnesses,
            &outputs,
            listener,
        )?;
        lock.outputs_complete(&outputs);
        let base_program = &sides[0].binary;
        report.sources = Some(self.sources(&described, base_program, not_measured)?);
        report.blind_spots = Some(assemble::timed_blind_spots(
            assemble::line_data_time(&sides),
            listener,
            || self.blind_spots(&report, &outputs),
        ));
        Ok(report)
    }

    /// One side's patch sets (exported and generated when not already), and
    /// a key naming the combination.
    fn patch_sets(
        &self,
        side: Side,
        dirs: &SourceDirs,
    ) -> Result<(Vec<PatchSet>, String), DiffError> {
        let mut sets = Vec::new();
        let mut keys = Vec::new();
        for source in &self.sources {
            let revision = match side {
                Side::Base => source.base.as_ref(),
                Side::Head => Some(&source.head),
            };
            let Some(revision) = revision else {
                keys.push(RELEASED.to_owned());
                continue;
            };
            let exported = export(&source.checkout, revision, dirs, &self.options)?;
            keys.push(exported.key.clone());
            sets.push(PatchSet::from_export(&exported)?);
        }
        Ok((sets, keys.join("+")))
    }

    /// Builds one side's measured program and gets its runner ready.
    #[allow(clippy::too_many_arguments)]
    fn build_side(
        &self,
        side: Side,
        sets: &[PatchSet],
        key: &str,
        dirs: &SourceDirs,
        target_dir: &Path,
        bin_dir: &Path,
        valgrind: &Valgrind,
        timeout: Duration,
        outputs: &Path,
        listener: &dyn Listener,
    ) -> Result<SideBuild<'static>, DiffError> {
        let started = Instant::now();
        // The scratch copy is locked only while it is synchronised and built:
        // both sides may be the same combination (BASE and HEAD name one
        // revision), and the runner only needs its Cargo.lock, read below.
        let scratch = ScratchWorkspace::prepare(dirs, sets, &self.options)?;
        let mut label = if sets.is_empty() {
            "the released crates".to_owned()
        } else {
            regress_source::patch::describe(sets)
        };
        if !scratch.features().is_empty() {
            label.push_str(&format!(" (--features {})", scratch.features().join(",")));
        }
        listener.event(Event::Diff(DiffStep::Building {
            side: side.name(),
            commit: &label,
            worktree: &self.workspace.display_path(scratch.root()),
        }));
        // The scratch copies share artifact names with this workspace's own
        // build of its crates; renaming keeps them apart (see `build`). The
        // harnesses' features for these library versions (rustls 0.24:
        // `harnesses/rustls-0-24`, from `harness_features`, coverage checked
        // in `run_interruptible`) are the scratch copy's: its graph was
        // verified with them, and `build_harnesses` passes them.
        let extra = match isolation(scratch.root())? {
            Isolation::Renamed(config) => config,
            Isolation::NeedsOwnTargetDir { .. } => Vec::new(),
        };
        let patched = PatchedSide::new(&scratch, dirs, target_dir, &extra, &self.options, key)?;
        let kept = keep(&patched, target_dir, key)?;
        interrupt::check()?;
        let copy = bin_dir
            .join(format!("{side}-{}", short_key(key)))
            .join(PROGRAM);
        std::fs::create_dir_all(bin_dir.join(format!("{side}-{}", short_key(key))))
            .map_err(|source| DiffError::io("create the folder", bin_dir, source))?;
        std::fs::copy(&kept.program, &copy)
            .map_err(|source| DiffError::io("copy the measured program to", &copy, source))?;
        let names = kept.names;
        listener.event(Event::Diff(DiffStep::Built {
            side: side.name(),
            elapsed: started.elapsed(),
            harnesses: names.len(),
            kept: kept.cached,
        }));
        // The library versions of the fingerprint come from the lock the
        // program was built with, kept beside it.
        let runner = Runner::new(
            Workspace::new(&kept.dir).with_cpu(self.workspace.cpu()),
            valgrind.clone(),
            timeout,
        )?
        .with_output_dir(outputs.join(side.name()));
        let cache = MeasurementCache::new(
            &dirs.state().join("measured"),
            &copy,
            valgrind,
            self.workspace.cpu(),
        )?;
        Ok(SideBuild {
            side,
            baselines: self.workspace.baselines_dir(),
            _worktree: None,
            binary: copy,
            names,
            runner,
            cache: Some(cache),
        })
    }

    /// The changed functions of every library's checkout that no measured
    /// harness ran (unknown for a library whose BASE is its release: that
    /// is no revision of the checkout).
    fn blind_spots(&self, report: &DiffReport, outputs: &Path) -> BlindSpots {
        let mut all: Option<BlindSpots> = None;
        for source in &self.sources {
            let root = source.checkout.root();
            let git = regress_source::git::Git::work_tree(root, self.options.git_limits());
            let spots = match &source.base {
                Some(SourceRevision::Commit { commit, .. }) => {
                    let head = match &source.head {
                        SourceRevision::Commit { commit, .. } => Revision::Commit(commit),
                        SourceRevision::WorkingTree => Revision::WorkingTree,
                    };
                    assemble::blind_spots(
                        report,
                        root,
                        &git,
                        (Revision::Commit(commit), head),
                        Scope::Library,
                        outputs,
                    )
                }
                _ => BlindSpots::unknown(format!(
                    "{}'s BASE is its released crates, which are no revision of the checkout",
                    source.checkout.library()
                )),
            };
            all = Some(match all {
                None => spots,
                Some(earlier) => earlier.join(spots),
            });
        }
        all.unwrap_or_else(|| BlindSpots::unknown("no library checkout"))
    }

    /// The harnesses to measure, and the groups left out because no patched
    /// library reaches them.
    fn select(
        &self,
        sides: &[SideBuild],
        listener: &dyn Listener,
    ) -> Result<(Vec<HarnessName>, Vec<String>), DiffError> {
        let all: BTreeSet<&HarnessName> = sides.iter().flat_map(|side| &side.names).collect();
        let reached = |name: &str| {
            self.request.all_harnesses
                || self
                    .sources
                    .iter()
                    .any(|source| source.checkout.library().affects_harness(name))
        };
        let not_measured: BTreeSet<String> = all
            .iter()
            .filter(|name| !reached(name))
            .map(|name| format!("{}::", name.library()))
            .collect();
        let reachable: Vec<HarnessName> = all
            .into_iter()
            .filter(|name| reached(name))
            .cloned()
            .collect();
        let selected = choose(
            reachable,
            &self.request.filters,
            self.request.shard,
            listener,
        )?;
        Ok((selected, not_measured.into_iter().collect()))
    }

    /// The report's base and head: the first library's revisions.
    fn revisions(&self, described: &[(Vec<PatchSet>, String)]) -> [Commit; 2] {
        let first = &self.sources[0];
        let base = match &first.base {
            Some(SourceRevision::Commit { reference, commit }) => Commit {
                reference: reference.clone(),
                commit: commit.clone(),
            },
            _ => Commit {
                reference: format!("{} as released", first.checkout.library()),
                commit: RELEASED.to_owned(),
            },
        };
        let head_key = described[1].0.first().map(|set| set.key.clone());
        let head = match &first.head {
            SourceRevision::Commit { reference, commit } => Commit {
                reference: reference.clone(),
                commit: commit.clone(),
            },
            SourceRevision::WorkingTree => Commit {
                reference: "the working tree".to_owned(),
                commit: head_key.unwrap_or_default(),
            },
        };
        [base, head]
    }

    /// What the report says about the libraries; the released side's crates
    /// are the versions its program says it links (`base_program`).
    fn sources(
        &self,
        described: &[(Vec<PatchSet>, String)],
        base_program: &Path,
        not_measured: Vec<String>,
    ) -> Result<Sources, DiffError> {
        let released = crate::toolchain::of(base_program)
            .map_err(crate::MeasureError::from)?
            .libraries;
        let mut libraries = Vec::new();
        for source in &self.sources {
            let library = source.checkout.library();
            let side = |index: usize| match described[index]
                .0
                .iter()
                .find(|set| set.library.name == library.name)
            {
                Some(set) => sources::SourceSide {
                    label: set.revision.clone(),
                    key: set.key.clone(),
                    crates: set
                        .crates
                        .iter()
                        .map(|krate| format!("{} {}", krate.name, krate.version))
                        .collect(),
                },
                None => sources::SourceSide {
                    label: "the release this workspace locks".to_owned(),
                    key: RELEASED.to_owned(),
                    crates: library
                        .crates
                        .iter()
                        .filter_map(|spec| {
                            released
                                .get(spec.name)
                                .map(|version| format!("{} {version}", spec.name))
                        })
                        .collect(),
                },
            };
            libraries.push(LibrarySides {
                library: library.name.to_owned(),
                base: side(0),
                head: side(1),
            });
        }
        Ok(Sources {
            libraries,
            not_measured,
        })
    }
}

/// The first characters of a side's key, for folder names.
fn short_key(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(16)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_make_short_folder_names() {
        assert_eq!(short_key("0123456789abcdef0123"), "0123456789abcdef");
        assert_eq!(short_key("wt-01234+released"), "wt-01234released");
    }
}
