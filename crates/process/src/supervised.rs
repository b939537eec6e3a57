//! One running child in a process group of its own: its watchdog (time
//! limit, cancellation, interrupt) and the careful order of waiting,
//! killing what is left of the group and reaping.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::interrupt::{groups, interrupted, kill_group};
use crate::ProcessError;

/// How often the watchdog looks at the cancellation hook and the interrupt
/// flag.
const POLL: Duration = Duration::from_millis(10);

/// What a child is for: a clean-up command (removing a worktree) must still
/// run after an interrupt; everything else must not start then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Work,
    Cleanup,
}

/// How long a child may run, how the caller can stop it early, and what
/// it is for.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Duration,
    /// Polled while the child runs; `true` kills it
    /// ([`ProcessError::Cancelled`]).
    pub cancelled: Option<fn() -> bool>,
    pub role: Role,
    /// What a timeout's message tells the user to do, starting with a line
    /// break (empty: nothing).
    pub remedy: &'static str,
}

/// The remedy of `regress`'s own limits.
pub const TIMEOUT_REMEDY: &str =
    "\n  If it is only slow, raise the limit with REGRESS_TIMEOUT_SECS=<seconds>.";

impl Limits {
    /// `timeout`, no cancellation, [`Role::Work`], and the remedy of
    /// `regress`'s own limits.
    pub fn new(timeout: Duration) -> Limits {
        Limits {
            timeout,
            cancelled: None,
            role: Role::Work,
            remedy: TIMEOUT_REMEDY,
        }
    }
}

/// How a supervised child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(ExitStatus),
    /// Killed, with its group, when its time ran out.
    TimedOut,
}

const NOT_FIRED: u8 = 0;
const FIRED_TIMEOUT: u8 = 1;
const FIRED_CANCEL: u8 = 2;
const FIRED_INTERRUPT: u8 = 3;

/// A running child in a process group of its own, killed with its group
/// when dropped before it was waited for.
#[derive(Debug)]
pub struct Supervised {
    child: Child,
    /// The program (or command line) named in errors.
    label: String,
    role: Role,
    watchdog: Option<Watchdog>,
    /// The remedy a timeout's message gives (see [`Limits::remedy`]).
    remedy: &'static str,
    reaped: bool,
}

impl Supervised {
    /// Starts `command` (which runs `program`, named in errors) in a new
    /// process group. Refused after an interrupt unless `role` is
    /// [`Role::Cleanup`].
    pub fn spawn(
        command: &mut Command,
        program: &Path,
        role: Role,
    ) -> Result<Supervised, ProcessError> {
        Supervised::spawn_labelled(command, program.display().to_string(), role)
    }

    /// [`Supervised::spawn`], with the label errors give the child.
    pub fn spawn_labelled(
        command: &mut Command,
        label: String,
        role: Role,
    ) -> Result<Supervised, ProcessError> {
        command.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) is async-signal-safe and touches no memory of the
        // parent; it runs in the child between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut groups = groups();
        if role == Role::Work && interrupted() {
            return Err(ProcessError::Interrupted);
        }
        let child = command.spawn().map_err(|source| ProcessError::Spawn {
            program: label.clone(),
            source,
        })?;
        groups.insert(child.id() as i32);
        crate::sentinel::report_group(child.id() as i32, true);
        Ok(Supervised {
            child,
            label,
            role,
            watchdog: None,
            remedy: TIMEOUT_REMEDY,
            reaped: false,
        })
    }

    /// The child, for its pipes.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The label errors give the child.
    pub fn label(&self) -> &str {
        &self.label
    }

    fn group(&self) -> i32 {
        self.child.id() as i32
    }

    /// Starts the watchdog now, with `limits`: it kills the group when the
    /// time has passed, when the cancellation hook says so, or on an
    /// interrupt (for [`Role::Work`]), while the caller is still busy with
    /// the pipes.
    pub fn watch(&mut self, limits: &Limits) {
        self.remedy = limits.remedy;
        self.watch_for(Some(limits.timeout), limits.cancelled);
    }

    fn watch_for(&mut self, timeout: Option<Duration>, cancelled: Option<fn() -> bool>) {
        let nothing_to_watch = timeout.is_none() && cancelled.is_none() && self.role != Role::Work;
        if self.watchdog.is_none() && !nothing_to_watch {
            self.watchdog = Some(Watchdog::start(
                self.group(),
                timeout,
                cancelled,
                self.role == Role::Work,
            ));
        }
    }

    /// Kills the group at once (the leader is not reaped yet, so its group
    /// id is still ours); the wait then reports how it ended.
    pub fn kill_now(&self) {
        if !self.reaped {
            kill_group(self.group(), libc::SIGKILL);
        }
    }

    /// Why the watchdog killed the child, if it did.
    pub fn stop_reason(&self) -> Option<ProcessError> {
        match self.fired() {
            FIRED_TIMEOUT => Some(self.timed_out()),
            FIRED_CANCEL => Some(ProcessError::Cancelled {
                command: self.label.clone(),
            }),
            FIRED_INTERRUPT => Some(ProcessError::Interrupted),
            _ => None,
        }
    }

    fn fired(&self) -> u8 {
        self.watchdog
            .as_ref()
            .map_or(NOT_FIRED, |watchdog| watchdog.fired.load(Ordering::SeqCst))
    }

    /// The error of a child its time limit killed.
    pub fn timed_out(&self) -> ProcessError {
        ProcessError::TimedOut {
            command: self.label.clone(),
            seconds: self
                .watchdog
                .as_ref()
                .and_then(|watchdog| watchdog.timeout)
                .map_or(0, |timeout| timeout.as_secs()),
            remedy: self.remedy,
        }
    }

    /// Waits for the child, for at most `timeout` (unless [`watch`] gave
    /// it a limit already). Whatever way it ends, its whole process group
    /// is killed before its leader is reaped. An interrupt ends the wait
    /// with [`ProcessError::Interrupted`] (for [`Role::Work`]), a
    /// cancellation with [`ProcessError::Cancelled`].
    ///
    /// [`watch`]: Supervised::watch
    pub fn wait(mut self, timeout: Option<Duration>) -> Result<Ended, ProcessError> {
        self.watch_for(timeout, None);
        self.wait_watched()
    }

    /// [`Supervised::wait`] with the limits [`Supervised::watch`] gave; a
    /// timeout is [`ProcessError::TimedOut`].
    pub fn finish(mut self) -> Result<ExitStatus, ProcessError> {
        match self.wait_watched()? {
            Ended::Exited(status) => Ok(status),
            Ended::TimedOut => Err(self.timed_out()),
        }
    }

    fn wait_watched(&mut self) -> Result<Ended, ProcessError> {
        let status = self.reap_when_exited();
        match self.fired() {
            FIRED_TIMEOUT => return Ok(Ended::TimedOut),
            FIRED_CANCEL => {
                return Err(ProcessError::Cancelled {
                    command: self.label.clone(),
                })
            }
            FIRED_INTERRUPT => return Err(ProcessError::Interrupted),
            _ => {}
        }
        // A child that ended because the interrupt reached it first ended
        // because of the interrupt, whatever its status says.
        if self.role == Role::Work && interrupted() {
            return Err(ProcessError::Interrupted);
        }
        status
            .map(Ended::Exited)
            .map_err(|source| ProcessError::Io {
                action: "wait for",
                command: self.label.clone(),
                source,
            })
    }

    /// Blocks until the leader has exited (leaving it a zombie), stops the
    /// watchdog, kills whatever is left of the group, then reaps the
    /// leader and forgets the group.
    fn reap_when_exited(&mut self) -> std::io::Result<ExitStatus> {
        wait_without_reaping(self.child.id() as libc::pid_t);
        if let Some(watchdog) = &mut self.watchdog {
            watchdog.stop();
        }
        self.reap()
    }

    fn reap(&mut self) -> std::io::Result<ExitStatus> {
        kill_group(self.group(), libc::SIGKILL);
        // Before the leader is reaped: after it, the id may name another
        // group.
        crate::sentinel::report_group(self.group(), false);
        let status = self.child.wait();
        self.reaped = true;
        groups().remove(&self.group());
        status
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if let Some(watchdog) = &mut self.watchdog {
            watchdog.stop();
        }
        if !self.reaped {
            let _ = self.reap();
        }
    }
}

/// A thread that kills a group at its deadline, on cancellation or on an
/// interrupt, and says which it was.
#[derive(Debug)]
struct Watchdog {
    timeout: Option<Duration>,
    done: Arc<(Mutex<bool>, Condvar)>,
    fired: Arc<AtomicU8>,
    handle: Option<JoinHandle<()>>,
}

impl Watchdog {
    fn start(
        group: i32,
        timeout: Option<Duration>,
        cancelled: Option<fn() -> bool>,
        on_interrupt: bool,
    ) -> Watchdog {
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let fired = Arc::new(AtomicU8::new(NOT_FIRED));
        let deadline = timeout.and_then(|timeout| Instant::now().checked_add(timeout));
        let handle = {
            let done = done.clone();
            let fired = fired.clone();
            std::thread::spawn(move || {
                let (lock, condvar) = &*done;
                let mut finished = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if *finished {
                        return;
                    }
                    let now = Instant::now();
                    let reason = if deadline.is_some_and(|deadline| now >= deadline) {
                        FIRED_TIMEOUT
                    } else if cancelled.is_some_and(|cancelled| cancelled()) {
                        FIRED_CANCEL
                    } else if on_interrupt && interrupted() {
                        FIRED_INTERRUPT
                    } else {
                        NOT_FIRED
                    };
                    if reason != NOT_FIRED {
                        fired.store(reason, Ordering::SeqCst);
                        kill_group(group, libc::SIGKILL);
                        return;
                    }
                    let wait = deadline.map_or(POLL, |deadline| (deadline - now).min(POLL));
                    finished = condvar
                        .wait_timeout(finished, wait)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            })
        };
        Watchdog {
            timeout,
            done,
            fired,
            handle: Some(handle),
        }
    }

    fn stop(&mut self) {
        let (lock, condvar) = &*self.done;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        condvar.notify_all();
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{alive, shell};

    #[test]
    fn a_guard_dropped_early_kills_its_child() {
        let mut command = shell("sleep 300");
        let child =
            Supervised::spawn(&mut command, Path::new("/bin/sh"), Role::Work).expect("spawn");
        let pid = child.group();
        assert!(alive(pid));
        drop(child);
        assert!(!alive(pid));
    }

    #[test]
    fn a_wait_past_its_time_says_so() {
        let mut command = shell("sleep 300");
        let child =
            Supervised::spawn(&mut command, Path::new("/bin/sh"), Role::Work).expect("spawn");
        let pid = child.group();
        let started = Instant::now();
        assert_eq!(
            child.wait(Some(Duration::from_millis(200))).expect("wait"),
            Ended::TimedOut
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(!alive(pid));
    }

    #[test]
    fn cancellation_stops_the_child() {
        fn always() -> bool {
            true
        }
        let mut command = shell("sleep 300");
        let mut child =
            Supervised::spawn(&mut command, Path::new("/bin/sh"), Role::Work).expect("spawn");
        child.watch(&Limits {
            cancelled: Some(always),
            ..Limits::new(Duration::from_secs(60))
        });
        let error = child.finish().unwrap_err();
        assert!(matches!(error, ProcessError::Cancelled { .. }), "{error}");
    }
}
