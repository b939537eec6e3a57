//! Ctrl-C (and SIGTERM, as CI sends on cancel) during a diff.
//!
//! The default reaction, dying on the spot, would skip every destructor and
//! leave the worktrees behind. Instead the diff records the request and
//! carries on just long enough to clean up: the children it is waiting for
//! (cargo, Valgrind) are in the same process group, receive the same signal
//! and stop, the diff sees [`requested`], reports it and returns
//! [`DiffError::Interrupted`], and the worktree guards remove themselves. A
//! second signal exits at once, for when the clean-up itself hangs. The
//! handler itself prints nothing: the reporter is told by the diff.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use super::error::DiffError;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Exit code of a second signal: 128 + SIGINT, as a shell reports it.
const EXIT_INTERRUPTED: i32 = 130;

/// Installs the handler (once per process). A failure to install is for
/// the caller to report and otherwise harmless: the diff still works, it
/// just cleans up on the next run instead.
pub fn install() -> Result<(), ctrlc::Error> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        result = ctrlc::set_handler(|| {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                std::process::exit(EXIT_INTERRUPTED);
            }
        });
    });
    result
}

/// Whether an interruption was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// `Err(Interrupted)` once an interruption was requested.
pub fn check() -> Result<(), DiffError> {
    if requested() {
        Err(DiffError::Interrupted)
    } else {
        Ok(())
    }
}
