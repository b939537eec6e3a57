//! The second hostile-input campaign's classes (issue 27): symlinks where
//! the runner writes, FIFOs where it reads, a bless killed outright, a gate
//! a pull request could walk around, forged or oversized reports, and a bad
//! `REGRESS_ROOT`. Each class has at least one case; every case also gets
//! the common checks (exit code, first line, no process left, nothing
//! changed outside `perf_outputs/`, which includes an `outside/` folder the
//! links point at).
//!
//! The classes are here, but two: `library.rs` has the `--library`
//! checkouts (a symlinked `s2n-tls-sys`, an oversized untracked file) and
//! `gate.rs` the gate and the forged reports.

mod gate;
mod library;

use std::path::{Path, PathBuf};

use regress::compare::HarnessDiff;
use regress::diff::DiffReport;
use regress::judge::Threshold;

use super::cases::{args, case, Call, Case, Played, HARNESS};
use super::fakes::{Tools as ValgrindTools, Valgrind};
use super::world::{changes, Interrupt, World};

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
    cases.extend(gate::gate_cases());
    cases.extend(gate::report_cases());
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
            library::linked_s2n,
        ),
        case(
            "export: a 300 MiB untracked file in the library's working tree (diff --library)",
            2,
            "more than the 256 MiB an untracked file",
            library::oversized_untracked,
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
