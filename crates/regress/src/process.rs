//! Every child process the runner starts: Valgrind, `cg_annotate` and
//! `cg_diff`, the measured program, git, cargo.
//!
//! Each child starts in a process group of its own, which the runner kills
//! as a whole: on a timeout, on an interrupt, when the child's work is done
//! (a Valgrind wrapper that exits and leaves a grandchild running leaves
//! nothing), and when the caller gives up on it (the guard's `Drop`). A
//! group is killed while its leader is still an unreaped zombie, so its id
//! cannot have been reused by then. On Linux a child also gets `SIGKILL`
//! should the runner itself die (`PR_SET_PDEATHSIG`).
//!
//! A child in a group of its own no longer receives the terminal's Ctrl-C,
//! so the runner forwards it: [`install_interrupt_handler`] handles SIGINT
//! and SIGTERM (and SIGHUP) by recording the request, sending SIGTERM to
//! every live group and SIGKILL two seconds later; waits return
//! [`ProcessError::Interrupted`], and no new child is started afterwards,
//! except the clean-up commands that remove a diff's worktrees. A second
//! signal kills every group and exits at once with code 130.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex, Once};
use std::time::{Duration, Instant};

/// Exit code of an interrupted run: 128 + SIGINT, as a shell reports it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long children get between SIGTERM and SIGKILL after an interrupt.
const GRACE: Duration = Duration::from_secs(2);

/// How often a wait looks at the child, the clock and the interrupt flag.
const POLL: Duration = Duration::from_millis(10);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static INSTALL: Once = Once::new();

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot wait for {program}: {source}")]
    Wait {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{program} did not finish within {seconds} s and was killed with its children.\n  \
         If it is only slow, raise the limit with REGRESS_TIMEOUT_SECS=<seconds>."
    )]
    TimedOut { program: PathBuf, seconds: u64 },
    #[error("interrupted (SIGINT or SIGTERM); every child process was stopped")]
    Interrupted,
    #[error("{program} printed more than {limit} bytes; it was stopped")]
    OutputTooLarge { program: PathBuf, limit: usize },
}

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

fn live_groups() -> Vec<i32> {
    let groups = GROUPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    groups.iter().copied().collect()
}

fn signal_groups(groups: &[i32], signal: i32) {
    for &group in groups {
        kill_group(group, signal);
    }
}

fn kill_group(group: i32, signal: i32) {
    if group > 1 {
        // SAFETY: killpg(2) only sends a signal; an id that names no group
        // any more fails with ESRCH, which is fine.
        unsafe {
            libc::killpg(group, signal);
        }
    }
}

/// What a child is for: a clean-up command (removing a worktree) must still
/// run after an interrupt; everything else must not start then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Work,
    Cleanup,
}

/// How a supervised child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(ExitStatus),
    /// Killed, with its group, when its time ran out.
    TimedOut,
}

/// A running child in a process group of its own, killed with its group
/// when dropped before it was waited for.
#[derive(Debug)]
pub struct Supervised {
    child: Child,
    program: PathBuf,
    role: Role,
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
        // Holding the lock across the spawn: a signal that arrives now is
        // handled after this child is registered (and so killed), or before
        // it is started (and so it is not).
        let mut groups = GROUPS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if role == Role::Work && interrupted() {
            return Err(ProcessError::Interrupted);
        }
        let child = command.spawn().map_err(|source| ProcessError::Spawn {
            program: program.to_path_buf(),
            source,
        })?;
        groups.insert(child.id() as i32);
        Ok(Supervised {
            child,
            program: program.to_path_buf(),
            role,
            reaped: false,
        })
    }

    /// The child, for its pipes.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    fn group(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits for the child, for at most `timeout`. Whatever way it ends,
    /// its whole process group is killed before its leader is reaped. An
    /// interrupt ends the wait with [`ProcessError::Interrupted`] (for
    /// [`Role::Work`]).
    pub fn wait(mut self, timeout: Option<Duration>) -> Result<Ended, ProcessError> {
        let deadline = timeout.and_then(|timeout| Instant::now().checked_add(timeout));
        let ended = loop {
            match self.has_exited() {
                Ok(true) => break None,
                Ok(false) => {}
                Err(source) => {
                    return Err(ProcessError::Wait {
                        program: self.program.clone(),
                        source,
                    })
                }
            }
            if self.role == Role::Work && interrupted() {
                break Some(Err(ProcessError::Interrupted));
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                break Some(Ok(Ended::TimedOut));
            }
            std::thread::sleep(POLL);
        };
        let status = self.reap();
        // A child that ended because the interrupt reached it first ended
        // because of the interrupt, whatever its status says.
        if ended.is_none() && self.role == Role::Work && interrupted() {
            return Err(ProcessError::Interrupted);
        }
        match ended {
            Some(result) => result,
            None => status
                .map(Ended::Exited)
                .map_err(|source| ProcessError::Wait {
                    program: self.program.clone(),
                    source,
                }),
        }
    }

    /// Whether the leader has exited, without reaping it (its id stays
    /// taken, so the group can still be killed safely).
    fn has_exited(&self) -> std::io::Result<bool> {
        // SAFETY: waitid with WNOWAIT only reads the child's state into
        // `info`, which is zeroed and owned here.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let result = unsafe {
            libc::waitid(
                libc::P_PID,
                self.child.id(),
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if result != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: si_pid is valid for a waitid result.
        Ok(unsafe { info.si_pid() } != 0)
    }

    /// Kills the group (whatever of it is left), reaps the leader and
    /// forgets the group.
    fn reap(&mut self) -> std::io::Result<ExitStatus> {
        kill_group(self.group(), libc::SIGKILL);
        let status = self.child.wait();
        self.reaped = true;
        let mut groups = GROUPS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        groups.remove(&self.group());
        status
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.reap();
        }
    }
}

/// Runs `command` to completion with its output captured, like
/// [`Command::output`], but in a group of its own, for at most `timeout`,
/// with at most `limit` bytes of each stream kept (more is an error).
pub fn output(
    mut command: Command,
    program: &Path,
    timeout: Duration,
    limit: usize,
    role: Role,
) -> Result<Output, ProcessError> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Supervised::spawn(&mut command, program, role)?;
    let stdout = child
        .child_mut()
        .stdout
        .take()
        .map(|pipe| drain(pipe, limit));
    let stderr = child
        .child_mut()
        .stderr
        .take()
        .map(|pipe| drain(pipe, limit));
    let status = match child.wait(Some(timeout))? {
        Ended::Exited(status) => status,
        Ended::TimedOut => {
            return Err(ProcessError::TimedOut {
                program: program.to_path_buf(),
                seconds: timeout.as_secs(),
            })
        }
    };
    let collect = |stream: Option<mpsc::Receiver<(Vec<u8>, bool)>>| {
        // The group is dead, so the pipe is closed unless a descendant left
        // the group; do not wait for such a one for long.
        let (bytes, whole) = stream
            .and_then(|stream| stream.recv_timeout(Duration::from_secs(5)).ok())
            .unwrap_or_default();
        if whole {
            Ok(bytes)
        } else {
            Err(ProcessError::OutputTooLarge {
                program: program.to_path_buf(),
                limit,
            })
        }
    };
    Ok(Output {
        status,
        stdout: collect(stdout)?,
        stderr: collect(stderr)?,
    })
}

/// Reads a pipe to its end on a thread of its own (so the child never
/// blocks on a full pipe), keeping at most `limit` bytes.
fn drain(mut pipe: impl Read + Send + 'static, limit: usize) -> mpsc::Receiver<(Vec<u8>, bool)> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut whole = true;
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    if kept.len() + n > limit {
                        whole = false;
                    } else {
                        kept.extend_from_slice(&buffer[..n]);
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = sender.send((kept, whole));
    });
    receiver
}

/// `Output`'s stderr, trimmed, for an error message (at most 4 KiB).
pub fn stderr_text(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let text = text.trim();
    let mut cut = text.len().min(4096);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text[..cut].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command.args(["-c", script]);
        command
    }

    fn sh(script: &str, timeout: Duration, limit: usize) -> Result<Output, ProcessError> {
        output(
            shell(script),
            Path::new("/bin/sh"),
            timeout,
            limit,
            Role::Work,
        )
    }

    fn read_pid(path: &Path) -> i32 {
        std::fs::read_to_string(path)
            .expect("pid")
            .trim()
            .parse()
            .expect("number")
    }

    fn alive(pid: i32) -> bool {
        // Zombies are dead for this purpose.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z')
            })
            .unwrap_or(false)
    }

    #[test]
    fn captures_output_and_status() {
        let output = sh(
            "echo out; echo err >&2; exit 3",
            Duration::from_secs(10),
            1024,
        )
        .expect("runs");
        assert_eq!(output.status.code(), Some(3));
        assert_eq!(output.stdout, b"out\n");
        assert_eq!(stderr_text(&output), "err");
    }

    /// A wrapper that hangs is killed after its time, and so is the
    /// grandchild it started (which a kill of the wrapper alone would leave).
    #[test]
    fn a_timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("grandchild");
        let script = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
        let started = Instant::now();
        let error = sh(&script, Duration::from_millis(300), 1024).unwrap_err();
        assert!(matches!(error, ProcessError::TimedOut { .. }), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let grandchild = read_pid(&pid_file);
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(grandchild) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(grandchild), "the grandchild {grandchild} survived");
    }

    /// A child that exits normally leaves no grandchild behind either.
    #[test]
    fn a_finished_child_leaves_no_grandchild() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("grandchild");
        let script = format!("sleep 300 & echo $! > {}", pid_file.display());
        let output = sh(&script, Duration::from_secs(10), 1024).expect("runs");
        assert!(output.status.success());
        let grandchild = read_pid(&pid_file);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!alive(grandchild), "the grandchild {grandchild} survived");
    }

    #[test]
    fn too_much_output_is_an_error() {
        let error = sh("head -c 100000 /dev/zero", Duration::from_secs(10), 1000).unwrap_err();
        assert!(
            matches!(error, ProcessError::OutputTooLarge { .. }),
            "{error}"
        );
    }

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
}
