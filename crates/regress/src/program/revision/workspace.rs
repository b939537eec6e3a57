//! Commits of this workspace, built in a private clone.
//!
//! Why a clone and not worktrees of the user's repository: a bisect checks
//! out many commits one after the other, and a worktree per commit would
//! write into the user's `.git` each time (and a killed run would leave
//! them registered there). The clone (`target/regress-revisions/clone/`,
//! made once with `git clone --shared`, so it borrows the user's objects
//! and copies none) is ours alone: each commit is checked out into it,
//! detached and forced, with hooks off, and built into a target folder of
//! its own. The user's work tree, index, refs, stash and bisect state are
//! only read, by the clone itself.
//!
//! One clone at one path also suits cargo: a checkout rewrites exactly the
//! files that differ, with the current time, so cargo rebuilds what changed
//! and nothing else; and no other checkout builds into that target folder,
//! so no artifact of another checkout is ever taken for this one's.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::error::RevisionError;
use super::inputs::BuildInputs;
use super::Builder;
use crate::process::{self, Role};
use crate::program::{self, BuildRequest, PROGRAM};

/// How long one git command on the clone may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(600);

/// Builds commits of the repository at `repo`.
pub struct WorkspaceRevisions {
    repo: PathBuf,
    clone: PathBuf,
    target: PathBuf,
    inputs: BuildInputs,
}

impl WorkspaceRevisions {
    /// For the repository whose work tree is `repo`; state under `state`
    /// (see [`super::state_dir`]).
    pub fn new(repo: &Path, state: &Path) -> Result<WorkspaceRevisions, RevisionError> {
        Ok(WorkspaceRevisions {
            repo: repo.to_path_buf(),
            clone: state.join("clone"),
            target: state.join("target"),
            inputs: BuildInputs::compilers(repo)?,
        })
    }

    /// Makes the clone when there is none (or it is broken).
    fn ensure_clone(&self) -> Result<(), RevisionError> {
        if self.clone.join(".git").is_dir() {
            return Ok(());
        }
        let _ = std::fs::remove_dir_all(&self.clone);
        if let Some(parent) = self.clone.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|source| RevisionError::io("create the folder", parent, source))?;
        }
        git(
            None,
            &[
                OsStr::new("-c"),
                OsStr::new("core.hooksPath=/dev/null"),
                OsStr::new("clone"),
                OsStr::new("--shared"),
                OsStr::new("--no-checkout"),
                OsStr::new("--quiet"),
                OsStr::new("--"),
                self.repo.as_os_str(),
                self.clone.as_os_str(),
            ],
        )
        .inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&self.clone);
        })
    }
}

impl Builder for WorkspaceRevisions {
    fn describe(&self) -> String {
        format!("this workspace's repository at {}", self.repo.display())
    }

    fn key(&self, revision: &str) -> String {
        self.inputs.key(&["workspace", revision])
    }

    fn build(&self, revision: &str, into: &Path) -> Result<Result<(), String>, RevisionError> {
        process::check()?;
        self.ensure_clone()?;
        let clone = Some(self.clone.as_path());
        let quiet = [
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "advice.detachedHead=false",
        ];
        let mut checkout: Vec<&OsStr> = quiet.iter().map(OsStr::new).collect();
        checkout.extend(["checkout", "--detach", "--force", "--quiet", revision].map(OsStr::new));
        git(clone, &checkout)?;
        git(clone, &["clean", "-ffdq"].map(OsStr::new))?;
        let built = program::build_program(&BuildRequest {
            dir: &self.clone,
            target_dir: Some(&self.target),
            cargo_args: &[],
            default_incremental: true,
        });
        process::check()?;
        let program = match built {
            Ok(program) => program,
            Err(program::BuildError::Process(error)) => return Err(error.into()),
            Err(error) => return Ok(Err(error.to_string())),
        };
        for (from, name) in [
            (program, PROGRAM),
            (self.clone.join("Cargo.lock"), "Cargo.lock"),
        ] {
            let to = into.join(name);
            std::fs::copy(&from, &to).map_err(|source| RevisionError::io("copy", &to, source))?;
        }
        Ok(Ok(()))
    }
}

/// Runs git (in `dir`, else wherever) with `args`, in a group of its own.
fn git(dir: Option<&Path>, args: &[&OsStr]) -> Result<(), RevisionError> {
    let mut command = Command::new("git");
    if let Some(dir) = dir {
        command.arg("-C").arg(dir);
    }
    command.args(args);
    for variable in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
    ] {
        command.env_remove(variable);
    }
    let output = process::output(command, Path::new("git"), GIT_TIMEOUT, 16 << 20, Role::Work)?;
    if output.status.success() {
        return Ok(());
    }
    Err(RevisionError::Git {
        args: args
            .iter()
            .map(|arg| arg.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        dir: dir.map_or_else(PathBuf::new, Path::to_path_buf),
        detail: process::stderr_text(&output),
    })
}
