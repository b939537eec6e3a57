//! The revisions a bisect searches: GOOD, then BAD's first-parent line
//! back to it.
//!
//! A binary search needs a line, where each revision follows the one
//! before. `git rev-list --first-parent --ancestry-path GOOD..BAD` is one:
//! the commits from GOOD to BAD along BAD's first parents, so a merged pull
//! request is one step (its merge commit), as it was one step for the
//! branch it landed on. Following every parent instead would interleave
//! the commits of merged branches, whose counts do not follow one another,
//! and a search over them could name a commit that never was a step of
//! anything. To look inside a merge the bisect named, bisect the branch it
//! merged (`regress bisect $(git merge-base M^1 M^2) M^2`).
//!
//! Only reading git commands run, each with a time limit, through
//! [`regress_source::git::Git`] (no optional locks, no fsmonitor, no
//! prompt): the repository, its index and its bisect state stay as they are.

use std::path::Path;

use regress_source::git::{is_object_name, Git};
use regress_source::process::Limits;
use regress_source::{Side, SourceError};

use super::error::LineError;

/// The most revisions a line may have (a search of 2^16 revisions makes
/// 17 measurements; a longer range is more likely a wrong ref).
pub const MAX_LINE: usize = 1 << 16;

/// One revision of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    pub commit: String,
    /// `0123456789ab subject`, for messages.
    pub title: String,
}

impl Revision {
    pub fn short(&self) -> &str {
        regress_source::git::short(&self.commit)
    }
}

/// GOOD first, BAD last.
#[derive(Debug, Clone)]
pub struct Line {
    pub revisions: Vec<Revision>,
}

/// Resolves GOOD and BAD in the repository at `repo` and lists the line
/// between them.
pub fn resolve(repo: &Path, good: &str, bad: &str, limits: Limits) -> Result<Line, LineError> {
    let git = Git::work_tree(repo, limits);
    let good_commit = commit(&git, repo, "GOOD", good)?;
    let bad_commit = commit(&git, repo, "BAD", bad)?;
    if good_commit == bad_commit {
        return Err(LineError::SameRevision {
            good: good.to_owned(),
            bad: bad.to_owned(),
        });
    }
    let is_ancestor = |a: &str, b: &str| -> Result<bool, LineError> {
        let finished = git.try_run(["merge-base", "--is-ancestor", "--end-of-options", a, b])?;
        match finished.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(regress_source::git::failed(&finished).into()),
        }
    };
    if !is_ancestor(&good_commit, &bad_commit)? {
        return Err(LineError::NotAncestor {
            good: good.to_owned(),
            bad: bad.to_owned(),
            hint: if is_ancestor(&bad_commit, &good_commit)? {
                "BAD is an ancestor of GOOD: swap them (GOOD is the older revision, whose count \
                 is the reference)"
            } else {
                "they are on branches that diverged: bisect from their merge base \
                 (`git merge-base GOOD BAD`) to BAD"
            },
        });
    }
    let listing = git.text([
        "rev-list",
        "--first-parent",
        "--ancestry-path",
        "--reverse",
        &format!("--max-count={MAX_LINE}"),
        "--end-of-options",
        &format!("{good_commit}..{bad_commit}"),
    ])?;
    let mut commits = vec![good_commit];
    commits.extend(listing.lines().map(str::to_owned));
    if commits.len() > MAX_LINE || commits.last() != Some(&bad_commit) {
        return Err(LineError::TooLong { max: MAX_LINE });
    }
    if !commits.iter().all(|commit| is_object_name(commit)) {
        return Err(LineError::Unexpected {
            what: "git rev-list printed something that is not a commit".to_owned(),
        });
    }
    let mut revisions = Vec::with_capacity(commits.len());
    for commit in commits {
        let subject = git.text(["log", "-1", "--format=%s", "--end-of-options", &commit])?;
        let subject: String = subject
            .chars()
            .filter(|c| !c.is_control())
            .take(100)
            .collect();
        revisions.push(Revision {
            title: format!("{} {subject}", regress_source::git::short(&commit)),
            commit,
        });
    }
    Ok(Line { revisions })
}

/// The commit `reference` names, through the one revision check every
/// command shares (`Git::resolve`: empty and option-like names refused
/// before git sees them); its refusal is reworded for GOOD or BAD.
fn commit(
    git: &Git,
    repo: &Path,
    which: &'static str,
    reference: &str,
) -> Result<String, LineError> {
    let bad_ref = |reason: String| LineError::BadRef {
        which,
        reference: reference.to_owned(),
        reason,
    };
    match git.resolve(Side::Base, reference) {
        Ok(commit) => Ok(commit),
        Err(SourceError::EmptyRevision { .. } | SourceError::RevisionLooksLikeOption { .. }) => {
            Err(bad_ref(
                "it is empty or starts with `-` (git would read it as an option)".to_owned(),
            ))
        }
        Err(SourceError::RevisionNotFound { detail, .. }) => Err(bad_ref(format!(
            "it names no commit in {}{detail}",
            repo.display()
        ))),
        Err(other) => Err(other.into()),
    }
}
