//! What `regress diff` and `regress diff-merge` do, for the binary to call.
//!
//! The arguments are declared here rather than in `main.rs`, so the binary
//! only names the subcommands and maps the [`Outcome`] to an exit code.

use std::path::{Path, PathBuf};

use super::error::DiffError;
use super::pipeline::{DiffRequest, Plan};
use super::report::DiffReport;
use super::shard::Shard;
use super::{render, Outcome};
use crate::valgrind::Valgrind;
use crate::workspace::Workspace;
use crate::{cachegrind, parallel};

/// `regress diff`: compare the instruction counts of two commits.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "\
Each commit is built in a temporary git worktree under target/regress-diff/ and measured \
with the same Valgrind; your work tree, index and uncommitted changes are never touched.

Outputs (perf_outputs/diff/): report.json (schema 1), report.md (for a pull request \
comment), <harness>.diff.txt (cg_annotate's per-function diff), base/ and head/ (the raw \
region profiles).

Exit codes: 0 nothing regressed beyond its threshold; 1 a harness regressed beyond its \
threshold; 2 an error (a bad ref, a failed build or measurement, a missing shard).")]
pub struct DiffArgs {
    /// The commit to compare against: a branch, tag or commit.
    #[arg(value_name = "BASE", allow_hyphen_values = true)]
    pub base: String,

    /// The commit to measure. Uncommitted changes are not part of it.
    #[arg(
        value_name = "HEAD",
        default_value = "HEAD",
        allow_hyphen_values = true
    )]
    pub head: String,

    /// Compare HEAD with the merge base of BASE and HEAD (what a pull request
    /// changes), like `git diff BASE...HEAD`.
    #[arg(long)]
    pub merge_base: bool,

    /// Only harnesses whose name contains this (repeatable).
    #[arg(long = "harness", value_name = "NAME")]
    pub harnesses: Vec<String>,

    /// Measure only the K-th of N parts of the harness list, for CI runners
    /// that share the work; merge their report.json with `regress diff-merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,

    /// Also write the head's counts as Bencher Metric Format JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,

    /// The cargo target folder both commits build in [default:
    /// $CARGO_TARGET_DIR, else target/regress-diff/target]. It must not
    /// contain target/regress-diff/, where the worktrees are.
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
}

/// `regress diff-merge`: one report from the reports of several shards.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "\
Writes perf_outputs/diff/report.json and report.md, prints the table, and exits like \
`regress diff`: 0, 1 for a regression, 2 when a shard is missing or a harness failed.")]
pub struct MergeArgs {
    /// The report.json of each shard.
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,

    /// Also write the head's counts as Bencher Metric Format JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,
}

/// Runs a diff and writes its report.
pub fn diff(
    workspace: &Workspace,
    valgrind: Option<&Path>,
    jobs: Option<usize>,
    args: DiffArgs,
) -> anyhow::Result<Outcome> {
    // Refs first: a bad ref is refused before anything is created or
    // Valgrind is even looked for.
    let plan = Plan::resolve(
        workspace,
        DiffRequest {
            base: args.base,
            head: args.head,
            merge_base: args.merge_base,
            filters: args.harnesses,
            shard: args.shard,
            target_dir: args.target_dir,
        },
    )?;
    let valgrind = match valgrind {
        Some(path) => Valgrind::at(path)?,
        None => Valgrind::from_env()?,
    };
    eprintln!(
        "Valgrind {} at {} (method: {})",
        valgrind.version,
        valgrind.program.display(),
        valgrind.method
    );
    let timeout = cachegrind::timeout_from_env()?;
    let report = plan.run(&valgrind, timeout, parallel::workers(jobs))?;
    Ok(publish(workspace, &report, args.bmf.as_deref())?)
}

/// Merges shard reports and writes the merged report.
pub fn merge(workspace: &Workspace, args: MergeArgs) -> Result<Outcome, DiffError> {
    let reports = args
        .reports
        .iter()
        .map(|path| DiffReport::read(path))
        .collect::<Result<Vec<_>, _>>()?;
    let report = DiffReport::merge(reports)?;
    publish(workspace, &report, args.bmf.as_deref())
}

/// Writes `report.json` and `report.md`, the Bencher file if asked, and
/// prints the table.
fn publish(
    workspace: &Workspace,
    report: &DiffReport,
    bmf: Option<&Path>,
) -> Result<Outcome, DiffError> {
    let dir = workspace.perf_outputs_dir().join("diff");
    std::fs::create_dir_all(&dir)
        .map_err(|source| DiffError::io("create the folder", &dir, source))?;
    let json = dir.join("report.json");
    write(&json, &report.to_json()?)?;
    let markdown = dir.join("report.md");
    write(&markdown, &render::markdown(report))?;
    if let Some(path) = bmf {
        let mut text =
            serde_json::to_string_pretty(&render::bmf(report)).map_err(DiffError::Serialize)?;
        text.push('\n');
        write(path, &text)?;
        eprintln!("wrote {}", path.display());
    }
    eprintln!(
        "wrote {} and {}",
        workspace.display_path(&json),
        workspace.display_path(&markdown)
    );
    print!("{}", render::text(report));
    Ok(report.outcome())
}

fn write(path: &Path, text: &str) -> Result<(), DiffError> {
    crate::atomic_file::write(path, text.as_bytes()).map_err(DiffError::from)
}
