//! Ctrl-C (and SIGTERM, as CI sends on cancel) during a diff.
//!
//! The default reaction, dying on the spot, would skip every destructor and
//! leave the worktrees behind. Instead the diff records the request and
//! carries on just long enough to clean up. Every child (cargo, Valgrind,
//! its tools, git) runs in a process group of its own ([`crate::process`]),
//! so the handler forwards the signal to each group, no new child starts
//! afterwards, the diff sees [`requested`], reports it and returns
//! [`DiffError::Interrupted`], and the worktree guards remove themselves. A
//! second signal exits at once, for when the clean-up itself hangs. The
//! handler itself prints nothing: the reporter is told by the diff.

use super::error::DiffError;
use crate::report::events::{DiffStep, Event, Listener};

/// Runs a diff's `work` with the handler installed; when an interrupt was
/// requested meanwhile, says so and returns [`DiffError::Interrupted`]
/// whatever `work` returned (a child killed by the user's Ctrl-C fails in
/// its own words, "cargo failed: signal 2"). The worktrees and scratch
/// guards of `work` are gone by then.
pub fn guard<T>(
    listener: &dyn Listener,
    work: impl FnOnce() -> Result<T, DiffError>,
) -> Result<T, DiffError> {
    if let Err(error) = install() {
        listener.event(Event::Diff(DiffStep::NoInterruptHandler { error: &error }));
    }
    let result = work();
    if requested() {
        listener.event(Event::Diff(DiffStep::Interrupted));
        return Err(DiffError::Interrupted);
    }
    result
}

/// Installs the handler (once per process). A failure to install is for
/// the caller to report and otherwise harmless: the diff still works, it
/// just cleans up on the next run instead.
pub fn install() -> Result<(), ctrlc::Error> {
    crate::process::install_interrupt_handler()
}

/// Whether an interruption was requested.
pub fn requested() -> bool {
    crate::process::interrupted()
}

/// `Err(Interrupted)` once an interruption was requested.
pub fn check() -> Result<(), DiffError> {
    if requested() {
        Err(DiffError::Interrupted)
    } else {
        Ok(())
    }
}
