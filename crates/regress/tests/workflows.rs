//! This project's pull-request workflows, run on this machine step by step
//! (`support::workflow` plays GitHub's runner), so that a broken step fails
//! here and not on the first real pull request.
//!
//! - `perf-diff.yml` then `perf-diff-comment.yml`: a pull request of this
//!   project (a copy of its committed files whose head makes
//!   `calibration::spin_2m` 300,000 instructions dearer), both shards, the
//!   merge, the verdict, and the comment rendered from the artifact the
//!   first workflow left.
//! - `library-diff.yml` and `library-diff-comment.yml` run in
//!   `library_e2e.rs`, on the rustls pull request that test makes.
//!
//! Each workflow's own shell runs as written. Only `cargo build -p
//! regress` and `cargo run -p regress` are served by the runner this test
//! was built with (see `support::workflow::cargo_for_the_runner`); the
//! diffs' own builds are real, into this workspace's target folder (the
//! `CARGO_TARGET_DIR` a self-hosted runner may set), as in `diff_e2e.rs`.
//!
//! The first tests check the player itself on small workflows: a failing
//! step fails its job and the verdict, `if: always()` steps still run, a
//! `needs` job after a failure is skipped, an unknown context field fails
//! the test, and a job's `if` skips it.

mod support;

use std::path::{Path, PathBuf};

use serde_json::json;
use support::workflow::{
    pull_request, workflow, workflow_run, workflow_runner, Conclusion, Runner,
};
use support::{git, project_with_calibration_change, valgrind_or_skip};

fn small_workflow(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("workflow.yml");
    std::fs::write(&path, text).expect("write the workflow");
    path
}

const SMALL: &str = r#"
name: small
on: pull_request
env:
  FROM_WORKFLOW: w
jobs:
  first:
    runs-on: ubuntu-24.04
    strategy:
      matrix:
        n: [1, 2]
    steps:
      - name: write
        id: write
        env:
          NUMBER: ${{ github.event.pull_request.number }}
        run: |
          echo "seen=$FROM_WORKFLOW-$NUMBER-${{ matrix.n }}" >> "$GITHUB_OUTPUT"
          echo "LATER=from-env" >> "$GITHUB_ENV"
      - name: read
        run: |
          test "${{ steps.write.outputs.seen }}" = "w-7-${{ matrix.n }}"
          test "$LATER" = from-env
          echo "summary ${{ matrix.n }}" >> "$GITHUB_STEP_SUMMARY"
      - name: fail on the second
        run: test "${{ matrix.n }}" = 1
      - name: skipped after a failure
        run: exit 0
      - name: always
        if: always()
        run: exit 0
      - name: Install system packages
        if: always()
        run: exit 1
  second:
    needs: first
    runs-on: ubuntu-24.04
    steps:
      - run: exit 0
  guarded:
    if: github.event.pull_request.number == 8 || vars.UNSET
    runs-on: ubuntu-24.04
    steps:
      - run: exit 0
"#;

#[test]
fn the_player_runs_steps_as_github_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut runner = Runner::new(dir.path());
    runner.machine_step("Install system", "not here");
    let run = runner.run(
        &small_workflow(dir.path(), SMALL),
        json!({ "github": { "event": { "pull_request": { "number": 7 } } } }),
    );
    let first = run.job("first (n=1)");
    assert_eq!(first.conclusion, Conclusion::Success, "{}", run.describe());
    assert_eq!(first.summary, "summary 1\n");
    let second = run.job("first (n=2)");
    assert_eq!(second.conclusion, Conclusion::Failure, "{}", run.describe());
    assert_eq!(
        second.step("skipped after a failure").conclusion,
        Conclusion::Skipped
    );
    assert_eq!(second.step("always").conclusion, Conclusion::Success);
    let machine = second.step("Install system packages");
    assert_eq!(
        (machine.conclusion, machine.log.as_str()),
        (Conclusion::Skipped, "not here")
    );
    // One failed matrix entry fails the job for those that need it.
    assert_eq!(run.job("second").conclusion, Conclusion::Skipped);
    assert_eq!(run.job("guarded").conclusion, Conclusion::Skipped);
}

#[test]
#[should_panic(expected = "github.event.pull_request.numbr, which the test did not give")]
fn a_field_the_test_did_not_give_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = SMALL.replace("pull_request.number }}", "pull_request.numbr }}");
    Runner::new(dir.path()).run(
        &small_workflow(dir.path(), &text),
        json!({ "github": { "event": { "pull_request": { "number": 7 } } } }),
    );
}

#[test]
fn perf_diff_and_its_comment_run_on_a_pull_request() {
    if !valgrind_or_skip("perf_diff_and_its_comment_run_on_a_pull_request") {
        return;
    }
    let (dir, repo) = project_with_calibration_change();
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_owned();
    let base = git(&repo, &["rev-parse", "HEAD~1"]).trim().to_owned();
    // The pull request's head, where GitHub keeps it; the default branch
    // stays at the base.
    git(&repo, &["update-ref", "refs/pull/7/head", &head]);
    git(&repo, &["reset", "-q", "--hard", &base]);
    let repository = "owner/tls-regress";
    let mut runner = workflow_runner(dir.path());
    runner.repository(repository, &repo);

    let mut context = json!({
        "github": pull_request(repository, 7, &base, &head),
        "vars": { "PERF_DIFF_HARNESS": "calibration" },
    });
    let diff = runner.run(&workflow("perf-diff.yml"), context.take());
    let describe = diff.describe();
    eprintln!("{describe}");
    for shard in ["diff (shard=1)", "diff (shard=2)"] {
        assert_eq!(
            diff.job(shard).conclusion,
            Conclusion::Success,
            "{describe}"
        );
    }
    // The second shard builds nothing: both sides are the first shard's
    // builds, kept in the runner's target folder (its CARGO_TARGET_DIR).
    let second = diff.job("diff (shard=2)");
    let log = &second.step("Diff the merge base and the head").log;
    for side in ["base", "head"] {
        assert!(
            log.contains(&format!("took the {side} harnesses from a kept build")),
            "{describe}"
        );
    }
    // The regression fails the check, after everything is uploaded.
    let report = diff.job("report");
    assert_eq!(report.conclusion, Conclusion::Failure, "{describe}");
    assert_eq!(report.step("Verdict").conclusion, Conclusion::Failure);
    assert!(
        report
            .step("Verdict")
            .log
            .contains("::error::A harness regressed"),
        "{describe}"
    );
    for step in [
        "Merge the shards into one report",
        "Job summary",
        "Prepare the comment's data",
    ] {
        assert_eq!(
            report.step(step).conclusion,
            Conclusion::Success,
            "{describe}"
        );
    }
    assert!(
        report.summary.contains("`calibration::spin_2m`"),
        "{}",
        report.summary
    );
    // The merged report: both shards, spin_2m's change found whole.
    let merged: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(runner.workspace().join("perf_outputs/diff/report.json"))
            .expect("the merged report"),
    )
    .expect("JSON");
    assert_eq!(
        merged["shards"].as_array().map(Vec::len),
        Some(2),
        "{merged:#}"
    );
    let spin_2m = merged["harnesses"]
        .as_array()
        .expect("harnesses")
        .iter()
        .find(|h| h["harness"] == "calibration::spin_2m")
        .unwrap_or_else(|| panic!("spin_2m is not in {merged:#}"));
    assert_eq!(spin_2m["delta"], 300_000, "{spin_2m:#}");
    assert_eq!(spin_2m["verdict"], "regressed");

    // The comment, rendered in the base repository's context from the
    // artifact the pull request's run left.
    let comment = runner.run(
        &workflow("perf-diff-comment.yml"),
        json!({ "github": workflow_run(repository, diff.id, "failure", &head, &base) }),
    );
    let describe = comment.describe();
    let job = comment.job("comment");
    assert_eq!(job.conclusion, Conclusion::Success, "{describe}");
    let data = runner.temp().join("comment");
    assert_eq!(
        std::fs::read_to_string(data.join("pr-number")).expect("pr-number"),
        "7\n"
    );
    let body = std::fs::read_to_string(data.join("body.md")).expect("the rendered comment");
    assert!(body.contains("calibration::spin_2m"), "{body}");
    assert!(body.contains("+300,000"), "{body}");

    // A cancelled run is not commented on.
    let cancelled = runner.run(
        &workflow("perf-diff-comment.yml"),
        json!({ "github": workflow_run(repository, diff.id, "cancelled", &head, &base) }),
    );
    assert_eq!(cancelled.job("comment").conclusion, Conclusion::Skipped);
    drop(dir);
}
