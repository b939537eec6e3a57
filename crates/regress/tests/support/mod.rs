//! What the end-to-end tests of `regress diff` share: where this workspace
//! and its cargo target folder are, whether Valgrind is there, and a copy
//! of this project's committed files to run a diff in.

#![allow(dead_code)]

pub mod workflow;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/regress is two levels below the root")
        .to_path_buf()
}

/// The cargo target folder this test binary was built in.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    // .../target/debug/regress
    Path::new(env!("CARGO_BIN_EXE_regress"))
        .ancestors()
        .nth(2)
        .expect("the binary is two levels below the target folder")
        .to_path_buf()
}

/// Whether the Valgrind tests can run here: skipped with a visible note
/// without Valgrind, unless `REGRESS_REQUIRE_VALGRIND=1` makes that a
/// failure.
pub fn valgrind_or_skip(test: &str) -> bool {
    match regress::measure::valgrind::Valgrind::from_env() {
        Ok(_) => true,
        Err(error) => {
            if std::env::var(regress::env::REQUIRE_VALGRIND).as_deref() == Ok("1") {
                panic!("REGRESS_REQUIRE_VALGRIND=1 but Valgrind is unavailable: {error}");
            }
            // libtest captures eprintln!, but not a direct write.
            let _ = std::io::stderr()
                .write_all(format!("{test}: SKIPPED (Valgrind unavailable: {error})\n").as_bytes());
            false
        }
    }
}

/// Unpacks this project's committed files (`git archive HEAD`) into the new
/// folder `root`.
pub fn unpack_project(root: &Path) {
    std::fs::create_dir(root).expect("mkdir");
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(workspace_root())
        .args(["archive", "--format=tar", "HEAD"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("git archive");
    let unpacked = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(root)
        .stdin(archive.stdout.take().expect("archive output"))
        .status()
        .expect("tar");
    assert!(unpacked.success() && archive.wait().expect("wait").success());
}

/// A copy of this project's committed files in `dir/project`, made a git
/// repository of one commit: the workspace an end-to-end test runs
/// `regress` in.
pub fn project(dir: &Path) -> PathBuf {
    project_without(dir, &[])
}

/// [`project`] without the committed folders `removed` (relative paths),
/// e.g. the stored histories a test measures afresh.
pub fn project_without(dir: &Path, removed: &[&str]) -> PathBuf {
    let root = dir.join("project");
    unpack_project(&root);
    for path in removed {
        let path = root.join(path);
        if path.exists() {
            std::fs::remove_dir_all(&path).expect("remove a committed folder");
        }
    }
    for args in [
        &["init", "-q"][..],
        &["add", "-A"][..],
        &["commit", "-q", "-m", "project"][..],
    ] {
        let status = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(["-c", "commit.gpgSign=false"])
            .args(args)
            .stdout(Stdio::null())
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    }
    root
}

/// `regress ARGS` in `project`, as a user runs it there (no variable of
/// the test's own cargo run pointing elsewhere), stdin closed.
pub fn regress_command(project: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_regress"));
    command
        .args(args)
        .current_dir(project)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("REGRESS_ROOT")
        .stdin(Stdio::null());
    command
}

/// [`regress_command`], run to the end.
pub fn regress(project: &Path, args: &[&str]) -> std::process::Output {
    regress_command(project, args)
        .output()
        .expect("run regress")
}

/// `git ARGS` in `dir` with a fixed identity; its standard output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=regress test",
            "-c",
            "user.email=regress@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A copy of this project's committed files, committed as `base`, then
/// `head` with spin_2m's loop 100,000 iterations longer, and a comment in
/// two harnesses' `run`: calibration's (which the diff measures) and
/// `s2n_tls::config_build`'s (which it does not, so it is a blind spot).
pub fn project_with_calibration_change() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("project");
    unpack_project(&repo);

    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);

    // The list of harnesses is the registry's data, which the measured
    // program, the perf tests and the benchmarks all read.
    let perf = repo.join("harnesses/src/registry.rs");
    let source = std::fs::read_to_string(&perf).expect("registry.rs");
    let before = "spin(\"2m\", 2_000_000)";
    assert!(
        source.contains(before),
        "the registry no longer declares spin_2m as {before:?}; update this test"
    );
    // Also a harness that only head has: reported as added, not an error.
    let after = "spin(\"2m\", 2_100_000), spin(\"1k\", 1_000)";
    std::fs::write(&perf, source.replace(before, after)).expect("write registry.rs");
    for (file, line) in [
        (
            "harnesses/src/calibration.rs",
            "    fn run(&self, _: &(), _: ()) -> Result<u64, HarnessError> {\n",
        ),
        (
            "harnesses/src/s2n_tls/config_build.rs",
            "    fn run(&self, setup: &ConfigBuildSetup, _: ()) -> Result<Config, HarnessError> {\n",
        ),
    ] {
        let path = repo.join(file);
        let source = std::fs::read_to_string(&path).expect("read");
        assert!(source.contains(line), "{file} no longer has {line:?}; update this test");
        let edited = source.replacen(line, &format!("{line}        // head: changed\n"), 1);
        std::fs::write(&path, edited).expect("write");
    }
    git(
        &repo,
        &[
            "commit",
            "-q",
            "-am",
            "head: spin_2m 100,000 iterations longer; spin_1k",
        ],
    );
    (dir, repo)
}

/// Checks a diff run a second time on the same sources: its progress
/// (`stderr`) says both sides' programs came from kept builds, and its
/// report has the same delta for every harness as the first run's.
pub fn assert_kept_and_the_same(
    stderr: &str,
    first: &serde_json::Value,
    again: &serde_json::Value,
) {
    for side in ["base", "head"] {
        assert!(
            stderr.contains(&format!("took the {side} harnesses from a kept build")),
            "{stderr}"
        );
    }
    let deltas = |report: &serde_json::Value| -> Vec<(String, serde_json::Value)> {
        report["harnesses"]
            .as_array()
            .expect("harnesses")
            .iter()
            .map(|h| (h["harness"].to_string(), h["delta"].clone()))
            .collect()
    };
    assert_eq!(deltas(again), deltas(first));
}
