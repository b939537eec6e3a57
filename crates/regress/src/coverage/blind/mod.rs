//! The blind spots of a diff: the changed functions of BASE and of HEAD
//! that no measured harness executed on that side.
//!
//! A diff that reports unchanged counts says nothing about code no harness
//! ran. So every diff reads what changed between its two revisions (`git
//! diff`: this workspace's two commits, or a `--library` checkout's two
//! revisions), keeps the files of compiled source ([`Scope`]), and finds for
//! each changed line its function in that side's source ([`super::source`]).
//! A changed function is a blind spot of a side when no harness measured on
//! that side executed any line of it (its own or inlined elsewhere: the
//! lines files keep the file and line inlined code came from). Changed lines
//! outside any function (declarations, comments between functions) are not
//! counted. A side whose harnesses lack line data (measured by a regress
//! from before line data was kept) makes the blind spots unknown, never
//! "none".
//!
//! The pieces: `find.rs` finds them (which files count, what changed, which
//! function each changed line is in, which of those no harness ran), and
//! `render.rs` says them on the terminal and in Markdown. [`BlindSpots`]
//! itself, how the shards and checkouts of one diff combine, and its checks
//! as hostile input, are here.

mod find;
mod render;

pub use find::{changes, find, parse_diff, ChangedFile, Revision, Scope, Side};
pub use render::ranges;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Bounds on a report's blind spots (read back as hostile input).
pub const MAX_SPOTS: usize = 10_000;
pub const MAX_FILES: usize = 10_000;
const MAX_NAME: usize = 4_096;
const MAX_LINES: usize = 100_000;

/// What is wrong with blind spots read back as hostile input
/// ([`BlindSpots::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlindSpotsProblem {
    #[error("more than {MAX_SPOTS} blind spots or {MAX_FILES} files")]
    TooMany,
    #[error("more blind spots than changed functions")]
    MoreThanChanged,
    #[error("a blind spot's text is longer than {MAX_NAME} bytes")]
    TooLong,
}

/// A changed function no harness ran.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlindSpot {
    pub file: String,
    pub function: String,
    /// The changed lines of it, on its side.
    pub lines: Vec<u32>,
}

/// What a diff's harnesses did not run of what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlindSpots {
    /// Why the blind spots are not known; the other fields then mean
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// The changed files of compiled source that were considered.
    pub considered: Vec<String>,
    /// How many other files changed (documentation, tests, CI, ...).
    pub other_files: usize,
    /// Changed functions, BASE's and HEAD's (a function changed on both
    /// sides counts twice).
    pub changed: usize,
    pub base: Vec<BlindSpot>,
    pub head: Vec<BlindSpot>,
}

impl BlindSpots {
    /// Blind spots that could not be found, and why.
    pub fn unknown(reason: impl Into<String>) -> BlindSpots {
        BlindSpots {
            unknown: Some(reason.into()),
            considered: Vec::new(),
            other_files: 0,
            changed: 0,
            base: Vec::new(),
            head: Vec::new(),
        }
    }

    /// The changed functions some harness ran.
    pub fn run(&self) -> usize {
        self.changed
            .saturating_sub(self.base.len() + self.head.len())
    }

    /// The distinct functions not run, on either side, as `(function, file)`.
    pub fn functions(&self) -> Vec<(&str, &str)> {
        let set: BTreeSet<(&str, &str)> = self
            .head
            .iter()
            .chain(&self.base)
            .map(|spot| (spot.function.as_str(), spot.file.as_str()))
            .collect();
        set.into_iter().collect()
    }

    /// The shards of one diff: a function is a blind spot when no shard's
    /// harnesses ran it.
    pub fn merge(self, other: BlindSpots) -> BlindSpots {
        if self.unknown.is_some() {
            return self;
        }
        if other.unknown.is_some() {
            return other;
        }
        let both = |a: Vec<BlindSpot>, b: &[BlindSpot]| -> Vec<BlindSpot> {
            a.into_iter().filter(|spot| b.contains(spot)).collect()
        };
        BlindSpots {
            base: both(self.base, &other.base),
            head: both(self.head, &other.head),
            ..self
        }
    }

    /// The blind spots of two checkouts of one diff (`--library` twice).
    pub fn join(mut self, other: BlindSpots) -> BlindSpots {
        if self.unknown.is_some() || other.unknown.is_some() {
            let reasons: Vec<String> = [self.unknown, other.unknown]
                .into_iter()
                .flatten()
                .collect();
            return BlindSpots::unknown(reasons.join("; "));
        }
        self.considered.extend(other.considered);
        self.other_files += other.other_files;
        self.changed += other.changed;
        self.base.extend(other.base);
        self.head.extend(other.head);
        self
    }

    /// Checks blind spots read back as hostile input.
    pub fn check(&self) -> Result<(), BlindSpotsProblem> {
        if self.base.len() + self.head.len() > MAX_SPOTS || self.considered.len() > MAX_FILES {
            return Err(BlindSpotsProblem::TooMany);
        }
        if self.changed < self.base.len() + self.head.len() {
            return Err(BlindSpotsProblem::MoreThanChanged);
        }
        let long = |text: &str| text.len() > MAX_NAME;
        if self.unknown.as_deref().is_some_and(long)
            || self.considered.iter().any(|f| long(f))
            || self
                .base
                .iter()
                .chain(&self.head)
                .any(|s| long(&s.file) || long(&s.function) || s.lines.len() > MAX_LINES)
        {
            return Err(BlindSpotsProblem::TooLong);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/tls/s2n_psk.c b/tls/s2n_psk.c
index 1..2 100644
--- a/tls/s2n_psk.c
+++ b/tls/s2n_psk.c
@@ -10,2 +10,3 @@ int s2n_psk_init(void)
-a
-b
+a
+b
+c
@@ -40,0 +42 @@ int s2n_other(void)
+d
diff --git a/docs/USAGE.md b/docs/USAGE.md
deleted file mode 100644
--- a/docs/USAGE.md
+++ /dev/null
@@ -1 +0,0 @@
-gone
";

    #[test]
    fn a_diff_is_read_into_changed_lines_per_side() {
        let files = parse_diff(DIFF);
        assert_eq!(
            files,
            [
                ChangedFile {
                    path: "tls/s2n_psk.c".into(),
                    base: vec![10, 11],
                    head: vec![10, 11, 12, 42],
                },
                ChangedFile {
                    path: "docs/USAGE.md".into(),
                    base: vec![1],
                    head: vec![],
                },
            ]
        );
        assert_eq!(ranges(&[3, 5, 6, 7, 9]), "3, 5-7, 9");
    }

    #[test]
    fn only_compiled_source_is_considered() {
        assert!(Scope::Library.considers("tls/s2n_psk.c"));
        assert!(Scope::Library.considers("rustls/src/conn.rs"));
        assert!(!Scope::Library.considers("tests/unit/s2n_psk_test.c"));
        assert!(!Scope::Library.considers("rustls/tests/api.rs"));
        assert!(!Scope::Library.considers("docs/USAGE-GUIDE.md"));
        assert!(!Scope::Library.considers("rustls/build.rs"));
        assert!(!Scope::Library.considers("build.rs"));
        assert!(Scope::Workspace.considers("harnesses/src/s2n_tls/config_build.rs"));
        assert!(Scope::Workspace.considers("harnesses/src/s2n_tls/handshake.rs"));
        assert!(!Scope::Workspace.considers("crates/regress/src/diff/mod.rs"));
    }

    #[test]
    fn shards_merge_to_what_no_shard_ran_and_unknown_wins() {
        let spot = |f: &str| BlindSpot {
            file: "a.c".into(),
            function: f.into(),
            lines: vec![1],
        };
        let known = |head: Vec<BlindSpot>| BlindSpots {
            unknown: None,
            considered: vec!["a.c".into()],
            other_files: 0,
            changed: 3,
            base: Vec::new(),
            head,
        };
        let merged = known(vec![spot("f"), spot("g")]).merge(known(vec![spot("g")]));
        assert_eq!(merged.head, [spot("g")]);
        assert_eq!(merged.run(), 2);
        let unknown = known(vec![spot("f")]).merge(BlindSpots::unknown("no data"));
        assert_eq!(unknown.unknown.as_deref(), Some("no data"));
        assert!(unknown.text().contains("Blind spots unknown: no data"));
        assert!(!unknown.text().contains("none"));
    }
}
