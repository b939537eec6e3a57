//! What moved at the step a bisect found: the culprit's count against the
//! revision before it, the functions that changed (the diff's own
//! per-function comparison of the two region profiles, names normalised),
//! and `cg_annotate`'s per-function diff of that one step, written to
//! `perf_outputs/bisect/<harness>.diff.txt`.

use std::path::Path;

use regress_profile::cachegrind_out;
use serde::Serialize;

use super::error::BisectError;
use crate::compare::annotated_diff;
use crate::compare::Normalizer;
use crate::compare::{function_deltas, FunctionDelta};
use crate::format::{count, signed, signed_percent};
use crate::harness_name::HarnessName;
use crate::measure::valgrind::Valgrind;
use crate::program::line::Line;
use crate::workspace::Workspace;

/// How many changed functions the summary lists.
const SHOWN: usize = 10;

/// The step found.
pub(super) struct Step<'a> {
    pub line: &'a Line,
    pub harness: &'a HarnessName,
    /// Positions on the line: the last revision that counts like GOOD, and
    /// the first that moved (the next one).
    pub before: usize,
    pub at: usize,
    pub counts: (u64, u64),
    pub good: u64,
    pub outputs: &'a Path,
    pub valgrind: &'a Valgrind,
    pub workspace: &'a Workspace,
}

/// The first revision that moved, and what moved.
#[derive(Debug, Clone, Serialize)]
pub struct Culprit {
    pub commit: String,
    pub title: String,
    pub before_commit: String,
    pub before_title: String,
    pub harness: HarnessName,
    pub good: u64,
    pub before: u64,
    pub after: u64,
    /// Every function whose cost changed, largest change first.
    pub functions: Vec<FunctionDelta>,
    /// `cg_annotate`'s per-function diff, relative to the workspace.
    pub annotated_diff: Option<String>,
    /// Why the per-function diff is missing, if it is.
    pub diff_error: Option<String>,
}

pub(super) fn culprit(step: &Step<'_>) -> Result<Culprit, BisectError> {
    let before = &step.line.revisions[step.before];
    let at = &step.line.revisions[step.at];
    let profile = |short: &str| {
        step.harness
            .file_in(&step.outputs.join(short), ".cachegrind.out")
    };
    let (before_profile, after_profile) = (profile(before.short()), profile(at.short()));
    let normalizer = Normalizer::default();
    let functions = function_deltas(
        &cachegrind_out::read(&before_profile).map_err(|source| crate::MeasureError::Profile {
            path: before_profile.clone(),
            source,
        })?,
        &cachegrind_out::read(&after_profile).map_err(|source| crate::MeasureError::Profile {
            path: after_profile.clone(),
            source,
        })?,
        &normalizer,
    );
    let (annotated, diff_error) = match annotated_diff(
        step.valgrind,
        &normalizer,
        &before_profile,
        &after_profile,
        &step.outputs.join(".scratch"),
    ) {
        Ok(text) => {
            let path = step.harness.file_in(step.outputs, ".diff.txt");
            let header = format!(
                "regress: per-function diff of {}: {} minus {}\n\n",
                step.harness, at.title, before.title
            );
            std::fs::write(&path, format!("{header}{text}"))
                .map_err(|source| crate::MeasureError::io("write", path.clone(), source))?;
            (Some(step.workspace.display_path(&path)), None)
        }
        Err(error) => (None, Some(error.to_string())),
    };
    let _ = std::fs::remove_dir_all(step.outputs.join(".scratch"));
    Ok(Culprit {
        commit: at.commit.clone(),
        title: at.title.clone(),
        before_commit: before.commit.clone(),
        before_title: before.title.clone(),
        harness: step.harness.clone(),
        good: step.good,
        before: step.counts.0,
        after: step.counts.1,
        functions,
        annotated_diff: annotated,
        diff_error,
    })
}

impl Culprit {
    /// The step as people read it.
    pub fn render(&self) -> String {
        let delta = i128::from(self.after) - i128::from(self.before);
        let mut lines = vec![
            format!("first revision that moved: {}", self.title),
            format!("  commit {}", self.commit),
            format!(
                "  {}: {} at {} before it, {} here: {} ({})",
                self.harness,
                count(self.before),
                self.before_title,
                count(self.after),
                signed(delta),
                signed_percent(self.before, self.after)
            ),
            "  functions that changed most (normalised names):".to_owned(),
        ];
        for function in self.functions.iter().take(SHOWN) {
            lines.push(format!(
                "    {:>14}  {}  ({}, {})",
                signed(function.delta),
                function.function,
                function.file,
                function.origin.label()
            ));
        }
        if self.functions.len() > SHOWN {
            lines.push(format!("    … and {} more", self.functions.len() - SHOWN));
        }
        match (&self.annotated_diff, &self.diff_error) {
            (Some(path), _) => lines.push(format!("  per-function diff of the step: {path}")),
            (None, Some(error)) => lines.push(format!(
                "  (no cg_annotate diff: {})",
                error.lines().next().unwrap_or_default()
            )),
            (None, None) => {}
        }
        lines.join("\n")
    }
}
