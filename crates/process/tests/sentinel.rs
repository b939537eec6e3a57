//! The sentinel with real processes: this binary plays the test, a
//! `regress` (a parent that starts the sentinel and leaves descendants),
//! and the sentinel itself, each chosen by its first argument.
//!
//! * `killed`: the parent is killed with SIGKILL while a `setsid` daemon
//!   (carrying the token), a grandchild whose own parent still lives, a
//!   child that cleared its environment (holding the mark only) and a
//!   child in a reported group that has neither run; each is gone within
//!   five seconds, the sentinel too, and processes carrying another
//!   run's token (one that starts with this run's) are left alone.
//! * a sentinel given a shared file (/dev/null) as its mark refuses to
//!   run: it would name every process that has the file open.
//! * `finished`: the parent ends normally ([`Sentinel::finish`]); the
//!   daemon it left is gone when it returns, and the sentinel too.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use regress_process::{serve_sentinel, Role, Sentinel, Supervised, SENTINEL_ARGUMENT};

fn main() -> ExitCode {
    let arguments: Vec<OsString> = std::env::args_os().collect();
    match arguments.get(1).and_then(|a| a.to_str()) {
        Some(SENTINEL_ARGUMENT) => match serve_sentinel(&arguments[2..]) {
            Ok(_) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("{error}");
                ExitCode::from(2)
            }
        },
        Some("parent") => parent(Path::new(&arguments[2]), &arguments[3] == "finish"),
        // `cargo test` passes its own flags (`--quiet`, a filter): run all.
        _ => {
            a_mark_that_is_no_pipe_is_refused();
            killed_parent_leaves_nothing_of_its_own();
            finished_parent_leaves_nothing();
            println!("sentinel: 3 tests passed");
            ExitCode::SUCCESS
        }
    }
}

/// The `regress` of the tests: starts the sentinel, leaves descendants,
/// writes their ids into `out`, then waits to be killed (or finishes).
fn parent(out: &Path, finish: bool) -> ExitCode {
    let exe = std::env::current_exe().expect("exe");
    let sentinel = Sentinel::start(&exe, &[OsStr::new(SENTINEL_ARGUMENT)]).expect("sentinel");
    let daemon_file = out.with_extension("daemon");
    let grandchild_file = out.with_extension("grandchild");
    // A daemon out of its group, and a grandchild whose parent (`sh`)
    // lives on: both inherit the token and the mark.
    let script = format!(
        "setsid sh -c 'echo $$ > {daemon}; exec sleep 300' </dev/null >/dev/null 2>&1 &
         sleep 300 & echo $! > {grandchild}; wait",
        daemon = daemon_file.display(),
        grandchild = grandchild_file.display(),
    );
    let mut wrapper = Command::new("/bin/sh");
    wrapper.args(["-c", &script]).process_group(0);
    let mut wrapper = wrapper.spawn().expect("sh");
    // A child with a cleared environment (no token) that left its group:
    // the mark alone names it.
    let mut bare = Command::new("/usr/bin/setsid");
    bare.args(["sleep", "300"]).env_clear();
    let mut bare = bare.spawn().expect("setsid");
    // A process with neither, in a group `Supervised` started and
    // reported: cleared environment, mark closed, and its parent (the
    // group's leader) dies with this process (`PR_SET_PDEATHSIG`).
    let grouped_file = out.with_extension("grouped");
    let mut grouped = Command::new("/bin/sh");
    grouped
        .args([
            "-c",
            &format!("sleep 300 & echo $! > {}; wait", grouped_file.display()),
        ])
        .env_clear();
    // SAFETY: closing descriptors between fork and exec touches no memory
    // of the parent.
    unsafe {
        grouped.pre_exec(|| {
            for fd in 100..200 {
                libc::close(fd);
            }
            Ok(())
        });
    }
    let grouped =
        Supervised::spawn(&mut grouped, Path::new("/bin/sh"), Role::Work).expect("supervised");
    let deadline = Instant::now() + Duration::from_secs(10);
    let files = [&daemon_file, &grandchild_file, &grouped_file];
    while !files.iter().all(|file| file.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let ids = [
        ("sentinel", sentinel.id().to_string()),
        ("token", sentinel.token().to_owned()),
        ("daemon", read(&daemon_file)),
        ("grandchild", read(&grandchild_file)),
        ("wrapper", wrapper.id().to_string()),
        ("bare", bare.id().to_string()),
        ("grouped", read(&grouped_file)),
    ];
    let text: String = ids.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    std::fs::write(out.with_extension("tmp"), text).expect("write");
    std::fs::rename(out.with_extension("tmp"), out).expect("rename");
    if finish {
        drop(grouped);
        sentinel.finish();
    } else {
        // Killed here by the test.
        std::thread::sleep(Duration::from_secs(300));
    }
    // Killed by the sentinel; reaped here.
    let _ = wrapper.wait();
    let _ = bare.wait();
    if finish {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

struct Ids(Vec<(String, String)>);

impl Ids {
    fn get(&self, key: &str) -> String {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {key}"))
    }
    fn pid(&self, key: &str) -> i32 {
        self.get(key)
            .parse()
            .unwrap_or_else(|_| panic!("{key} is not a pid"))
    }
}

/// Starts the parent and waits for the ids of what it left.
fn start_parent(dir: &Path, finish: bool) -> (std::process::Child, Ids) {
    let out = dir.join(if finish { "finished" } else { "killed" });
    let exe = std::env::current_exe().expect("exe");
    let child = Command::new(exe)
        .arg("parent")
        .arg(&out)
        .arg(if finish { "finish" } else { "kill" })
        .env_remove(regress_process::RUN_VARIABLE)
        .stdin(Stdio::null())
        .spawn()
        .expect("parent");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !out.exists() {
        assert!(Instant::now() < deadline, "the parent never wrote its ids");
        std::thread::sleep(Duration::from_millis(10));
    }
    let ids = std::fs::read_to_string(&out)
        .expect("ids")
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    (child, Ids(ids))
}

fn killed_parent_leaves_nothing_of_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut parent, ids) = start_parent(dir.path(), false);
    let token = ids.get("token");
    // Other runs: one whose token starts with this run's, one that lists
    // this run's token with a character more, both outside the parent's
    // tree, without its mark.
    let others: Vec<std::process::Child> = [format!("{token}0"), format!("1-1:x{token}")]
        .into_iter()
        .map(|runs| {
            Command::new("/bin/sleep")
                .arg("300")
                .env(regress_process::RUN_VARIABLE, runs)
                .spawn()
                .expect("sleep")
        })
        .collect();
    let watched = [
        "daemon",
        "grandchild",
        "wrapper",
        "bare",
        "grouped",
        "sentinel",
    ];
    for name in watched {
        assert!(
            alive(ids.pid(name)),
            "{name} is not running before the kill"
        );
    }
    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(parent.id() as i32, libc::SIGKILL);
    }
    let _ = parent.wait();
    let killed_at = Instant::now();
    let mut left = Vec::new();
    for name in watched {
        if !gone(ids.pid(name)) {
            left.push(name);
        }
    }
    let took = killed_at.elapsed();
    let mut others_alive = Vec::new();
    for mut other in others {
        others_alive.push(alive(other.id() as i32));
        let _ = other.kill();
        let _ = other.wait();
    }
    for name in &left {
        // SAFETY: as above; cleaning up after a failure.
        unsafe {
            libc::kill(ids.pid(name), libc::SIGKILL);
        }
    }
    assert!(
        left.is_empty(),
        "still running after the parent's SIGKILL: {left:?}"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(
        others_alive,
        [true, true],
        "another run's process was killed"
    );
    println!("killed parent: everything it left was gone {took:?} after its SIGKILL");
}

fn finished_parent_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut parent, ids) = start_parent(dir.path(), true);
    let status = parent.wait().expect("wait");
    assert!(status.success(), "{status}");
    // `finish` returned before the parent exited: nothing may be left now.
    let left: Vec<&str> = ["daemon", "grandchild", "bare", "sentinel"]
        .into_iter()
        .filter(|name| alive(ids.pid(name)))
        .collect();
    for name in &left {
        // SAFETY: cleaning up after a failure.
        unsafe {
            libc::kill(ids.pid(name), libc::SIGKILL);
        }
    }
    assert!(
        left.is_empty(),
        "still running after a normal end: {left:?}"
    );
}

fn a_mark_that_is_no_pipe_is_refused() {
    let exe = std::env::current_exe().expect("exe");
    let null = std::fs::File::open("/dev/null").expect("/dev/null");
    let null_fd = std::os::fd::AsRawFd::as_raw_fd(&null);
    let mut command = Command::new(exe);
    command
        .args([
            SENTINEL_ARGUMENT,
            &std::process::id().to_string(),
            "150",
            "1-1",
        ])
        .env_remove(regress_process::RUN_VARIABLE)
        // Its input stays open while this test holds it: were the check
        // missing, the sentinel would wait here instead of sweeping.
        .stdin(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: dup2 between fork and exec touches no memory of the parent.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(null_fd, 150) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().expect("sentinel");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            // Killed, not closed: a sentinel whose input closes sweeps.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
    }
    assert_eq!(status.and_then(|s| s.code()), Some(2), "{stderr}");
    assert!(stderr.contains("not an anonymous pipe"), "{stderr}");
}

/// Whether `pid` runs (a zombie is dead for this purpose).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

/// Waits up to five seconds for `pid` to be gone.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    !alive(pid)
}
