//! The second hostile-input campaign's classes (issue 27): symlinks where
//! the runner writes, FIFOs where it reads, a bless killed outright, a gate
//! a pull request could walk around, forged or oversized reports, and a bad
//! `REGRESS_ROOT`. Each class has at least one case; every case also gets
//! the common checks (exit code, first line, no process left, nothing
//! changed outside `perf_outputs/`, which includes an `outside/` folder the
//! links point at).

use std::path::{Path, PathBuf};

use regress::compare::HarnessDiff;
use regress::diff::DiffReport;
use regress::judge::Threshold;

use super::cases::{args, case, Call, Case, Played, HARNESS};
use super::fakes::{Tools as ValgrindTools, Valgrind};
use super::world::{changes, Interrupt, Tools, World};

impl World {
    /// A folder beside the workspace, outside the project, with a file in
    /// it: what a planted link points at. The campaign's snapshot covers
    /// it, so a write, move or removal through the link is a change.
    fn outside(&self) -> PathBuf {
        let outside = self.root.join("outside");
        std::fs::create_dir_all(outside.join("base")).expect("mkdir");
        for name in ["base/keep.txt", "a.diff.txt", "precious.txt"] {
            std::fs::write(outside.join(name), format!("{name} outside\n")).expect("write");
        }
        outside
    }

    /// Writes a report (as `regress diff` would) into the workspace.
    fn report_file(&self, name: &str, harnesses: Vec<HarnessDiff>) -> PathBuf {
        let report = DiffReport {
            schema: regress::diff::report::DIFF_SCHEMA,
            base: regress::program::Commit {
                reference: "main".into(),
                commit: "a".repeat(40),
            },
            head: regress::program::Commit {
                reference: "pr".into(),
                commit: "b".repeat(40),
            },
            valgrind: "3.22.0".into(),
            method: regress::measure::valgrind::Method::Markers,
            cpu_profile: Default::default(),
            shards: Vec::new(),
            harnesses,
            problems: Vec::new(),
            sources: None,
            fingerprints: None,
            blind_spots: None,
        };
        let path = self.ws.join(name);
        std::fs::write(&path, report.to_json().expect("json")).expect("write");
        path
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

fn name(text: &str) -> regress::HarnessName {
    regress::HarnessName::new(text).expect("a harness name")
}

fn compared(harness: &str, base: u64, head: u64) -> HarnessDiff {
    HarnessDiff::compared(&name(harness), base, head, Threshold::default(), Vec::new())
}

/// `regress ARGS` with extra environment.
fn call(list: &[&str], env: Vec<(&'static str, String)>) -> Call {
    Call {
        args: args(list),
        env,
        ..Call::default()
    }
}

/// Checks stderr names `text` (a case whose message is on stdout).
fn stderr_has(played: &mut Played, text: &str) {
    if !played.ended.stderr.contains(text) {
        played.problems.push(format!("stderr lacks {text:?}"));
    }
}

pub fn all() -> Vec<Case> {
    let mut cases = symlink_cases();
    cases.extend(fifo_cases());
    cases.extend(bless_cases());
    cases.extend(gate_cases());
    cases.extend(report_cases());
    cases.extend(root_cases());
    cases.push(case(
        "build config: the head changes .cargo/config.toml (diff)",
        2,
        "the head changes how it is built: .cargo/config.toml",
        |w, t| {
            let repo = w.repository();
            std::fs::create_dir_all(repo.join(".cargo")).expect("mkdir");
            std::fs::write(repo.join(".cargo/config.toml"), "[build]\nrustflags = []\n")
                .expect("write");
            super::world::git(&repo, &["add", "-A"]);
            super::world::git(&repo, &["commit", "-q", "-m", "drop the flags"]);
            let call = Call {
                args: args(&["diff", "HEAD~1", "HEAD", "--harness", HARNESS]),
                env: vec![
                    ("CARGO", w.cargo(false).display().to_string()),
                    ("REGRESS_ROOT", repo.display().to_string()),
                ],
                ..Call::default()
            };
            w.play(t, &call)
        },
    ));
    cases.push(case(
        "orphans: Valgrind leaves a daemon (setsid) behind (run)",
        0,
        "harness",
        |w, t| {
            let mut played = w.play(
                t,
                &w.measure("run", Valgrind::LeavesDaemon, ValgrindTools::Real),
            );
            w.scratch_left(&mut played);
            played
        },
    ));
    cases
}

fn symlink_cases() -> Vec<Case> {
    vec![
        case(
            "symlink: a library commits s2n-tls-sys as a link outside (diff --library)",
            2,
            "is a symlink",
            linked_s2n,
        ),
        case(
            "export: a 300 MiB untracked file in the library's working tree (diff --library)",
            2,
            "more than the 256 MiB an untracked file",
            oversized_untracked,
        ),
        case(
            "symlink: perf_outputs/diff/.previous links outside (diff)",
            2,
            "is a symlink",
            |w, t| {
                let repo = w.repository();
                let outside = w.outside();
                std::os::unix::fs::symlink(&outside, repo.join("perf_outputs/diff/.previous"))
                    .expect("link");
                let valgrind = w.valgrind(Valgrind::Works, ValgrindTools::Real);
                let call = Call {
                    args: args(&[
                        "--valgrind",
                        &valgrind.display().to_string(),
                        "diff",
                        "HEAD~1",
                        "HEAD",
                        "--harness",
                        HARNESS,
                    ]),
                    env: vec![
                        ("CARGO", w.cargo(false).display().to_string()),
                        ("REGRESS_ROOT", repo.display().to_string()),
                    ],
                    ..Call::default()
                };
                w.play(t, &call)
            },
        ),
        case(
            "symlink: perf_outputs links outside (run)",
            2,
            "is a symlink",
            |w, t| {
                let outside = w.outside();
                std::fs::remove_dir_all(w.ws.join("perf_outputs")).expect("rm");
                std::os::unix::fs::symlink(&outside, w.ws.join("perf_outputs")).expect("link");
                w.play(t, &w.measure("run", Valgrind::Works, ValgrindTools::Real))
            },
        ),
        case(
            "symlink: baselines/ links outside (bless)",
            2,
            "is a symlink",
            |w, t| {
                let outside = w.outside();
                std::fs::remove_dir_all(w.ws.join("baselines")).expect("rm");
                std::os::unix::fs::symlink(&outside, w.ws.join("baselines")).expect("link");
                let record = regress::fixtures::measurement("a::b", 1_234, None);
                std::fs::write(
                    w.ws.join("perf_outputs/a.b.json"),
                    serde_json::to_string(&record).expect("json"),
                )
                .expect("write");
                w.play_args(t, &["bless"])
            },
        ),
    ]
}

/// An s2n-tls checkout of two commits whose `s2n-tls-sys` is a committed
/// symlink to the `outside/` folder (which holds what the layout check
/// wants): `regress diff --library` must refuse it and change nothing there.
fn linked_s2n(w: &World, t: &Tools) -> Played {
    let outside = w.outside();
    sys_crate(&outside);
    let repo = s2n_checkout(w, |sys| {
        // Absolute: it points outside wherever the tree is exported to.
        std::os::unix::fs::symlink(&outside, sys).expect("link");
    });
    diff_library(w, t, &repo, &["HEAD~1", "HEAD"])
}

/// What the layout check wants of `s2n-tls-sys`: its manifest, a build
/// script, the C sources under `lib/` and generated bindings.
fn sys_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("lib/tls")).expect("mkdir");
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    std::fs::write(dir.join("build.rs"), "fn main() {}\n").expect("write");
    std::fs::write(dir.join("lib/tls/s2n.c"), "precious\n").expect("write");
    std::fs::write(dir.join("src/api.rs"), "// generated\n").expect("write");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"s2n-tls-sys\"\nversion = \"0.3.47\"\n",
    )
    .expect("write");
}

/// An s2n-tls checkout in s2n-tls's layout with two commits (the second
/// changes `tls/x.c`); `sys` makes its `bindings/rust/extended/s2n-tls-sys`.
fn s2n_checkout(w: &World, sys: impl FnOnce(&Path)) -> PathBuf {
    let repo = w.root.join("s2n");
    for dir in [
        "api",
        "crypto",
        "error",
        "stuffer",
        "tls",
        "utils",
        "tests/features",
        "cmake",
    ] {
        std::fs::create_dir_all(repo.join(dir)).expect("mkdir");
        std::fs::write(repo.join(dir).join("x.c"), "x\n").expect("write");
    }
    std::fs::write(repo.join("CMakeLists.txt"), "x\n").expect("write");
    let bindings = repo.join("bindings/rust/extended");
    std::fs::create_dir_all(bindings.join("s2n-tls")).expect("mkdir");
    std::fs::write(
        bindings.join("s2n-tls/Cargo.toml"),
        "[package]\nname = \"s2n-tls\"\nversion = \"0.3.47\"\n",
    )
    .expect("write");
    sys(&bindings.join("s2n-tls-sys"));
    super::world::git(&repo, &["init", "-q", "-b", "main"]);
    super::world::git(&repo, &["add", "-A"]);
    super::world::git(&repo, &["commit", "-q", "-m", "base"]);
    std::fs::write(repo.join("tls/x.c"), "y\n").expect("write");
    super::world::git(&repo, &["commit", "-q", "-am", "head"]);
    repo
}

/// `regress diff --library s2n-tls=REPO REVISIONS...` with a working
/// Valgrind and the fake cargo.
fn diff_library(w: &World, t: &Tools, repo: &Path, revisions: &[&str]) -> Played {
    let valgrind = w.valgrind(Valgrind::Works, ValgrindTools::Real);
    let spec = format!("s2n-tls={}", repo.display());
    let valgrind = valgrind.display().to_string();
    let mut all = vec!["--valgrind", &valgrind, "diff", "--library", &spec];
    all.extend_from_slice(revisions);
    let call = Call {
        args: args(&all),
        env: vec![("CARGO", w.cargo(false).display().to_string())],
        ..Call::default()
    };
    w.play(t, &call)
}

/// An s2n-tls checkout whose working tree holds an untracked file of
/// 300 MiB (sparse: no disk is used) beside an edit: the export of the
/// working tree (HEAD left out) refuses it before it copies anything or
/// builds, instead of copying for seconds with interrupts waiting (issue 27,
/// class 8).
fn oversized_untracked(w: &World, t: &Tools) -> Played {
    let repo = s2n_checkout(w, sys_crate);
    // The generated list of C files the export expects of a commit.
    std::fs::write(
        repo.join("bindings/rust/extended/s2n-tls-sys/files.rs"),
        "// generated\n",
    )
    .expect("write");
    super::world::git(&repo, &["add", "-A"]);
    super::world::git(&repo, &["commit", "-q", "-m", "generated"]);
    std::fs::write(repo.join("tls/x.c"), "z\n").expect("write");
    let big = std::fs::File::create(repo.join("tls/capture.pcap")).expect("create");
    big.set_len(300 << 20).expect("size");
    let started = std::time::Instant::now();
    let mut played = diff_library(w, t, &repo, &["HEAD"]);
    if started.elapsed() > std::time::Duration::from_secs(20) {
        played.problems.push(format!(
            "took {:.1} s to refuse the file",
            started.elapsed().as_secs_f64()
        ));
    }
    played
}

fn fifo_cases() -> Vec<Case> {
    vec![
        case("FIFO: a baseline (run)", 2, "FIFO", |w, t| {
            mkfifo(&w.ws.join("baselines/calibration.spin_1m.json"));
            w.play(t, &w.measure("run", Valgrind::Works, ValgrindTools::Real))
        }),
        case("FIFO: report.json (diff-comment)", 2, "FIFO", |w, t| {
            let path = w.ws.join("report.json");
            mkfifo(&path);
            w.play_args(t, &["diff-comment", &path.display().to_string()])
        }),
        case(
            "FIFO: a history file (history --markdown)",
            2,
            "FIFO",
            |w, t| {
                let dir = w.ws.join("baselines/history/rustls");
                std::fs::create_dir_all(&dir).expect("mkdir");
                mkfifo(&dir.join("0.23.0.json"));
                w.play_args(t, &["history", "--library", "rustls", "--markdown"])
            },
        ),
    ]
}

fn bless_cases() -> Vec<Case> {
    vec![case(
        "bless: SIGKILL 0.3 s into a bless of 3,000 baselines",
        137,
        "",
        |w, t| {
            const N: usize = 3_000;
            let old = regress::fixtures::baseline("a::b", &[("3.19.0", 3_000)]);
            for i in 0..N {
                let harness = format!("k::h{i}");
                let mut record =
                    serde_json::to_value(regress::fixtures::measurement(&harness, 5_000, None))
                        .expect("json");
                record["harness"] = harness.clone().into();
                std::fs::write(
                    w.ws.join(format!("perf_outputs/k.h{i}.json")),
                    record.to_string(),
                )
                .expect("write");
                let mut baseline = serde_json::to_value(&old).expect("json");
                baseline["harness"] = harness.into();
                std::fs::write(
                    w.ws.join(format!("baselines/k.h{i}.json")),
                    serde_json::to_string_pretty(&baseline).expect("json"),
                )
                .expect("write");
            }
            let before: Vec<Vec<u8>> = (0..N)
                .map(|i| std::fs::read(w.ws.join(format!("baselines/k.h{i}.json"))).expect("r"))
                .collect();
            // The stage mark exists from the start: the kill comes 0.3 s
            // after regress starts.
            std::fs::write(w.stage.join("start"), "").expect("write");
            let killed = Call {
                args: args(&["bless"]),
                interrupt: Some(Interrupt {
                    stage: "start",
                    signal: libc::SIGKILL,
                    after: std::time::Duration::from_millis(300),
                }),
                ..Call::default()
            };
            let snapshot = w.snapshot();
            let mut played = w.play(t, &killed);
            // The next command's start removes what the killed one left.
            let next = w.run(t, &["diff-comment", "/nonexistent"], &[], None, None);
            if next.code != Some(2) {
                played.problems.push(format!(
                    "the next command: exit {:?}, {}",
                    next.code,
                    next.message()
                ));
            }
            let changed: usize = (0..N)
                .filter(|i| {
                    std::fs::read(w.ws.join(format!("baselines/k.h{i}.json")))
                        .ok()
                        .as_ref()
                        != Some(&before[*i])
                })
                .count();
            if changed != 0 && changed != N {
                played
                    .problems
                    .push(format!("{changed} of {N} baselines new, the rest old"));
            }
            // Baselines may change (all of them): the rest may not.
            let (left, _) = changes(&snapshot, &w.snapshot());
            played.changed = left
                .into_iter()
                .filter(|change| !(change.starts_with("modified ws/baselines/k.h") && changed == N))
                .collect();
            played.command = format!("{} ({changed} of {N} new)", played.command);
            played
        },
    )]
}

fn gate_cases() -> Vec<Case> {
    vec![
        case(
            "gate: a harness drops from 3,000,081 to 84 (diff-merge)",
            1,
            "base",
            |w, t| {
                let path = w.report_file("r.json", vec![compared("a::b", 3_000_081, 84)]);
                let mut played = w.play_args(t, &["diff-merge", &path.display().to_string()]);
                stderr_has(&mut played, "needs a maintainer: a::b dropped by -100.0 %");
                played
            },
        ),
        case(
            "gate: a renamed harness, removed + added (diff-merge)",
            1,
            "base",
            |w, t| {
                let harnesses = vec![
                    HarnessDiff::one_sided(
                        &name("a::old"),
                        Some(3_000_000),
                        None,
                        Threshold::default(),
                    ),
                    HarnessDiff::one_sided(
                        &name("a::new"),
                        None,
                        Some(6_000_000),
                        Threshold::default(),
                    ),
                ];
                let path = w.report_file("r.json", harnesses);
                let mut played = w.play_args(t, &["diff-merge", &path.display().to_string()]);
                stderr_has(&mut played, "needs a maintainer: a::old removed");
                stderr_has(&mut played, "needs a maintainer: a::new added");
                played
            },
        ),
        case(
            "gate: the rename accepted with --accept (diff-merge)",
            0,
            "base",
            |w, t| {
                let harnesses = vec![
                    HarnessDiff::one_sided(
                        &name("a::old"),
                        Some(3_000_000),
                        None,
                        Threshold::default(),
                    ),
                    HarnessDiff::one_sided(
                        &name("a::new"),
                        None,
                        Some(6_000_000),
                        Threshold::default(),
                    ),
                ];
                let path = w.report_file("r.json", harnesses);
                let path = path.display().to_string();
                let args = [
                    "diff-merge",
                    &path,
                    "--accept",
                    "a::old",
                    "--accept",
                    "a::new",
                ];
                let mut played = w.play_args(t, &args);
                stderr_has(&mut played, "accepted: a::old removed");
                played
            },
        ),
        case(
            "gate: --accept a harness that needs nothing (diff-merge)",
            2,
            "needs no acknowledgement",
            |w, t| {
                let path = w.report_file("r.json", vec![compared("a::b", 3_000_000, 3_000_000)]);
                w.play_args(
                    t,
                    &[
                        "diff-merge",
                        &path.display().to_string(),
                        "--accept",
                        "a::b",
                    ],
                )
            },
        ),
    ]
}

fn report_cases() -> Vec<Case> {
    vec![
        case(
            "report.json: two head objects (diff-comment)",
            2,
            "appears twice",
            |w, t| {
                let path = w.report_file("r.json", vec![compared("a::b", 100, 100)]);
                let text = std::fs::read_to_string(&path).expect("read");
                let forged = text.replacen(
                    "\"head\": {",
                    "\"head\": {\"ref\": \"x\", \"commit\": \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"},\n  \"head\": {",
                    1,
                );
                assert_ne!(forged, text, "the report has a head object");
                std::fs::write(&path, forged).expect("write");
                w.play_args(t, &["diff-comment", &path.display().to_string()])
            },
        ),
        case(
            "report.json: 10,000 harnesses, the comment fits (diff-comment)",
            0,
            "<!-- regress-diff -->",
            |w, t| {
                let harnesses = (0..10_000)
                    .map(|i| compared(&format!("a{i}::harness_{i}"), 3_000_000, 3_500_000))
                    .collect();
                let path = w.report_file("r.json", harnesses);
                let mut played = w.play_args(t, &["diff-comment", &path.display().to_string()]);
                let chars = played.ended.stdout.chars().count();
                if chars > 65_536 {
                    played
                        .problems
                        .push(format!("the comment has {chars} characters"));
                }
                if !played.ended.stdout.contains("do not fit in a comment") {
                    played.problems.push("no note of what was left out".into());
                }
                played.command = format!("{} ({chars} characters)", played.command);
                played
            },
        ),
    ]
}

fn root_cases() -> Vec<Case> {
    vec![
        case(
            "REGRESS_ROOT: a regular file (list)",
            2,
            "REGRESS_ROOT=",
            |w, t| {
                let file = w.root.join("a-file");
                std::fs::write(&file, "not a folder").expect("write");
                w.play(
                    t,
                    &call(
                        &["list"],
                        vec![("REGRESS_ROOT", file.display().to_string())],
                    ),
                )
            },
        ),
        case(
            "REGRESS_ROOT: a missing folder (run)",
            2,
            "does not exist",
            |w, t| {
                let missing = w.root.join("missing").display().to_string();
                w.play(t, &call(&["run"], vec![("REGRESS_ROOT", missing)]))
            },
        ),
        case(
            "REGRESS_ROOT: a folder that is not a workspace (diff-merge)",
            2,
            "is not a workspace",
            |w, t| {
                let path = w.report_file("r.json", vec![compared("a::b", 100, 100)]);
                let empty = w.root.join("empty");
                std::fs::create_dir_all(&empty).expect("mkdir");
                w.play(
                    t,
                    &call(
                        &["diff-merge", &path.display().to_string()],
                        vec![("REGRESS_ROOT", empty.display().to_string())],
                    ),
                )
            },
        ),
    ]
}
