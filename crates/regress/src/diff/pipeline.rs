//! A diff from start to finish: check the refs, build both sides in
//! worktrees, measure, compare, and write the per-harness outputs.
//!
//! The work is split in two on purpose. [`Plan::resolve`] only reads: it
//! checks both refs and that they share history, so a typo, an option
//! smuggled in as a ref or an unrelated commit is refused before anything is
//! created (no lock, no folder, no worktree), and before Valgrind is even
//! looked for. [`Plan::run`] does the rest.
//!
//! Outputs, under `perf_outputs/diff/` (cleared at the start of each run):
//!
//! ```text
//! base/<harness>.cachegrind.out    raw region profile of the base commit
//! base/<harness>.annotated.txt     its cg_annotate text
//! head/…                           the same for head
//! base/<harness>.folded, .flame.svg   its call paths and flame graph (Callgrind)
//! <harness>.diff.txt               cg_annotate's per-function diff, head minus base
//! <harness>.flame.diff.svg         head's flame graph coloured by the change
//! report.json, report.md           written by the command (see `command`)
//! ```
//!
//! Scratch state, under `target/regress-diff/` (ignored by git):
//!
//! ```text
//! .lock                one diff per checkout at a time
//! base-<sha>/, head-<sha>/   the worktrees, removed when the diff ends
//! bin/<side>-<sha>/perf      each side's test binary, copied out of the target folder
//! target/              the diff's own cargo target folder, kept between diffs
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::assemble::{self, Commits, SideBuild};
use super::error::DiffError;
use super::interrupt;
use super::kept::{keep, WorktreeSide};
use super::report::DiffReport;
use super::scratch::{begin, target_dir, RemoveOnDrop};
use super::shard::Shard;
use crate::coverage::blind::Revision;
use crate::coverage::Scope;
use crate::harness_name::HarnessName;
use crate::measure::valgrind::Valgrind;
use crate::program::Commit;
use crate::program::Repo;
use crate::program::Side;
use crate::program::{self, PROGRAM};
use crate::program::{isolation, BuildSpec, Isolation};
use crate::report::events::{DiffStep, Event, Listener};
use crate::workspace::Workspace;
use crate::Runner;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct DiffRequest {
    /// The base ref, as given.
    pub base: String,
    /// The head ref, as given (`HEAD` by default).
    pub head: String,
    /// Compare head with the merge base of base and head (what a pull
    /// request changes) instead of with base itself.
    pub merge_base: bool,
    /// Only harnesses whose names contain one of these.
    pub filters: Vec<String>,
    pub shard: Option<Shard>,
    /// The cargo target folder both sides build in (default:
    /// `CARGO_TARGET_DIR`, else `target/regress-diff/target`; see
    /// [`super::build`]).
    pub target_dir: Option<PathBuf>,
    /// Accept a head that changes how it is built ([`BUILD_CONFIG`]): for
    /// a local diff of a toolchain upgrade, never in the PR gate.
    pub allow_build_change: bool,
}

/// The files that choose how a side is built: its compiler
/// (`rust-toolchain*`) and cargo's flags (`.cargo/config*`, where the flags
/// that make aws-lc deterministic are set). Each side's own are used for
/// its build, so a head that changes one would choose its own compiler or
/// flags: the diff refuses it unless asked ([`DiffRequest::allow_build_change`]).
pub const BUILD_CONFIG: &[&str] = &[
    "rust-toolchain.toml",
    "rust-toolchain",
    ".cargo/config.toml",
    ".cargo/config",
];

/// A diff whose refs have been checked.
#[derive(Debug)]
pub struct Plan {
    repo: Repo,
    workspace: Workspace,
    pub base: Commit,
    pub head: Commit,
    request: DiffRequest,
}

impl Plan {
    /// Checks the refs of `request` in the repository of `workspace`.
    /// Creates nothing.
    pub fn resolve(workspace: &Workspace, request: DiffRequest) -> Result<Plan, DiffError> {
        let repo = Repo::discover(workspace.root())?;
        let mut base = repo.resolve(Side::Base, &request.base)?;
        let head = repo.resolve(Side::Head, &request.head)?;
        let merge_base = repo.merge_base(&base, &head)?;
        if request.merge_base && merge_base != base.commit {
            base = Commit {
                reference: format!("merge base of {} and {}", base.reference, head.reference),
                commit: merge_base,
            };
        }
        if !request.allow_build_change {
            let changed = repo.changed_between(&base, &head, BUILD_CONFIG)?;
            if !changed.is_empty() {
                return Err(DiffError::BuildConfigChanged {
                    files: changed.join(", "),
                });
            }
        }
        Ok(Plan {
            repo,
            workspace: workspace.clone(),
            base,
            head,
            request,
        })
    }

    /// Builds, measures and compares, telling `listener` each step.
    /// `workers` Valgrind processes run at once.
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
        if self.request.head == "HEAD" && self.repo.has_uncommitted_changes() {
            note(DiffStep::UncommittedChanges);
        }
        note(DiffStep::Revisions {
            base: (self.base.short(), &self.base.reference),
            head: (self.head.short(), &self.head.reference),
        });

        let outputs = self.workspace.perf_outputs_dir().join("diff");
        let (scratch, mut lock) = begin(self.repo.root(), &outputs, || {
            note(DiffStep::WaitingForLock)
        })?;
        self.repo.remove_stale_worktrees(&scratch, listener);
        let bin_dir = RemoveOnDrop::fresh(scratch.join("bin"));

        let own_target = scratch.join("target");
        let shared_target = self.target_dir(&scratch, &own_target, listener)?;

        // Build base, then head: each worktree is created right before its
        // build (see `build` for why that order matters).
        let mut sides: Vec<SideBuild> = Vec::new();
        for (side, revision) in [(Side::Base, &self.base), (Side::Head, &self.head)] {
            interrupt::check()?;
            let name = format!("{side}-{}", revision.short());
            let worktree =
                self.repo
                    .add_worktree(&scratch.join(&name), &revision.commit, listener)?;
            let (config, target_dir) = match isolation(worktree.path())? {
                Isolation::Renamed(config) => (config, shared_target.clone()),
                Isolation::NeedsOwnTargetDir { reason } => {
                    note(DiffStep::OwnTargetDir {
                        side: side.name(),
                        reason: &reason,
                        dir: &self.workspace.display_path(&own_target),
                    });
                    (Vec::new(), own_target.clone())
                }
            };
            note(DiffStep::Building {
                side: side.name(),
                commit: revision.short(),
                worktree: &self.workspace.display_path(worktree.path()),
            });
            let started = Instant::now();
            let copy_to = bin_dir.0.join(&name).join(PROGRAM);
            let side_build = WorktreeSide::new(BuildSpec {
                side,
                commit: &revision.commit,
                worktree: worktree.path(),
                target_dir: &target_dir,
                config: &config,
                copy_to: &copy_to,
            })?;
            let kept = keep(&side_build, &target_dir, &revision.commit)?;
            interrupt::check()?;
            let folder = bin_dir.0.join(&name);
            std::fs::create_dir_all(&folder)
                .map_err(|source| DiffError::io("create the folder", &folder, source))?;
            std::fs::copy(&kept.program, &copy_to).map_err(|source| {
                DiffError::io("copy the measured program to", &copy_to, source)
            })?;
            let (binary, names) = (copy_to, kept.names);
            note(DiffStep::Built {
                side: side.name(),
                elapsed: started.elapsed(),
                harnesses: names.len(),
                kept: kept.cached,
            });
            // Every output of the runner, records included, goes to this
            // diff's own folder: the commit's checkout is never written to.
            let runner = Runner::new(
                Workspace::new(worktree.path()).with_cpu(self.workspace.cpu()),
                valgrind.clone(),
                timeout,
            )?
            .with_output_dir(outputs.join(side.name()));
            sides.push(SideBuild {
                side,
                baselines: worktree.path().join("baselines"),
                _worktree: Some(worktree),
                binary,
                names,
                runner,
                cache: None,
            });
        }

        let harnesses = self.select(&sides, listener)?;
        let report = assemble::measure_and_compare(
            &Commits {
                base: &self.base,
                head: &self.head,
                shard: self.request.shard,
                workspace: &self.workspace,
            },
            valgrind,
            workers,
            &sides,
            &harnesses,
            &outputs,
            listener,
        );
        if report.is_ok() {
            lock.outputs_complete(&outputs);
        }
        let line_data = assemble::line_data_time(&sides);
        // Remove the worktrees now, so their messages come before the result.
        drop(sides);
        let mut report = report?;
        report.blind_spots = Some(assemble::timed_blind_spots(line_data, listener, || {
            let git = regress_source::git::Git::work_tree(
                self.repo.root(),
                regress_source::Options::default().git_limits(),
            );
            assemble::blind_spots(
                &report,
                self.repo.root(),
                &git,
                (
                    Revision::Commit(&self.base.commit),
                    Revision::Commit(&self.head.commit),
                ),
                Scope::Workspace,
                &outputs,
            )
        }));
        Ok(report)
    }

    /// The cargo target folder both sides share (see [`target_dir`]).
    fn target_dir(
        &self,
        worktrees: &Path,
        own: &Path,
        listener: &dyn Listener,
    ) -> Result<PathBuf, DiffError> {
        target_dir(
            self.request.target_dir.as_deref(),
            worktrees,
            own,
            &self.workspace,
            listener,
        )
    }

    /// The harnesses this run measures: the union of both sides', filtered,
    /// then this shard's part.
    fn select(
        &self,
        sides: &[SideBuild],
        listener: &dyn Listener,
    ) -> Result<Vec<HarnessName>, DiffError> {
        let all: BTreeSet<&HarnessName> = sides.iter().flat_map(|side| &side.names).collect();
        let all: Vec<HarnessName> = all.into_iter().cloned().collect();
        choose(all, &self.request.filters, self.request.shard, listener)
    }
}

/// `names` filtered by `filters` (an error when none is left), then
/// `shard`'s part of them.
pub(super) fn choose(
    names: Vec<HarnessName>,
    filters: &[String],
    shard: Option<Shard>,
    listener: &dyn Listener,
) -> Result<Vec<HarnessName>, DiffError> {
    let selected = program::select(names, filters);
    if selected.is_empty() {
        return Err(DiffError::NoHarness {
            filters: filters.to_vec(),
        });
    }
    Ok(match shard {
        Some(shard) => {
            let mine = shard.select(&selected);
            listener.event(Event::Diff(DiffStep::Shard {
                shard: &shard,
                selected: mine.len(),
                of: selected.len(),
            }));
            mine
        }
        None => selected,
    })
}
