//! The user's checkout of a library's repository: validated once, then
//! asked (read-only) for revisions.

use std::path::{Path, PathBuf};

use crate::error::SourceError;
use crate::git::Git;
use crate::library::Library;
use crate::options::Options;
use crate::revision::{Revision, RevisionRequest, Side, Sides};

/// A git checkout of `library`'s repository, in its real layout.
#[derive(Debug, Clone)]
pub struct Checkout {
    library: &'static Library,
    root: PathBuf,
    common_dir: PathBuf,
    git: Git,
}

impl Checkout {
    /// Checks that `path` is inside a git work tree whose top folder has
    /// `library`'s layout. Git queries are bounded by `options`' git limit.
    pub fn open(
        library: &'static Library,
        path: &Path,
        options: &Options,
    ) -> Result<Checkout, SourceError> {
        let limits = options.git_limits();
        let not_a_repository = |detail: String| SourceError::NotAGitRepository {
            path: path.to_path_buf(),
            detail,
        };
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(not_a_repository("it is not a folder".to_owned())),
            Err(error) => return Err(not_a_repository(error.to_string())),
        }
        let git = Git::work_tree(path, limits);
        let finished = git.try_run([
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
        ])?;
        let output = finished.stdout_text();
        let mut lines = output.lines();
        let (Some(root), Some(common_dir), true) = (lines.next(), lines.next(), finished.success())
        else {
            let detail = finished.tail(3);
            return Err(not_a_repository(if detail.is_empty() {
                "git found no work tree there".to_owned()
            } else {
                detail
            }));
        };
        let root = PathBuf::from(root);
        check_layout(library, &root, None)?;
        Ok(Checkout {
            library,
            git: Git::work_tree(&root, limits),
            root,
            common_dir: PathBuf::from(common_dir),
        })
    }

    pub fn library(&self) -> &'static Library {
        self.library
    }

    /// The top folder of the work tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The repository's own folder (`.git`, shared by its worktrees), where
    /// submodule repositories live under `modules/`.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    pub(crate) fn git(&self) -> &Git {
        &self.git
    }

    /// Resolves what the user named for `side` to a commit.
    pub fn resolve(&self, side: Side, reference: &str) -> Result<Revision, SourceError> {
        Ok(Revision::Commit {
            reference: reference.to_owned(),
            commit: self.git.resolve(side, reference)?,
        })
    }

    /// The two sides of a comparison. The base must be committed; with
    /// `merge_base`, the base becomes the best common ancestor of the base
    /// and the head (the head's `HEAD` commit for the working tree), which
    /// is what a pull request changes.
    pub fn sides(
        &self,
        base: RevisionRequest<'_>,
        head: RevisionRequest<'_>,
        merge_base: bool,
    ) -> Result<Sides, SourceError> {
        let base = match base {
            RevisionRequest::Reference(reference) => self.resolve(Side::Base, reference)?,
            RevisionRequest::WorkingTree => {
                return Err(SourceError::BaseNotCommitted {
                    repo: self.root.clone(),
                    dirty: if self.is_clean()? {
                        ""
                    } else {
                        " (it has uncommitted changes)"
                    },
                })
            }
        };
        let head = match head {
            RevisionRequest::Reference(reference) => self.resolve(Side::Head, reference)?,
            RevisionRequest::WorkingTree => Revision::WorkingTree,
        };
        let base = if merge_base {
            self.merge_base(&base, &head)?
        } else {
            base
        };
        Ok(Sides { base, head })
    }

    /// The best common ancestor of `base` and `head`.
    pub fn merge_base(&self, base: &Revision, head: &Revision) -> Result<Revision, SourceError> {
        let head_commit = match head {
            Revision::Commit { commit, .. } => commit.clone(),
            Revision::WorkingTree => match self.resolve(Side::Head, "HEAD")? {
                Revision::Commit { commit, .. } => commit,
                Revision::WorkingTree => unreachable!("resolve returns commits"),
            },
        };
        let Some(base_commit) = base.commit() else {
            return Err(SourceError::BaseNotCommitted {
                repo: self.root.clone(),
                dirty: "",
            });
        };
        let commit = self
            .git
            .merge_base((&base.label(), base_commit), (&head.label(), &head_commit))?;
        Ok(Revision::Commit {
            reference: format!("merge-base({}, {})", base.label(), head.label()),
            commit,
        })
    }

    /// Whether the working tree equals its `HEAD` commit: no change to a
    /// tracked file, nothing staged, no untracked file that is not ignored,
    /// no dirty submodule. Does not refresh (or write) the index.
    pub fn is_clean(&self) -> Result<bool, SourceError> {
        let output = self.git.run([
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=normal",
            "--ignore-submodules=none",
        ])?;
        Ok(output.is_empty())
    }
}

/// Checks that `root` has `library`'s layout; `at` names the revision when
/// an export (not the user's checkout) is checked.
pub(crate) fn check_layout(
    library: &'static Library,
    root: &Path,
    at: Option<&str>,
) -> Result<(), SourceError> {
    let missing: Vec<&str> = library
        .layout
        .iter()
        .copied()
        .filter(|entry| {
            let path = root.join(entry.trim_end_matches('/'));
            if entry.ends_with('/') {
                !path.is_dir()
            } else {
                !path.is_file()
            }
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(SourceError::Layout {
        library: library.name,
        path: root.to_path_buf(),
        at: at.map(|at| format!(" at {at}")).unwrap_or_default(),
        missing: missing.join(", "),
    })
}
