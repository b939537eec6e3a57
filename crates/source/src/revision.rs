//! The two sides of a comparison and the revisions they name.

use crate::git::short;

/// Which side of a diff a revision is for (it only changes messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Base,
    Head,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Base => "base",
            Side::Head => "head",
        })
    }
}

/// What the user asked for on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevisionRequest<'a> {
    /// A branch, tag, commit or any other revision git understands.
    Reference(&'a str),
    /// The checkout's working tree as it is: uncommitted edits and
    /// untracked (not ignored) files included.
    WorkingTree,
}

/// A resolved revision of a library checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// A commit; `reference` is what the user wrote.
    Commit { reference: String, commit: String },
    /// The working tree as it is when it is exported.
    WorkingTree,
}

impl Revision {
    /// A short label for messages and reports: `v1.2 (0123456789ab)`,
    /// `0123456789ab`, or `the working tree`.
    pub fn label(&self) -> String {
        match self {
            Revision::Commit { reference, commit } if commit.starts_with(reference.as_str()) => {
                short(commit).to_owned()
            }
            Revision::Commit { reference, commit } => format!("{reference} ({})", short(commit)),
            Revision::WorkingTree => "the working tree".to_owned(),
        }
    }

    /// The commit, for a committed revision.
    pub fn commit(&self) -> Option<&str> {
        match self {
            Revision::Commit { commit, .. } => Some(commit),
            Revision::WorkingTree => None,
        }
    }
}

/// The two revisions of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sides {
    pub base: Revision,
    pub head: Revision,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        let commit = "0123456789abcdef0123456789abcdef01234567".to_owned();
        let tagged = Revision::Commit {
            reference: "v1.5.0".to_owned(),
            commit: commit.clone(),
        };
        assert_eq!(tagged.label(), "v1.5.0 (0123456789ab)");
        let by_hash = Revision::Commit {
            reference: "0123456".to_owned(),
            commit,
        };
        assert_eq!(by_hash.label(), "0123456789ab");
        assert_eq!(Revision::WorkingTree.label(), "the working tree");
    }
}
