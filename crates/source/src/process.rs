//! Running the external programs this crate needs (git, cargo, the s2n-tls
//! binding generator) with a time limit.
//!
//! Why a module of its own: a git command on a huge repository, a cargo
//! build waiting forever on a lock, or a generator stuck in libclang must
//! never hang `regress`. Every child therefore
//!
//! * gets its arguments as a vector, never through a shell;
//! * runs in a process group of its own, so that a timeout (or the caller's
//!   cancellation) kills it *and* everything it started (cargo's rustc and
//!   cc children), and nothing else;
//! * has its group killed after it exits too, so a grandchild it left
//!   behind cannot hold our pipes open;
//! * is killed when its guard is dropped, on any error path.
//!
//! The leader is never reaped before its group has been killed (it is
//! observed with `waitid(WNOWAIT)`), so the group id cannot have been reused
//! by an unrelated process when the kill is sent.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of a child's diagnostic output is kept in memory for an error
/// message (the whole of it goes to the log file when there is one).
const TAIL_BYTES: usize = 64 * 1024;

/// The most a child may print on standard output when it is captured
/// (cargo's JSON messages for a full build are a few MiB).
const MAX_STDOUT_BYTES: usize = 256 * 1024 * 1024;

/// How long a child may run, and how the caller can stop it early.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Duration,
    /// Polled while the child runs; `true` kills it (phase B passes its
    /// Ctrl-C flag here).
    pub cancelled: Option<fn() -> bool>,
}

impl Limits {
    pub fn new(timeout: Duration) -> Limits {
        Limits {
            timeout,
            cancelled: None,
        }
    }
}

/// Why a child did not run to completion.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start `{program}`: {source}; is it installed and on PATH?")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "`{command}` did not finish within {seconds} s and was killed (with everything it \
         started).\n  If the machine is just slow, raise the limit (regress_source::Timeouts)."
    )]
    TimedOut { command: String, seconds: u64 },

    #[error("`{command}` was stopped because the run was cancelled")]
    Cancelled { command: String },

    #[error("`{command}` printed more than {limit} bytes on standard output; stopped")]
    OutputTooLarge { command: String, limit: usize },

    #[error("cannot {action} for `{command}`: {source}")]
    Io {
        action: &'static str,
        command: String,
        #[source]
        source: std::io::Error,
    },
}

/// A program and its arguments, working folder and environment changes.
#[derive(Debug, Clone)]
pub struct Program {
    program: OsString,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    set: Vec<(OsString, OsString)>,
    remove: Vec<OsString>,
}

impl Program {
    pub fn new(program: impl Into<OsString>) -> Program {
        Program {
            program: program.into(),
            args: Vec::new(),
            dir: None,
            set: Vec::new(),
            remove: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Program {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Program
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Program {
        self.dir = Some(dir.into());
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Program {
        self.set.push((key.into(), value.into()));
        self
    }

    pub fn env_remove(mut self, key: impl Into<OsString>) -> Program {
        self.remove.push(key.into());
        self
    }

    /// The command line, for messages (not for a shell).
    pub fn display(&self) -> String {
        let mut text = Path::new(&self.program)
            .file_name()
            .unwrap_or(&self.program)
            .to_string_lossy()
            .into_owned();
        for arg in &self.args {
            text.push(' ');
            text.push_str(&arg.to_string_lossy());
        }
        if let Some(dir) = &self.dir {
            text.push_str(&format!(" (in {})", dir.display()));
        }
        text
    }

    fn command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(&self.program);
        command.args(&self.args).stdin(Stdio::null());
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        for key in &self.remove {
            command.env_remove(key);
        }
        for (key, value) in &self.set {
            command.env(key, value);
        }
        // A group of its own: a timeout kills the child and its children.
        command.process_group(0);
        command
    }

    fn spawn(&self, mut command: std::process::Command) -> Result<Child, ProcessError> {
        command.spawn().map_err(|source| ProcessError::Spawn {
            program: self.program.to_string_lossy().into_owned(),
            source,
        })
    }
}

/// Where a child's output goes besides the in-memory tail.
#[derive(Debug, Default, Clone, Copy)]
pub struct RunOptions<'a> {
    /// Keep standard output apart, whole (else it joins the tail and log).
    pub capture_stdout: bool,
    /// Append everything the child prints to this file.
    pub log: Option<&'a Path>,
    /// Copy the child's diagnostic output to our standard error as it comes.
    pub echo: bool,
}

/// A child that ran to completion (successfully or not).
#[derive(Debug)]
pub struct Finished {
    pub command: String,
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    tail: Vec<u8>,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// The last `lines` lines of the diagnostic output, lossily decoded.
    pub fn tail(&self, lines: usize) -> String {
        last_lines(&String::from_utf8_lossy(&self.tail), lines)
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim().to_owned()
    }
}

/// The last `count` lines of `text`, trimmed.
pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// Runs `program` to completion within `limits`.
pub fn run(
    program: &Program,
    limits: &Limits,
    options: RunOptions<'_>,
) -> Result<Finished, ProcessError> {
    let display = program.display();
    let io_error = |action: &'static str| {
        let command = display.clone();
        move |source| ProcessError::Io {
            action,
            command,
            source,
        }
    };
    let log = match options.log {
        Some(path) => Some(Arc::new(Mutex::new(
            File::options()
                .create(true)
                .append(true)
                .open(path)
                .map_err(io_error("open the log file"))?,
        ))),
        None => None,
    };
    let mut command = program.command();
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = Guard::new(program.spawn(command)?, limits, display.clone());
    let tail = Arc::new(Mutex::new(Tail::default()));
    let stdout = child.child.stdout.take().expect("piped stdout");
    let stderr = child.child.stderr.take().expect("piped stderr");
    let out_reader = if options.capture_stdout {
        Reader::Capture(std::thread::spawn(move || capture(stdout)))
    } else {
        Reader::Forward(forward(stdout, tail.clone(), log.clone(), false))
    };
    let err_reader = forward(stderr, tail.clone(), log, options.echo);
    let status = child.finish()?;
    let captured = out_reader.join().map_err(io_error("read the output"))?;
    err_reader
        .join()
        .unwrap_or(Ok(()))
        .map_err(io_error("read the output"))?;
    let stdout = match captured {
        Some(bytes) if bytes.len() > MAX_STDOUT_BYTES => {
            return Err(ProcessError::OutputTooLarge {
                command: display,
                limit: MAX_STDOUT_BYTES,
            })
        }
        Some(bytes) => bytes,
        None => Vec::new(),
    };
    let tail = std::mem::take(&mut tail.lock().expect("tail lock").bytes);
    Ok(Finished {
        command: display,
        status,
        stdout,
        tail: tail.into(),
    })
}

enum Reader {
    Capture(JoinHandle<std::io::Result<Vec<u8>>>),
    Forward(JoinHandle<std::io::Result<()>>),
}

impl Reader {
    fn join(self) -> std::io::Result<Option<Vec<u8>>> {
        match self {
            Reader::Capture(handle) => handle.join().unwrap_or_else(|_| Ok(Vec::new())).map(Some),
            Reader::Forward(handle) => handle.join().unwrap_or(Ok(())).map(|()| None),
        }
    }
}

/// Reads a stream whole, stopping (and dropping the rest) past the limit so
/// that a runaway child cannot exhaust memory.
fn capture(mut stream: impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    (&mut stream)
        .take(MAX_STDOUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    // Drain what is left so the child is not blocked on a full pipe.
    std::io::copy(&mut stream, &mut std::io::sink())?;
    Ok(bytes)
}

#[derive(Default)]
struct Tail {
    bytes: VecDeque<u8>,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(TAIL_BYTES);
        self.bytes.drain(..excess);
    }
}

fn forward(
    mut stream: impl Read + Send + 'static,
    tail: Arc<Mutex<Tail>>,
    log: Option<Arc<Mutex<File>>>,
    echo: bool,
) -> JoinHandle<std::io::Result<()>> {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let read = match stream.read(&mut buffer) {
                Ok(0) => return Ok(()),
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            let chunk = &buffer[..read];
            tail.lock().expect("tail lock").push(chunk);
            if let Some(log) = &log {
                log.lock().expect("log lock").write_all(chunk)?;
            }
            if echo {
                let _ = std::io::stderr().write_all(chunk);
            }
        }
    })
}

/// A child whose standard input and output the caller drives (for
/// `git cat-file --batch`), under the same time limit.
pub struct Streaming {
    guard: Guard,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    stderr: JoinHandle<std::io::Result<Vec<u8>>>,
}

impl Streaming {
    pub fn spawn(program: &Program, limits: &Limits) -> Result<Streaming, ProcessError> {
        let mut command = program.command();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut guard = Guard::new(program.spawn(command)?, limits, program.display());
        let stdin = guard.child.stdin.take();
        let stdout = guard.child.stdout.take().expect("piped stdout");
        let stderr = guard.child.stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut tail = Tail::default();
            let mut stderr = stderr;
            let mut buffer = [0u8; 4096];
            loop {
                match stderr.read(&mut buffer) {
                    Ok(0) => return Ok(tail.bytes.into()),
                    Ok(read) => tail.push(&buffer[..read]),
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => return Err(error),
                }
            }
        });
        Ok(Streaming {
            guard,
            stdin,
            stdout,
            stderr,
        })
    }

    /// Whether the time limit or a cancellation has already killed the
    /// child (an I/O error on its pipes is then the symptom, not the cause).
    pub fn stop_reason(&self) -> Option<ProcessError> {
        self.guard.stop_reason()
    }

    /// Waits for the child; its status and what it said on standard error.
    pub fn finish(mut self) -> Result<(ExitStatus, String), ProcessError> {
        drop(self.stdin.take());
        let status = self.guard.finish()?;
        let stderr = self
            .stderr
            .join()
            .unwrap_or(Ok(Vec::new()))
            .unwrap_or_default();
        Ok((status, String::from_utf8_lossy(&stderr).trim().to_owned()))
    }
}

const NOT_FIRED: u8 = 0;
const FIRED_TIMEOUT: u8 = 1;
const FIRED_CANCEL: u8 = 2;

/// Owns a running child: a watchdog thread kills its group at the deadline
/// or on cancellation, and dropping the guard kills it too.
struct Guard {
    child: Child,
    command: String,
    timeout: Duration,
    done: Arc<(Mutex<bool>, Condvar)>,
    fired: Arc<AtomicU8>,
    watchdog: Option<JoinHandle<()>>,
    reaped: bool,
}

impl Guard {
    fn new(child: Child, limits: &Limits, command: String) -> Guard {
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

    fn stop_reason(&self) -> Option<ProcessError> {
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

    /// Waits for the leader to exit, stops the watchdog, kills whatever is
    /// left of the group, then reaps the leader.
    fn finish(&mut self) -> Result<ExitStatus, ProcessError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_status() {
        let program = Program::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]);
        let finished = run(
            &program,
            &Limits::new(Duration::from_secs(20)),
            RunOptions {
                capture_stdout: true,
                ..RunOptions::default()
            },
        )
        .expect("runs");
        assert_eq!(finished.status.code(), Some(3));
        assert_eq!(finished.stdout_text(), "out");
        assert_eq!(finished.tail(5), "err");
    }

    #[test]
    fn a_timeout_kills_the_child_and_its_children() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("grandchild-ran");
        // The grandchild would write the marker after 2 s unless killed.
        let script = format!("(sleep 2; touch '{}') & sleep 30", marker.display());
        let started = Instant::now();
        let error = run(
            &Program::new("sh").args(["-c", &script]),
            &Limits::new(Duration::from_millis(300)),
            RunOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(error, ProcessError::TimedOut { .. }), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "the grandchild survived the timeout");
    }

    #[test]
    fn cancellation_stops_the_child() {
        fn always() -> bool {
            true
        }
        let error = run(
            &Program::new("sleep").arg("30"),
            &Limits {
                timeout: Duration::from_secs(60),
                cancelled: Some(always),
            },
            RunOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(error, ProcessError::Cancelled { .. }), "{error}");
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let error = run(
            &Program::new("/nonexistent/regress-no-such-program"),
            &Limits::new(Duration::from_secs(5)),
            RunOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(error, ProcessError::Spawn { .. }), "{error}");
    }

    #[test]
    fn the_log_gets_everything_and_the_tail_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("log.txt");
        let finished = run(
            &Program::new("sh").args(["-c", "for i in 1 2 3 4 5; do echo line$i; done"]),
            &Limits::new(Duration::from_secs(20)),
            RunOptions {
                log: Some(&log),
                ..RunOptions::default()
            },
        )
        .expect("runs");
        assert_eq!(finished.tail(2), "line4\nline5");
        let logged = std::fs::read_to_string(&log).expect("log");
        assert_eq!(logged.lines().count(), 5);
    }
}
