//! Runs one measured child process: under Valgrind Cachegrind (the count),
//! under Callgrind (the count split by part), or under Valgrind's `none`
//! tool with the heap hooks preloaded (the heap figures).
//!
//! The child is the measured program (`harnesses`, or a test binary that
//! hosts fixture harnesses), told which harness to run by the environment.
//! Everything the process can see is pinned, because all of it leaks into
//! the count:
//!
//! - the environment is cleared and rebuilt from fixed values (a stray
//!   `SSL_CERT_FILE` alone made s2n-tls load system certificates);
//! - `OPENSSL_ia32cap` hides RDRAND, which Valgrind passes through to the
//!   real CPU, from aws-lc and OpenSSL, and whatever else the CPU profile
//!   hides ([`CpuProfile`]);
//! - address-space randomization is off for the child (`setarch -R`);
//! - `GLIBC_TUNABLES` keeps `memcpy` off `rep movsb`, which Valgrind counts
//!   per byte (see [`GLIBC_TUNABLES`]);
//! - the binary is started as `./harness` from a scratch folder through a
//!   link, so `argv[0]`, and with it the layout of the initial
//!   stack, is the same wherever the project is checked out;
//! - Valgrind's translator does not chase across branches
//!   (`--vex-guest-chase=no`, see [`NO_CHASING`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use regress_measure::child::{ChildReport, ChildRequest};
use regress_measure::parts::Plan;

use super::{MeasureError, Result};
use crate::harness_name::HarnessName;
use crate::limits;
#[cfg(doc)]
use crate::measure::cpu_profile::native_only;
use crate::measure::cpu_profile::CpuProfile;
use crate::measure::fork_server::{ChildFiles, ForkServers};
use crate::measure::valgrind::Valgrind;
use crate::process::{Ended, Role, Supervised};

/// The default limit: the slowest harness takes a few seconds under
/// Valgrind; ten minutes means "hung", not "slow".
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Keeps glibc's `memcpy`/`memset` from using `rep movsb`/`rep stosb`.
///
/// Valgrind counts one instruction per byte for a `rep`-prefixed string
/// instruction, so on CPUs with fast `rep movsb` every large copy weighed
/// about 16 times what the vector loop glibc otherwise uses costs (1 MiB of
/// records: 11.6 M instructions with `rep movsb`, 5.8 M without, for the same
/// work). Raising the thresholds out of reach makes copies count like the
/// loops they compete with, in the TLS libraries and in the harnesses alike.
/// On other architectures glibc ignores these names.
pub const GLIBC_TUNABLES: &str =
    "glibc.cpu.x86_rep_movsb_threshold=4294967295:glibc.cpu.x86_rep_stosb_threshold=4294967295";

/// Keeps Valgrind's translator from chasing across branches when it builds
/// a superblock.
///
/// With chasing (the default since Valgrind 3.17), Cachegrind counted
/// instructions that never ran: in aws-lc's `ASN1_object_size`, the loop
/// for tags of 31 and more (three instructions) was counted 158 times per
/// ECDSA handshake, while a breakpoint on it in a native run of the same
/// program was hit 0 times in 690 calls. Without chasing, Cachegrind counts
/// what ran, and counts exactly what Callgrind counts (which never chases):
/// 4,397,637 instructions for that handshake from both tools, against
/// 4,398,979 from Cachegrind with chasing (OpenSSL's 1 KiB records: 0.34 %
/// fewer). So the parts Callgrind measures add up to Cachegrind's total.
/// It costs no time (measured: no slower on either Valgrind).
pub const NO_CHASING: &str = "--vex-guest-chase=no";

/// Whether `choice` ([`crate::env::HEAP_CHILD`]) asks for heap children under
/// Valgrind's `none` tool rather than native ones (same figures, measured;
/// about 2.5 times the suite's time).
pub fn heap_child_under_none(choice: Option<&str>) -> Result<bool> {
    super::setting::one_of(
        crate::env::HEAP_CHILD,
        choice,
        &[("native", false), ("none", true)],
    )
}

/// The environment every child of CPU profile `cpu` gets, and nothing
/// else.
pub fn child_environment(cpu: CpuProfile) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("PATH", "/usr/bin:/bin".to_owned()),
        ("HOME", "/nonexistent".to_owned()),
        ("LC_ALL", "C".to_owned()),
        ("OPENSSL_ia32cap", cpu.ia32cap([0; 4])),
        ("GLIBC_TUNABLES", GLIBC_TUNABLES.to_owned()),
    ];
    // A Valgrind unpacked outside its install prefix needs to find its tools;
    // this only concerns Valgrind itself, not what the client sees.
    if let Ok(lib) = std::env::var("VALGRIND_LIB") {
        env.push(("VALGRIND_LIB", lib));
    }
    env
}

/// The longest limit accepted: a day. A larger one is a typo, and a limit
/// past what the clock can add would overflow.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// Reads the child time limit from the environment.
pub fn timeout_from_env() -> Result<Duration> {
    parse_timeout(std::env::var(crate::env::TIMEOUT).ok().as_deref())
}

fn parse_timeout(value: Option<&str>) -> Result<Duration> {
    let Some(text) = value else {
        return Ok(DEFAULT_TIMEOUT);
    };
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|seconds| (1..=MAX_TIMEOUT_SECS).contains(seconds))
        .map(Duration::from_secs)
        .ok_or_else(|| MeasureError::BadSetting {
            variable: crate::env::TIMEOUT,
            value: text.chars().take(40).collect(),
            expected: format!("a whole number of seconds from 1 to {MAX_TIMEOUT_SECS}"),
        })
}

/// How long a quick question to a tool (`valgrind --version`, the
/// measured program's `list`) may take: the child limit, at most a minute.
pub fn quick_timeout() -> Duration {
    timeout_from_env()
        .unwrap_or(DEFAULT_TIMEOUT)
        .min(Duration::from_secs(60))
}

/// How a child is run, and so what it measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool<'a> {
    /// Under Cachegrind: the count, and its per-function profile.
    Cachegrind,
    /// Under Callgrind, which dumps the cost of every part of the counted
    /// run ([`Plan::Callgrind`]).
    Callgrind,
    /// Natively, with the heap hooks (`hooks`, a shared library)
    /// preloaded and `ia32cap` as `OPENSSL_ia32cap`: the CPU features the
    /// host has and Valgrind's CPU does not, hidden from aws-lc and OpenSSL
    /// with the profile's ([`CpuProfile::ia32cap`], [`native_only`]). They must take the paths they take under
    /// Valgrind: with nothing hidden, aws-lc's RSA-4096 code allocated
    /// 6,608 bytes more per handshake natively (it uses AVX-512, which
    /// Valgrind hides); with the features hidden, every figure of every
    /// path is the one Valgrind's `none` tool gives, at a fraction of its
    /// time.
    ///
    /// With `under_none` (`REGRESS_HEAP_CHILD=none`, [`heap_child_under_none`]),
    /// under Valgrind's `none` tool instead: the cross-check of the mask.
    Heap {
        hooks: &'a Path,
        ia32cap: &'a str,
        under_none: bool,
    },
    /// Under DHAT, which records every allocation site with its call stack
    /// (for a diff of where allocations changed; DHAT counts the whole
    /// process, so two children are subtracted).
    Dhat,
}

impl Tool<'_> {
    /// The prefix of the child's files.
    fn name(self) -> &'static str {
        match self {
            Tool::Cachegrind => "runs",
            Tool::Callgrind => "callgrind",
            Tool::Heap { .. } => "heap",
            Tool::Dhat => "dhat",
        }
    }
}

/// One child to run.
pub struct ChildSpec<'a> {
    pub valgrind: &'a Valgrind,
    /// The harness test binary.
    pub binary: &'a Path,
    pub harness: &'a HarnessName,
    /// How many runs of the path the child makes.
    pub runs: usize,
    /// What the boundaries of the last run do.
    pub plan: Plan,
    pub tool: Tool<'a>,
    /// The CPU features hidden from the TLS libraries.
    pub cpu: CpuProfile,
    /// A folder of this measurement's own, where every file of the child goes.
    pub scratch: &'a Path,
    pub timeout: Duration,
    /// For a Cachegrind or Callgrind child: the fork servers that may fork
    /// it instead of a Valgrind started for it alone ([`ForkServers`]).
    pub fork_servers: Option<&'a ForkServers>,
    /// For a child Cachegrind counts whole (subtraction), forked: the
    /// position its server must fork it at, its partner's
    /// ([`ChildOutcome::fork_position`]), so that both count from the same
    /// instructions. `None` for the first child of a subtraction and for
    /// every other child.
    pub fork_position: Option<u64>,
}

/// What a child left behind.
#[derive(Debug)]
pub struct ChildOutcome {
    /// Cachegrind's profile; for Callgrind the prefix of its dumps
    /// (`PROFILE.1`, `PROFILE.2`, ...); for a heap child its heap report.
    pub profile: PathBuf,
    pub report: ChildReport,
    /// The program the child ran (its link in the scratch folder).
    pub program: PathBuf,
    /// For a forked child: how many children its server had forked before
    /// it ([`ChildSpec::fork_position`]).
    pub fork_position: Option<u64>,
}

impl ChildSpec<'_> {
    fn file(&self, what: &str) -> PathBuf {
        self.scratch
            .join(format!("{}-{}.{what}", self.tool.name(), self.runs))
    }

    /// The program and arguments that run the child.
    /// The tool's arguments of a Cachegrind or Callgrind child whose
    /// profile is `profile` (a pattern with `%p` for a fork server's);
    /// `None` for the other tools.
    pub(super) fn counting_args(&self, profile: &Path) -> Option<Vec<String>> {
        match self.tool {
            Tool::Cachegrind => {
                let mut args = vec![
                    "--tool=cachegrind".into(),
                    "--cache-sim=no".into(),
                    "--branch-sim=no".into(),
                    NO_CHASING.into(),
                    format!("--cachegrind-out-file={}", profile.display()),
                ];
                if matches!(self.plan, Plan::Cachegrind(_)) {
                    args.push("--instr-at-start=no".into());
                }
                Some(args)
            }
            Tool::Callgrind => Some(vec![
                "--tool=callgrind".into(),
                "--instr-atstart=no".into(),
                "--collect-atstart=no".into(),
                // Each cost's instruction address, so that it is charged to
                // the function it lies in (`callgrind_out`).
                "--dump-instr=yes".into(),
                NO_CHASING.into(),
                format!("--callgrind-out-file={}", profile.display()),
            ]),
            Tool::Heap { .. } | Tool::Dhat => None,
        }
    }

    fn command(&self, profile: &Path, log: &Path) -> Command {
        let valgrind = |tool_args: &[String]| valgrind_command(self.valgrind, tool_args, log);
        let mut command = match self.tool {
            Tool::Heap {
                under_none: true, ..
            } => valgrind(&["--tool=none".into()]),
            Tool::Heap { .. } => Command::new("./harness"),
            Tool::Dhat => valgrind(&[
                "--tool=dhat".into(),
                "--num-callers=24".into(),
                format!("--dhat-out-file={}", profile.display()),
            ]),
            Tool::Cachegrind | Tool::Callgrind => {
                valgrind(&self.counting_args(profile).unwrap_or_default())
            }
        };
        pin(&mut command, self.scratch, self.cpu);
        if let Tool::Heap { hooks, ia32cap, .. } = self.tool {
            command
                .env("LD_PRELOAD", hooks)
                .env("OPENSSL_ia32cap", ia32cap);
        }
        command
    }

    /// Starts the child as a process of its own (a Valgrind started for it
    /// alone, or the program natively) and waits for it.
    fn spawn(
        &self,
        request: &ChildRequest,
        profile: &Path,
        log: &Path,
        stdout: &Path,
        stderr: &Path,
        link: &Path,
    ) -> Result<ExitStatus> {
        let mut command = self.command(profile, log);
        command
            .envs(request.to_env())
            .stdin(Stdio::null())
            .stdout(create(stdout)?)
            .stderr(create(stderr)?);
        without_address_randomization(&mut command);
        let program = match self.tool {
            Tool::Heap {
                under_none: false, ..
            } => link.to_path_buf(),
            _ => self.valgrind.program.clone(),
        };
        let child = Supervised::spawn(&mut command, &program, Role::Work)?;
        match child.wait(Some(self.timeout))? {
            Ended::Exited(status) => Ok(status),
            Ended::TimedOut => Err(MeasureError::Timeout {
                harness: self.harness.clone(),
                seconds: self.timeout.as_secs(),
                logs: self.scratch.to_path_buf(),
            }),
        }
    }

    /// Runs the child to completion and reads its profile path and report.
    pub fn run(&self) -> Result<ChildOutcome> {
        let link = self.scratch.join("harness");
        if !link.exists() {
            link_binary(self.binary, &link)?;
        }
        let profile = match self.tool {
            Tool::Cachegrind => self.file("cachegrind.out"),
            Tool::Callgrind => self.file("out"),
            Tool::Heap { .. } => self.file("heap.json"),
            Tool::Dhat => self.file("dhat.json"),
        };
        let log = self.file("valgrind.log");
        let stdout_path = self.file("stdout.txt");
        let stderr_path = self.file("stderr.txt");
        let report_name = format!("{}-{}.report.json", self.tool.name(), self.runs);
        let request = ChildRequest {
            harness: self.harness.to_string(),
            runs: self.runs,
            plan: self.plan,
            report: PathBuf::from(&report_name),
            heap_report: matches!(self.tool, Tool::Heap { .. }).then(|| profile.clone()),
        };

        let forked = match self.fork_servers {
            Some(servers) => servers.run(
                self,
                &link,
                &request.to_env(),
                &ChildFiles {
                    scratch: self.scratch,
                    profile: &profile,
                    log: &log,
                    stdout: &stdout_path,
                    stderr: &stderr_path,
                },
            )?,
            None => None,
        };
        let (status, fork_position) = match forked {
            Some(forked) => (forked.status, Some(forked.position)),
            None => (
                self.spawn(&request, &profile, &log, &stdout_path, &stderr_path, &link)?,
                None,
            ),
        };

        if !status.success() {
            // A full disk or a file-size limit makes the child fail in its
            // own words (a panic, exit code 101, with no stderr to show,
            // since stderr could not be written either): name the cause.
            if let Some(cause) = cannot_write(self.scratch, status) {
                return Err(MeasureError::OutputFull {
                    harness: self.harness.clone(),
                    folder: self.scratch.to_path_buf(),
                    status: describe(status),
                    cause,
                });
            }
            return Err(MeasureError::ChildFailed {
                harness: self.harness.clone(),
                status: describe(status),
                stderr: failure_text(&stderr_path, &log),
                logs: self.scratch.to_path_buf(),
            });
        }
        let report_path = self.scratch.join(&report_name);
        let report = match limits::read_capped(&report_path, limits::MAX_SMALL_FILE) {
            Ok(text) => serde_json::from_str(&text).map_err(|source| MeasureError::Json {
                what: "child report",
                path: report_path.clone(),
                source,
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if self.tool == Tool::Cachegrind && !profile.exists() {
                    return Err(MeasureError::ValgrindDidNotRun {
                        harness: self.harness.clone(),
                        program: self.valgrind.program.clone(),
                        log: format!("{}\n{}", tail(&log, 20), tail(&stderr_path, 20)),
                    });
                }
                return Err(MeasureError::NoReport {
                    harness: self.harness.clone(),
                    binary: self.binary.to_path_buf(),
                });
            }
            Err(source) => return Err(MeasureError::io("read", report_path, source)),
        };
        Ok(ChildOutcome {
            profile,
            report,
            program: link,
            fork_position,
        })
    }
}

/// Why a failed child may have failed for want of room: killed by SIGXFSZ
/// (a file-size limit), or its folder cannot take a small file now. `None`
/// when the folder takes one (the failure is the child's own).
fn cannot_write(folder: &Path, status: ExitStatus) -> Option<std::io::Error> {
    use std::os::unix::process::ExitStatusExt;
    if status.signal() == Some(libc::SIGXFSZ) {
        return Some(std::io::Error::from_raw_os_error(libc::EFBIG));
    }
    let probe = folder.join(".room-probe");
    let written = File::create(&probe).and_then(|mut file| {
        file.write_all(&[0u8; 64 * 1024])?;
        file.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    written.err()
}

/// `valgrind` with `tool_args`, logging to `log`, running `./harness` (the
/// measured program's link in the working folder, see [`pin`]): what every
/// Valgrind child runs, and every fork server.
pub(super) fn valgrind_command(valgrind: &Valgrind, tool_args: &[String], log: &Path) -> Command {
    let mut command = Command::new(&valgrind.program);
    // No gdbserver: it would leave a FIFO in /tmp behind a child that is
    // killed (a timeout, an interrupt), and nothing here debugs.
    command
        .arg("--vgdb=no")
        .args(tool_args)
        .arg(format!("--log-file={}", log.display()))
        .arg("./harness");
    command
}

/// Runs `command` in `folder` with the fixed environment of CPU profile
/// `cpu` ([`child_environment`]) and nothing else. No arguments: the request
/// is in the environment (or, for a fork server's child, read after the
/// fork), and the program's `main` serves it before it looks at anything
/// else.
pub(super) fn pin(command: &mut Command, folder: &Path, cpu: CpuProfile) {
    command
        .current_dir(folder)
        .env_clear()
        .envs(child_environment(cpu));
}

/// Starts the child with address-space randomization off, as `setarch -R`
/// does. Before `main`, Rust's stack-guard set-up has glibc read
/// `/proc/self/maps`, whose text (and so the instructions that scan it)
/// depends on where things were mapped: a few instructions of noise in the
/// whole-process counts that the subtraction method compares.
#[cfg(target_os = "linux")]
pub(super) fn without_address_randomization(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: personality(2) is a plain system call, safe to make between
    // fork and exec; it touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            let current = libc::personality(0xffff_ffff);
            if current != -1 {
                libc::personality(
                    (current as libc::c_ulong) | libc::ADDR_NO_RANDOMIZE as libc::c_ulong,
                );
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn without_address_randomization(_command: &mut Command) {}

fn create(path: &Path) -> Result<File> {
    File::create(path).map_err(|source| MeasureError::io("create", path, source))
}

/// Puts the binary into the scratch folder. A hard link pins the file
/// itself: if cargo rebuilds the test binary while a measurement runs (it
/// replaces the file, it cannot rewrite a running executable), both children
/// of a subtraction still run the same bytes. Across file systems, a copy.
pub(super) fn link_binary(binary: &Path, link: &Path) -> Result<()> {
    if !binary.is_file() {
        return Err(MeasureError::BinaryGone {
            binary: binary.to_path_buf(),
        });
    }
    std::fs::hard_link(binary, link)
        .or_else(|_| std::fs::copy(binary, link).map(drop))
        .map_err(|source| MeasureError::io("link", link, source))
}

fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => status.to_string(),
    }
}

/// The last lines of the child's stderr, and of Valgrind's log when Valgrind
/// itself complained (a crash report lives there).
fn failure_text(stderr: &Path, log: &Path) -> String {
    let mut text = tail(stderr, 40);
    let log_text = tail(log, 20);
    if log_text.contains("Process terminating") || log_text.contains("valgrind:") {
        text.push_str(super::error::VALGRIND_LOG_HEADING);
        text.push_str(&log_text);
    }
    text
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_environment_is_fixed_and_hides_rdrand_and_the_profile() {
        for cpu in CpuProfile::ALL {
            let env = child_environment(cpu);
            let get = |name: &str| {
                env.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(get("OPENSSL_ia32cap"), Some(cpu.ia32cap([0; 4])));
            assert_eq!(get("PATH").as_deref(), Some("/usr/bin:/bin"));
            assert!(get("SSL_CERT_FILE").is_none());
        }
    }

    #[test]
    fn heap_children_are_native_unless_none_is_asked_for() {
        assert_eq!(heap_child_under_none(None).ok(), Some(false));
        assert_eq!(heap_child_under_none(Some("native")).ok(), Some(false));
        assert_eq!(heap_child_under_none(Some(" none ")).ok(), Some(true));
        let error = heap_child_under_none(Some("dhat")).unwrap_err().to_string();
        assert!(error.contains("`native` or `none`"), "{error}");
    }

    #[test]
    fn the_time_limit_is_bounded() {
        assert_eq!(parse_timeout(None).expect("default"), DEFAULT_TIMEOUT);
        assert_eq!(
            parse_timeout(Some(" 15 ")).expect("15"),
            Duration::from_secs(15)
        );
        for bad in ["0", "-1", "x", "86401", "18446744073709551615", ""] {
            let error = parse_timeout(Some(bad)).unwrap_err().to_string();
            assert!(error.contains("from 1 to 86400"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_folder_that_takes_files_is_not_blamed() {
        use std::os::unix::process::ExitStatusExt;
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(cannot_write(dir.path(), ExitStatus::from_raw(101 << 8)).is_none());
        let missing = dir.path().join("gone");
        assert!(cannot_write(&missing, ExitStatus::from_raw(101 << 8)).is_some());
        let by_signal = cannot_write(dir.path(), ExitStatus::from_raw(libc::SIGXFSZ))
            .expect("SIGXFSZ is a size limit");
        assert_eq!(by_signal.raw_os_error(), Some(libc::EFBIG));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("log");
        std::fs::write(&path, "1\n2\n3\n4\n").expect("write");
        assert_eq!(tail(&path, 2), "3\n4");
        assert_eq!(tail(&dir.path().join("missing"), 2), "");
    }
}
