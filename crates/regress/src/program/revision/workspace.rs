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
use std::time::Duration;

use regress_source::git::Git;
use regress_source::process::Limits;

use super::cache::fill;
use super::error::{DoesNotBuild, RevisionError, GIT_DETAIL_LINES};
use super::inputs::BuildInputs;
use super::Builder;
use crate::process;
use crate::program::{self, BuildRequest};

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
        // Run in the repository, so the clone's path is made absolute
        // first (a relative one would be taken from there).
        let clone = std::path::absolute(&self.clone).unwrap_or_else(|_| self.clone.clone());
        git(
            &self.repo,
            &[
                OsStr::new("-c"),
                OsStr::new("core.hooksPath=/dev/null"),
                OsStr::new("clone"),
                OsStr::new("--shared"),
                OsStr::new("--no-checkout"),
                OsStr::new("--quiet"),
                OsStr::new("--"),
                self.repo.as_os_str(),
                clone.as_os_str(),
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

    fn build(
        &self,
        revision: &str,
        into: &Path,
    ) -> Result<Result<(), DoesNotBuild>, RevisionError> {
        process::check()?;
        self.ensure_clone()?;
        let clone = self.clone.as_path();
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
            Err(error) => return Ok(Err(DoesNotBuild::Program(error))),
        };
        fill(into, &program, &self.clone.join("Cargo.lock"))?;
        Ok(Ok(()))
    }
}

/// Runs git in `dir` with `args` through the one git runner ([`Git`]: no
/// prompt, no optional locks, the `GIT_*` variables that would point it at
/// another repository removed, a time limit, stopped by Ctrl-C).
fn git(dir: &Path, args: &[&OsStr]) -> Result<(), RevisionError> {
    let limits = Limits {
        cancelled: Some(process::interrupted),
        ..Limits::new(GIT_TIMEOUT)
    };
    let finished = Git::work_tree(dir, limits).try_run(args)?;
    if finished.success() {
        return Ok(());
    }
    Err(RevisionError::Git {
        args: args
            .iter()
            .map(|arg| arg.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        dir: dir.to_path_buf(),
        detail: finished.tail(GIT_DETAIL_LINES),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clone_is_made_and_checked_out_through_the_one_git_runner() {
        let repo = crate::fixtures::repository();
        let state = tempfile::tempdir().expect("tempdir");
        let revisions = WorkspaceRevisions::new(repo.path(), state.path()).expect("inputs");

        revisions.ensure_clone().expect("clone");
        let clone = state.path().join("clone");
        assert!(clone.join(".git").is_dir());
        git(
            &clone,
            &["checkout", "--detach", "--quiet", "main"].map(OsStr::new),
        )
        .expect("checkout");
        assert_eq!(
            std::fs::read_to_string(clone.join("a.txt")).expect("checked out"),
            "one\n"
        );

        let message = git(&clone, &["checkout", "no-such-revision"].map(OsStr::new))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with(&format!(
                "`git checkout no-such-revision` failed in {}: ",
                clone.display()
            )) && message.contains("no-such-revision"),
            "{message}"
        );
    }

    #[test]
    fn the_workspace_inputs_are_the_files_git_lists() {
        let repo = tempfile::tempdir().expect("tempdir");
        crate::fixtures::git(repo.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(repo.path().join("a.rs"), "one\n").expect("write");
        let key = |root: &Path| {
            BuildInputs::compilers(root)
                .and_then(|inputs| inputs.with_workspace(root))
                .expect("inputs")
                .key(&["workspace", "x"])
        };
        let before = key(repo.path());
        assert_eq!(key(repo.path()), before);
        std::fs::write(repo.path().join("a.rs"), "two\n").expect("write");
        assert_ne!(key(repo.path()), before, "an untracked file is an input");

        let outside = tempfile::tempdir().expect("tempdir");
        let error = BuildInputs::compilers(outside.path())
            .and_then(|inputs| inputs.with_workspace(outside.path()))
            .unwrap_err();
        assert!(
            error.to_string().starts_with("`git ls-files` failed in"),
            "{error}"
        );
    }
}
