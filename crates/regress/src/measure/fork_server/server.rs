//! One fork server: the measured program under one Valgrind, its pipes
//! and its folder; it forks a child per request, counts them, and hands
//! back each child's profile and log under the names a started child
//! leaves.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use regress_measure::fork_server::{
    frame, ENV_FORK_SERVER_PROTOCOL, HELLO, KEY_FOLDER, KEY_STDERR, KEY_STDOUT,
};

use super::{file_id, ChildFiles, Key, PROFILE_PATTERN};
use crate::harness_name::HarnessName;
use crate::measure::cachegrind::{self, link_binary};
use crate::measure::scratch::ScratchDir;
use crate::measure::valgrind::Valgrind;
use crate::measure::{MeasureError, Result};
use crate::process::{Role, Supervised};

static NEXT_SERVER: AtomicU64 = AtomicU64::new(0);

/// The name a server gives the Valgrind log of each child (`%p`: its
/// process id), beside its profiles ([`PROFILE_PATTERN`]).
const LOG_PATTERN: &str = "valgrind.%p.log";

/// The most children a server forks only to reach the position a
/// subtraction asks for ([`ForkServer::advance`]): a guard against a
/// runaway position (in a run, partners are a few children apart at most).
const MAX_ADVANCE: u64 = 10_000;

/// One measured program under one Valgrind, waiting for requests.
#[derive(Debug)]
pub(super) struct ForkServer {
    pub(super) key: Key,
    // Fields drop in this order: the input closes (the server ends), then
    // the group is killed and reaped, then the folder goes.
    stdin: ChildStdin,
    stdout: ChildStdout,
    process: Supervised,
    pub(super) folder: ScratchDir,
    /// How many children it has forked (each loop of the server's, the
    /// same instructions every time).
    pub(super) forks: u64,
}

impl ForkServer {
    /// Starts a server in a folder of its own under `parent`; `None` when
    /// the program does not say it is one.
    pub(super) fn start(
        key: Key,
        valgrind: &Valgrind,
        program: &Path,
    ) -> Result<Option<ForkServer>> {
        // Every server's folder name has the same length: the program's
        // start reads `/proc/self/maps` (Rust's stack guard, through
        // glibc), whose lines name the program by this folder, and a
        // longer line costs more instructions to scan. A child Cachegrind
        // counts whole counts its server's start, so the two servers of a
        // subtraction must start alike (measured, Valgrind 3.19: with
        // names of growing length, 7 and 16 of 147 subtractions came out
        // 238 instructions low in two of three gate runs; with one length,
        // none in three).
        let folder = ScratchDir::create(
            &key.folder,
            &format!(
                "fork-server.{:010}",
                NEXT_SERVER.fetch_add(1, Ordering::Relaxed)
            ),
        )?;
        let dir = folder.path();
        let link = dir.join("harness");
        link_binary(program, &link)?;
        if file_id(&link)? != key.program {
            // A copy (another file system): not the file the key names.
            return Ok(None);
        }
        let stderr = dir.join("server.stderr.txt");
        // The key's arguments name profiles `out.%p` in this folder.
        let mut command = cachegrind::valgrind_command(valgrind, &key.args, &dir.join(LOG_PATTERN));
        cachegrind::pin(&mut command, dir, key.cpu);
        command
            .env(ENV_FORK_SERVER_PROTOCOL, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(
                std::fs::File::create(&stderr)
                    .map_err(|source| MeasureError::io("create", &stderr, source))?,
            );
        cachegrind::without_address_randomization(&mut command);
        let mut process = Supervised::spawn(&mut command, &valgrind.program, Role::Work)?;
        let pipes = process.child_mut();
        let (Some(stdin), Some(mut stdout)) = (pipes.stdin.take(), pipes.stdout.take()) else {
            return Err(MeasureError::io(
                "talk to",
                &valgrind.program,
                std::io::Error::other("the fork server's pipes were not made"),
            ));
        };
        let mut hello = [0u8; HELLO.len()];
        let deadline = Instant::now() + cachegrind::quick_timeout();
        match read_exact_until(&mut stdout, &mut hello, deadline)? {
            Reading::Full if hello == HELLO => Ok(Some(ForkServer {
                key,
                stdin,
                stdout,
                process,
                folder,
                forks: 0,
            })),
            // Not a fork server (a program from before it ends at once,
            // with its usage), or too slow to say so: start children one
            // by one. The drop kills whatever is left of it.
            _ => Ok(None),
        }
    }

    /// Forks one child for `variables` and waits for it, for at most
    /// `timeout`.
    pub(super) fn fork(
        &mut self,
        harness: &HarnessName,
        variables: &[(&'static str, String)],
        files: &ChildFiles<'_>,
        timeout: Duration,
    ) -> Result<ExitStatus> {
        let scratch = std::path::absolute(files.scratch)
            .map_err(|source| MeasureError::io("find", files.scratch, source))?;
        let name = |path: &Path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let mut lines = vec![
            (KEY_FOLDER.to_owned(), scratch.display().to_string()),
            (KEY_STDOUT.to_owned(), name(files.stdout)),
            (KEY_STDERR.to_owned(), name(files.stderr)),
        ];
        lines.extend(
            variables
                .iter()
                .map(|(variable, value)| ((*variable).to_owned(), value.clone())),
        );
        let request = frame(&lines).map_err(|reason| self.broken(harness, reason.to_string()))?;
        let (pid, status) = self.exchange(harness, &request, timeout, files.scratch)?;
        self.collect(pid, files)?;
        Ok(ExitStatus::from_raw(status))
    }

    /// Forks children that serve nothing (an empty request, which the
    /// child refuses at once) until this server has forked `position`
    /// children, and removes what they leave. The server's loop is the
    /// same whatever its child did, so the next child starts from the
    /// count a child at `position` of any server of this key starts from.
    pub(super) fn advance(&mut self, harness: &HarnessName, position: u64) -> Result<()> {
        if position.saturating_sub(self.forks) > MAX_ADVANCE {
            return Err(self.broken(
                harness,
                format!(
                    "a subtraction asked for its child {position}, {MAX_ADVANCE}+ children ahead"
                ),
            ));
        }
        let empty = frame(&[]).map_err(|reason| self.broken(harness, reason.to_string()))?;
        let dir = self.folder.path().to_path_buf();
        while self.forks < position {
            let (pid, _refused) =
                self.exchange(harness, &empty, cachegrind::quick_timeout(), &dir)?;
            let LeftBehind { profiles, log } = self.files_of(pid)?;
            for path in profiles.iter().map(|(path, _)| path).chain(&log) {
                std::fs::remove_file(path)
                    .map_err(|source| MeasureError::io("remove", path, source))?;
            }
        }
        Ok(())
    }

    /// Sends one framed request and waits (at most `timeout`) for the
    /// process id and wait status of the child that served it; counts the
    /// fork. `logs` is named by a timeout.
    fn exchange(
        &mut self,
        harness: &HarnessName,
        request: &[u8],
        timeout: Duration,
        logs: &Path,
    ) -> Result<(i32, i32)> {
        self.stdin
            .write_all(request)
            .and_then(|()| self.stdin.flush())
            .map_err(|error| self.broken(harness, format!("cannot send it a request: {error}")))?;
        self.forks += 1;
        let mut answer = [0u8; 8];
        match read_exact_until(&mut self.stdout, &mut answer, Instant::now() + timeout)? {
            Reading::Full => {}
            Reading::Ended => {
                return Err(self.broken(harness, "it ended without answering".to_owned()))
            }
            Reading::TimedOut => {
                return Err(MeasureError::Timeout {
                    harness: harness.clone(),
                    seconds: timeout.as_secs(),
                    logs: logs.to_path_buf(),
                })
            }
        }
        let pid = i32::from_le_bytes([answer[0], answer[1], answer[2], answer[3]]);
        let status = i32::from_le_bytes([answer[4], answer[5], answer[6], answer[7]]);
        if pid <= 0 {
            return Err(self.broken(harness, format!("it answered with process id {pid}")));
        }
        Ok((pid, status))
    }

    /// Moves child `pid`'s profile (Cachegrind's; Callgrind's dumps) and
    /// log into its scratch folder, under the names a child started on its
    /// own gives them.
    fn collect(&self, pid: i32, files: &ChildFiles<'_>) -> Result<()> {
        let LeftBehind { profiles, log } = self.files_of(pid)?;
        for (path, suffix) in profiles {
            let mut target = files.profile.as_os_str().to_owned();
            target.push(suffix);
            move_file(&path, Path::new(&target))?;
        }
        if let Some(log) = log {
            move_file(&log, files.log)?;
        }
        Ok(())
    }

    /// The files child `pid` left in this server's folder: its profiles
    /// (Cachegrind's; Callgrind's dumps), each with what follows the
    /// profile's name ([`PROFILE_PATTERN`]: nothing, or `.1`, `.2`, ...),
    /// and its Valgrind log, if it wrote one ([`LOG_PATTERN`]).
    fn files_of(&self, pid: i32) -> Result<LeftBehind> {
        let dir = self.folder.path();
        let dumps = PROFILE_PATTERN.replace("%p", &pid.to_string());
        let entries =
            std::fs::read_dir(dir).map_err(|source| MeasureError::io("read", dir, source))?;
        let mut profiles = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| MeasureError::io("read", dir, source))?;
            let file = entry.file_name();
            let Some(suffix) = file.to_str().and_then(|file| file.strip_prefix(&dumps)) else {
                continue;
            };
            // `out.12` must not take `out.123.1`.
            if suffix.is_empty() || suffix.starts_with('.') {
                profiles.push((entry.path(), suffix.to_owned()));
            }
        }
        let log = dir.join(LOG_PATTERN.replace("%p", &pid.to_string()));
        Ok(LeftBehind {
            profiles,
            log: log.exists().then_some(log),
        })
    }

    /// The error of a server that no longer works, with the last lines of
    /// what it printed.
    fn broken(&self, harness: &HarnessName, reason: String) -> MeasureError {
        let stderr = self.folder.path().join("server.stderr.txt");
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        let last: Vec<&str> = text.lines().rev().take(20).collect();
        MeasureError::ChildFailed {
            harness: harness.clone(),
            status: format!(
                "the fork server of {} failed: {reason}",
                self.process.label()
            ),
            stderr: last.into_iter().rev().collect::<Vec<_>>().join("\n"),
            logs: self.folder.path().to_path_buf(),
        }
    }
}

/// What a child left in its server's folder ([`ForkServer::files_of`]).
struct LeftBehind {
    /// Each profile, with what follows the profile's name in its file name.
    profiles: Vec<(PathBuf, String)>,
    /// Its Valgrind log.
    log: Option<PathBuf>,
}

fn move_file(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to)
        .or_else(|_| std::fs::copy(from, to).and_then(|_| std::fs::remove_file(from)))
        .map_err(|source| MeasureError::io("move", from, source))
}

enum Reading {
    Full,
    Ended,
    TimedOut,
}

/// Fills `buffer` from `pipe` by `deadline`, looking at the interrupt flag
/// at least once a second.
fn read_exact_until(
    pipe: &mut ChildStdout,
    buffer: &mut [u8],
    deadline: Instant,
) -> Result<Reading> {
    let mut filled = 0;
    while filled < buffer.len() {
        crate::process::check()?;
        let now = Instant::now();
        if now >= deadline {
            return Ok(Reading::TimedOut);
        }
        let wait = (deadline - now).min(Duration::from_secs(1));
        let mut poll = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polls one descriptor we own, for a bounded time.
        let ready = unsafe { libc::poll(&mut poll, 1, wait.as_millis().max(1) as libc::c_int) };
        if ready < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(MeasureError::io("wait for", "the fork server", error));
        }
        if ready == 0 {
            continue;
        }
        match pipe.read(&mut buffer[filled..]) {
            Ok(0) => return Ok(Reading::Ended),
            Ok(read) => filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(MeasureError::io("read from", "the fork server", error)),
        }
    }
    Ok(Reading::Full)
}
