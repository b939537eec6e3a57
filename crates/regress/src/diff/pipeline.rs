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
use super::report::DiffReport;
use super::scratch::{begin, target_dir, RemoveOnDrop};
use super::shard::Shard;
use crate::coverage::blind::Revision;
use crate::coverage::Scope;
use crate::measure::valgrind::Valgrind;
use crate::program::revision::inputs::BuildInputs;
use crate::program::revision::{cache::ProgramCache, Built, DoesNotBuild, Program};
use crate::program::Commit;
use crate::program::Repo;
use crate::program::Side;
use crate::program::{self, PROGRAM};
use crate::program::{build_harness_tests, isolation, BuildSpec, Isolation};
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
            let kept = build_or_keep(&BuildSpec {
                side,
                commit: &revision.commit,
                worktree: worktree.path(),
                target_dir: &target_dir,
                config: &config,
                copy_to: &copy_to,
            })?;
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
    ) -> Result<Vec<String>, DiffError> {
        let all: BTreeSet<&String> = sides.iter().flat_map(|side| &side.names).collect();
        let all: Vec<String> = all.into_iter().cloned().collect();
        choose(all, &self.request.filters, self.request.shard, listener)
    }
}

/// `names` filtered by `filters` (an error when none is left), then
/// `shard`'s part of them.
pub(super) fn choose(
    names: Vec<String>,
    filters: &[String],
    shard: Option<Shard>,
    listener: &dyn Listener,
) -> Result<Vec<String>, DiffError> {
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

/// What a kept build's key holds besides the files: the settings of the
/// build (the isolation's cargo arguments) and every environment variable
/// that changes what cargo, rustc or a C compiler makes ([`builds_with`]).
const KEY_KIND: &str = "regress diff: this workspace";

/// How many of a target folder's kept builds stay: a program is tens of
/// megabytes, and a runner whose target folder is kept would otherwise
/// grow by two of them for every pull request.
const MAX_KEPT_BUILDS: usize = 8;

/// One side's measured program, from the builds kept in its cargo target
/// folder (`<target>/regress/programs/<key>/`), else built by
/// [`build_harness_tests`] and kept there.
///
/// The key is the content of every file of the side's worktree that can
/// reach the program (not its commit: a base shared by many pull requests,
/// or a head that only changed documents, is built once), the compilers as
/// they run there, the isolation's cargo arguments and the environment of
/// the build. Builds are deterministic (the same inputs give the same
/// bytes), so a kept program is the one a build would make; its
/// measurements are then kept too ([`crate::program::MeasurementCache`]).
/// The shards of one pull request on a runner that keeps its target folder
/// (`CARGO_TARGET_DIR`, or `actions/cache` of `target/`), and the second
/// run of a diff, build nothing.
fn build_or_keep(spec: &BuildSpec<'_>) -> Result<Program, DiffError> {
    let inputs = BuildInputs::compilers(spec.worktree)?.with_workspace(spec.worktree)?;
    let environment = builds_with(std::env::vars_os());
    let config = spec.config.join("\n");
    let mut parts = vec![KEY_KIND, config.as_str()];
    parts.extend(environment.iter().map(String::as_str));
    let key = inputs.key(&parts);
    let cache = ProgramCache::new(&spec.target_dir.join("regress"));
    let built = cache.get_or_build(&key, spec.commit, |staging| {
        build_harness_tests(&BuildSpec {
            copy_to: &staging.join(PROGRAM),
            ..*spec
        })?;
        let lock = spec.worktree.join("Cargo.lock");
        let kept = staging.join("Cargo.lock");
        std::fs::copy(&lock, &kept)
            .map_err(|source| crate::program::RevisionError::io("copy", &lock, source))?;
        Ok(Ok::<(), DoesNotBuild>(()))
    })?;
    cache.keep_only_the_newest(&built, MAX_KEPT_BUILDS);
    match built {
        Built::Program(program) => Ok(program),
        // Never kept by this function (a failed build is an error); an
        // entry that says so was written by something else.
        Built::DoesNotBuild { .. } => Err(DiffError::KeptBuild(Box::new(
            crate::program::RevisionError::Cache {
                dir: cache.entry(&key),
            },
        ))),
    }
}

/// The environment variables, as `NAME=value` and sorted, that change what
/// a build makes: cargo's and rustc's (`CARGO_*` but where it writes and
/// how it prints, `RUSTFLAGS`, `RUSTC`, `RUSTUP_TOOLCHAIN`, ...), the C
/// compilers' (`CC`, `CFLAGS`, their per-target forms), and the TLS
/// libraries' build scripts' (`AWS_LC_*`, `OPENSSL_*`, `S2N_*`).
fn builds_with(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<String> {
    const PREFIXES: [&str; 12] = [
        "CARGO_", "RUST", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "AR",
        "AWS_LC_", "OPENSSL_", "S2N_",
    ];
    const NOT: [&str; 4] = [
        "CARGO_TARGET_DIR",
        "CARGO_TERM_",
        "CARGO_HOME",
        "CARGO_MAKEFLAGS",
    ];
    let mut found: Vec<String> = vars
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            // The variables of a `cargo run`/`cargo test` around the runner
            // never reach its builds (`program::cargo_command`).
            let counts = PREFIXES.iter().any(|p| name.starts_with(p))
                && !NOT.iter().any(|p| name.starts_with(p))
                && !program::set_by_cargo_run(&name);
            counts.then(|| format!("{name}={}", value.to_string_lossy()))
        })
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_build_is_keyed_by_what_changes_a_build_only() {
        let vars = |pairs: &[(&str, &str)]| {
            builds_with(
                pairs
                    .iter()
                    .map(|(name, value)| ((*name).into(), (*value).into()))
                    .collect::<Vec<_>>()
                    .into_iter(),
            )
        };
        assert_eq!(
            vars(&[
                ("RUSTFLAGS", "-Ctarget-cpu=native"),
                ("CARGO_PROFILE_TEST_OPT_LEVEL", "1"),
                ("CC", "gcc"),
                ("CFLAGS_x86_64_unknown_linux_gnu", "-O1"),
                ("OPENSSL_DIR", "/opt/ssl"),
                ("AWS_LC_SYS_CMAKE_BUILDER", "1"),
                ("HOME", "/root"),
                ("PATH", "/usr/bin"),
                ("CARGO_TARGET_DIR", "/t"),
                ("CARGO_TERM_COLOR", "always"),
                ("CARGO_HOME", "/c"),
                ("REGRESS_VALGRIND", "/v"),
                ("CARGO_PKG_NAME", "regress"),
                ("CARGO_MANIFEST_PATH", "/w/Cargo.toml"),
                ("CARGO_TARGET_TMPDIR", "/w/target/tmp"),
            ]),
            [
                "AWS_LC_SYS_CMAKE_BUILDER=1",
                "CARGO_PROFILE_TEST_OPT_LEVEL=1",
                "CC=gcc",
                "CFLAGS_x86_64_unknown_linux_gnu=-O1",
                "OPENSSL_DIR=/opt/ssl",
                "RUSTFLAGS=-Ctarget-cpu=native",
            ]
        );
    }
}
