//! The cases of `regress diff`, `diff-merge` and `diff-comment`: bad refs,
//! interrupts at each stage (with a previous report that must survive them
//! byte for byte), and hostile report.json files.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::cases::{args, case, interrupted, Call, Case, Played, HARNESS};
use super::fakes::{Tools as ValgrindTools, Valgrind};
use super::world::{git, Tools, World};

/// The previous diff's outputs, which a diff that does not complete must
/// leave as they were.
const PREVIOUS: &[(&str, &str)] = &[
    ("report.md", "### previous report\n"),
    ("report.json", "{\"previous\": true}\n"),
    (
        "calibration.spin_1m.diff.txt",
        "previous per-function diff\n",
    ),
];

impl World {
    /// A repository with a previous report, and the call of a diff of its
    /// two commits with the fake Valgrind (`mode`, `tools`).
    fn diff(&self, mode: Valgrind, tools: ValgrindTools, cargo_hangs: bool) -> (PathBuf, Call) {
        let repo = self.repository();
        for (name, text) in PREVIOUS {
            std::fs::write(repo.join("perf_outputs/diff").join(name), text).expect("write");
        }
        let valgrind = self.valgrind(mode, tools);
        let call = Call {
            args: vec![
                "--valgrind".into(),
                valgrind.display().to_string(),
                "diff".into(),
                "HEAD~1".into(),
                "HEAD".into(),
                "--harness".into(),
                HARNESS.into(),
            ],
            env: vec![
                ("CARGO", self.cargo(cargo_hangs).display().to_string()),
                ("REGRESS_ROOT", repo.display().to_string()),
            ],
            ..Call::default()
        };
        (repo, call)
    }
}

/// The checks after a diff: no worktree left, nothing but the lock and
/// the target folder in its scratch folder, and (unless it completed) the
/// previous report as it was.
fn after_diff(repo: &Path, played: &mut Played, completed: bool) {
    let list = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["worktree", "list", "--porcelain"])
        .output()
        .expect("git");
    let worktrees = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter(|line| line.starts_with("worktree "))
        .count();
    if worktrees != 1 {
        played
            .problems
            .push(format!("{} worktrees left", worktrees - 1));
    }
    let scratch = repo.join("target/regress-diff");
    if let Ok(entries) = std::fs::read_dir(&scratch) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != ".lock" && name != "target" {
                played
                    .problems
                    .push(format!("target/regress-diff/{name} left"));
            }
        }
    }
    let outputs = repo.join("perf_outputs/diff");
    for (name, text) in PREVIOUS {
        let kept = std::fs::read_to_string(outputs.join(name)).ok().as_deref() == Some(*text);
        if !completed && !kept {
            played
                .problems
                .push(format!("the previous {name} was not kept"));
        }
        if completed && kept {
            played
                .problems
                .push(format!("the previous {name} was not replaced"));
        }
    }
    if outputs.join(".previous").exists() {
        played
            .problems
            .push("perf_outputs/diff/.previous left".into());
    }
}

fn diff_case(
    name: &'static str,
    code: i32,
    message: &'static str,
    setup: (Valgrind, ValgrindTools, bool),
    interrupt: Option<(&'static str, i32)>,
) -> Case {
    case(name, code, message, move |w: &World, t: &Tools| {
        let (repo, mut call) = w.diff(setup.0, setup.1, setup.2);
        if let Some((stage, signal)) = interrupt {
            call = interrupted(call, stage, signal);
        }
        let mut played = w.play(t, &call);
        after_diff(&repo, &mut played, interrupt.is_none());
        played
    })
}

/// A report regress would write, as JSON, for the merge and comment cases.
fn report(commit: &str, shards: serde_json::Value, function: &str) -> serde_json::Value {
    json!({
        "schema": regress::diff::report::DIFF_SCHEMA,
        "base": { "ref": "main", "commit": "a".repeat(40) },
        "head": { "ref": "@octocat <img src=x>", "commit": commit },
        "valgrind": "3.22.0",
        "method": "markers",
        "shards": shards,
        "harnesses": [{
            "harness": "a::b", "verdict": "regressed", "base": 1000000, "head": 1100000,
            "delta": 100000, "threshold": { "relative_percent": 0.05, "absolute": 1000 },
            "allowance": 1000, "significant": true,
            "origins": [{ "origin": "harness", "delta": 100000 }],
            "functions": [{ "file": "a.rs", "function": function, "origin": "harness",
                            "base": 5, "head": 100005, "delta": 100000 }],
            "annotated_diff": null, "error": null
        }],
        "problems": ["<!-- regress-diff --> [x](https://evil.example)"]
    })
}

fn report_case(
    name: &'static str,
    command: &'static str,
    code: i32,
    message: &'static str,
    value: serde_json::Value,
) -> Case {
    case(name, code, message, move |w: &World, t: &Tools| {
        let path = w.ws.join("untrusted-report.json");
        std::fs::write(&path, value.to_string()).expect("write");
        let call = Call {
            args: args(&[command, &path.display().to_string()]),
            ..Call::default()
        };
        let mut played = w.play(t, &call);
        if command == "diff-comment" && played.ended.code == Some(0) {
            let body = &played.ended.stdout;
            if body.matches("<!--").count() != 1 || !body.starts_with("<!-- regress-diff -->") {
                played
                    .problems
                    .push("the marker is not there exactly once".into());
            }
            if body.contains("<img") || body.contains("](https") {
                // Only inside code spans may they stand; the unit tests check
                // spans, here it is enough that none is raw at a line start.
                let raw = body
                    .lines()
                    .any(|line| line.starts_with("<img") || line.starts_with('['));
                if raw {
                    played.problems.push("raw markup in the comment".into());
                }
            }
        }
        played
    })
}

pub fn all() -> Vec<Case> {
    let (works, hangs, real) = (Valgrind::Works, Valgrind::Hangs, ValgrindTools::Real);
    let (int, term) = (libc::SIGINT, libc::SIGTERM);
    let hash = "b".repeat(40);
    vec![
        case(
            "diff: a ref that names no commit",
            2,
            "does not name a commit",
            |w, t| {
                let repo = w.repository();
                let call = Call {
                    args: args(&["diff", "no-such-ref"]),
                    env: vec![("REGRESS_ROOT", repo.display().to_string())],
                    ..Call::default()
                };
                w.play(t, &call)
            },
        ),
        case(
            "diff: a ref that looks like an option",
            2,
            "starts with `-`",
            |w, t| {
                let repo = w.repository();
                let call = Call {
                    args: args(&["diff", "--", "--output=/tmp/x"]),
                    env: vec![("REGRESS_ROOT", repo.display().to_string())],
                    ..Call::default()
                };
                w.play(t, &call)
            },
        ),
        case(
            "diff: unrelated histories",
            2,
            "no common history",
            |w, t| {
                let repo = w.repository();
                git(&repo, &["checkout", "-q", "--orphan", "other"]);
                git(&repo, &["commit", "-q", "-m", "orphan"]);
                git(&repo, &["checkout", "-q", "main"]);
                let call = Call {
                    args: args(&["diff", "main", "other"]),
                    env: vec![("REGRESS_ROOT", repo.display().to_string())],
                    ..Call::default()
                };
                w.play(t, &call)
            },
        ),
        diff_case(
            "diff: clean, replaces the previous report",
            0,
            "base",
            (works, real, false),
            None,
        ),
        diff_case(
            "diff, SIGINT while cargo builds base",
            130,
            "interrupted",
            (works, real, true),
            Some(("build", int)),
        ),
        diff_case(
            "diff, SIGINT while Valgrind measures",
            130,
            "interrupted",
            (hangs, real, false),
            Some(("measure", int)),
        ),
        diff_case(
            "diff, SIGTERM while Valgrind measures",
            130,
            "interrupted",
            (hangs, real, false),
            Some(("measure", term)),
        ),
        diff_case(
            "diff, SIGINT while cg_diff lines names up",
            130,
            "interrupted",
            (works, ValgrindTools::DiffHangs, false),
            Some(("annotate", int)),
        ),
        report_case(
            "diff-merge: a commit id of multi-byte characters",
            "diff-merge",
            2,
            "not a full commit hash",
            report(&"é".repeat(20), json!([]), "f"),
        ),
        report_case(
            "diff-merge: 10^15 shards",
            "diff-merge",
            2,
            "too many",
            report(
                &hash,
                json!([{ "index": 1, "count": 1_000_000_000_000_000u64 }]),
                "f",
            ),
        ),
        report_case(
            "diff-comment: hostile strings",
            "diff-comment",
            0,
            "<!-- regress-diff -->",
            report(
                &hash,
                json!([]),
                "@octocat [x](https://evil.example) <!-- regress-diff -->",
            ),
        ),
        report_case(
            "diff-comment: a forged verdict",
            "diff-comment",
            2,
            "is not what",
            {
                let mut forged = report(&hash, json!([]), "f");
                forged["harnesses"][0]["verdict"] = "unchanged".into();
                forged
            },
        ),
    ]
}
