//! What the runner tells its reporter, as typed events.
//!
//! The library never prints: a suite, a diff or a scaling run calls
//! [`Listener::event`] at each step, and the one reporter
//! ([`super::terminal::Reporter`]) decides how each looks and where it goes
//! (a progress bar on a terminal, plain lines in a log), and another
//! listener (a test, a machine-readable log) can take its place.
//!
//! Events name a diff's side (`base`, `head`), commits and shards as text,
//! so that this vocabulary depends on nothing the diff is built from and
//! the diff can depend on it.

use std::fmt::Display;
use std::path::Path;
use std::time::Duration;

use crate::harness_name::HarnessName;
use crate::judge::gate::VerdictMessage;
use crate::measure::valgrind::Valgrind;

/// One thing that happened.
#[derive(Clone, Copy)]
pub enum Event<'a> {
    /// The Valgrind that measures, and its method.
    ValgrindFound(&'a Valgrind),
    /// A batch of measurements begins: `total` of them, `workers` at once.
    MeasuringStarted { total: usize, workers: usize },
    /// One measurement ended: its count, or the error (reported in full by
    /// the caller with [`Event::HarnessFailed`]).
    Measured {
        side: Option<&'a str>,
        harness: &'a HarnessName,
        result: Result<u64, &'a dyn Display>,
    },
    /// The batch is done.
    MeasuringFinished {
        total: usize,
        workers: usize,
        elapsed: Duration,
    },
    /// A harness could not be measured or judged; the others go on.
    HarnessFailed {
        side: Option<&'a str>,
        harness: &'a HarnessName,
        error: &'a dyn Display,
    },
    /// What the gate says of a harness that needs more than a table row.
    Verdict(&'a VerdictMessage<'a>),
    /// A step of `regress diff`.
    Diff(DiffStep<'a>),
    /// Thread scaling of the `index`-th of `total` harnesses begins.
    Scaling {
        index: usize,
        total: usize,
        harness: &'a HarnessName,
        threads: usize,
        seconds: f64,
    },
    /// A file the user asked for was written.
    Wrote(&'a Path),
}

/// The steps of a diff worth telling the user about.
#[derive(Clone, Copy)]
pub enum DiffStep<'a> {
    /// `HEAD` is measured as committed; edits in the work tree are not.
    UncommittedChanges,
    /// The two commits: `(abbreviated hash, ref as given)` each.
    Revisions {
        base: (&'a str, &'a str),
        head: (&'a str, &'a str),
    },
    /// Another diff holds this checkout's lock.
    WaitingForLock,
    /// `CARGO_TARGET_DIR` contains the sides' sources (the worktrees, or a
    /// library diff's scratch copies), so `dir` is used instead.
    TargetDirPassedOver { env_dir: &'a Path, dir: &'a str },
    /// A commit configures what the shared build renames, so it builds in
    /// `dir`, a target folder of the diff's own.
    OwnTargetDir {
        side: &'a str,
        reason: &'a str,
        dir: &'a str,
    },
    Building {
        side: &'a str,
        commit: &'a str,
        worktree: &'a str,
    },
    Built {
        side: &'a str,
        elapsed: Duration,
        harnesses: usize,
        /// Taken from a kept build of the same inputs: nothing was built.
        kept: bool,
    },
    /// This run measures `selected` of the `of` harnesses.
    Shard {
        shard: &'a dyn Display,
        selected: usize,
        of: usize,
    },
    /// An interrupted diff left this worktree; it is being removed.
    StaleWorktree { path: &'a Path },
    /// A worktree could not be removed.
    WorktreeLeft {
        path: &'a Path,
        error: &'a dyn Display,
    },
    /// Ctrl-C cannot be handled; an interrupted diff leaves its worktrees.
    NoInterruptHandler { error: &'a dyn Display },
    /// The user interrupted; the worktrees are being removed.
    Interrupted,
    /// The blind spots were found: `elapsed` to compare the changed lines
    /// with the executed ones, after `line_data` spent on the executed-lines
    /// data while measuring (what naming blind spots adds to a diff).
    BlindSpots {
        elapsed: Duration,
        line_data: Duration,
    },
}

/// Whoever wants to hear about progress.
pub trait Listener: Sync {
    fn event(&self, event: Event<'_>);
}

/// A listener that ignores everything (tests, callers with no one to tell).
pub struct Silent;

impl Listener for Silent {
    fn event(&self, _: Event<'_>) {}
}
