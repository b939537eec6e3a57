//! The second half of a diff: measure every selected harness on both sides,
//! then compare each harness's two counts and profiles into a
//! [`HarnessDiff`], and the lot into a [`DiffReport`].

use std::path::{Path, PathBuf};

use regress_profile::cachegrind_out;

use super::error::DiffError;
use super::interrupt;
use super::report::{DiffReport, SideFingerprints, DIFF_SCHEMA};
use super::shard::Shard;
use crate::compare::annotated_diff;
use crate::compare::Normalizer;
use crate::compare::{self, function_deltas, HarnessDiff};
use crate::compare::{figure_diffs, heap_moved, site_deltas, SiteDelta};
use crate::coverage::blind::{self, Revision};
use crate::coverage::{BlindSpots, Scope};
use crate::format::{count, signed, signed_percent};
use crate::harness_name::HarnessName;
use crate::judge::baseline::BaselineFile;
use crate::judge::Threshold;
use crate::measure::cpu_profile::CpuProfile;
use crate::measure::flame;
use crate::measure::runner::header_lines;
use crate::measure::valgrind::Valgrind;
use crate::program::Commit;
use crate::program::MeasurementCache;
use crate::program::Side;
use crate::program::Worktree;
use crate::report::events::{DiffStep, Event, Listener};
use crate::workspace::Workspace;
use crate::{parallel, Measurement, Runner};
use regress_profile::dhat::Sites;

/// One side, built.
pub(super) struct SideBuild<'a> {
    pub(super) side: Side,
    /// The committed thresholds: the commit's `baselines/` (a diff of two
    /// commits), or this workspace's (a from-source diff).
    pub(super) baselines: PathBuf,
    /// Kept alive until the measurements are done: the runner reads the
    /// commit's Cargo.lock, and the committed thresholds are read from it.
    pub(super) _worktree: Option<Worktree<'a>>,
    pub(super) binary: PathBuf,
    pub(super) names: Vec<HarnessName>,
    pub(super) runner: Runner,
    /// Earlier measurements of the same program to reuse (from-source diffs).
    pub(super) cache: Option<MeasurementCache>,
}

/// One harness of one side: from the cache when it has it, else measured
/// (and then kept in the cache).
fn measure_one(side: &SideBuild, harness: &HarnessName) -> Result<Measurement, DiffError> {
    interrupt::check()?;
    let Some(cache) = &side.cache else {
        return Ok(side.runner.measure(harness, &side.binary)?);
    };
    if let Some(measurement) = cache.load(harness, side.runner.output_dir()) {
        return Ok(measurement);
    }
    let measurement = side.runner.measure(harness, &side.binary)?;
    cache.store(harness, side.runner.output_dir());
    Ok(measurement)
}

/// What the diff is of: the two commits, this run's shard, and the
/// checkout whose `perf_outputs/` receives the result.
pub(super) struct Commits<'a> {
    pub(super) base: &'a Commit,
    pub(super) head: &'a Commit,
    pub(super) shard: Option<Shard>,
    pub(super) workspace: &'a Workspace,
}

pub(super) fn measure_and_compare(
    plan: &Commits<'_>,
    valgrind: &Valgrind,
    workers: usize,
    sides: &[SideBuild],
    harnesses: &[HarnessName],
    outputs: &Path,
    listener: &dyn Listener,
) -> Result<DiffReport, DiffError> {
    let jobs: Vec<(&SideBuild, &HarnessName)> = harnesses
        .iter()
        .flat_map(|harness| {
            sides
                .iter()
                .filter(move |side| side.names.contains(harness))
                .map(move |side| (side, harness))
        })
        .collect();
    let results = parallel::measure_all(
        &jobs,
        workers,
        listener,
        |(side, harness)| (Some(side.side.name()), *harness),
        |(side, harness)| measure_one(side, harness),
    );
    interrupt::check()?;

    let comparison = Comparison {
        plan,
        valgrind,
        normalizer: Normalizer::default(),
        sides,
        outputs,
    };
    let mut diffs = Vec::new();
    for harness in harnesses {
        let result = |wanted: Side| {
            jobs.iter()
                .zip(&results)
                .find(|((side, name), _)| side.side == wanted && *name == harness)
                .map(|(_, result)| result)
        };
        diffs.push(comparison.harness(harness, result(Side::Base), result(Side::Head), listener));
    }
    compare::sort(&mut diffs);
    // Scratch folders are empty unless a measurement failed, in which
    // case they hold its logs: remove only the empty ones.
    for dir in [
        outputs.join(".scratch"),
        outputs.join("base/.scratch"),
        outputs.join("head/.scratch"),
    ] {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(DiffReport {
        schema: DIFF_SCHEMA,
        base: plan.base.clone(),
        head: plan.head.clone(),
        valgrind: valgrind.version.to_string(),
        method: valgrind.method,
        cpu_profile: sides
            .first()
            .map_or(CpuProfile::Default, |side| side.runner.workspace.cpu()),
        shards: plan.shard.into_iter().collect(),
        harnesses: diffs,
        problems: Vec::new(),
        sources: None,
        blind_spots: None,
        fingerprints: side_fingerprints(&jobs, &results),
    })
}

/// Each side's fingerprint, from its first measurement (every harness of
/// one program shares it); `None` when a side measured nothing.
fn side_fingerprints(
    jobs: &[(&SideBuild, &HarnessName)],
    results: &[Result<Measurement, DiffError>],
) -> Option<SideFingerprints> {
    let of = |wanted: Side| {
        jobs.iter()
            .zip(results)
            .find_map(|((side, _), result)| match result {
                Ok(measurement) if side.side == wanted => Some(measurement.fingerprint.clone()),
                _ => None,
            })
    };
    Some(SideFingerprints {
        base: of(Side::Base)?,
        head: of(Side::Head)?,
    })
}

/// The time both sides' runners spent on executed-lines data (the blind
/// spots' share of measuring).
pub(super) fn line_data_time(sides: &[SideBuild<'_>]) -> std::time::Duration {
    sides.iter().map(|side| side.runner.line_data_time()).sum()
}

/// The blind spots `find` finds, with what naming them cost the diff told
/// to `listener`: the time `find` took, after `line_data` spent while
/// measuring ([`line_data_time`]).
pub(super) fn timed_blind_spots(
    line_data: std::time::Duration,
    listener: &dyn Listener,
    find: impl FnOnce() -> BlindSpots,
) -> BlindSpots {
    let started = std::time::Instant::now();
    let spots = find();
    listener.event(Event::Diff(DiffStep::BlindSpots {
        elapsed: started.elapsed(),
        line_data,
    }));
    spots
}

/// The blind spots of `report`, a diff of the repository at `root` from
/// `base` to `head`, whose sides' outputs are in `outputs/base` and
/// `outputs/head`.
pub(super) fn blind_spots(
    report: &DiffReport,
    root: &Path,
    git: &regress_source::git::Git,
    revisions: (Revision<'_>, Revision<'_>),
    scope: Scope,
    outputs: &Path,
) -> BlindSpots {
    let measured = |side: Side| -> Vec<HarnessName> {
        report
            .harnesses
            .iter()
            .filter(|h| match side {
                Side::Base => h.base.is_some(),
                Side::Head => h.head.is_some(),
            })
            .map(|h| h.harness.clone())
            .collect()
    };
    let (base, head) = (measured(Side::Base), measured(Side::Head));
    let base_outputs = outputs.join(Side::Base.name());
    let head_outputs = outputs.join(Side::Head.name());
    blind::find(
        root,
        git,
        scope,
        &blind::Side {
            revision: revisions.0,
            measured: &base,
            outputs: &base_outputs,
        },
        &blind::Side {
            revision: revisions.1,
            measured: &head,
            outputs: &head_outputs,
        },
    )
}

/// The lines above `cg_annotate`'s text, so the file explains itself.
fn diff_header(plan: &Commits<'_>, harness: &HarnessName, diff: &HarnessDiff) -> String {
    let lines = [
        format!("per-function diff of {harness}: head minus base"),
        format!(
            "base {} ({}): {} instructions",
            plan.base.commit,
            plan.base.reference,
            diff.base.map_or_else(|| "-".to_owned(), count)
        ),
        format!(
            "head {} ({}): {} instructions",
            plan.head.commit,
            plan.head.reference,
            diff.head.map_or_else(|| "-".to_owned(), count)
        ),
        format!(
            "change {} ({}), {}",
            signed(diff.delta.unwrap_or_default()),
            match (diff.base, diff.head) {
                (Some(base), Some(head)) => signed_percent(base, head),
                _ => "n/a".to_owned(),
            },
            diff.verdict.label()
        ),
        "names normalised: build places, library layouts, versions and symbol hashes removed"
            .to_owned(),
    ];
    header_lines(&lines)
}

/// What comparing one harness needs besides its measurements.
struct Comparison<'a> {
    plan: &'a Commits<'a>,
    valgrind: &'a Valgrind,
    normalizer: Normalizer,
    sides: &'a [SideBuild<'a>],
    outputs: &'a Path,
}

impl Comparison<'_> {
    /// The allocation sites of `harness` that changed from base to head,
    /// from a DHAT pair of children on each side.
    fn allocation_sites(
        &self,
        harness: &HarnessName,
    ) -> Result<Vec<SiteDelta>, crate::MeasureError> {
        let sites = |wanted: Side| -> Result<Sites, crate::MeasureError> {
            let side = self
                .sides
                .iter()
                .find(|side| side.side == wanted)
                .ok_or_else(|| crate::MeasureError::BadHeapReport {
                    path: self.outputs.to_path_buf(),
                    reason: format!("no {wanted} side"),
                })?;
            side.runner.allocation_sites(harness, &side.binary)
        };
        Ok(site_deltas(
            &sites(Side::Base)?,
            &sites(Side::Head)?,
            &self.normalizer,
        ))
    }

    /// Compares one harness from its two sides' measurements (`None` for a
    /// side that does not have it).
    fn harness(
        &self,
        harness: &HarnessName,
        base: Option<&Result<Measurement, DiffError>>,
        head: Option<&Result<Measurement, DiffError>>,
        listener: &dyn Listener,
    ) -> HarnessDiff {
        let outputs = self.outputs;
        let count_of = |result: Option<&Result<Measurement, DiffError>>| {
            measured(result).map(|m| m.instructions)
        };
        let ((threshold, heap_threshold), threshold_error) = threshold_for(self.sides, harness);
        let mut errors: Vec<String> = threshold_error.into_iter().collect();
        for (side, result) in [(Side::Base, base), (Side::Head, head)] {
            if let Some(Err(error)) = result {
                listener.event(Event::HarnessFailed {
                    side: Some(side.name()),
                    harness,
                    error,
                });
                errors.push(format!("{side}: {}", first_line(&error.to_string())));
            }
        }
        let (base_count, head_count) = (count_of(base), count_of(head));
        let (Some(base_count), Some(head_count)) = (base_count, head_count) else {
            if !errors.is_empty() {
                return HarnessDiff::failed(
                    harness,
                    base_count,
                    head_count,
                    threshold,
                    errors.join("; "),
                );
            }
            return HarnessDiff::one_sided(harness, base_count, head_count, threshold);
        };

        let profile = |side: Side| harness.file_in(&outputs.join(side.name()), ".cachegrind.out");
        let (base_profile, head_profile) = (profile(Side::Base), profile(Side::Head));
        let functions = match (
            cachegrind_out::read(&base_profile),
            cachegrind_out::read(&head_profile),
        ) {
            (Ok(base), Ok(head)) => function_deltas(&base, &head, &self.normalizer),
            (Err(error), _) | (_, Err(error)) => {
                errors.push(format!("cannot read a region profile: {error}"));
                Vec::new()
            }
        };
        let mut diff = HarnessDiff::compared(harness, base_count, head_count, threshold, functions);
        diff.heap_threshold = heap_threshold;
        if let (Some(base), Some(head)) = (measured(base), measured(head)) {
            diff.figures = figure_diffs(&base.metrics, &head.metrics, threshold, heap_threshold);
            if heap_moved(&diff.figures) {
                match self.allocation_sites(harness) {
                    Ok(sites) => diff.heap_sites = sites,
                    Err(error) => errors.push(format!(
                        "the heap figures moved, but the allocation sites could not be read: {}",
                        first_line(&error.to_string())
                    )),
                }
            }
        }
        let explained: i128 = diff.functions.iter().map(|f| i128::from(f.delta)).sum();
        if errors.is_empty() && Some(explained) != diff.delta.map(i128::from) {
            errors.push(format!(
                "the per-function changes add up to {} but the counts differ by {}; \
                 the profiles in {} do not match the counts",
                signed(explained),
                signed(diff.delta.unwrap_or_default()),
                self.plan.workspace.display_path(outputs)
            ));
        }

        let text = annotated_diff(
            self.valgrind,
            &self.normalizer,
            &base_profile,
            &head_profile,
            &outputs.join(".scratch"),
        );
        match text {
            Ok(text) => {
                let path = harness.file_in(outputs, ".diff.txt");
                let header = diff_header(self.plan, harness, &diff);
                match std::fs::write(&path, format!("{header}{text}")) {
                    Ok(()) => diff.annotated_diff = Some(self.plan.workspace.display_path(&path)),
                    Err(error) => errors.push(format!("cannot write {}: {error}", path.display())),
                }
            }
            Err(error) => errors.push(first_line(&error.to_string())),
        }
        match self.flame_graph(harness, &diff) {
            Ok(path) => diff.flame_graph = path,
            Err(error) => errors.push(first_line(&error.to_string())),
        }
        if !errors.is_empty() {
            diff.error = Some(errors.join("; "));
        }
        diff
    }

    /// Draws head's flame graph coloured by its change against base, when
    /// both sides kept their call paths (Callgrind measurements do; a side
    /// counted by Cachegrind has none), and returns its path.
    fn flame_graph(
        &self,
        harness: &HarnessName,
        diff: &HarnessDiff,
    ) -> crate::Result<Option<String>> {
        let folded = |side: Side| harness.file_in(&self.outputs.join(side.name()), flame::FOLDED);
        let (base, head) = (folded(Side::Base), folded(Side::Head));
        if !base.is_file() || !head.is_file() {
            return Ok(None);
        }
        let (base, head) = (flame::read(&base)?, flame::read(&head)?);
        let path = harness.file_in(self.outputs, flame::DIFFERENTIAL);
        let title = format!(
            "{harness}: head {} against base {} ({})",
            short(&self.plan.head.commit),
            short(&self.plan.base.commit),
            diff.delta.map_or_else(|| "-".to_owned(), signed)
        );
        flame::write_svg(&path, || flame::differential(&base, &head, &title))?;
        Ok(Some(self.plan.workspace.display_path(&path)))
    }
}

/// The first 12 characters of a commit id (all of a shorter label).
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The measurement of a side, when it succeeded.
fn measured(result: Option<&Result<Measurement, DiffError>>) -> Option<&Measurement> {
    result.and_then(|r| r.as_ref().ok())
}

/// The thresholds of `harness` (instructions, heap): base's committed
/// ones, else head's, else the defaults; and the error of a baseline file
/// that does not load.
fn threshold_for(
    sides: &[SideBuild],
    harness: &HarnessName,
) -> ((Threshold, Threshold), Option<String>) {
    let defaults = (Threshold::default(), Threshold::heap_default());
    for side in sides {
        match BaselineFile::load(&side.baselines, harness) {
            Ok(Some(file)) => return ((file.threshold, file.heap_threshold), None),
            Ok(None) => continue,
            Err(error) => {
                return (
                    defaults,
                    Some(format!(
                        "{} baseline: {}",
                        side.side,
                        first_line(&error.to_string())
                    )),
                )
            }
        }
    }
    (defaults, None)
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}
