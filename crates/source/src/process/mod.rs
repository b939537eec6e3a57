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

mod guard;
mod streaming;

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use guard::Guard;
pub use streaming::Streaming;

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

    pub(crate) fn command(&self) -> std::process::Command {
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

    pub(crate) fn spawn(&self, mut command: std::process::Command) -> Result<Child, ProcessError> {
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
pub(crate) struct Tail {
    pub(crate) bytes: VecDeque<u8>,
}

impl Tail {
    pub(crate) fn push(&mut self, chunk: &[u8]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

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
