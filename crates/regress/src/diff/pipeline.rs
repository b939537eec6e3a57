//! A diff from start to finish: check the refs, build both sides in
//! worktrees, measure, compare, and write the per-harness outputs.
//!
//! The work is split in two on purpose. [`Plan::resolve`] only reads: it
//! checks both refs and that they share history, so a typo, an option
//! smuggled in as a ref or an unrelated commit is refused before anything is
//! created (no lock, no folder, no worktree), and before Valgrind is even
//! looked for. [`Plan::run`] does the rest.
//!
//! Outputs, under `perf_outputs/diff/` (cleared at the start of each run):
//!
//! ```text
//! base/<harness>.cachegrind.out    raw region profile of the base commit
//! base/<harness>.annotated.txt     its cg_annotate text
//! head/…                           the same for head
//! <harness>.diff.txt               cg_annotate's per-function diff, head minus base
//! report.json, report.md           written by the command (see `command`)
//! ```
//!
//! Scratch state, under `target/regress-diff/` (ignored by git):
//!
//! ```text
//! .lock                one diff per checkout at a time
//! base-<sha>/, head-<sha>/   the worktrees, removed when the diff ends
//! bin/<side>-<sha>/perf      each side's test binary, copied out of the target folder
//! target/              the diff's own cargo target folder, kept between diffs
//! ```

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regress_profile::cachegrind_out;

use super::annotate::annotated_diff;
use super::build::{self, BuildSpec, Isolation};
use super::compare::{self, function_deltas, HarnessDiff};
use super::error::DiffError;
use super::git::{Repo, Worktree};
use super::interrupt;
use super::normalize::Normalizer;
use super::report::{DiffReport, Revision, DIFF_SCHEMA};
use super::shard::Shard;
use super::Side;
use crate::baseline::{BaselineError, BaselineFile, Threshold};
use crate::discover::{self, PROGRAM};
use crate::report::{count, signed, signed_percent};
use crate::runner::HEADER_PREFIX;
use crate::valgrind::Valgrind;
use crate::workspace::{file_stem, Workspace};
use crate::{parallel, Measurement, Runner};

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct DiffRequest {
    /// The base ref, as given.
    pub base: String,
    /// The head ref, as given (`HEAD` by default).
    pub head: String,
    /// Compare head with the merge base of base and head (what a pull
    /// request changes) instead of with base itself.
    pub merge_base: bool,
    /// Only harnesses whose names contain one of these.
    pub filters: Vec<String>,
    pub shard: Option<Shard>,
    /// The cargo target folder both sides build in (default:
    /// `CARGO_TARGET_DIR`, else `target/regress-diff/target`; see
    /// [`super::build`]).
    pub target_dir: Option<PathBuf>,
}

/// A diff whose refs have been checked.
#[derive(Debug)]
pub struct Plan {
    repo: Repo,
    workspace: Workspace,
    pub base: Revision,
    pub head: Revision,
    request: DiffRequest,
}

impl Plan {
    /// Checks the refs of `request` in the repository of `workspace`.
    /// Creates nothing.
    pub fn resolve(workspace: &Workspace, request: DiffRequest) -> Result<Plan, DiffError> {
        let repo = Repo::discover(workspace.root())?;
        let mut base = repo.resolve(Side::Base, &request.base)?;
        let head = repo.resolve(Side::Head, &request.head)?;
        let merge_base = repo.merge_base(&base, &head)?;
        if request.merge_base && merge_base != base.commit {
            base = Revision {
                reference: format!("merge base of {} and {}", base.reference, head.reference),
                commit: merge_base,
            };
        }
        Ok(Plan {
            repo,
            workspace: workspace.clone(),
            base,
            head,
            request,
        })
    }

    /// Builds, measures and compares. `workers` Valgrind processes run at
    /// once.
    pub fn run(
        self,
        valgrind: &Valgrind,
        timeout: Duration,
        workers: usize,
    ) -> Result<DiffReport, DiffError> {
        interrupt::install();
        let result = self.run_interruptible(valgrind, timeout, workers);
        // A child killed by the user's Ctrl-C fails in its own words ("cargo
        // failed: signal 2"); say what really happened. The worktrees are
        // gone by now.
        if interrupt::requested() {
            return Err(DiffError::Interrupted);
        }
        result
    }

    fn run_interruptible(
        self,
        valgrind: &Valgrind,
        timeout: Duration,
        workers: usize,
    ) -> Result<DiffReport, DiffError> {
        if self.request.head == "HEAD" && self.repo.has_uncommitted_changes() {
            note("the work tree has uncommitted changes; they are not measured (commit them to include them)");
        }
        note(&format!(
            "base {} ({}), head {} ({})",
            self.base.short(),
            self.base.reference,
            self.head.short(),
            self.head.reference
        ));

        let scratch = self.repo.root().join("target").join("regress-diff");
        std::fs::create_dir_all(&scratch)
            .map_err(|source| DiffError::io("create the folder", &scratch, source))?;
        let _lock = lock(&scratch)?;
        self.repo.remove_stale_worktrees(&scratch);
        let bin_dir = RemoveOnDrop(scratch.join("bin"));
        let _ = std::fs::remove_dir_all(&bin_dir.0);

        let outputs = self.workspace.perf_outputs_dir().join("diff");
        clear_outputs(&outputs)?;

        let own_target = scratch.join("target");
        let shared_target = self.target_dir(&scratch, &own_target)?;

        // Build base, then head: each worktree is created right before its
        // build (see `build` for why that order matters).
        let mut sides: Vec<SideBuild> = Vec::new();
        for (side, revision) in [(Side::Base, &self.base), (Side::Head, &self.head)] {
            interrupt::check()?;
            let name = format!("{side}-{}", revision.short());
            let worktree = self
                .repo
                .add_worktree(&scratch.join(&name), &revision.commit)?;
            let (config, target_dir) = match build::isolation(worktree.path())? {
                Isolation::Renamed(config) => (config, shared_target.clone()),
                Isolation::NeedsOwnTargetDir { reason } => {
                    note(&format!(
                        "{reason}, so the {side} commit builds in {} rather than sharing a \
                         target folder",
                        display(&self.workspace, &own_target)
                    ));
                    (Vec::new(), own_target.clone())
                }
            };
            note(&format!(
                "building the {side} harnesses ({}) in {}",
                revision.short(),
                display(&self.workspace, worktree.path())
            ));
            let started = Instant::now();
            let binary = build::build_harness_tests(&BuildSpec {
                side,
                commit: &revision.commit,
                worktree: worktree.path(),
                target_dir: &target_dir,
                config: &config,
                copy_to: &bin_dir.0.join(&name).join(PROGRAM),
            })?;
            interrupt::check()?;
            let names = discover::list(&binary)?;
            note(&format!(
                "built the {side} harnesses in {:.0} s: {} harnesses",
                started.elapsed().as_secs_f64(),
                names.len()
            ));
            // The runner writes each measurement's record into the commit's
            // own perf_outputs/, which an old commit may not have.
            let records = worktree.path().join("perf_outputs");
            std::fs::create_dir_all(&records)
                .map_err(|source| DiffError::io("create the folder", &records, source))?;
            let runner = Runner::new(Workspace::new(worktree.path()), valgrind.clone(), timeout)?
                .with_output_dir(outputs.join(side.name()));
            sides.push(SideBuild {
                side,
                worktree,
                binary,
                names,
                runner,
            });
        }

        let harnesses = self.select(&sides)?;
        let report = self.measure_and_compare(valgrind, workers, &sides, &harnesses, &outputs);
        // Remove the worktrees now, so their messages come before the result.
        drop(sides);
        report
    }

    /// The cargo target folder both sides share (see [`choose_target_dir`]).
    fn target_dir(&self, worktrees: &Path, own: &Path) -> Result<PathBuf, DiffError> {
        let from_env = std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty());
        let (dir, why_not_env) = choose_target_dir(
            self.request.target_dir.as_deref(),
            from_env.as_deref().map(Path::new),
            worktrees,
            own,
        )?;
        if let Some(env_dir) = why_not_env {
            note(&format!(
                "CARGO_TARGET_DIR={} contains the worktrees, so the diff builds in {} instead",
                env_dir.display(),
                display(&self.workspace, &dir)
            ));
        }
        Ok(dir)
    }

    /// The harnesses this run measures: the union of both sides', filtered,
    /// then this shard's part.
    fn select(&self, sides: &[SideBuild]) -> Result<Vec<String>, DiffError> {
        let all: BTreeSet<&String> = sides.iter().flat_map(|side| &side.names).collect();
        let all: Vec<String> = all.into_iter().cloned().collect();
        let selected = discover::select(all, &self.request.filters);
        if selected.is_empty() {
            return Err(DiffError::NoHarness {
                filters: self.request.filters.clone(),
            });
        }
        Ok(match self.request.shard {
            Some(shard) => {
                let mine = shard.select(&selected);
                note(&format!(
                    "shard {shard}: {} of {} harnesses",
                    mine.len(),
                    selected.len()
                ));
                mine
            }
            None => selected,
        })
    }

    fn measure_and_compare(
        &self,
        valgrind: &Valgrind,
        workers: usize,
        sides: &[SideBuild],
        harnesses: &[String],
        outputs: &Path,
    ) -> Result<DiffReport, DiffError> {
        let jobs: Vec<(&SideBuild, &String)> = harnesses
            .iter()
            .flat_map(|harness| {
                sides
                    .iter()
                    .filter(move |side| side.names.contains(harness))
                    .map(move |side| (side, harness))
            })
            .collect();
        let started = Instant::now();
        let total = jobs.len();
        let results = parallel::map(
            &jobs,
            workers,
            |(side, harness)| {
                interrupt::check()?;
                side.runner
                    .measure(harness, &side.binary)
                    .map_err(DiffError::from)
            },
            |done, (side, harness), result| {
                let what = match result {
                    Ok(measurement) => count(measurement.instructions),
                    Err(_) => "failed".to_owned(),
                };
                note(&format!(
                    "[{done}/{total}] {} {harness}: {what} ({:.1} s)",
                    side.side,
                    started.elapsed().as_secs_f64()
                ));
            },
        );
        interrupt::check()?;

        let comparison = Comparison {
            plan: self,
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
            diffs.push(comparison.harness(harness, result(Side::Base), result(Side::Head)));
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
            base: self.base.clone(),
            head: self.head.clone(),
            valgrind: valgrind.version.to_string(),
            method: valgrind.method,
            shards: self.request.shard.into_iter().collect(),
            harnesses: diffs,
            problems: Vec::new(),
        })
    }

    /// The lines above `cg_annotate`'s text, so the file explains itself.
    fn diff_header(&self, harness: &str, diff: &HarnessDiff, normalizer: &Normalizer) -> String {
        let [mod_filename, mod_funcname] = normalizer.tool_args();
        let lines = [
            format!("per-function diff of {harness}: head minus base"),
            format!(
                "base {} ({}): {} instructions",
                self.base.commit,
                self.base.reference,
                diff.base.map_or_else(|| "-".to_owned(), count)
            ),
            format!(
                "head {} ({}): {} instructions",
                self.head.commit,
                self.head.reference,
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
            format!("names lined up with {mod_filename} {mod_funcname}"),
        ];
        let mut out = String::new();
        for line in lines {
            out.push_str(HEADER_PREFIX);
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

/// What comparing one harness needs besides its measurements.
struct Comparison<'a> {
    plan: &'a Plan,
    valgrind: &'a Valgrind,
    normalizer: Normalizer,
    sides: &'a [SideBuild],
    outputs: &'a Path,
}

impl Comparison<'_> {
    /// Compares one harness from its two sides' measurements (`None` for a
    /// side that does not have it).
    fn harness(
        &self,
        harness: &str,
        base: Option<&Result<Measurement, DiffError>>,
        head: Option<&Result<Measurement, DiffError>>,
    ) -> HarnessDiff {
        let outputs = self.outputs;
        let count_of = |result: Option<&Result<Measurement, DiffError>>| {
            result.and_then(|r| r.as_ref().ok()).map(|m| m.instructions)
        };
        let (threshold, threshold_error) = threshold_for(self.sides, harness);
        let mut errors: Vec<String> = threshold_error.into_iter().collect();
        for (side, result) in [(Side::Base, base), (Side::Head, head)] {
            if let Some(Err(error)) = result {
                eprintln!("error: {side} {harness}: {error}");
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

        let stem = file_stem(harness);
        let profile = |side: Side| {
            outputs
                .join(side.name())
                .join(format!("{stem}.cachegrind.out"))
        };
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
        let explained: i64 = diff.functions.iter().map(|f| f.delta).sum();
        if errors.is_empty() && Some(explained) != diff.delta {
            errors.push(format!(
                "the per-function changes add up to {} but the counts differ by {}; \
                 the profiles in {} do not match the counts",
                signed(explained),
                signed(diff.delta.unwrap_or_default()),
                display(&self.plan.workspace, outputs)
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
                let path = outputs.join(format!("{stem}.diff.txt"));
                let header = self.plan.diff_header(harness, &diff, &self.normalizer);
                match std::fs::write(&path, format!("{header}{text}")) {
                    Ok(()) => diff.annotated_diff = Some(display(&self.plan.workspace, &path)),
                    Err(error) => errors.push(format!("cannot write {}: {error}", path.display())),
                }
            }
            Err(error) => errors.push(first_line(&error.to_string())),
        }
        if !errors.is_empty() {
            diff.error = Some(errors.join("; "));
        }
        diff
    }
}

/// One side, built.
struct SideBuild {
    side: Side,
    /// Kept alive until the measurements are done: the runner reads the
    /// commit's Cargo.lock and writes its records there.
    worktree: Worktree,
    binary: PathBuf,
    names: Vec<String>,
    runner: Runner,
}

/// The threshold of `harness`: base's committed one, else head's, else the
/// default; and the error of a baseline file that does not load.
fn threshold_for(sides: &[SideBuild], harness: &str) -> (Threshold, Option<String>) {
    for side in sides {
        let dir = side.worktree.path().join("baselines");
        match BaselineFile::load(&dir, harness) {
            Ok(file) => return (file.threshold, None),
            Err(BaselineError::Missing { .. }) => continue,
            Err(error) => {
                return (
                    Threshold::default(),
                    Some(format!(
                        "{} baseline: {}",
                        side.side,
                        first_line(&error.to_string())
                    )),
                )
            }
        }
    }
    (Threshold::default(), None)
}

/// The cargo target folder both sides share: `explicit` (`--target-dir`),
/// else `from_env` (`CARGO_TARGET_DIR`), else `own`, a folder of the diff's
/// own. It must not contain `worktrees`: cargo records the source files
/// inside its target folder relative to that folder, so the head build would
/// check the base worktree's files for changes and reuse the base binary. An
/// explicit folder that does is an error; an inherited one is passed over,
/// and returned second so the caller can say so.
fn choose_target_dir(
    explicit: Option<&Path>,
    from_env: Option<&Path>,
    worktrees: &Path,
    own: &Path,
) -> Result<(PathBuf, Option<PathBuf>), DiffError> {
    let absolute = |dir: &Path| {
        std::path::absolute(dir).map_err(|source| DiffError::io("resolve", dir, source))
    };
    if let Some(dir) = explicit {
        let dir = absolute(dir)?;
        if worktrees.starts_with(&dir) {
            return Err(DiffError::TargetDirContainsWorktrees {
                target_dir: dir,
                worktrees: worktrees.to_path_buf(),
            });
        }
        return Ok((dir, None));
    }
    if let Some(dir) = from_env {
        let dir = absolute(dir)?;
        if !worktrees.starts_with(&dir) {
            return Ok((dir, None));
        }
        return Ok((own.to_path_buf(), Some(dir)));
    }
    Ok((own.to_path_buf(), None))
}

/// Takes the diff lock of this checkout, waiting for a diff that holds it.
fn lock(scratch: &Path) -> Result<File, DiffError> {
    let path = scratch.join(".lock");
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| DiffError::io("open", &path, source))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => {
            note("waiting for another regress diff in this checkout to finish");
            file.lock()
                .map_err(|source| DiffError::io("lock", &path, source))?;
            Ok(file)
        }
        Err(TryLockError::Error(source)) => Err(DiffError::io("lock", &path, source)),
    }
}

/// Removes what an earlier diff wrote to `outputs`, so nothing stale is
/// mistaken for this run's result.
fn clear_outputs(outputs: &Path) -> Result<(), DiffError> {
    match std::fs::read_dir(outputs) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let ours = matches!(name.as_ref(), "base" | "head" | ".scratch")
                    || name.ends_with(".diff.txt")
                    || name.starts_with("report.");
                if !ours {
                    continue;
                }
                let removed = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                removed.map_err(|source| DiffError::io("remove", &path, source))?;
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(DiffError::io("list", outputs, source)),
    }
    std::fs::create_dir_all(outputs)
        .map_err(|source| DiffError::io("create the folder", outputs, source))
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn note(message: &str) {
    eprintln!("regress diff: {message}");
}

fn display(workspace: &Workspace, path: &Path) -> String {
    workspace.display_path(path)
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_outputs_keeps_what_is_not_ours() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outputs = dir.path().join("diff");
        std::fs::create_dir_all(outputs.join("base")).expect("mkdir");
        for file in ["a.diff.txt", "report.md", "report.json", "notes.txt"] {
            std::fs::write(outputs.join(file), "x").expect("write");
        }
        clear_outputs(&outputs).expect("clear");
        let mut left: Vec<String> = std::fs::read_dir(&outputs)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["notes.txt"]);
        clear_outputs(&dir.path().join("new")).expect("a missing folder is created");
        assert!(dir.path().join("new").is_dir());
    }

    #[test]
    fn the_target_folder_never_contains_the_worktrees() {
        let worktrees = Path::new("/repo/target/regress-diff");
        let own = Path::new("/repo/target/regress-diff/target");
        let pick = |explicit: Option<&str>, env: Option<&str>| {
            choose_target_dir(explicit.map(Path::new), env.map(Path::new), worktrees, own)
        };
        assert_eq!(
            pick(None, None).expect("default"),
            (own.to_path_buf(), None)
        );
        assert_eq!(
            pick(None, Some("/cache/cargo")).expect("env"),
            (PathBuf::from("/cache/cargo"), None)
        );
        // The checkout's own target/ holds the worktrees: passed over.
        assert_eq!(
            pick(None, Some("/repo/target")).expect("env"),
            (own.to_path_buf(), Some(PathBuf::from("/repo/target")))
        );
        assert_eq!(
            pick(Some("/elsewhere"), Some("/cache/cargo")).expect("explicit"),
            (PathBuf::from("/elsewhere"), None)
        );
        let error = pick(Some("/repo/target"), None).unwrap_err();
        assert!(
            matches!(error, DiffError::TargetDirContainsWorktrees { .. }),
            "{error}"
        );
        // A relative folder is taken from the current folder, not from the
        // worktree cargo runs in.
        let (relative, _) = pick(Some("some/dir"), None).expect("relative");
        assert!(relative.is_absolute());
    }

    #[test]
    fn the_lock_is_exclusive() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = lock(dir.path()).expect("lock");
        let other = OpenOptions::new()
            .write(true)
            .open(dir.path().join(".lock"))
            .expect("open");
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
