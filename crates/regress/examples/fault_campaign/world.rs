//! One case's world: a workspace (and for diffs a git repository) in a
//! folder of its own, fake tools, and the checks every case ends with:
//! which processes it left, and which files outside `perf_outputs/` it
//! changed.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What every case shares: the programs under test.
pub struct Tools {
    /// The `regress` binary.
    pub regress: PathBuf,
    /// A copy of the measured program (one build, reused by every case).
    pub program: PathBuf,
    /// The project's Cargo.lock (the fingerprint reads library versions).
    pub cargo_lock: PathBuf,
}

/// A case's folder and what is in it.
pub struct World {
    pub root: PathBuf,
    /// The workspace `regress` runs in (`REGRESS_ROOT`).
    pub ws: PathBuf,
    /// Where fake tools mark the stage they reached.
    pub stage: PathBuf,
    pub fakes: PathBuf,
    /// Put in `regress`'s environment: every process that inherits it is
    /// one the case started.
    pub token: String,
    pub program: PathBuf,
}

/// A signal sent to `regress` alone `after` a fake tool marks `stage`.
#[derive(Clone, Copy)]
pub struct Interrupt {
    pub stage: &'static str,
    pub signal: i32,
    pub after: Duration,
}

/// How a `regress` process ended.
pub struct Ended {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ended {
    /// The first line that says how it ended: an error or the interrupt
    /// note; else the first line of stdout.
    pub fn message(&self) -> String {
        self.stderr
            .lines()
            .find(|line| line.starts_with("error") || line.starts_with("interrupted"))
            .or_else(|| self.stdout.lines().next())
            .unwrap_or("")
            .to_owned()
    }
}

impl World {
    pub fn new(base: &Path, index: usize, tools: &Tools) -> World {
        let root = base.join(format!("case-{index:02}"));
        let ws = root.join("ws");
        for dir in ["ws/baselines", "ws/perf_outputs", "stage", "fakes"] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        std::fs::copy(&tools.cargo_lock, ws.join("Cargo.lock")).expect("copy Cargo.lock");
        std::fs::write(ws.join("Cargo.toml"), "[workspace]\nmembers = []\n").expect("write");
        World {
            stage: root.join("stage"),
            fakes: root.join("fakes"),
            token: format!("fault-campaign-{}-{index}", std::process::id()),
            program: tools.program.clone(),
            root,
            ws,
        }
    }

    /// Writes an executable script.
    pub fn script(&self, path: &Path, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write script");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// Every file below the case folder except the places `regress` may
    /// write (`perf_outputs/`, the diff's lock and target folder), cargo's
    /// (the fake cargo builds into `ws/target/`, ignored by git as a real
    /// build is) and the campaign's own (fakes, stage marks): path to size
    /// and hash.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, (u64, u64)> {
        let mut files = BTreeMap::new();
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let relative = path.strip_prefix(&self.root).expect("below").to_path_buf();
                if is_writable_by_regress(&relative) {
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_symlink() {
                    // A link is its target (what it points at is snapshotted
                    // where it is, when below the case folder).
                    let target = std::fs::read_link(&path).unwrap_or_default();
                    target.hash(&mut hasher);
                    files.insert(relative, (0, hasher.finish()));
                } else if !kind.is_file() {
                    // A FIFO or another special file: never opened (a read
                    // would block), kept as there or not.
                    files.insert(relative, (0, 0));
                } else if let Ok(bytes) = std::fs::read(&path) {
                    bytes.hash(&mut hasher);
                    files.insert(relative, (bytes.len() as u64, hasher.finish()));
                }
            }
        }
        files
    }

    /// Runs `regress` with `args` in this world, signalling it at a stage
    /// if asked, and gives up on it (killing its group) after `limit`.
    pub fn run(
        &self,
        tools: &Tools,
        args: &[&str],
        env: &[(&str, String)],
        interrupt: Option<Interrupt>,
        fsize: Option<u64>,
    ) -> Ended {
        let mut command = Command::new(&tools.regress);
        command
            .args(args)
            .env("REGRESS_ROOT", &self.ws)
            .env("FAULT_CAMPAIGN_TOKEN", &self.token)
            .env("REGRESS_UNMATCHED", "warn")
            .env("REGRESS_TIMEOUT_SECS", "20")
            // The fake Valgrinds write what Cachegrind writes (one profile
            // per child), so the runner is asked for Cachegrind's method;
            // the Callgrind method's dumps are checked by the pipeline and
            // sides tests against the real Valgrind.
            .env("REGRESS_METHOD", "cachegrind")
            .env_remove("REGRESS_VALGRIND")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            // Pipes, not files: a file-size limit must not cut the message.
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(limit) = fsize {
            // SAFETY: setrlimit only changes this child's own limit.
            unsafe {
                command.pre_exec(move || {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit);
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    Ok(())
                });
            }
        }
        let mut child = command.spawn().expect("start regress");
        // Read on threads that report over a channel: a survivor that holds
        // the pipe open must not hang the campaign (it is counted below).
        let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            let (sender, receiver) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_string(&mut text);
                }
                let _ = sender.send(text);
            });
            receiver
        };
        let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
        let started = Instant::now();
        let limit = Duration::from_secs(90);
        let mut signalled = interrupt.is_none();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if let (false, Some(interrupt)) = (signalled, interrupt) {
                if self.stage.join(interrupt.stage).exists() {
                    // Let the stage begin in earnest, then signal regress
                    // alone (not its group, as a terminal would).
                    std::thread::sleep(interrupt.after);
                    // SAFETY: kill only sends a signal.
                    unsafe {
                        libc::kill(child.id() as i32, interrupt.signal);
                    }
                    signalled = true;
                }
            }
            if started.elapsed() > limit {
                // SAFETY: as above.
                unsafe {
                    libc::killpg(child.id() as i32, libc::SIGKILL);
                }
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        Ended {
            code: status.and_then(|s| s.code().or(s.signal().map(|n| 128 + n))),
            stdout: collect(&stdout),
            stderr: collect(&stderr),
        }
    }

    /// Processes this case started that are still alive: those with the
    /// case's token in their environment, or their command line or working
    /// folder in the case's folder (Valgrind's children get a cleared
    /// environment, but run there). Killed once counted.
    pub fn survivors(&self) -> Vec<String> {
        // Give a dying group a moment to be reaped.
        std::thread::sleep(Duration::from_millis(200));
        let root = self.root.to_string_lossy().into_owned();
        let me = std::process::id().to_string();
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
                continue;
            }
            let proc_dir = entry.path();
            let stat = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
            if stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
            {
                continue;
            }
            let environ = std::fs::read(proc_dir.join("environ")).unwrap_or_default();
            let cmdline = std::fs::read(proc_dir.join("cmdline")).unwrap_or_default();
            let cwd = std::fs::read_link(proc_dir.join("cwd")).unwrap_or_default();
            let ours = contains(&environ, self.token.as_bytes())
                || contains(&cmdline, root.as_bytes())
                || cwd.starts_with(&self.root);
            if ours {
                let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push(format!("{pid} {}", shown.trim()));
                if let Ok(pid) = pid.parse::<i32>() {
                    // SAFETY: kill only sends a signal.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        found
    }

    /// A git repository with two commits (base, head) whose workspace is
    /// this world's, for `regress diff`.
    pub fn repository(&self) -> PathBuf {
        let repo = self.root.join("repo");
        std::fs::create_dir_all(repo.join("baselines")).expect("mkdir");
        std::fs::copy(self.ws.join("Cargo.lock"), repo.join("Cargo.lock")).expect("copy");
        std::fs::write(repo.join("Cargo.toml"), "[workspace]\nmembers = []\n").expect("write");
        std::fs::write(repo.join(".gitignore"), "/target/\n/perf_outputs/\n").expect("write");
        std::fs::write(repo.join("README.md"), "base\n").expect("write");
        std::fs::write(repo.join("baselines/.keep"), "").expect("write");
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "base"]);
        std::fs::write(repo.join("README.md"), "head\n").expect("write");
        git(&repo, &["commit", "-q", "-am", "head"]);
        std::fs::create_dir_all(repo.join("perf_outputs/diff")).expect("mkdir");
        repo
    }
}

fn collect(receiver: &std::sync::mpsc::Receiver<String>) -> String {
    receiver
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "(the pipe stayed open: a process survived)".to_owned())
}

fn is_writable_by_regress(relative: &Path) -> bool {
    let text = relative.to_string_lossy();
    ["fakes", "stage"].iter().any(|own| text == *own)
        || text.ends_with("perf_outputs")
        || text == "ws/target"
        || text == "repo/target/regress-diff/.lock"
        || text == "repo/target/regress-diff/target"
        || text == "repo/target/regress-revisions"
        || text == "repo/target/regress-source"
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=campaign",
            "-c",
            "user.email=campaign@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .stdout(Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// What changed between two snapshots: files added, removed or modified,
/// and the bytes concerned.
pub fn changes(
    before: &BTreeMap<PathBuf, (u64, u64)>,
    after: &BTreeMap<PathBuf, (u64, u64)>,
) -> (Vec<String>, u64) {
    let mut changed = Vec::new();
    let mut bytes = 0;
    for (path, (size, hash)) in before {
        match after.get(path) {
            None => {
                changed.push(format!("removed {}", path.display()));
                bytes += size;
            }
            Some((_, other)) if other != hash => {
                changed.push(format!("modified {}", path.display()));
                bytes += size;
            }
            Some(_) => {}
        }
    }
    for (path, (size, _)) in after {
        if !before.contains_key(path) {
            changed.push(format!("added {}", path.display()));
            bytes += size;
        }
    }
    (changed, bytes)
}
