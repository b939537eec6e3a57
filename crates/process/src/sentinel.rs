//! The sentinel: a process of its own that kills what `regress` leaves
//! when `regress` itself dies, even by SIGKILL.
//!
//! Process groups, `PR_SET_PDEATHSIG` and the subreaper ([`crate::Supervised`],
//! [`crate::kill_adopted`]) act from inside `regress`; once `regress` is
//! killed outright nothing in it can act, and two kinds of descendant go
//! on running: one that left its group (a daemon a Valgrind wrapper starts
//! with `setsid`) and one whose own parent is still alive (a wrapper's
//! children, which `PR_SET_PDEATHSIG` of the direct child does not reach).
//!
//! [`Sentinel::start`], called by `regress` before any thread or child
//! exists:
//!
//! * gives the run a token, `<pid>-<nanoseconds>`, and appends it to
//!   `REGRESS_RUN` in `regress`'s own environment (a `:`-separated list: a
//!   nested `regress` keeps its parent's token and adds its own), so every
//!   descendant that keeps its environment carries it;
//! * opens a *mark*, one end of a pipe of its own, as a file descriptor
//!   that is inherited (not close-on-exec, at 100 or above so that it never
//!   takes the low numbers a program's own files get). The measured
//!   children get a cleared, fixed environment (the environment is part
//!   of the measured program's initial stack, so the token must not reach
//!   them), but they and everything they start inherit the mark;
//! * starts the sentinel (`regress` again, with a hidden first argument),
//!   in a session of its own (the terminal's Ctrl-C does not reach it),
//!   ignoring SIGINT, SIGTERM and SIGHUP, with its working folder at `/`.
//!   Its standard input is the read end of a pipe whose write end only
//!   `regress` holds (close-on-exec). Through it `regress` reports the
//!   process group of every child it starts and reaps ([`crate::Supervised`]).
//!
//! When that pipe reaches its end (`regress` exited, or was killed), the
//! sentinel kills (SIGKILL) every process that carries the run's token in
//! its `REGRESS_RUN` (an exact entry: another run's token, even one that
//! starts with this one, never matches) or holds the mark, and every group
//! `regress` reported as live; it looks again until a round finds nothing
//! (at most 50 rounds, 10 ms apart), then exits. A process is signalled
//! through a pidfd opened before it is checked, so a process id that was
//! reused between the look and the kill is never hit, and only if it
//! started no earlier than `regress` (one that did cannot descend from it,
//! whatever it carries). The sentinel refuses to run unless its parent is
//! the `regress` it was told of and the mark it inherited is an anonymous
//! pipe. On a normal end
//! [`Sentinel::finish`] lets it do the same while `regress` waits for it;
//! then it usually finds nothing.
//!
//! What is guaranteed: after `regress` ends, however it ends, a
//! descendant is killed within the sentinel's rounds if it still carries
//! the token in its environment, or still holds the mark, or is still in
//! a group `regress` started. What is not: a descendant that clears its
//! environment (or drops `REGRESS_RUN`), closes its inherited descriptors
//! (as a careful daemon does) and leaves its group escapes; so does
//! anything started after the last round, and anything if the sentinel
//! itself is killed (SIGKILL) or could not be started (then `regress`
//! warns). A reported group is killed by its id after its leader died;
//! in the few milliseconds between, that id could in principle have been
//! taken by a new group (a process id reused across the whole id space).
//! Other users' processes cannot be read and are never touched.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The variable that carries the tokens of the runs a process descends
/// from.
pub const RUN_VARIABLE: &str = "REGRESS_RUN";

/// The hidden first argument that makes `regress` the sentinel.
pub const SENTINEL_ARGUMENT: &str = "__regress-sentinel";

/// The lowest descriptor number the mark takes.
const MARK_FLOOR: RawFd = 100;

/// How many times the sentinel looks for survivors, and how long it waits
/// between two looks.
const ROUNDS: usize = 50;
const ROUND_PAUSE: Duration = Duration::from_millis(10);

/// The write end of the sentinel's pipe, for [`report_group`].
static PIPE: Mutex<Option<File>> = Mutex::new(None);

/// Why the sentinel could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SentinelError {
    #[error("cannot {action} for the sentinel: {source}; a process a killed run leaves may keep running")]
    Setup {
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot start the sentinel ({program}): {source}; a process a killed run leaves may keep running")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },

    #[error("the sentinel was started with arguments it does not know: {0}")]
    Arguments(String),
}

/// The running sentinel, seen from `regress`.
#[derive(Debug)]
pub struct Sentinel {
    child: Child,
    token: String,
}

impl Sentinel {
    /// Marks this process (token and mark) and starts the sentinel by
    /// running `program` with `arguments`, which must lead to
    /// [`serve_sentinel`] being called with the arguments this adds.
    ///
    /// Call it before any thread exists: it changes this process's
    /// environment.
    pub fn start(program: &Path, arguments: &[&OsStr]) -> Result<Sentinel, SentinelError> {
        let token = new_token();
        let runs = match std::env::var_os(RUN_VARIABLE) {
            Some(list) if !list.is_empty() => {
                let mut list = list;
                list.push(":");
                list.push(&token);
                list
            }
            _ => OsString::from(&token),
        };
        std::env::set_var(RUN_VARIABLE, runs);
        let mark = open_mark()?;
        let (read, write) = pipe()?;
        let mut command = Command::new(program);
        command
            .args(arguments)
            .arg(std::process::id().to_string())
            .arg(mark.to_string())
            .arg(&token)
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of
        // the parent; it runs in the child between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|source| SentinelError::Spawn {
            program: program.display().to_string(),
            source,
        })?;
        *pipe_slot() = Some(write);
        Ok(Sentinel { child, token })
    }

    /// This run's token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The sentinel's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The end of a run that was not killed: tells the sentinel, closes
    /// the pipe, and waits while it kills whatever carries the run's marks
    /// (this process excepted).
    pub fn finish(mut self) {
        if let Some(mut pipe) = pipe_slot().take() {
            let _ = pipe.write_all(b"end\n");
        }
        let _ = self.child.wait();
    }
}

/// Tells the sentinel, if one runs, that the process group `group` is
/// live (`true`) or was reaped (`false`).
pub(crate) fn report_group(group: i32, live: bool) {
    if let Some(pipe) = pipe_slot().as_mut() {
        let sign = if live { '+' } else { '-' };
        // A sentinel that is gone cannot be helped; the run goes on.
        let _ = pipe.write_all(format!("{sign}{group}\n").as_bytes());
    }
}

fn pipe_slot() -> std::sync::MutexGuard<'static, Option<File>> {
    PIPE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn new_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// The read end of a new pipe, inherited by children, at [`MARK_FLOOR`]
/// or above; its write end is closed.
fn open_mark() -> Result<RawFd, SentinelError> {
    let (read, _write) = pipe()?;
    // SAFETY: F_DUPFD only creates a new descriptor; `read` stays valid
    // and is closed when dropped.
    let mark = unsafe { libc::fcntl(read.as_raw_fd(), libc::F_DUPFD, MARK_FLOOR) };
    if mark < 0 {
        return Err(SentinelError::Setup {
            action: "open the mark",
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(mark)
}

/// A close-on-exec pipe: (read, write).
fn pipe() -> Result<(OwnedFd, File), SentinelError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(SentinelError::Setup {
            action: "create a pipe",
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: both descriptors were just created and are owned here only.
    unsafe { Ok((OwnedFd::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))) }
}

/// What the sentinel is told to watch, from its arguments.
#[derive(Debug)]
struct Watch {
    regress: i32,
    /// When `regress` started (clock ticks after boot): a process that
    /// started before it cannot descend from it, whatever it carries.
    started: u64,
    mark: Option<(u64, u64)>,
    token: String,
}

/// The sentinel's whole life: `arguments` are those [`Sentinel::start`]
/// added (`<regress pid> <mark fd> <token>`). Returns how many processes
/// it killed after `regress` ended without saying goodbye, for the exit
/// code's caller to ignore.
pub fn serve_sentinel(arguments: &[OsString]) -> Result<usize, SentinelError> {
    let text: Vec<&str> = arguments.iter().filter_map(|a| a.to_str()).collect();
    let [regress, mark, token] = text[..] else {
        return Err(SentinelError::Arguments(format!("{arguments:?}")));
    };
    let (Ok(regress), Ok(mark)) = (regress.parse::<i32>(), mark.parse::<RawFd>()) else {
        return Err(SentinelError::Arguments(format!("{arguments:?}")));
    };
    if token.is_empty() || token.contains(':') || mark < MARK_FLOOR {
        return Err(SentinelError::Arguments(format!("{arguments:?}")));
    }
    // Only `regress`'s own sentinel may run: its parent is the `regress`
    // it names, and the mark is an anonymous pipe. A descriptor given by
    // mistake (a shared file such as /dev/null) would name every process
    // that has it open.
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != regress {
        return Err(SentinelError::Arguments(format!(
            "{arguments:?}: pid {regress} is not this process's parent"
        )));
    }
    let is_pipe = std::fs::read_link(format!("/proc/self/fd/{mark}"))
        .is_ok_and(|target| target.to_string_lossy().starts_with("pipe:["));
    let started = start_time(regress);
    let (true, Some(started)) = (is_pipe, started) else {
        return Err(SentinelError::Arguments(format!(
            "{arguments:?}: descriptor {mark} is not an anonymous pipe, or pid {regress} cannot be read"
        )));
    };
    // SAFETY: setting a signal's disposition to "ignore" has no other
    // effect.
    unsafe {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    // Its working folder must not keep the caller's folder busy.
    let _ = std::env::set_current_dir("/");
    let watch = Watch {
        regress,
        started,
        mark: identity_of_fd(mark),
        token: token.to_owned(),
    };
    // SAFETY: the mark was inherited for this process to read its identity;
    // nothing else here uses it.
    unsafe {
        libc::close(mark);
    }
    let mut groups = std::collections::BTreeSet::new();
    let mut said_goodbye = false;
    let stdin = std::io::stdin();
    for line in BufReader::new(stdin.lock()).lines() {
        let Ok(line) = line else { break };
        if line == "end" {
            said_goodbye = true;
        } else if let Some(group) = line.strip_prefix('+').and_then(|g| g.parse::<i32>().ok()) {
            groups.insert(group);
        } else if let Some(group) = line.strip_prefix('-').and_then(|g| g.parse::<i32>().ok()) {
            groups.remove(&group);
        }
    }
    let killed = sweep(&watch, &groups);
    if killed > 0 && !said_goodbye {
        eprintln!(
            "regress's sentinel: regress (pid {regress}) ended without finishing; killed {killed} \
             process(es) it had started"
        );
    }
    Ok(killed)
}

/// Kills the reported groups and every process carrying the run's marks,
/// round after round, until a round finds nothing.
fn sweep(watch: &Watch, groups: &std::collections::BTreeSet<i32>) -> usize {
    let me = std::process::id() as i32;
    let mut killed = 0;
    for round in 0..ROUNDS {
        for &group in groups {
            if group > 1 {
                // SAFETY: killpg only sends a signal.
                unsafe {
                    libc::killpg(group, libc::SIGKILL);
                }
            }
        }
        // `regress` itself carries the marks; it is spared while it is
        // alive and waiting for this process ([`Sentinel::finish`]).
        // SAFETY: getppid has no preconditions.
        let spared = if unsafe { libc::getppid() } == watch.regress {
            watch.regress
        } else {
            0
        };
        let found: Vec<i32> = crate::procfs::processes()
            .into_iter()
            .filter(|&pid| pid != me && pid != spared && carries(pid, watch))
            .collect();
        if found.is_empty() && (round > 0 || groups.is_empty()) {
            break;
        }
        for pid in found {
            if kill_checked(pid, watch) {
                killed += 1;
            }
        }
        std::thread::sleep(ROUND_PAUSE);
    }
    killed
}

/// Opens a pidfd for `pid`, checks through `/proc` that it still carries
/// the marks, and kills it through the pidfd: a reused id is never hit.
fn kill_checked(pid: i32, watch: &Watch) -> bool {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
            // Before Linux 5.3: the check just made is the best there is.
            // SAFETY: kill only sends a signal.
            return unsafe { libc::kill(pid, libc::SIGKILL) } == 0;
        }
        return false;
    }
    // SAFETY: the descriptor was just returned to this process.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    if !carries(pid, watch) {
        return false;
    }
    // SAFETY: pidfd_send_signal with a pidfd we own, no siginfo, no flags.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        ) == 0
    }
}

/// Whether `pid` started no earlier than `regress` and carries the run's
/// token or holds its mark.
fn carries(pid: i32, watch: &Watch) -> bool {
    if pid <= 1 || start_time(pid).is_none_or(|started| started < watch.started) {
        return false;
    }
    let proc_dir = Path::new("/proc").join(pid.to_string());
    if let Ok(environ) = std::fs::read(proc_dir.join("environ")) {
        if has_token(&environ, &watch.token) {
            return true;
        }
    }
    let Some(mark) = watch.mark else {
        return false;
    };
    let Ok(fds) = std::fs::read_dir(proc_dir.join("fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::metadata(fd.path()).is_ok_and(|meta| {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino()) == mark
        })
    })
}

/// Whether an environment block (`NAME=value\0...`) has `token` as one
/// whole entry of its `REGRESS_RUN` list.
fn has_token(environ: &[u8], token: &str) -> bool {
    let prefix = format!("{RUN_VARIABLE}=");
    environ
        .split(|&byte| byte == 0)
        .filter_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .any(|list| {
            list.split(|&byte| byte == b':')
                .any(|entry| entry == token.as_bytes())
        })
}

/// When `pid` started, in clock ticks after boot.
fn start_time(pid: i32) -> Option<u64> {
    crate::procfs::stat_field(pid, 19)
}

/// The (device, inode) of an open descriptor of this process.
fn identity_of_fd(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: fstat writes into the stat buffer we pass.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        return None;
    }
    Some((stat.st_dev, stat.st_ino))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_matches_only_as_a_whole_entry() {
        let token = "41-1700";
        let env = |value: &str| format!("PATH=/bin\0{RUN_VARIABLE}={value}\0HOME=/\0").into_bytes();
        assert!(has_token(&env("41-1700"), token));
        assert!(has_token(&env("7-1:41-1700"), token));
        assert!(has_token(&env("41-1700:7-1"), token));
        assert!(!has_token(&env("41-17000"), token));
        assert!(!has_token(&env("141-1700"), token));
        assert!(!has_token(&env("41-170"), token));
        assert!(!has_token(&env(""), token));
        // The token elsewhere than in the variable is not a mark.
        assert!(!has_token(b"OTHER=41-1700\0", token));
        assert!(!has_token(
            format!("X{RUN_VARIABLE}=41-1700\0").as_bytes(),
            token
        ));
    }
}
