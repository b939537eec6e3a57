//! Owning a running child: the watchdog that kills its process group at
//! the deadline or on cancellation, and the careful order of waiting,
//! killing what is left and reaping (see the parent module).

use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{Limits, ProcessError};

const NOT_FIRED: u8 = 0;
const FIRED_TIMEOUT: u8 = 1;
const FIRED_CANCEL: u8 = 2;

/// Owns a running child: a watchdog thread kills its group at the deadline
/// or on cancellation, and dropping the guard kills it too.
pub(super) struct Guard {
    pub(super) child: Child,
    command: String,
    timeout: Duration,
    done: Arc<(Mutex<bool>, Condvar)>,
    fired: Arc<AtomicU8>,
    watchdog: Option<JoinHandle<()>>,
    reaped: bool,
}

impl Guard {
    pub(super) fn new(child: Child, limits: &Limits, command: String) -> Guard {
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let fired = Arc::new(AtomicU8::new(NOT_FIRED));
        let group = child.id() as libc::pid_t;
        let deadline = Instant::now() + limits.timeout;
        let cancelled = limits.cancelled;
        let watchdog = {
            let done = done.clone();
            let fired = fired.clone();
            std::thread::spawn(move || {
                let (lock, condvar) = &*done;
                let mut finished = lock.lock().expect("watchdog lock");
                loop {
                    if *finished {
                        return;
                    }
                    let now = Instant::now();
                    let reason = if now >= deadline {
                        FIRED_TIMEOUT
                    } else if cancelled.is_some_and(|cancelled| cancelled()) {
                        FIRED_CANCEL
                    } else {
                        NOT_FIRED
                    };
                    if reason != NOT_FIRED {
                        fired.store(reason, Ordering::SeqCst);
                        kill_group(group);
                        return;
                    }
                    let wait = (deadline - now).min(Duration::from_millis(100));
                    finished = condvar
                        .wait_timeout(finished, wait)
                        .expect("watchdog lock")
                        .0;
                }
            })
        };
        Guard {
            child,
            command,
            timeout: limits.timeout,
            done,
            fired,
            watchdog: Some(watchdog),
            reaped: false,
        }
    }

    pub(super) fn stop_reason(&self) -> Option<ProcessError> {
        match self.fired.load(Ordering::SeqCst) {
            FIRED_TIMEOUT => Some(ProcessError::TimedOut {
                command: self.command.clone(),
                seconds: self.timeout.as_secs(),
            }),
            FIRED_CANCEL => Some(ProcessError::Cancelled {
                command: self.command.clone(),
            }),
            _ => None,
        }
    }

    /// Kills the group at once (the leader is not reaped yet, so its group
    /// id is still ours).
    pub(super) fn kill_now(&self) {
        if !self.reaped {
            kill_group(self.child.id() as libc::pid_t);
        }
    }

    /// Waits for the leader to exit, stops the watchdog, kills whatever is
    /// left of the group, then reaps the leader.
    pub(super) fn finish(&mut self) -> Result<ExitStatus, ProcessError> {
        wait_without_reaping(self.child.id() as libc::pid_t);
        self.stop_watchdog();
        kill_group(self.child.id() as libc::pid_t);
        let status = self.child.wait().map_err(|source| ProcessError::Io {
            action: "wait",
            command: self.command.clone(),
            source,
        })?;
        self.reaped = true;
        match self.stop_reason() {
            Some(error) => Err(error),
            None => Ok(status),
        }
    }

    fn stop_watchdog(&mut self) {
        let (lock, condvar) = &*self.done;
        *lock.lock().expect("watchdog lock") = true;
        condvar.notify_all();
        if let Some(handle) = self.watchdog.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop_watchdog();
        if !self.reaped {
            kill_group(self.child.id() as libc::pid_t);
            let _ = self.child.wait();
        }
    }
}

/// Blocks until `pid` (our child) has exited, leaving it a zombie so its
/// process group id stays ours until we reap it.
fn wait_without_reaping(pid: libc::pid_t) {
    loop {
        // SAFETY: waitid only writes into the siginfo we pass; the child is
        // ours and not yet reaped.
        let result = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if result == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            return;
        }
    }
}

fn kill_group(group: libc::pid_t) {
    // SAFETY: sends a signal to the process group we created for our own
    // child; no memory is involved. ESRCH (nothing left) is fine.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}
