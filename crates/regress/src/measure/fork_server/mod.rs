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
//! scans text that names it (see `server.rs`).
//!
//! A program from before the fork server does not answer it: its children
//! are started one by one, as before. A server whose child ran out of time,
//! or that misbehaved, is killed with its group and never reused; an
//! interrupt kills it too. Idle servers end when the command ends
//! ([`shut_down`]) or the process exits, and [`Supervised`](crate::process::Supervised) kills the group
//! whatever happens.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};

use regress_measure::parts::Plan;

use super::cachegrind::{ChildSpec, Tool};
use super::cpu_profile::CpuProfile;
use super::{MeasureError, Result};

mod server;

use server::ForkServer;

/// Whether `choice` ([`crate::env::FORK_SERVER`]) lets children be forked.
pub fn enabled(choice: Option<&str>) -> Result<bool> {
    super::setting::one_of(
        crate::env::FORK_SERVER,
        choice,
        &[("on", true), ("off", false)],
    )
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

    /// What [`crate::env::FORK_SERVER`] says.
    pub fn from_env() -> Result<ForkServers> {
        Ok(ForkServers {
            enabled: enabled(std::env::var(crate::env::FORK_SERVER).ok().as_deref())?,
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
        assert!(error.contains(crate::env::FORK_SERVER), "{error}");
    }
}
