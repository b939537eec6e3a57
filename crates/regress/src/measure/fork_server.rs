//! Counting children forked from one measured program under one Valgrind
//! (the program's side: `regress_measure::fork_server`).
//!
//! A Callgrind or Cachegrind child used to be a Valgrind started for it
//! alone: about 0.45 s of each handshake's 0.96 s went to Valgrind reading
//! the program's line tables and symbols and translating its start, again
//! for every harness. A fork server is started once per program, Valgrind,
//! tool (with its arguments), CPU profile and output folder, and forks a
//! child per harness; the child inherits all of that and serves its request
//! as a freshly started program would. Its profile (`out.<pid>`;
//! Callgrind's dumps `out.<pid>.1`, ...) and Valgrind log
//! (`valgrind.<pid>.log`) are moved into the measurement's scratch folder
//! under the names a child started on its own leaves there, so everything
//! after the run is the same.
//!
//! A child that Cachegrind counts whole (subtraction, Valgrind < 3.22)
//! counts its server's start and every loop the server made before forking
//! it: each fork adds the same instructions (measured: 157 on Valgrind
//! 3.19). The two children of a subtraction are therefore forked from two
//! servers (one per number of runs, a *lane*) at the same position, the
//! number of children each had forked before: their counts then start
//! from the same instructions and the difference is the path's, as
//! between two started children (see [`ForkServers::run`]). And every
//! server's folder has a name of one length, since the program's start
//! scans text that names it (see [`ForkServer::start`]).
//!
//! A program from before the fork server does not answer it: its children
//! are started one by one, as before. A server whose child ran out of time,
//! or that misbehaved, is killed with its group and never reused; an
//! interrupt kills it too. Idle servers end when the command ends
//! ([`shut_down`]) or the process exits, and [`Supervised`] kills the group
//! whatever happens.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use regress_measure::fork_server::{
    frame, ENV_FORK_SERVER_PROTOCOL, HELLO, KEY_FOLDER, KEY_STDERR, KEY_STDOUT,
};

use regress_measure::parts::Plan;

use super::cachegrind::{self, link_binary, ChildSpec, Tool};
use super::cpu_profile::CpuProfile;
use super::scratch::ScratchDir;
use super::valgrind::Valgrind;
use super::{MeasureError, Result};
use crate::process::{Role, Supervised};

static NEXT_SERVER: AtomicU64 = AtomicU64::new(0);

/// `on` (the default) or `off`: whether Callgrind and Cachegrind children are forked
/// from fork servers, or each started under a Valgrind of its own.
pub const ENV_FORK_SERVER: &str = "REGRESS_FORK_SERVER";

/// Whether `choice` ([`ENV_FORK_SERVER`]) lets children be forked.
pub fn enabled(choice: Option<&str>) -> Result<bool> {
    super::setting::one_of(ENV_FORK_SERVER, choice, &[("on", true), ("off", false)])
}

/// What a server is started for: a child it forks measures this program
/// (the file itself, by device and inode: cargo replaces a rebuilt
/// program, so its new bytes get a server of their own) under this
/// Valgrind with this CPU profile.
/// The server's files go beside the scratch folders of the measurements
/// it serves (`folder`): two runners with outputs of their own (a test's
/// workspace, a diff's side) never share one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    valgrind: PathBuf,
    /// The tool's arguments (Cachegrind or Callgrind, and how).
    args: Vec<String>,
    program: (u64, u64),
    cpu: CpuProfile,
    folder: PathBuf,
    /// For a child Cachegrind counts whole: its number of runs. Each
    /// server forks the children of one lane only.
    lane: Option<usize>,
}

/// The name a server gives the profiles of its children: Valgrind puts
/// each child's process id for `%p`.
const PROFILE_PATTERN: &str = "out.%p";

/// The most idle servers kept: two measuring threads each of a diff's two
/// sides; with subtraction, each thread's two lanes and its Callgrind
/// child's server.
const MAX_IDLE: usize = 6;

/// The most children a server forks only to reach the position a
/// subtraction asks for ([`ForkServer::advance`]): a guard against a
/// runaway position (in a run, partners are a few children apart at most).
const MAX_ADVANCE: u64 = 10_000;

static FORKED: AtomicU64 = AtomicU64::new(0);

/// How many children fork servers have run in this process.
pub fn forked_children() -> u64 {
    FORKED.load(Ordering::Relaxed)
}

/// The fork servers of this process: idle ones, ready for the next child,
/// and the programs that are not fork servers. One pool for the whole
/// process, so that a server outlives the runner (a test's) that started
/// it; [`shut_down`] ends the idle ones, and so does the process's exit.
struct Pool {
    idle: Vec<ForkServer>,
    refused: BTreeSet<(u64, u64)>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    idle: Vec::new(),
    refused: BTreeSet::new(),
});

/// Whether a runner forks its Callgrind children from fork servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkServers {
    /// `false`: every child is started on its own.
    enabled: bool,
}

/// How a forked child ended, and where in its server's life it was forked.
#[derive(Debug, Clone, Copy)]
pub struct Forked {
    pub status: ExitStatus,
    /// How many children its server had forked before it.
    pub position: u64,
}

/// The files of one child, as a child started on its own leaves them.
pub struct ChildFiles<'a> {
    /// The measurement's scratch folder, the child's working folder.
    pub scratch: &'a Path,
    /// The prefix of Callgrind's dumps (`PROFILE.1`, `PROFILE.2`, ...).
    pub profile: &'a Path,
    /// Valgrind's log of the child.
    pub log: &'a Path,
    /// The child's standard output and error: files in `scratch`.
    pub stdout: &'a Path,
    pub stderr: &'a Path,
}

impl ForkServers {
    /// Forking on (`true`) or off.
    pub fn new(enabled: bool) -> ForkServers {
        ForkServers { enabled }
    }

    /// What [`ENV_FORK_SERVER`] says.
    pub fn from_env() -> Result<ForkServers> {
        Ok(ForkServers {
            enabled: enabled(std::env::var(ENV_FORK_SERVER).ok().as_deref())?,
        })
    }

    /// Runs `child` (a Cachegrind or Callgrind child; `program` is the
    /// measurement's link to the measured program) with the request
    /// `variables` through a fork server, and returns how it ended; `None`
    /// when forking is off, the child is of another tool, or the program is
    /// not a fork server (its children must be started one by one).
    ///
    /// A child that brackets what it counts (Callgrind, Cachegrind's
    /// markers) counts the same whichever server forks it. A child that
    /// Cachegrind counts whole (subtraction) counts its server's life
    /// before the fork too: it is forked by a server of its lane (its
    /// number of runs), at `child.fork_position` when that is given (its
    /// partner's position), so that both children of a subtraction start
    /// from the same count.
    pub fn run(
        &self,
        child: &ChildSpec<'_>,
        program: &Path,
        variables: &[(&'static str, String)],
        files: &ChildFiles<'_>,
    ) -> Result<Option<Forked>> {
        let Some(args) = child.counting_args(Path::new(PROFILE_PATTERN)) else {
            return Ok(None);
        };
        if !self.enabled {
            return Ok(None);
        }
        let whole_process =
            child.tool == Tool::Cachegrind && !matches!(child.plan, Plan::Cachegrind(_));
        let position = child.fork_position.filter(|_| whole_process);
        let (valgrind, harness, timeout) = (child.valgrind, child.harness, child.timeout);
        let key = Key {
            valgrind: valgrind.program.clone(),
            args,
            program: file_id(program)?,
            cpu: child.cpu,
            folder: files
                .scratch
                .parent()
                .unwrap_or(files.scratch)
                .to_path_buf(),
            lane: whole_process.then_some(child.runs),
        };
        let taken = {
            let mut pool = lock(&POOL);
            if pool.refused.contains(&key.program) {
                return Ok(None);
            }
            // A server whose folder went (a test's workspace, removed) can
            // write no dump any more: end it.
            pool.idle.retain(|server| server.folder.path().is_dir());
            // At a position: the server of the lane nearest below it (it
            // forks fewest children to reach it).
            pool.idle
                .iter()
                .enumerate()
                .filter(|(_, server)| {
                    server.key == key && position.is_none_or(|at| server.forks <= at)
                })
                .max_by_key(|(_, server)| server.forks)
                .map(|(index, _)| index)
                .map(|index| pool.idle.swap_remove(index))
        };
        let mut server = match taken {
            Some(server) => server,
            None => {
                let started = on_spawning_thread({
                    let (key, valgrind, program) =
                        (key.clone(), valgrind.clone(), program.to_path_buf());
                    move || ForkServer::start(key, &valgrind, &program)
                })??;
                match started {
                    Some(server) => server,
                    None => {
                        lock(&POOL).refused.insert(key.program);
                        return Ok(None);
                    }
                }
            }
        };
        // On an error the server is dropped here, which kills it.
        if let Some(at) = position {
            server.advance(harness, at)?;
        }
        let forked = Forked {
            position: server.forks,
            status: server.fork(harness, variables, files, timeout)?,
        };
        FORKED.fetch_add(1, Ordering::Relaxed);
        let mut pool = lock(&POOL);
        pool.idle.push(server);
        // A bisect or a history measures many programs in turn: end the
        // longest idle rather than keep a Valgrind per revision.
        while pool.idle.len() > MAX_IDLE {
            pool.idle.remove(0);
        }
        Ok(Some(forked))
    }
}

/// Ends every idle fork server of this process and removes its folder.
/// Called when a command ends, and at the process's exit.
pub fn shut_down() {
    let idle = match POOL.try_lock() {
        Ok(mut pool) => std::mem::take(&mut pool.idle),
        Err(std::sync::TryLockError::Poisoned(poisoned)) => {
            std::mem::take(&mut poisoned.into_inner().idle)
        }
        // Another thread holds the pool at exit: its servers die with the
        // process (their parent-death signal).
        Err(std::sync::TryLockError::WouldBlock) => Vec::new(),
    };
    drop(idle);
}

extern "C" fn shut_down_at_exit() {
    shut_down();
}

/// The device and inode of `path` (the file, whatever link names it).
pub(super) fn file_id(path: &Path) -> Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|source| MeasureError::io("read", path, source))?;
    Ok((meta.dev(), meta.ino()))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

type Job = Box<dyn FnOnce() + Send>;

/// Runs `job` on the thread that starts every fork server, and returns its
/// result. A child started with a parent-death signal gets it when the
/// *thread* that started it ends; a server outlives the measuring thread
/// that first needed it (a test's, a worker's), so it is started by a
/// thread that lives as long as the process.
fn on_spawning_thread<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (send, receive) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("fork-servers".into())
            .spawn(move || {
                for job in receive {
                    job();
                }
            });
        if spawned.is_ok() {
            // SAFETY: registers a function without arguments that only
            // takes the pool's lock without waiting.
            unsafe { libc::atexit(shut_down_at_exit) };
        }
        Mutex::new(send)
    });
    let (send, receive) = mpsc::channel();
    lock(spawner)
        .send(Box::new(move || {
            let _ = send.send(job());
        }))
        .map_err(|_| spawning_failed())?;
    receive.recv().map_err(|_| spawning_failed())
}

fn spawning_failed() -> MeasureError {
    MeasureError::io(
        "start",
        "a fork server",
        std::io::Error::other("the thread that starts fork servers is gone"),
    )
}

/// One measured program under one Valgrind, waiting for requests.
#[derive(Debug)]
struct ForkServer {
    key: Key,
    // Fields drop in this order: the input closes (the server ends), then
    // the group is killed and reaped, then the folder goes.
    stdin: ChildStdin,
    stdout: ChildStdout,
    process: Supervised,
    folder: ScratchDir,
    /// How many children it has forked (each loop of the server's, the
    /// same instructions every time).
    forks: u64,
}

impl ForkServer {
    /// Starts a server in a folder of its own under `parent`; `None` when
    /// the program does not say it is one.
    fn start(key: Key, valgrind: &Valgrind, program: &Path) -> Result<Option<ForkServer>> {
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
        let mut command =
            cachegrind::valgrind_command(valgrind, &key.args, &dir.join("valgrind.%p.log"));
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
    fn fork(
        &mut self,
        harness: &str,
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
        let request = frame(&lines).map_err(|reason| self.broken(harness, reason))?;
        let (pid, status) = self.exchange(harness, &request, timeout, files.scratch)?;
        self.collect(pid, files)?;
        Ok(ExitStatus::from_raw(status))
    }

    /// Forks children that serve nothing (an empty request, which the
    /// child refuses at once) until this server has forked `position`
    /// children, and removes what they leave. The server's loop is the
    /// same whatever its child did, so the next child starts from the
    /// count a child at `position` of any server of this key starts from.
    fn advance(&mut self, harness: &str, position: u64) -> Result<()> {
        if position.saturating_sub(self.forks) > MAX_ADVANCE {
            return Err(self.broken(
                harness,
                format!(
                    "a subtraction asked for its child {position}, {MAX_ADVANCE}+ children ahead"
                ),
            ));
        }
        let empty = frame(&[]).map_err(|reason| self.broken(harness, reason))?;
        while self.forks < position {
            let dir = self.folder.path().to_path_buf();
            let (pid, _refused) =
                self.exchange(harness, &empty, cachegrind::quick_timeout(), &dir)?;
            for file in [format!("out.{pid}"), format!("valgrind.{pid}.log")] {
                let path = dir.join(file);
                if let Err(source) = std::fs::remove_file(&path) {
                    if source.kind() != std::io::ErrorKind::NotFound {
                        return Err(MeasureError::io("remove", &path, source));
                    }
                }
            }
        }
        Ok(())
    }

    /// Sends one framed request and waits (at most `timeout`) for the
    /// process id and wait status of the child that served it; counts the
    /// fork. `logs` is named by a timeout.
    fn exchange(
        &mut self,
        harness: &str,
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
                    harness: harness.to_owned(),
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
        let dir = self.folder.path();
        let dumps = PROFILE_PATTERN.replace("%p", &pid.to_string());
        let entries =
            std::fs::read_dir(dir).map_err(|source| MeasureError::io("read", dir, source))?;
        for entry in entries {
            let entry = entry.map_err(|source| MeasureError::io("read", dir, source))?;
            let file = entry.file_name();
            let Some(suffix) = file.to_str().and_then(|file| file.strip_prefix(&dumps)) else {
                continue;
            };
            // `out.12` must not take `out.123.1`.
            if !(suffix.is_empty() || suffix.starts_with('.')) {
                continue;
            }
            let mut target = files.profile.as_os_str().to_owned();
            target.push(suffix);
            move_file(&entry.path(), Path::new(&target))?;
        }
        let log = dir.join(format!("valgrind.{pid}.log"));
        if log.exists() {
            move_file(&log, files.log)?;
        }
        Ok(())
    }

    /// The error of a server that no longer works, with the last lines of
    /// what it printed.
    fn broken(&self, harness: &str, reason: String) -> MeasureError {
        let stderr = self.folder.path().join("server.stderr.txt");
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        let last: Vec<&str> = text.lines().rev().take(20).collect();
        MeasureError::ChildFailed {
            harness: harness.to_owned(),
            status: format!(
                "the fork server of {} failed: {reason}",
                self.process.label()
            ),
            stderr: last.into_iter().rev().collect::<Vec<_>>().join("\n"),
            logs: self.folder.path().to_path_buf(),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forking_is_on_unless_turned_off() {
        assert_eq!(enabled(None).ok(), Some(true));
        assert_eq!(enabled(Some(" on ")).ok(), Some(true));
        assert_eq!(enabled(Some("off")).ok(), Some(false));
        let error = enabled(Some("no")).unwrap_err().to_string();
        assert!(error.contains("`on` or `off`"), "{error}");
        assert!(error.contains(ENV_FORK_SERVER), "{error}");
    }
}
