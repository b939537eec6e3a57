//! The measured program of one revision: of this workspace (a commit), of
//! a TLS library's checkout (a commit, built into this workspace's
//! harnesses), or of a library's published version (crates.io's crate).
//!
//! Bisecting and drawing a history both walk many revisions, and both come
//! back to revisions they built before (a bisect resumed after Ctrl-C, a
//! history grown by one version, a second bisect over the same range).
//! Building one costs a minute or more (s2n-tls's C code, the harnesses at
//! `opt-level = 3`), so every build is kept in [`cache`], keyed by the
//! revision and by everything else its program depends on
//! ([`inputs::BuildInputs`]: the compilers, and for library builds the
//! harness sources of this workspace), together with the names of its
//! harnesses and its `Cargo.lock` (the runner reads the library versions
//! of a count's fingerprint from it). A revision that does not build is
//! kept too, with the reason, so a bisect skips it again at once.
//!
//! Measurements are kept apart, by the program's bytes and the Valgrind
//! ([`crate::program::MeasurementCache`], shared with `regress diff
//! --library`): two revisions that build the same program are measured
//! once.

pub mod cache;
pub(crate) mod error;
pub mod inputs;
mod library;
mod published;
mod workspace;

use std::path::{Path, PathBuf};

pub use cache::{Built, Program};
pub use error::{DoesNotBuild, RevisionError};
pub use library::LibraryRevisions;
pub use published::PublishedVersions;
pub use workspace::WorkspaceRevisions;

use crate::measure::valgrind::Valgrind;
use crate::program::MeasurementCache;
use crate::workspace::Workspace;
use crate::Runner;

/// Where this module keeps its state, under the workspace's `target/`.
pub fn state_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("regress-revisions")
}

/// Something that turns a revision into a measured program.
pub trait Builder {
    /// What the revisions are of, for messages: `this workspace`,
    /// `s2n-tls's checkout at ../s2n-tls`, `s2n-tls from crates.io`.
    fn describe(&self) -> String;

    /// The cache key of `revision` (a commit or a version), from the
    /// revision and every input of its build.
    fn key(&self, revision: &str) -> String;

    /// Builds `revision` and copies its program and `Cargo.lock` into
    /// `into`; `Ok(Err(reason))` when the revision does not build (a
    /// compile error, a version the harnesses do not cover): a bisect
    /// skips it and a history reports it. `Err` is anything else (an
    /// interrupt, a failing disk), which ends the command.
    fn build(&self, revision: &str, into: &Path)
        -> Result<Result<(), DoesNotBuild>, RevisionError>;

    /// Why `revision` cannot be built, when that is known without building
    /// (a published version the harnesses do not cover): a history reports
    /// it and neither builds nor counts a build. `None` otherwise (`build`
    /// still refuses what it finds).
    fn refuses(&self, _revision: &str) -> Option<String> {
        None
    }
}

/// The program of `revision`, from the cache or built (and then cached).
pub fn program(
    builder: &dyn Builder,
    cache_root: &Path,
    revision: &str,
) -> Result<Built, RevisionError> {
    let key = builder.key(revision);
    cache::ProgramCache::new(cache_root)
        .get_or_build(&key, revision, |into| builder.build(revision, into))
}

/// A runner for `program`: its outputs in `outputs`, the library versions
/// of its fingerprint from the `Cargo.lock` it was built with, and a
/// measurement cache keyed by its bytes and the Valgrind.
pub fn runner(
    workspace: &Workspace,
    program: &Program,
    valgrind: &Valgrind,
    timeout: std::time::Duration,
    outputs: &Path,
) -> Result<(Runner, MeasurementCache), RevisionError> {
    let cpu = workspace.cpu();
    let runner = Runner::new(
        Workspace::new(&program.dir).with_cpu(cpu),
        valgrind.clone(),
        timeout,
    )?
    .with_output_dir(outputs);
    let cache = MeasurementCache::new(
        &measured_dir(workspace.root()),
        &program.program,
        valgrind,
        cpu,
    )?;
    Ok((runner, cache))
}

/// The measurement cache's folder, the one `regress diff --library` uses.
pub fn measured_dir(workspace: &Path) -> PathBuf {
    workspace
        .join("target")
        .join("regress-source")
        .join("measured")
}

/// A measurement of one harness of a program, and whether it was kept
/// from an earlier run instead of measured now.
pub struct Measured {
    pub measurement: crate::Measurement,
    pub cached: bool,
}

/// Measures `harness` of `program` into `outputs` (record, raw profile and
/// annotated text, as a run writes them), or copies the measurement kept
/// for the same program and Valgrind there.
pub fn measure(
    runner: &Runner,
    cache: &MeasurementCache,
    program: &Program,
    harness: &crate::HarnessName,
) -> Result<Measured, RevisionError> {
    crate::process::check()?;
    if let Some(measurement) = cache.load(harness, runner.output_dir()) {
        return Ok(Measured {
            measurement,
            cached: true,
        });
    }
    let measurement = runner.measure(harness, &program.program)?;
    cache.store(harness, runner.output_dir());
    Ok(Measured {
        measurement,
        cached: false,
    })
}

/// Holds `target/regress-revisions/` for one command: the clone and the
/// scratch copies are used by one bisect or history at a time.
#[derive(Debug)]
pub struct StateLock {
    _file: std::fs::File,
}

/// Takes the lock of `state` (created if needed), calling `waiting` first
/// when another command holds it.
pub fn lock(state: &Path, waiting: impl FnOnce()) -> Result<StateLock, RevisionError> {
    std::fs::create_dir_all(state)
        .map_err(|source| RevisionError::io("create the folder", state, source))?;
    let path = state.join(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| RevisionError::io("open", &path, source))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            waiting();
            file.lock()
                .map_err(|source| RevisionError::io("lock", &path, source))?;
        }
        Err(std::fs::TryLockError::Error(source)) => {
            return Err(RevisionError::io("lock", &path, source))
        }
    }
    Ok(StateLock { _file: file })
}

/// The state folder of `workspace` ([`state_dir`]), held for one command
/// ([`lock`]); `progress` hears of a wait for another command.
pub fn hold(
    workspace: &Path,
    progress: &dyn Fn(&str),
) -> Result<(PathBuf, StateLock), RevisionError> {
    let state = state_dir(workspace);
    let lock = lock(&state, || {
        progress("another bisect or history holds target/regress-revisions/; waiting")
    })?;
    Ok((state, lock))
}

/// What every build of a revision runs with: stopped by Ctrl-C (SIGTERM),
/// the builds' output shown as they run.
pub fn options() -> regress_source::Options {
    regress_source::Options {
        cancelled: Some(crate::process::interrupted),
        echo: true,
        ..regress_source::Options::default()
    }
}
