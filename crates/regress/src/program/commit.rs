//! Which of a comparison's two commits is which, and a commit as the user
//! named it and as git resolved it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One of the two commits of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The commit compared against (a pull request's merge base).
    Base,
    /// The commit under review.
    Head,
}

impl Side {
    /// Both sides, base first.
    pub const BOTH: [Side; 2] = [Side::Base, Side::Head];

    pub fn name(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Head => "head",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A commit as the user named it and as git resolved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commit {
    /// What the user passed (`main`, `HEAD~1`, a hash).
    #[serde(rename = "ref")]
    pub reference: String,
    /// The full commit hash.
    pub commit: String,
}

impl Commit {
    /// The abbreviated hash people read: its first 12 characters (a
    /// character boundary even in a forged report's text).
    pub fn short(&self) -> &str {
        let end = self
            .commit
            .char_indices()
            .nth(12)
            .map_or(self.commit.len(), |(index, _)| index);
        &self.commit[..end]
    }
}
