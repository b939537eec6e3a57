//! What the runner tells its reporter, as typed events.
//!
//! The library never prints: a suite, a diff or a scaling run calls
//! [`Listener::event`] at each step, and the one reporter
//! ([`super::terminal::Reporter`]) decides how each looks and where it goes
//! (a progress bar on a terminal, plain lines in a log). Tests listen with
//! [`Recorder`] and assert on what happened rather than on text.

use std::fmt::Display;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use crate::diff::report::Revision;
use crate::diff::shard::Shard;
use crate::diff::Side;
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
        side: Option<Side>,
        harness: &'a str,
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
        side: Option<Side>,
        harness: &'a str,
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
        harness: &'a str,
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
    Revisions {
        base: &'a Revision,
        head: &'a Revision,
    },
    /// Another diff holds this checkout's lock.
    WaitingForLock,
    /// `CARGO_TARGET_DIR` contains the worktrees, so `dir` is used instead.
    TargetDirPassedOver { env_dir: &'a Path, dir: &'a str },
    /// A commit configures what the shared build renames, so it builds in
    /// `dir`, a target folder of the diff's own.
    OwnTargetDir {
        side: Side,
        reason: &'a str,
        dir: &'a str,
    },
    Building {
        side: Side,
        commit: &'a str,
        worktree: &'a str,
    },
    Built {
        side: Side,
        elapsed: Duration,
        harnesses: usize,
    },
    /// This run measures `selected` of the `of` harnesses.
    Shard {
        shard: Shard,
        selected: usize,
        of: usize,
    },
    /// Ctrl-C cannot be handled; an interrupted diff leaves its worktrees.
    NoInterruptHandler { error: &'a dyn Display },
    /// The user interrupted; the worktrees are being removed.
    Interrupted,
}

/// Whoever wants to hear about progress.
pub trait Listener: Sync {
    fn event(&self, event: Event<'_>);
}

/// A listener that keeps a one-line summary of every event, for tests.
#[derive(Debug, Default)]
pub struct Recorder {
    lines: Mutex<Vec<String>>,
}

impl Recorder {
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Listener for Recorder {
    fn event(&self, event: Event<'_>) {
        let line = match event {
            Event::ValgrindFound(valgrind) => format!("valgrind {}", valgrind.version),
            Event::MeasuringStarted { total, .. } => format!("started {total}"),
            Event::Measured {
                harness, result, ..
            } => match result {
                Ok(count) => format!("measured {harness} {count}"),
                Err(_) => format!("measured {harness} failed"),
            },
            Event::MeasuringFinished { total, .. } => format!("finished {total}"),
            Event::HarnessFailed { harness, .. } => format!("failed {harness}"),
            Event::Verdict(message) => format!("verdict {}", message.harness),
            Event::Diff(step) => format!("diff {}", step_name(step)),
            Event::Scaling { harness, .. } => format!("scaling {harness}"),
            Event::Wrote(path) => format!("wrote {}", path.display()),
        };
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line);
        }
    }
}

fn step_name(step: DiffStep<'_>) -> &'static str {
    match step {
        DiffStep::UncommittedChanges => "uncommitted",
        DiffStep::Revisions { .. } => "revisions",
        DiffStep::WaitingForLock => "waiting",
        DiffStep::TargetDirPassedOver { .. } => "target-dir-passed-over",
        DiffStep::OwnTargetDir { .. } => "own-target-dir",
        DiffStep::Building { .. } => "building",
        DiffStep::Built { .. } => "built",
        DiffStep::Shard { .. } => "shard",
        DiffStep::NoInterruptHandler { .. } => "no-interrupt-handler",
        DiffStep::Interrupted => "interrupted",
    }
}
