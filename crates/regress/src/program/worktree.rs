//! The two commits of a diff, and the temporary worktrees they are built in.
//!
//! A diff must never touch the user's work tree, index or uncommitted
//! changes: no checkout, no stash. Each commit is checked out into a
//! detached worktree of its own under `target/regress-diff/` (ignored by
//! git, like all of `target/`), built and measured there, and removed
//! afterwards, on success, on error and on Ctrl-C ([`Worktree`] is a guard
//! that removes itself when dropped; a process killed outright leaves its
//! worktrees for the next diff to remove, see
//! [`Repo::remove_stale_worktrees`]).
//!
//! Every ref is checked before anything is created: it must not look like an
//! option (git would parse `-x` as one), it must name a commit, and the two
//! commits must share history. git is always run with an argument vector,
//! never through a shell, with `--end-of-options` before user input, and
//! with hooks disabled (a `post-checkout` hook has no business running in a
//! throwaway worktree).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regress_source::git::Git;
use regress_source::process::{Limits, Role};
use regress_source::revision::Side as SourceSide;

use super::Commit;
use super::ProgramError;
use super::Side;
use crate::report::events::{DiffStep, Event, Listener};

/// How long one git command may take (a worktree checkout of a large
/// repository is the slowest); past it, git and its children are killed.
const GIT_TIMEOUT: Duration = Duration::from_secs(600);

/// The repository a diff runs in. Its git commands, and the checks of the
/// refs the user names, are `regress-source`'s ([`Git`]): one
/// implementation for this project's commits and a library's revisions.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
    git: Git,
}

impl From<Side> for SourceSide {
    fn from(side: Side) -> SourceSide {
        match side {
            Side::Base => SourceSide::Base,
            Side::Head => SourceSide::Head,
        }
    }
}

impl Repo {
    /// The repository whose work tree contains `dir`.
    pub fn discover(dir: &Path) -> Result<Repo, ProgramError> {
        let finished = Git::work_tree(dir, Limits::new(GIT_TIMEOUT))
            .try_run(["rev-parse", "--show-toplevel"])?;
        if !finished.success() {
            return Err(ProgramError::NotARepository {
                dir: dir.to_path_buf(),
                detail: finished.tail(3),
            });
        }
        let root = PathBuf::from(finished.stdout_text());
        Ok(Repo {
            git: Git::work_tree(&root, Limits::new(GIT_TIMEOUT)),
            root,
        })
    }

    /// The top folder of the user's work tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs git with `args`; a clean-up (`Role::Cleanup`) still runs after
    /// an interrupt.
    fn run_as<I, S>(&self, role: Role, args: I) -> Result<Vec<u8>, ProgramError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let limits = Limits {
            role,
            ..Limits::new(GIT_TIMEOUT)
        };
        Ok(self.git.with_limits(limits).run(args)?)
    }

    /// Resolves a branch, tag or commit the user named to a commit hash.
    pub fn resolve(&self, side: Side, reference: &str) -> Result<Commit, ProgramError> {
        Ok(Commit {
            reference: reference.to_owned(),
            commit: self.git.resolve(side.into(), reference)?,
        })
    }

    /// The best common ancestor of two commits; an error when they share no
    /// history (an orphan branch, another project's commit).
    pub fn merge_base(&self, base: &Commit, head: &Commit) -> Result<String, ProgramError> {
        Ok(self.git.merge_base(
            (&base.reference, &base.commit),
            (&head.reference, &head.commit),
        )?)
    }

    /// Which of `paths` differ between two commits (added, removed or
    /// changed).
    pub fn changed_between(
        &self,
        base: &Commit,
        head: &Commit,
        paths: &[&str],
    ) -> Result<Vec<String>, ProgramError> {
        let mut args = vec![
            "diff".to_owned(),
            "--no-ext-diff".to_owned(),
            "--no-renames".to_owned(),
            "--name-only".to_owned(),
            base.commit.clone(),
            head.commit.clone(),
            "--".to_owned(),
        ];
        args.extend(paths.iter().map(|path| (*path).to_owned()));
        let output = self.run_as(Role::Work, args)?;
        Ok(String::from_utf8_lossy(&output)
            .lines()
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// Whether tracked files have changes that are not committed (they are
    /// not part of any commit, so a diff does not measure them). Runs
    /// without the optional index refresh, so even this look leaves the
    /// index untouched.
    pub fn has_uncommitted_changes(&self) -> bool {
        self.run_as(
            Role::Work,
            ["status", "--porcelain", "--untracked-files=no"],
        )
        .map(|output| !output.is_empty())
        .unwrap_or(false)
    }

    /// Checks `commit` out, detached, into a new worktree at `path`.
    /// `listener` hears of a worktree that cannot be removed later.
    pub fn add_worktree<'a>(
        &self,
        path: &Path,
        commit: &str,
        listener: &'a dyn Listener,
    ) -> Result<Worktree<'a>, ProgramError> {
        self.run_as(
            Role::Work,
            [
                OsStr::new("-c"),
                OsStr::new("core.hooksPath=/dev/null"),
                OsStr::new("worktree"),
                OsStr::new("add"),
                OsStr::new("--detach"),
                OsStr::new("--quiet"),
                path.as_os_str(),
                OsStr::new(commit),
            ],
        )?;
        Ok(Worktree {
            repo: self.clone(),
            path: path.to_path_buf(),
            removed: false,
            listener,
        })
    }

    /// Removes the worktrees a diff that was killed outright (no chance to
    /// clean up) left in `dir`, and forgets any worktree whose folder is
    /// gone. Only call this while holding the diff lock, so no running diff
    /// loses its worktrees.
    pub fn remove_stale_worktrees(&self, dir: &Path, listener: &dyn Listener) {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("base-") || name.starts_with("head-") {
                    let path = entry.path();
                    listener.event(Event::Diff(DiffStep::StaleWorktree { path: &path }));
                    remove_worktree(self, &path, listener);
                }
            }
        }
        let _ = self.run_as(Role::Cleanup, ["worktree", "prune"]);
    }
}

/// A temporary worktree, removed (with `git worktree remove --force` and
/// `git worktree prune`) when dropped.
pub struct Worktree<'a> {
    repo: Repo,
    path: PathBuf,
    removed: bool,
    listener: &'a dyn Listener,
}

impl std::fmt::Debug for Worktree<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worktree")
            .field("path", &self.path)
            .finish()
    }
}

impl Worktree<'_> {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Worktree<'_> {
    fn drop(&mut self) {
        if !self.removed {
            self.removed = true;
            remove_worktree(&self.repo, &self.path, self.listener);
            let _ = self.repo.run_as(Role::Cleanup, ["worktree", "prune"]);
        }
    }
}

/// Removes one worktree, however far its creation got. Errors go to
/// `listener`, not to the caller: this runs while unwinding from other
/// errors.
fn remove_worktree(repo: &Repo, path: &Path, listener: &dyn Listener) {
    let removed = repo.run_as(
        Role::Cleanup,
        [
            OsStr::new("worktree"),
            OsStr::new("remove"),
            OsStr::new("--force"),
            path.as_os_str(),
        ],
    );
    if path.exists() {
        if let Err(error) = std::fs::remove_dir_all(path) {
            let git = removed
                .err()
                .map(|e| format!(" (git: {e})"))
                .unwrap_or_default();
            listener.event(Event::Diff(DiffStep::WorktreeLeft {
                path,
                error: &format!("{error}{git}"),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use regress_source::git::is_object_name;
    use regress_source::SourceError;

    use super::*;
    use crate::fixtures::git;
    use crate::report::events::Silent;

    fn repository() -> (tempfile::TempDir, Repo) {
        let dir = crate::fixtures::repository();
        let repo = Repo::discover(dir.path()).expect("repo");
        (dir, repo)
    }

    #[test]
    fn resolves_refs_and_refuses_bad_ones() {
        let (_dir, repo) = repository();
        let head = repo.resolve(Side::Head, "HEAD").expect("HEAD");
        assert!(is_object_name(&head.commit));
        assert_eq!(
            repo.resolve(Side::Base, "main").expect("main").commit,
            head.commit
        );

        let error = repo.resolve(Side::Base, "--output=/tmp/x").unwrap_err();
        assert!(
            matches!(
                error,
                ProgramError::Source(SourceError::RevisionLooksLikeOption { .. })
            ),
            "{error}"
        );
        let error = repo.resolve(Side::Base, "no-such-branch").unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("\"no-such-branch\" does not name a commit"),
            "{message}"
        );
        let error = repo.resolve(Side::Head, "HEAD^{tree}").unwrap_err();
        assert!(error.to_string().contains("tree"), "{error}");
        assert!(matches!(
            repo.resolve(Side::Head, " ").unwrap_err(),
            ProgramError::Source(SourceError::EmptyRevision { .. })
        ));
    }

    #[test]
    fn unrelated_histories_have_no_merge_base() {
        let (dir, repo) = repository();
        let main = repo.resolve(Side::Base, "main").expect("main");
        git(dir.path(), &["checkout", "-q", "--orphan", "other"]);
        git(dir.path(), &["commit", "-q", "-m", "orphan"]);
        let other = repo.resolve(Side::Head, "other").expect("other");
        let error = repo.merge_base(&main, &other).unwrap_err();
        assert!(
            matches!(error, ProgramError::Source(SourceError::NoMergeBase { .. })),
            "{error}"
        );
        assert!(error.to_string().contains("no common history"), "{error}");
        assert_eq!(repo.merge_base(&main, &main).expect("same"), main.commit);
    }

    #[test]
    fn worktrees_are_removed_when_dropped() {
        let (dir, repo) = repository();
        let head = repo.resolve(Side::Head, "HEAD").expect("HEAD");
        let path = dir.path().join("target/regress-diff/head-x");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        {
            let worktree = repo
                .add_worktree(&path, &head.commit, &Silent)
                .expect("add");
            assert!(worktree.path().join("a.txt").is_file());
            std::fs::write(worktree.path().join("untracked"), "x").expect("write");
            assert!(git(dir.path(), &["worktree", "list"]).contains("head-x"));
        }
        assert!(!path.exists());
        assert!(!git(dir.path(), &["worktree", "list"]).contains("head-x"));
    }

    #[test]
    fn stale_worktrees_are_removed() {
        let (dir, repo) = repository();
        let head = repo.resolve(Side::Head, "HEAD").expect("HEAD");
        let scratch = dir.path().join("target/regress-diff");
        std::fs::create_dir_all(&scratch).expect("mkdir");
        let worktree = repo
            .add_worktree(&scratch.join("base-y"), &head.commit, &Silent)
            .expect("add");
        std::mem::forget(worktree); // as if the process had been killed
        std::fs::create_dir_all(scratch.join("bin")).expect("mkdir");
        repo.remove_stale_worktrees(&scratch, &Silent);
        assert!(!scratch.join("base-y").exists());
        assert!(
            scratch.join("bin").exists(),
            "only worktree folders are removed"
        );
        assert!(!git(dir.path(), &["worktree", "list"]).contains("base-y"));
    }
}
