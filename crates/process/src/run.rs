//! Running a child to completion and collecting what it printed.
//!
//! The pipes are read on threads of their own, so a child never blocks on
//! a full pipe, and each stream is bounded, so a runaway child cannot
//! exhaust memory. Once the child's group is dead the pipes are closed,
//! unless a descendant left the group; such a one is not waited for long.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{Ended, Limits, ProcessError, Program, Role, Supervised};

/// How much of a child's diagnostic output [`run`] keeps in memory for an
/// error message (the whole of it goes to the log file when there is one).
const TAIL_BYTES: usize = 64 * 1024;

/// The most a child may print on standard output when [`run`] captures it
/// (cargo's JSON messages for a full build are a few MiB).
const MAX_STDOUT_BYTES: usize = 256 * 1024 * 1024;

/// How long a stream is waited for once the child's group is dead.
const STRAGGLER: Duration = Duration::from_secs(5);

/// Where [`run`] sends a child's output besides the in-memory tail.
#[derive(Debug, Default, Clone, Copy)]
pub struct RunOptions<'a> {
    /// Keep standard output apart, whole (else it joins the tail and log).
    pub capture_stdout: bool,
    /// Append everything the child prints to this file.
    pub log: Option<&'a Path>,
    /// Copy the child's diagnostic output to our standard error as it comes.
    pub echo: bool,
}

/// A child [`run`] ran to completion (successfully or not).
#[derive(Debug)]
pub struct Finished {
    /// The command line, for messages.
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

/// Runs `program` to completion within `limits`: standard output captured
/// or forwarded, diagnostic output kept as a tail (and logged, echoed).
pub fn run(
    program: &Program,
    limits: &Limits,
    options: RunOptions<'_>,
) -> Result<Finished, ProcessError> {
    let display = program.display();
    let label = program.label();
    let io_error = |action: &'static str| {
        let command = label.clone();
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
                .map_err(io_error("open the log file for"))?,
        ))),
        None => None,
    };
    let mut command = program.command();
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = Supervised::spawn_labelled(&mut command, label.clone(), limits.role)?;
    child.watch(limits);
    let tail = Arc::new(Mutex::new(Tail::default()));
    let stdout = child.child_mut().stdout.take().expect("piped stdout");
    let stderr = child.child_mut().stderr.take().expect("piped stderr");
    let (captured, forwarded) = if options.capture_stdout {
        (Some(drain(stdout, MAX_STDOUT_BYTES)), None)
    } else {
        // Not captured: standard output joins the tail (and the log).
        (
            None,
            Some(forward(stdout, tail.clone(), log.clone(), false)),
        )
    };
    let diagnostics = forward(stderr, tail.clone(), log, options.echo);
    let status = child.finish()?;
    for stream in forwarded.into_iter().chain([diagnostics]) {
        if let Ok(Err(error)) = stream.recv_timeout(STRAGGLER) {
            return Err(io_error("read the output of")(error));
        }
    }
    let stdout = match captured {
        Some(stream) => match collected(Some(stream)) {
            (bytes, true) => bytes,
            (_, false) => {
                return Err(ProcessError::OutputTooLarge {
                    command: label,
                    limit: MAX_STDOUT_BYTES,
                })
            }
        },
        None => Vec::new(),
    };
    let tail = std::mem::take(&mut tail.lock().unwrap_or_else(|p| p.into_inner()).bytes);
    Ok(Finished {
        command: display,
        status,
        stdout,
        tail: tail.into(),
    })
}

/// Runs `command` (which runs `program`, named in errors) to completion
/// with its whole output, like [`Command::output`], but in a group of its
/// own, for at most `timeout`, with at most `limit` bytes of each stream
/// (more is [`ProcessError::OutputTooLarge`]).
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
    let label = child.label().to_owned();
    let status = match child.wait(Some(timeout))? {
        Ended::Exited(status) => status,
        Ended::TimedOut => {
            return Err(ProcessError::TimedOut {
                command: label,
                seconds: timeout.as_secs(),
                remedy: crate::supervised::TIMEOUT_REMEDY,
            })
        }
    };
    let collect = |stream: Option<Receiver<(Vec<u8>, bool)>>| {
        let (bytes, whole) = collected(stream);
        if whole {
            Ok(bytes)
        } else {
            Err(ProcessError::OutputTooLarge {
                command: label.clone(),
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

/// What a drained stream gave, waiting a little for a straggler.
fn collected(stream: Option<Receiver<(Vec<u8>, bool)>>) -> (Vec<u8>, bool) {
    stream
        .and_then(|stream| stream.recv_timeout(STRAGGLER).ok())
        .unwrap_or((Vec::new(), true))
}

/// Reads a pipe to its end on a thread of its own, keeping at most `limit`
/// bytes; `false` beside them when there was more.
fn drain(mut pipe: impl Read + Send + 'static, limit: usize) -> Receiver<(Vec<u8>, bool)> {
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

/// The last [`TAIL_BYTES`] of a stream.
#[derive(Default, Debug)]
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

/// Reads a pipe to its end on a thread of its own into `tail` (and `log`,
/// and our standard error with `echo`); the receiver says when it is done.
pub(crate) fn forward(
    mut stream: impl Read + Send + 'static,
    tail: Arc<Mutex<Tail>>,
    log: Option<Arc<Mutex<File>>>,
    echo: bool,
) -> Receiver<std::io::Result<()>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        let result = loop {
            let read = match stream.read(&mut buffer) {
                Ok(0) => break Ok(()),
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => break Err(error),
            };
            let chunk = &buffer[..read];
            tail.lock().unwrap_or_else(|p| p.into_inner()).push(chunk);
            if let Some(log) = &log {
                if let Err(error) = log
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .write_all(chunk)
                {
                    break Err(error);
                }
            }
            if echo {
                let _ = std::io::stderr().write_all(chunk);
            }
        };
        let _ = sender.send(result);
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
    use std::time::Instant;

    use super::*;
    use crate::test_support::{gone, read_pid, shell};

    fn sh(script: &str, timeout: Duration, limit: usize) -> Result<Output, ProcessError> {
        output(
            shell(script),
            Path::new("/bin/sh"),
            timeout,
            limit,
            Role::Work,
        )
    }

    fn run_sh(
        script: &str,
        limits: Limits,
        options: RunOptions<'_>,
    ) -> Result<Finished, ProcessError> {
        run(&Program::new("sh").args(["-c", script]), &limits, options)
    }

    #[test]
    fn both_ways_capture_output_and_status() {
        let output = sh(
            "echo out; echo err >&2; exit 3",
            Duration::from_secs(10),
            1024,
        )
        .expect("runs");
        assert_eq!(output.status.code(), Some(3));
        assert_eq!(output.stdout, b"out\n");
        assert_eq!(stderr_text(&output), "err");
        let finished = run_sh(
            "echo out; echo err >&2; exit 3",
            Limits::new(Duration::from_secs(20)),
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

    /// A wrapper that hangs is killed after its time, and so is the
    /// grandchild it started (which a kill of the wrapper alone would
    /// leave), whichever way it was run.
    #[test]
    fn a_timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        for way in 0..2 {
            let pid_file = dir.path().join(format!("grandchild-{way}"));
            let script = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
            let started = Instant::now();
            let error = if way == 0 {
                sh(&script, Duration::from_millis(300), 1024).unwrap_err()
            } else {
                run_sh(
                    &script,
                    Limits::new(Duration::from_millis(300)),
                    RunOptions::default(),
                )
                .unwrap_err()
            };
            assert!(matches!(error, ProcessError::TimedOut { .. }), "{error}");
            assert!(
                error.to_string().contains("REGRESS_TIMEOUT_SECS"),
                "{error}"
            );
            assert!(started.elapsed() < Duration::from_secs(10));
            let grandchild = read_pid(&pid_file);
            assert!(gone(grandchild), "the grandchild {grandchild} survived");
        }
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
        assert!(gone(grandchild), "the grandchild {grandchild} survived");
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
    fn a_missing_program_is_a_spawn_error() {
        let error = run(
            &Program::new("/nonexistent/regress-no-such-program"),
            &Limits::new(Duration::from_secs(5)),
            RunOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(error, ProcessError::Spawn { .. }), "{error}");
        assert!(
            error.to_string().contains("regress-no-such-program"),
            "{error}"
        );
    }

    #[test]
    fn the_log_gets_everything_and_the_tail_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("log.txt");
        let finished = run_sh(
            "for i in 1 2 3 4 5; do echo line$i; done",
            Limits::new(Duration::from_secs(20)),
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
