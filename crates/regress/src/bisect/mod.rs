//! `regress bisect GOOD BAD --harness NAME [--library NAME=PATH] [--by N]`:
//! the first revision between GOOD and BAD whose count of one harness
//! differs from GOOD's beyond the harness's threshold (or by `--by N`
//! instructions or more), with its count against the revision before it and
//! the per-function diff of that one step.
//!
//! Exact counts make this a plain binary search: a revision's count either
//! is GOOD's (within the threshold) or is not, with no noise to vote away.
//! The pieces:
//!
//! - [`crate::program::line`] lists the revisions (GOOD, then BAD's first-parent line back
//!   to it) with reading git commands only;
//! - [`search`] decides which to measure next and what the answers prove;
//! - [`crate::program::revision`] builds each revision's program (this workspace's
//!   commits in a private clone, a library's commits with
//!   [`regress_source`]) and keeps builds and measurements, so a bisect run
//!   again (or after Ctrl-C) measures nothing twice;
//! - [`step`] writes what moved at the step found.
//!
//! The user's checkout (work tree, index, refs, stash, bisect state) is only
//! read: the search is driven here, not by `git bisect`.

mod error;

pub mod search;
mod step;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regress_source::{Checkout, Options, SourceDirs};

use crate::program::line::{self, Line};
use crate::program::LibraryCheckout;
pub use error::{BisectError, Skip};
use search::{Answer, Outcome, Search};
pub use step::Culprit;

use crate::format::count;
use crate::harness_name::HarnessName;
use crate::judge::baseline::BaselineFile;
use crate::judge::Threshold;
use crate::measure::valgrind::Valgrind;
use crate::program::revision::{self, Builder, Built, LibraryRevisions, WorkspaceRevisions};
use crate::workspace::Workspace;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct BisectRequest {
    pub good: String,
    pub bad: String,
    pub harness: HarnessName,
    /// A library's checkout (`--library NAME=PATH`); `None`: this workspace.
    pub library: Option<LibraryCheckout>,
    /// Hunt a step of at least this many instructions instead of one
    /// beyond the harness's threshold.
    pub by: Option<u64>,
    /// The cargo target folder of library builds (default:
    /// `target/regress-source/target`).
    pub target_dir: Option<PathBuf>,
}

/// When a revision has moved from GOOD's count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// Beyond the harness's threshold (its committed one, else the one a
    /// first bless would give it).
    Threshold(Threshold),
    /// By at least this many instructions.
    By(u64),
}

impl Rule {
    pub fn moved(&self, good: u64, count: u64) -> bool {
        let change = good.abs_diff(count);
        match self {
            Rule::Threshold(threshold) => change > threshold.allowance(good),
            Rule::By(at_least) => change >= *at_least,
        }
    }

    fn describe(&self, good: u64) -> String {
        match self {
            Rule::Threshold(threshold) => format!(
                "differs from GOOD's {} by more than {} instructions (the harness's threshold: \
                 {} %, at least {})",
                count(good),
                count(threshold.allowance(good)),
                threshold.relative_percent,
                count(threshold.absolute)
            ),
            Rule::By(at_least) => format!(
                "differs from GOOD's {} by {} instructions or more (--by)",
                count(good),
                count(*at_least)
            ),
        }
    }
}

enum Repository {
    Workspace(PathBuf),
    Library(Checkout),
}

/// A bisect whose refs and harness have been checked (nothing created).
pub struct Plan {
    workspace: Workspace,
    repository: Repository,
    line: Line,
    harness: HarnessName,
    by: Option<u64>,
    target_dir: Option<PathBuf>,
    options: Options,
}

/// How a bisect ended, and what it cost.
#[derive(Debug)]
pub struct BisectResult {
    /// `None`: no step beyond the threshold between GOOD and BAD.
    pub culprit: Option<Culprit>,
    /// What the end of the search printed (the step, or why none).
    pub summary: String,
    /// Revisions on the line, GOOD and BAD included.
    pub revisions: usize,
    /// Revisions measured (kept measurements included).
    pub measured: usize,
    /// Programs built by this run (not taken from the cache).
    pub builds: usize,
    /// Measurements taken from the cache.
    pub cached_measurements: usize,
    /// `(revision title, reason)` of each revision skipped.
    pub skipped: Vec<(String, String)>,
    pub elapsed: Duration,
}

impl Plan {
    /// Checks the refs and the line between them (the harness's name was
    /// checked where it was read: it is a [`HarnessName`]).
    pub fn resolve(workspace: &Workspace, request: &BisectRequest) -> Result<Plan, BisectError> {
        let options = revision::options();
        if request.by == Some(0) {
            return Err(BisectError::Unexpected {
                what: "--by 0 would call every revision moved; give the size of the step you \
                       hunt, in instructions"
                    .to_owned(),
            });
        }
        let repository = match &request.library {
            Some(LibraryCheckout { library, path, .. }) => {
                Repository::Library(Checkout::open(library, path, &options)?)
            }
            None => {
                let repo = crate::program::Repo::discover(workspace.root())?;
                Repository::Workspace(repo.root().to_path_buf())
            }
        };
        let root = match &repository {
            Repository::Workspace(root) => root.as_path(),
            Repository::Library(checkout) => checkout.root(),
        };
        let line = line::resolve(root, &request.good, &request.bad, options.git_limits())?;
        Ok(Plan {
            workspace: workspace.clone(),
            repository,
            line,
            harness: request.harness.clone(),
            by: request.by,
            target_dir: request.target_dir.clone(),
            options,
        })
    }

    pub fn line(&self) -> &Line {
        &self.line
    }

    /// Builds and measures revisions until the step is found; `progress`
    /// hears of each revision.
    pub fn run(
        self,
        valgrind: &Valgrind,
        timeout: Duration,
        progress: &dyn Fn(&str),
    ) -> Result<BisectResult, BisectError> {
        let started = Instant::now();
        let root = self.workspace.root();
        let (state, _lock) = revision::hold(root, progress)?;
        let outputs = self.workspace.perf_outputs_dir().join("bisect");
        let _ = std::fs::remove_dir_all(&outputs);
        std::fs::create_dir_all(&outputs).map_err(|source| {
            crate::MeasureError::io("create the folder", outputs.clone(), source)
        })?;
        let builder: Box<dyn Builder> = match self.repository {
            Repository::Workspace(ref repo) => Box::new(WorkspaceRevisions::new(repo, &state)?),
            Repository::Library(ref checkout) => Box::new(LibraryRevisions::new(
                checkout.clone(),
                SourceDirs::new(root)?,
                self.target_dir.as_deref(),
                self.options,
            )?),
        };
        let mut probe = Prober {
            plan: &self,
            builder: builder.as_ref(),
            state: &state,
            outputs: &outputs,
            valgrind,
            timeout,
            progress,
            counts: vec![None; self.line.revisions.len()],
            builds: 0,
            measured: 0,
            cached: 0,
            skipped: Vec::new(),
            missing: Vec::new(),
        };
        progress(&format!(
            "bisect {} over {} revisions of {} (GOOD, then BAD's first-parent line); at most {} \
             measurements when every revision builds",
            self.harness,
            self.line.revisions.len(),
            builder.describe(),
            search::most_measurements(self.line.revisions.len())
        ));
        let good = match probe.count(0)? {
            Ok(good) => good,
            Err(reason) => {
                return Err(BisectError::GoodUnmeasurable {
                    revision: self.line.revisions[0].title.clone(),
                    reason,
                })
            }
        };
        let rule = match self.by {
            Some(by) => Rule::By(by),
            None => Rule::Threshold(self.threshold(good)?),
        };
        progress(&format!(
            "a revision has moved when its count {}",
            rule.describe(good)
        ));
        let mut search = Search::new(self.line.revisions.len());
        while let Some(position) = search.next() {
            let answer = match probe.count(position)? {
                Ok(value) if rule.moved(good, value) => Answer::Moved,
                Ok(_) => Answer::Same,
                Err(_) => Answer::Skipped,
            };
            search.record(position, answer);
        }
        let outcome = search.outcome().expect("the search is over");
        let titles = |positions: &[usize]| -> Vec<String> {
            positions
                .iter()
                .map(|p| self.line.revisions[*p].title.clone())
                .collect()
        };
        let (culprit, summary) = match outcome {
            Outcome::Found(position) => {
                let before = search.last_same();
                let culprit = step::culprit(&step::Step {
                    line: &self.line,
                    harness: &self.harness,
                    before,
                    at: position,
                    counts: (
                        probe.counts[before].expect("measured"),
                        probe.counts[position].expect("measured"),
                    ),
                    good,
                    outputs: &outputs,
                    valgrind,
                    workspace: &self.workspace,
                })?;
                let summary = culprit.render();
                (Some(culprit), summary)
            }
            Outcome::NoStep => {
                let bad = probe.counts[self.line.revisions.len() - 1].expect("BAD measured");
                (
                    None,
                    format!(
                        "no step: BAD {} counts {} and GOOD {} counts {}, and no revision \
                         between them was found to move (rule: {})",
                        self.line.revisions.last().expect("BAD").title,
                        count(bad),
                        self.line.revisions[0].title,
                        count(good),
                        rule.describe(good)
                    ),
                )
            }
            Outcome::Undecided { .. }
                if probe.missing.contains(&(self.line.revisions.len() - 1)) =>
            {
                return Err(BisectError::MissingAtBad {
                    harness: self.harness.clone(),
                    revision: self.line.revisions.last().expect("BAD").title.clone(),
                });
            }
            Outcome::Undecided {
                candidates,
                moved_known,
            } => {
                let listed = titles(&candidates).join("\n    ");
                let what = if !moved_known && search.last_same() == 0 {
                    format!(
                        "no revision after GOOD builds, so none can be told apart:\n    {listed}"
                    )
                } else if moved_known {
                    format!(
                        "the step is one of these revisions, but the ones before the last \
                         could not be built:\n    {listed}"
                    )
                } else {
                    format!(
                        "no revision after {} builds, so whether one of them moved cannot be \
                         told:\n    {listed}",
                        self.line.revisions[search.last_same()].title
                    )
                };
                let reasons: Vec<String> = probe
                    .skipped
                    .iter()
                    .map(|(title, reason)| format!("  {title}: {}", first_line(reason)))
                    .collect();
                return Err(BisectError::Undecided(format!(
                    "{what}\n  Why they do not build:\n{}\n  Fix the build of one of them, or \
                     narrow GOOD..BAD; the builds and counts so far are kept.",
                    reasons.join("\n")
                )));
            }
        };
        Ok(BisectResult {
            culprit,
            summary,
            revisions: self.line.revisions.len(),
            measured: probe.measured,
            builds: probe.builds,
            cached_measurements: probe.cached,
            skipped: probe.skipped,
            elapsed: started.elapsed(),
        })
    }

    /// The harness's committed threshold, else the one a first bless of
    /// `good` would give it.
    fn threshold(&self, good: u64) -> Result<Threshold, BisectError> {
        Ok(
            match BaselineFile::load(&self.workspace.baselines_dir(), &self.harness).map_err(
                |error| BisectError::Unexpected {
                    what: error.to_string(),
                },
            )? {
                Some(file) => file.threshold,
                None => Threshold::for_count(good),
            },
        )
    }
}

/// Builds and measures revisions of the line, keeping what it learnt.
struct Prober<'a> {
    plan: &'a Plan,
    builder: &'a dyn Builder,
    state: &'a Path,
    outputs: &'a Path,
    valgrind: &'a Valgrind,
    timeout: Duration,
    progress: &'a dyn Fn(&str),
    counts: Vec<Option<u64>>,
    builds: usize,
    measured: usize,
    cached: usize,
    skipped: Vec<(String, String)>,
    /// The positions whose program builds but lacks the harness.
    missing: Vec<usize>,
}

impl Prober<'_> {
    /// The count at `position`, or why it has none (it does not build, or
    /// has no such harness).
    fn count(&mut self, position: usize) -> Result<Result<u64, Skip>, BisectError> {
        let revision = &self.plan.line.revisions[position];
        let name = match position {
            0 => "GOOD",
            p if p + 1 == self.plan.line.revisions.len() => "BAD",
            _ => "",
        };
        let label = format!(
            "[{}/{}] {name}{}{}",
            position,
            self.plan.line.revisions.len() - 1,
            if name.is_empty() { "" } else { " " },
            revision.title
        );
        (self.progress)(&format!("{label}: building"));
        let started = Instant::now();
        let built = revision::program(self.builder, self.state, &revision.commit)?;
        if !built.cached() {
            self.builds += 1;
        }
        let program = match built {
            Built::Program(program) if program.names.contains(&self.plan.harness) => program,
            Built::Program(_) => {
                self.missing.push(position);
                let reason = Skip::NoHarness {
                    harness: self.plan.harness.clone(),
                };
                return Ok(self.skip(&label, reason));
            }
            Built::DoesNotBuild { reason, .. } => {
                return Ok(self.skip(&label, Skip::DoesNotBuild(reason)))
            }
        };
        let outputs = self.outputs.join(revision.short());
        let (runner, cache) = revision::runner(
            &self.plan.workspace,
            &program,
            self.valgrind,
            self.timeout,
            &outputs,
        )?;
        let measured = revision::measure(&runner, &cache, &program, &self.plan.harness)?;
        self.measured += 1;
        if measured.cached {
            self.cached += 1;
        }
        let value = measured.measurement.instructions;
        self.counts[position] = Some(value);
        (self.progress)(&format!(
            "{label}: {} instructions ({}{})",
            count(value),
            if program.cached {
                "build kept"
            } else {
                "built"
            },
            if measured.cached {
                ", count kept".to_owned()
            } else {
                format!(", {:.0} s", started.elapsed().as_secs_f64())
            }
        ));
        Ok(Ok(value))
    }

    fn skip(&mut self, label: &str, reason: Skip) -> Result<u64, Skip> {
        let text = reason.to_string();
        (self.progress)(&format!("{label}: skipped, {}", first_line(&text)));
        self.skipped.push((label.to_owned(), text));
        Err(reason)
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_say_when_a_count_moved() {
        let threshold = Rule::Threshold(Threshold::default());
        // 0.05 % of 6,000,000 is 3,000.
        assert!(!threshold.moved(6_000_000, 6_003_000));
        assert!(threshold.moved(6_000_000, 6_003_001));
        assert!(threshold.moved(6_000_000, 5_996_999));
        let by = Rule::By(30_005);
        assert!(by.moved(1_000, 31_005));
        assert!(!by.moved(1_000, 31_004));
    }
}
