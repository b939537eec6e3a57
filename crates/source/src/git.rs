//! Running git against the user's repository without changing it.
//!
//! Only reading commands are run (`rev-parse`, `ls-tree`, `cat-file`,
//! `ls-files`, `status`, `merge-base`, `config --blob`), and each one with:
//!
//! * `GIT_OPTIONAL_LOCKS=0`, so `status` does not refresh and rewrite the
//!   index as it otherwise may;
//! * `core.fsmonitor=false`, so no fsmonitor hook runs (or writes);
//! * the variables that would point git at another repository or index
//!   (set inside git hooks, for example) removed;
//! * `--end-of-options` before anything the user typed;
//! * no prompt, and a time limit ([`crate::process`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::error::SourceError;
use crate::process::{self, Finished, Limits, Program, RunOptions};
use crate::revision::Side;

/// Variables that would redirect git away from the repository a command
/// names.
const GIT_LOCATION_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
];

/// A repository as git commands address it.
#[derive(Debug, Clone)]
pub struct Git {
    location: Location,
    limits: Limits,
}

#[derive(Debug, Clone)]
enum Location {
    /// `git -C <work tree>`.
    WorkTree(PathBuf),
    /// `git --git-dir=<dir>`: a submodule's repository under `.git/modules`.
    GitDir(PathBuf),
}

impl Git {
    pub fn work_tree(dir: &Path, limits: Limits) -> Git {
        Git {
            location: Location::WorkTree(dir.to_path_buf()),
            limits,
        }
    }

    pub fn git_dir(dir: &Path, limits: Limits) -> Git {
        Git {
            location: Location::GitDir(dir.to_path_buf()),
            limits,
        }
    }

    /// The same repository, with other limits (streaming a whole tree
    /// takes longer than a query).
    pub fn with_limits(&self, limits: Limits) -> Git {
        Git {
            location: self.location.clone(),
            limits,
        }
    }

    /// Where the commands run, for messages.
    pub fn place(&self) -> &Path {
        match &self.location {
            Location::WorkTree(dir) | Location::GitDir(dir) => dir,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The command `git <args>` for this repository.
    pub fn program<I, S>(&self, args: I) -> Program
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut program = Program::new("git");
        program = match &self.location {
            Location::WorkTree(dir) => program.arg("-C").arg(dir),
            Location::GitDir(dir) => program.arg(format!("--git-dir={}", dir.display())),
        };
        program = program
            .args(["-c", "core.fsmonitor=false", "-c", "core.quotePath=false"])
            .args(args)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("LC_ALL", "C");
        for variable in GIT_LOCATION_VARIABLES {
            program = program.env_remove(*variable);
        }
        program
    }

    /// Runs `git <args>`; a failure is returned as it is, for callers to
    /// whom a non-zero exit is an answer.
    pub fn try_run<I, S>(&self, args: I) -> Result<Finished, SourceError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let program = self.program(args);
        Ok(process::run(
            &program,
            &self.limits,
            RunOptions {
                capture_stdout: true,
                ..RunOptions::default()
            },
        )?)
    }

    /// Runs `git <args>` and returns its standard output; a failure is a
    /// [`SourceError::Git`].
    pub fn run<I, S>(&self, args: I) -> Result<Vec<u8>, SourceError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let finished = self.try_run(args)?;
        if finished.success() {
            Ok(finished.stdout)
        } else {
            Err(failed(&finished))
        }
    }

    /// [`Git::run`], as trimmed text.
    pub fn text<I, S>(&self, args: I) -> Result<String, SourceError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Ok(String::from_utf8_lossy(&self.run(args)?).trim().to_owned())
    }

    /// The commit `reference` names, for `side` of a comparison. Refused
    /// before git sees it when it is empty or starts with `-` (git would
    /// read it as an option); `--end-of-options` guards the rest.
    pub fn resolve(&self, side: Side, reference: &str) -> Result<String, SourceError> {
        if reference.trim().is_empty() {
            return Err(SourceError::EmptyRevision { side });
        }
        if reference.starts_with('-') {
            return Err(SourceError::RevisionLooksLikeOption {
                side,
                reference: reference.to_owned(),
            });
        }
        let finished = self.try_run([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{reference}^{{commit}}"),
        ])?;
        let commit = finished.stdout_text();
        if finished.success() && is_object_name(&commit) {
            return Ok(commit);
        }
        let detail = finished.tail(3);
        Err(SourceError::RevisionNotFound {
            side,
            reference: reference.to_owned(),
            repo: self.place().to_path_buf(),
            detail: if detail.is_empty() {
                String::new()
            } else {
                format!(" ({})", detail.replace('\n', "; "))
            },
        })
    }

    /// The best common ancestor of two commits (`base` and `head` name
    /// them in messages); [`SourceError::NoMergeBase`] when they share no
    /// history: an orphan branch, another project's commit, or a shallow
    /// clone that lacks it.
    pub fn merge_base(
        &self,
        (base, base_commit): (&str, &str),
        (head, head_commit): (&str, &str),
    ) -> Result<String, SourceError> {
        let finished =
            self.try_run(["merge-base", "--end-of-options", base_commit, head_commit])?;
        let commit = finished.stdout_text();
        if finished.success() && is_object_name(&commit) {
            return Ok(commit);
        }
        // `git merge-base` exits 1, silently, when there is none; anything
        // else is git failing.
        if finished.status.code() != Some(1) || !finished.tail(1).is_empty() {
            return Err(failed(&finished));
        }
        Err(SourceError::NoMergeBase {
            base: format!("{base} ({})", short(base_commit)),
            head: format!("{head} ({})", short(head_commit)),
            repo: self.place().to_path_buf(),
            hint: if self.is_shallow() {
                "This clone is shallow, so the common history may just not be here: fetch it \
                 (`git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout)."
            } else {
                "Check the two revisions: a comparison needs two versions of the same project."
            },
        })
    }

    /// Whether the repository is a shallow clone.
    pub fn is_shallow(&self) -> bool {
        self.try_run(["rev-parse", "--is-shallow-repository"])
            .is_ok_and(|finished| finished.stdout_text() == "true")
    }
}

/// A [`SourceError::Git`] from a finished command.
pub fn failed(finished: &Finished) -> SourceError {
    SourceError::Git {
        command: finished.command.clone(),
        status: finished.status.to_string(),
        stderr: finished.tail(10),
    }
}

/// A full SHA-1 or SHA-256 object name.
pub fn is_object_name(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The first 12 characters of an object name, for labels.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names() {
        assert!(is_object_name(&"a".repeat(40)));
        assert!(is_object_name(&"0".repeat(64)));
        assert!(!is_object_name(&"A".repeat(40)));
        assert!(!is_object_name("abc"));
        assert_eq!(short(&"b".repeat(40)), "bbbbbbbbbbbb");
    }
}
