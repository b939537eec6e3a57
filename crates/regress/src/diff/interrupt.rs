//! Ctrl-C (and SIGTERM, as CI sends on cancel) during a diff.
//!
//! The default reaction, dying on the spot, would skip every destructor and
//! leave the worktrees behind. Instead the diff records the request and
//! carries on just long enough to clean up: the children it is waiting for
//! (cargo, Valgrind) are in the same process group, receive the same signal
//! and stop, the diff sees [`requested`] and returns
//! [`DiffError::Interrupted`], and the worktree guards remove themselves. A
//! second signal exits at once, for when the clean-up itself hangs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use super::error::DiffError;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Exit code of a second signal: 128 + SIGINT, as a shell reports it.
const EXIT_INTERRUPTED: i32 = 130;

/// Installs the handler (once per process). A failure to install is
/// reported and otherwise ignored: the diff still works, it just cleans up
/// on the next run instead.
pub fn install() {
    INSTALL.call_once(|| {
        let installed = ctrlc::set_handler(|| {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                std::process::exit(EXIT_INTERRUPTED);
            }
            eprintln!("regress diff: interrupted; cleaning up (press Ctrl-C again to quit at once)");
        });
        if let Err(error) = installed {
            eprintln!("regress diff: cannot handle Ctrl-C ({error}); an interrupted diff leaves its worktrees for the next one to remove");
        }
    });
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
