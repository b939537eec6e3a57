//! `regress diff` end to end, on real git repositories in temporary folders.
//!
//! The main test copies this project's committed files into a new
//! repository, commits them, then commits a known change: 100,000 more
//! iterations of the calibration loop in `calibration::spin_2m`, which is
//! exactly 300,000 more instructions (3 per iteration), and a new harness. `regress diff HEAD~1
//! HEAD --harness calibration` must find exactly that, name the function,
//! exit with the regression code, and leave the repository's work tree,
//! index, stashes and worktrees exactly as they were, including an
//! uncommitted change and an untracked file.
//!
//! The diff builds into this workspace's own cargo target folder, so the
//! dependencies are already compiled and the test takes about a minute. That
//! is safe: the diff's builds give the workspace crates artifact names of
//! their own (see `regress::program::isolation`).
//!
//! The tests of bad refs need no Valgrind and no build: the refs are refused
//! before anything is created.

mod support;

use support::{
    assert_kept_and_the_same, git, project_with_calibration_change, target_dir, valgrind_or_skip,
};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The exit code of a regression beyond its threshold.
const EXIT_REGRESSED: i32 = 1;
/// The exit code of an error.
const EXIT_ERROR: i32 = 2;

fn regress(repo: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regress"))
        .args(args)
        .current_dir(repo)
        // The repository is found from the current folder, as for a user;
        // cargo's own variables for this test must not point elsewhere.
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("REGRESS_ROOT")
        .env("CARGO_TARGET_DIR", target_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run regress")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Everything a diff must not change: every file outside `.git`, `target/`
/// and `perf_outputs/` (ignored outputs), and what git says about the work
/// tree, the index, the stashes and the worktrees.
#[derive(Debug, PartialEq)]
struct Snapshot {
    files: BTreeMap<PathBuf, Vec<u8>>,
    status: String,
    index: String,
    staged: String,
    stashes: String,
    worktrees: String,
    head: String,
}

fn snapshot(repo: &Path) -> Snapshot {
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("list") {
            let path = entry.expect("entry").path();
            let relative = path.strip_prefix(root).expect("inside").to_path_buf();
            if dir == root
                && [".git", "target", "perf_outputs"]
                    .iter()
                    .any(|d| relative == Path::new(d))
            {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                files.insert(relative, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(repo, repo, &mut files);
    Snapshot {
        files,
        status: git(repo, &["status", "--porcelain", "--untracked-files=all"]),
        index: git(repo, &["ls-files", "--stage"]),
        staged: git(repo, &["diff", "--cached"]),
        stashes: git(repo, &["stash", "list"]),
        worktrees: git(repo, &["worktree", "list", "--porcelain"]),
        head: git(repo, &["rev-parse", "HEAD"]),
    }
}

#[test]
fn finds_exactly_the_calibration_change_and_touches_nothing() {
    if !valgrind_or_skip("finds_exactly_the_calibration_change_and_touches_nothing") {
        return;
    }
    let (_dir, repo) = project_with_calibration_change();
    // What a user has lying around: an uncommitted change to a tracked file,
    // a staged one, an untracked file, a stash.
    std::fs::write(repo.join("untracked.txt"), "not committed\n").expect("write");
    let mut readme = std::fs::read_to_string(repo.join("README.md")).expect("README");
    readme.push_str("\nan uncommitted line\n");
    std::fs::write(repo.join("README.md"), readme).expect("write");
    std::fs::write(
        repo.join("scripts/install-deps.sh"),
        "#!/bin/sh\n# staged\n",
    )
    .expect("write");
    git(&repo, &["add", "scripts/install-deps.sh"]);
    std::fs::write(repo.join("Cargo.toml"), "# stashed\n").expect("write");
    git(&repo, &["stash", "push", "-q", "--", "Cargo.toml"]);
    let before = snapshot(&repo);

    let bmf = repo.join("perf_outputs/bmf.json");
    let bmf_arg = bmf.to_str().expect("utf-8 path");
    let output = regress(
        &repo,
        &[
            "diff",
            "HEAD~1",
            "HEAD",
            "--harness",
            "calibration",
            "--bmf",
            bmf_arg,
        ],
    );
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(
        output.status.code(),
        Some(EXIT_REGRESSED),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );

    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join("perf_outputs/diff/report.json")).expect("report.json"),
    )
    .expect("report JSON");
    assert_eq!(report["schema"], regress::diff::report::DIFF_SCHEMA);
    // Both commits were built here, with the same toolchain and machine:
    // their fingerprints match, so the report names no build difference.
    let fingerprints = &report["fingerprints"];
    assert!(fingerprints["base"].is_object(), "{report:#}");
    assert_eq!(fingerprints["base"], fingerprints["head"]);
    assert!(!stdout.contains("different builds"), "{stdout}");
    let harness = |name: &str| -> &serde_json::Value {
        report["harnesses"]
            .as_array()
            .expect("harnesses")
            .iter()
            .find(|h| h["harness"] == name)
            .unwrap_or_else(|| panic!("{name} is not in the report: {report:#}"))
    };
    let spin_2m = harness("calibration::spin_2m");
    assert_eq!(spin_2m["delta"], 300_000, "{spin_2m:#}");
    assert_eq!(spin_2m["verdict"], "regressed");
    assert_eq!(spin_2m["significant"], true);
    let spin_1m = harness("calibration::spin_1m");
    assert_eq!(spin_1m["delta"], 0, "{spin_1m:#}");
    assert_eq!(spin_1m["verdict"], "unchanged");
    let spin_1k = harness("calibration::spin_1k");
    assert_eq!(spin_1k["verdict"], "added", "{spin_1k:#}");
    assert_eq!(spin_1k["base"], serde_json::Value::Null);
    assert!(
        spin_1k["head"].as_u64().is_some_and(|n| n >= 3_000),
        "{spin_1k:#}"
    );
    assert_eq!(report["harnesses"].as_array().map(Vec::len), Some(3));

    // The change is in `spin`, the harness's own loop, and all of it.
    let top = &spin_2m["functions"][0];
    assert!(
        top["function"]
            .as_str()
            .is_some_and(|f| f.ends_with("spin")),
        "{spin_2m:#}"
    );
    assert_eq!(top["delta"], 300_000);
    assert_eq!(top["origin"], "harness");
    assert_eq!(top["file"], "harnesses/src/calibration.rs");
    assert_eq!(
        spin_2m["origins"],
        serde_json::json!([{ "origin": "harness", "delta": 300_000 }])
    );

    assert!(stdout.contains("REGRESSED"), "{stdout}");
    assert!(stdout.contains("+300,000"), "{stdout}");
    assert!(stdout.contains("harnesses::calibration::spin"), "{stdout}");

    let annotated =
        std::fs::read_to_string(repo.join("perf_outputs/diff/calibration.spin_2m.diff.txt"))
            .expect("the cg_annotate diff");
    assert!(
        annotated.contains("harnesses::calibration::spin"),
        "{annotated}"
    );
    assert!(annotated.contains("300,000"), "{annotated}");
    let markdown =
        std::fs::read_to_string(repo.join("perf_outputs/diff/report.md")).expect("report.md");
    assert!(
        markdown.contains("| `calibration::spin_2m` |"),
        "{markdown}"
    );
    let bmf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bmf).expect("bmf")).expect("bmf JSON");
    let head_count = spin_2m["head"].as_u64().expect("head count");
    assert_eq!(
        bmf["calibration::spin_2m"]["instructions"]["value"],
        head_count
    );

    // The blind spots: of the three changed files, the registry changed a
    // constant (no function), calibration's `run` ran; config_build's `run`
    // is the one changed function no measured harness ran.
    let blind = &report["blind_spots"];
    assert!(blind["unknown"].is_null(), "{blind:#}");
    assert_eq!(
        blind["considered"],
        serde_json::json!([
            "harnesses/src/calibration.rs",
            "harnesses/src/registry.rs",
            "harnesses/src/s2n_tls/config_build.rs"
        ]),
        "{blind:#}"
    );
    assert_eq!(blind["changed"], 2, "{blind:#}");
    assert_eq!(blind["base"], serde_json::json!([]), "{blind:#}");
    let spots = blind["head"].as_array().expect("head's blind spots");
    let [spot] = spots.as_slice() else {
        panic!("one blind spot expected: {blind:#}");
    };
    assert_eq!(spot["file"], "harnesses/src/s2n_tls/config_build.rs");
    assert_eq!(spot["function"], "run");
    assert!(
        stdout.contains("1 changed function is not run by any harness"),
        "{stdout}"
    );
    assert!(
        markdown.contains("`run` (`harnesses/src/s2n_tls/config_build.rs`)"),
        "{markdown}"
    );

    // Nothing the user had was touched, and no worktree is left.
    assert_eq!(snapshot(&repo), before);
    let scratch = repo.join("target/regress-diff");
    let leftovers: Vec<String> = std::fs::read_dir(&scratch)
        .expect("scratch folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("base-") || name.starts_with("head-") || name == "bin")
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");

    // Again: both sides come from the builds kept in the target folder
    // (keyed by the files, the compilers and the settings, not by the
    // commit), and the diff finds the same.
    let again = regress(
        &repo,
        &["diff", "HEAD~1", "HEAD", "--harness", "calibration"],
    );
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(EXIT_REGRESSED), "{stderr}");
    let kept: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join("perf_outputs/diff/report.json")).expect("report.json"),
    )
    .expect("report JSON");
    assert_kept_and_the_same(&stderr, &report, &kept);
    assert_eq!(snapshot(&repo), before);
}

/// A small repository with two commits on `main` and an orphan commit, and
/// what `Workspace::discover` needs (`Cargo.lock`, `baselines/`).
fn small_repository() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("project");
    std::fs::create_dir_all(repo.join("baselines")).expect("mkdir");
    std::fs::write(repo.join("Cargo.lock"), "version = 4\n").expect("write");
    std::fs::write(repo.join("baselines/.gitkeep"), "").expect("write");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "two"]);
    git(&repo, &["checkout", "-q", "--orphan", "unrelated"]);
    git(&repo, &["commit", "-q", "-m", "orphan"]);
    git(&repo, &["checkout", "-q", "main"]);
    (dir, repo)
}

/// Runs a diff that must be refused: exit code 2, `expected` in the
/// message, and nothing created.
fn assert_refused(args: &[&str], expected: &str) {
    let (_dir, repo) = small_repository();
    let before = snapshot(&repo);
    let output = regress(&repo, args);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_ERROR), "{args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: expected {expected:?} in:\n{stderr}"
    );
    assert!(
        !repo.join("target").exists(),
        "{args:?} created {}",
        repo.join("target").display()
    );
    assert_eq!(snapshot(&repo), before);
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn a_ref_that_does_not_exist_is_refused() {
    assert_refused(
        &["diff", "no-such-branch", "HEAD"],
        "the base revision \"no-such-branch\" does not name a commit",
    );
    assert_refused(
        &["diff", "main", "v9.9.9"],
        "the head revision \"v9.9.9\" does not name a commit",
    );
}

#[test]
fn a_ref_that_looks_like_an_option_is_refused() {
    assert_refused(
        &["diff", "--", "--output=/tmp/x", "HEAD"],
        "starts with `-`",
    );
    assert_refused(&["diff", "-x"], "starts with `-`");
    assert_refused(&["diff", "main", "--", "-HEAD"], "starts with `-`");
}

#[test]
fn unrelated_histories_are_refused() {
    assert_refused(&["diff", "main", "unrelated"], "have no common history");
}

#[test]
fn diff_merge_renders_one_report_from_shards() {
    let (_dir, repo) = small_repository();
    let shard = |index: u32, harness: &str, base: u64, head: u64| {
        serde_json::json!({
            "schema": regress::diff::report::DIFF_SCHEMA,
            "base": { "ref": "main", "commit": "a".repeat(40) },
            "head": { "ref": "HEAD", "commit": "b".repeat(40) },
            "valgrind": "3.22.0",
            "method": "markers",
            "shards": [{ "index": index, "count": 2 }],
            "harnesses": [{
                "harness": harness, "verdict": if head > base { "regressed" } else { "unchanged" },
                "base": base, "head": head, "delta": head as i64 - base as i64,
                "threshold": { "relative_percent": 0.05, "absolute": 1000 },
                "allowance": 1000, "significant": head > base + 1000,
                "origins": [], "functions": [], "annotated_diff": null, "error": null
            }],
            "problems": []
        })
    };
    let one = repo.join("shard-1.json");
    let two = repo.join("shard-2.json");
    std::fs::write(&one, shard(1, "a::same", 10_000, 10_000).to_string()).expect("write");
    std::fs::write(&two, shard(2, "b::worse", 1_000_000, 1_100_000).to_string()).expect("write");

    let output = regress(
        &repo,
        &[
            "diff-merge",
            one.to_str().expect("path"),
            two.to_str().expect("path"),
        ],
    );
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(EXIT_REGRESSED),
        "{}",
        text(&output.stderr)
    );
    let b = stdout.find("b::worse").expect("b::worse row");
    let a = stdout.find("a::same").expect("a::same row");
    assert!(b < a, "the larger change comes first:\n{stdout}");
    let merged =
        std::fs::read_to_string(repo.join("perf_outputs/diff/report.json")).expect("merged");
    assert!(merged.contains("\"index\": 2"), "{merged}");

    // Only one of two shards: reported, and an error.
    let output = regress(&repo, &["diff-merge", one.to_str().expect("path")]);
    assert_eq!(output.status.code(), Some(EXIT_ERROR));
    assert!(text(&output.stdout).contains("shard 2/2 did not report"));
}
