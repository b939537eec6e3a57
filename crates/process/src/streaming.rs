//! A child whose pipes the caller drives itself.

use std::io::Read;
use std::process::{ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::thread::JoinHandle;

use crate::run::Tail;
use crate::{Limits, ProcessError, Program, Supervised};

/// A child whose standard input and output the caller drives (for
/// `git cat-file --batch`), under its limits from the start: the
/// watchdog kills it even while the caller is blocked on a pipe.
pub struct Streaming {
    child: Supervised,
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
        let mut child = Supervised::spawn_labelled(&mut command, program.label(), limits.role)?;
        child.watch(limits);
        let stdin = child.child_mut().stdin.take();
        let stdout = child.child_mut().stdout.take().expect("piped stdout");
        let mut stderr = child.child_mut().stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut tail = Tail::default();
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
            child,
            stdin,
            stdout,
            stderr,
        })
    }

    /// Whether the time limit, a cancellation or an interrupt has already
    /// killed the child (an I/O error on its pipes is then the symptom,
    /// not the cause).
    pub fn stop_reason(&self) -> Option<ProcessError> {
        self.child.stop_reason()
    }

    /// Kills the child (and its group) now: the caller stopped reading, so
    /// the child may be blocked writing, and whoever feeds its input blocked
    /// behind it. `finish` then reports how it ended.
    pub fn abort(&mut self) {
        self.child.kill_now();
    }

    /// Waits for the child; its status and what it said on standard error.
    pub fn finish(mut self) -> Result<(ExitStatus, String), ProcessError> {
        drop(self.stdin.take());
        let status = self.child.finish()?;
        let stderr = self
            .stderr
            .join()
            .unwrap_or(Ok(Vec::new()))
            .unwrap_or_default();
        Ok((status, String::from_utf8_lossy(&stderr).trim().to_owned()))
    }
}
