//! Ctrl-C, SIGTERM and SIGHUP, forwarded to every child's process group.
//!
//! Every live child's group is registered here while it runs
//! ([`crate::Supervised`] registers and forgets it), so the handler can
//! reach the children that the terminal's own Ctrl-C no longer reaches.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

use crate::ProcessError;

/// Exit code of an interrupted run: 128 + SIGINT, as a shell reports it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long children get between SIGTERM and SIGKILL after an interrupt.
const GRACE: Duration = Duration::from_secs(2);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static INSTALL: Once = Once::new();

/// Installs the SIGINT/SIGTERM/SIGHUP handler, once per process. Failing
/// to install it is for the caller to report; children are then still
/// killed on timeouts and errors, just not forwarded a Ctrl-C.
pub fn install_interrupt_handler() -> Result<(), ctrlc::Error> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        result = ctrlc::set_handler(on_signal);
    });
    result
}

fn on_signal() {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        signal_groups(&live_groups(), libc::SIGKILL);
        std::process::exit(i32::from(EXIT_INTERRUPTED));
    }
    let groups = live_groups();
    signal_groups(&groups, libc::SIGTERM);
    std::thread::spawn(move || {
        std::thread::sleep(GRACE);
        signal_groups(&groups, libc::SIGKILL);
    });
}

/// Whether an interrupt was requested.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// `Err(Interrupted)` once an interrupt was requested.
pub fn check() -> Result<(), ProcessError> {
    if interrupted() {
        Err(ProcessError::Interrupted)
    } else {
        Ok(())
    }
}

/// The registry of live groups, locked. Held across a spawn, so that a
/// signal is handled either after the new child is registered (and so
/// killed) or before it is started (and so it is not).
pub(crate) fn groups() -> MutexGuard<'static, BTreeSet<i32>> {
    GROUPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn live_groups() -> Vec<i32> {
    groups().iter().copied().collect()
}

fn signal_groups(groups: &[i32], signal: i32) {
    for &group in groups {
        kill_group(group, signal);
    }
}

/// Sends `signal` to the process group `group`.
pub(crate) fn kill_group(group: i32, signal: i32) {
    if group > 1 {
        // SAFETY: killpg(2) only sends a signal; an id that names no group
        // any more fails with ESRCH, which is fine.
        unsafe {
            libc::killpg(group, signal);
        }
    }
}
