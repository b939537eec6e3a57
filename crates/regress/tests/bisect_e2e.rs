//! `regress bisect --library` end to end, offline, on a git repository in
//! s2n-tls's real layout (made by `regress-source`'s test fixtures from
//! the registry's s2n-tls crates), six commits long, where commit 4 adds a
//! known `noinline` loop on `s2n_send`'s path and the others change
//! comments only.
//!
//! The bisect must name commit 4 after at most ceil(log2(6)) + 1 = 4
//! measurements, with the loop as the function that moved; an interrupt
//! (SIGINT while a revision builds) must exit 130 and keep what was done;
//! a second run must take every build and count from the cache; a range
//! whose revisions cannot be built must end with a clear error; and the
//! library's repository must be byte for byte as it was after every run.
//!
//! Like `library_e2e.rs`, it runs in a copy of this project and builds into
//! this workspace's own cargo target folder, where the dependencies that
//! do not change (aws-lc, OpenSSL's bindings) are already compiled.

#[path = "../../source/tests/common/mod.rs"]
mod common;
#[path = "library/spin.rs"]
mod spin;
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::snapshot::Snapshot;
use spin::{SPIN, SPIN_FUNCTION};
use support::{project, regress, regress_command, target_dir, valgrind_or_skip};

const HARNESS: &str = "s2n_tls::record_aes128gcm_16k";
/// Commits in the repository, GOOD (1) and BAD (6) included.
const COMMITS: usize = 6;
/// The commit that adds the loop.
const STEP: usize = 4;

/// s2n-tls's repository with `COMMITS` commits; returns it and the commits,
/// oldest first.
fn repository(dir: &Path) -> (PathBuf, Vec<String>) {
    let root = common::repos::s2n_tls(dir, "0.3.47");
    let mut commits = vec![common::git(&root, &["rev-parse", "HEAD"])];
    for n in 2..=COMMITS {
        if n == STEP {
            spin::add_spin(&root);
        } else {
            let file = root.join("tls/s2n_config.c");
            let text = std::fs::read_to_string(&file).expect("read");
            std::fs::write(&file, format!("/* revision {n} */\n{text}")).expect("write");
            common::git(&root, &["commit", "-q", "-am", &format!("comment {n}")]);
        }
        commits.push(common::git(&root, &["rev-parse", "HEAD"]));
    }
    (root, commits)
}

fn bisect_args<'a>(spec: &'a str, target: &'a str, good: &'a str, bad: &'a str) -> Vec<&'a str> {
    vec![
        "bisect",
        good,
        bad,
        "--harness",
        HARNESS,
        "--library",
        spec,
        "--target-dir",
        target,
    ]
}

/// Runs regress and sends it SIGINT once stderr shows `marker`; returns
/// its exit code and stderr.
fn interrupted(project: &Path, args: &[&str], marker: &str) -> (Option<i32>, String) {
    let mut child = regress_command(project, args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run regress");
    let mut stderr = String::new();
    let mut lines = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while lines.read_line(&mut line).expect("read") > 0 {
        stderr.push_str(&line);
        if line.contains(marker) {
            // Let cargo start compiling, then interrupt regress alone.
            std::thread::sleep(Duration::from_secs(3));
            // SAFETY: kill(2) on our own child's id.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGINT);
            }
        }
        line.clear();
    }
    let status = child.wait().expect("wait");
    (status.code(), stderr)
}

fn result(project: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(project.join("perf_outputs/bisect/result.json"))
        .expect("result.json");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn bisect_names_the_commit_that_added_a_function() {
    if !valgrind_or_skip("bisect_names_the_commit_that_added_a_function") {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let project = project(dir.path());
    let (s2n, commits) = repository(dir.path());
    let before = Snapshot::take(&s2n);
    let spec = format!("s2n-tls={}", s2n.display());
    let target = target_dir();
    let target = target.to_str().expect("utf-8");
    let (good, bad) = (commits[0].as_str(), commits[COMMITS - 1].as_str());
    let args = bisect_args(&spec, target, good, bad);

    // Interrupted while the first revision after GOOD builds.
    let (code, stderr) = interrupted(&project, &args, "[3/5]");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    Snapshot::take(&s2n).assert_same(&before);

    // Run again: GOOD's build and count are kept.
    let output = regress(&project, &args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    Snapshot::take(&s2n).assert_same(&before);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("GOOD") && stderr.contains("count kept"),
        "{stderr}"
    );
    let found = result(&project);
    let culprit = &found["culprit"];
    assert_eq!(culprit["commit"], commits[STEP - 1], "{stdout}");
    assert_eq!(culprit["before_commit"], commits[STEP - 2], "{stdout}");
    let measured = found["measured"].as_u64().expect("measured");
    assert!(
        measured <= 4,
        "{measured} measurements for 6 commits: {stdout}"
    );
    let top = &culprit["functions"][0];
    assert_eq!(top["function"], SPIN_FUNCTION, "{stdout}");
    assert_eq!(top["file"], "tls/s2n_send.c");
    // One call per 16 KiB record, 64 records: see library_e2e.rs.
    assert_eq!(top["delta"].as_u64(), Some(64 * (3 * SPIN + 5)), "{stdout}");
    assert!(stdout.contains("first revision that moved"), "{stdout}");
    let diff = project.join(format!(
        "perf_outputs/bisect/{}.diff.txt",
        HARNESS.replace("::", ".")
    ));
    assert!(std::fs::read_to_string(&diff)
        .expect("the step's diff")
        .contains(SPIN_FUNCTION));

    // A third run builds and measures nothing.
    let again = regress(&project, &args);
    assert_eq!(again.status.code(), Some(0));
    let kept = result(&project);
    assert_eq!(kept["builds"], 0, "{kept}");
    assert_eq!(kept["cached_measurements"], kept["measured"], "{kept}");
    assert_eq!(kept["culprit"]["commit"], commits[STEP - 1]);

    // Every revision after GOOD of this branch lacks s2n-tls's layout.
    common::git(&s2n, &["switch", "-q", "-c", "broken", good]);
    for n in 0..2 {
        std::fs::remove_dir_all(s2n.join("utils")).ok();
        common::write(&s2n.join(format!("notes-{n}.txt")), "gone\n");
        common::git(&s2n, &["add", "-A"]);
        common::git(&s2n, &["commit", "-q", "-m", "no utils/"]);
    }
    let broken = common::git(&s2n, &["rev-parse", "HEAD"]);
    common::git(&s2n, &["switch", "-q", "main"]);
    let before = Snapshot::take(&s2n);
    let output = regress(&project, &bisect_args(&spec, target, good, &broken));
    let stderr = String::from_utf8_lossy(&output.stderr);
    Snapshot::take(&s2n).assert_same(&before);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no revision after GOOD builds"), "{stderr}");
    assert!(stderr.contains("missing utils/"), "{stderr}");
    eprintln!(
        "bisect end to end: commit {STEP} of {COMMITS} found after {measured} measurements; \
         the whole test {:.0} s",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn bad_bisect_input_is_refused_before_anything_is_built() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = project(dir.path());
    let s2n = common::repos::s2n_tls(dir.path(), "0.3.47");
    let first = common::git(&s2n, &["rev-parse", "HEAD"]);
    common::write(&s2n.join("notes.txt"), "two\n");
    common::git(&s2n, &["add", "-A"]);
    common::git(&s2n, &["commit", "-q", "-m", "two"]);
    common::git(&s2n, &["switch", "-q", "-c", "side", &first]);
    common::write(&s2n.join("side.txt"), "side\n");
    common::git(&s2n, &["add", "-A"]);
    common::git(&s2n, &["commit", "-q", "-m", "side"]);
    common::git(&s2n, &["switch", "-q", "main"]);
    let before = Snapshot::take(&s2n);
    let spec = format!("s2n-tls={}", s2n.display());
    for (good, bad, expected) in [
        ("main", &*first, "BAD is an ancestor of GOOD: swap them"),
        ("side", "main", "diverged"),
        ("main", "main", "the same commit"),
        ("no-such-ref", "main", "names no commit"),
        ("--output=x", "main", "starts with `-`"),
    ] {
        let output = regress(
            &project,
            &[
                "bisect",
                good,
                bad,
                "--harness",
                HARNESS,
                "--library",
                &spec,
            ],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{good} {bad}: {stderr}");
        assert!(stderr.contains(expected), "{good} {bad}: {stderr}");
    }
    let output = regress(
        &project,
        &[
            "bisect",
            &first,
            "main",
            "--harness",
            "../x",
            "--library",
            &spec,
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a harness name"));
    Snapshot::take(&s2n).assert_same(&before);
    assert!(
        !project.join("target").exists() && !project.join("perf_outputs/bisect").exists(),
        "nothing is created for a refused bisect"
    );
}
