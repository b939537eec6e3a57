//! What a test hands the runner: the workflows, a runner set up for this
//! project, and the GitHub context of a pull request or a workflow run.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::steps::path_text;
use super::Runner;

/// A folder holding a `cargo` that stands in for cargo where a workflow
/// builds or runs this project's runner (`cargo build -p regress`, `cargo
/// run -p regress -- ARGS`): `runner`, the runner this test was built with
/// from the same sources, is put where cargo would put it
/// (`${CARGO_TARGET_DIR:-target}/debug/regress`) or run with ARGS. Every
/// other cargo command (the diff's own builds of the measured program) is
/// the real cargo's. Compiling the runner again in every job would cost
/// minutes and test cargo, not the workflow.
pub fn cargo_for_the_runner(dir: &Path, runner: &Path) -> PathBuf {
    let real = Command::new("sh")
        .args(["-c", "command -v cargo"])
        .output()
        .expect("find cargo");
    let real = String::from_utf8(real.stdout).expect("a UTF-8 path");
    let real = real.trim();
    assert!(!real.is_empty(), "cargo is not on PATH");
    std::fs::create_dir_all(dir).expect("mkdir");
    let script = format!(
        r#"#!/bin/sh
runner='{runner}'
case " $* " in
  *" -p regress "*)
    case "$1" in
      build)
        dir="${{CARGO_TARGET_DIR:-target}}/debug"
        mkdir -p "$dir"
        if [ ! "$dir/regress" -ef "$runner" ]; then cp "$runner" "$dir/regress"; fi
        exit 0 ;;
      run)
        while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done
        [ "$#" -gt 0 ] && shift
        exec "$runner" "$@" ;;
    esac ;;
esac
exec '{real}' "$@"
"#,
        runner = path_text(runner),
    );
    let path = dir.join("cargo");
    std::fs::write(&path, script).expect("write the cargo stand-in");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir.to_path_buf()
}

/// `PATH` with `first` in front.
pub fn path_with(first: &Path) -> String {
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", path_text(first))
}

/// This project's workflow file `name`.
pub fn workflow(name: &str) -> PathBuf {
    super::super::workspace_root()
        .join(".github/workflows")
        .join(name)
}

/// A runner in `dir/runner` whose steps find the stand-in for the runner's
/// build first on `PATH` ([`cargo_for_the_runner`]), whose machine sets
/// `CARGO_TARGET_DIR` to this workspace's target folder (as a self-hosted
/// runner may), so the diffs' builds find the dependencies compiled, and
/// which does not run the steps that install system packages.
pub fn workflow_runner(dir: &Path) -> Runner {
    let bin = cargo_for_the_runner(&dir.join("bin"), Path::new(env!("CARGO_BIN_EXE_regress")));
    let mut runner = Runner::new(&dir.join("runner"));
    runner
        .machine_env("PATH", &path_with(&bin))
        .machine_env("CARGO_TARGET_DIR", &path_text(&super::super::target_dir()))
        .machine_step(
            "Install system packages",
            "not run: a test installs nothing (this machine has what the test needs, or it was skipped)",
        );
    runner
}

/// The GitHub context of a pull request `number` from `head` onto `base`
/// in `repository`.
pub fn pull_request(repository: &str, number: u64, base: &str, head: &str) -> serde_json::Value {
    json!({
        "repository": repository,
        "sha": head,
        "token": "not-a-token",
        "event_name": "pull_request",
        "event": {
            "number": number,
            "pull_request": {
                "number": number,
                "base": { "sha": base },
                "head": { "sha": head },
            },
        },
    })
}

/// The GitHub context of `workflow_run` after the run `id` of a pull
/// request workflow ended with `conclusion`; `default_head` is the default
/// branch's commit, which the comment job checks out.
pub fn workflow_run(
    repository: &str,
    id: u64,
    conclusion: &str,
    head: &str,
    default_head: &str,
) -> serde_json::Value {
    json!({
        "repository": repository,
        "sha": default_head,
        "token": "not-a-token",
        "event_name": "workflow_run",
        "event": {
            "workflow_run": {
                "id": id,
                "event": "pull_request",
                "conclusion": conclusion,
                "head_sha": head,
                "head_branch": "a-change",
                "head_repository": { "full_name": repository },
                "html_url": "https://github.invalid/run",
                "pull_requests": [],
            },
        },
    })
}
