//! One module per command. Each takes the [`Context`] and its arguments,
//! tells the reporter what happens, and says how it ended ([`Outcome`]).

pub mod bisect;
pub mod bless;
pub mod compare;
pub mod constant_flow;
pub mod coverage;
pub mod diff;
pub mod history;
pub mod list;
pub mod noise;
pub mod readme;
pub mod report;
pub mod run;
pub mod scale;

use std::path::{Path, PathBuf};

use anyhow::bail;
use regress::measure::cachegrind;
use regress::measure::cpu_profile::CpuProfile;
use regress::measure::scratch::{sweep_stale, ScratchDir};
use regress::measure::valgrind::Valgrind;
use regress::report::events::{Event, Listener};
use regress::report::Reporter;
use regress::workspace::Workspace;
use regress::{program, HarnessName, Runner};

/// How a command ended; `main` turns it into the exit code. Ordered from
/// best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Done, nothing to complain about (exit 0).
    Clean,
    /// A harness regressed beyond its threshold, or has no baseline for
    /// this machine (exit 1).
    Regressed,
    /// Something could not be measured or judged (exit 2).
    Failed,
}

/// What every command may need: where the project is, the global options,
/// and the one reporter.
pub struct Context<'a> {
    pub workspace: Workspace,
    pub valgrind: Option<PathBuf>,
    pub jobs: Option<usize>,
    pub reporter: &'a Reporter,
}

impl Context<'_> {
    /// The Valgrind the user chose (`--valgrind`, else the environment),
    /// announced to the reporter.
    pub fn valgrind(&self) -> anyhow::Result<Valgrind> {
        let valgrind = match &self.valgrind {
            Some(path) => Valgrind::at(path)?,
            None => Valgrind::from_env()?,
        };
        self.reporter.event(Event::ValgrindFound(&valgrind));
        Ok(valgrind)
    }

    pub fn runner(&self) -> anyhow::Result<Runner> {
        Ok(Runner::new(
            self.workspace.clone(),
            self.valgrind()?,
            cachegrind::timeout_from_env()?,
        )?)
    }

    pub fn workers(&self) -> usize {
        regress::parallel::workers(self.jobs)
    }

    /// Runs `command` under every CPU profile in turn, each announced, and
    /// ends as the worst of them ended. An error stops the sequence.
    pub fn each_cpu(
        &self,
        mut command: impl FnMut(&Context) -> anyhow::Result<Outcome>,
    ) -> anyhow::Result<Outcome> {
        let mut worst = Outcome::Clean;
        for cpu in CpuProfile::ALL {
            self.reporter.note(&format!(
                "== CPU profile {cpu}: {} ({})",
                cpu.summary(),
                self.workspace
                    .display_path(&self.workspace.clone().with_cpu(cpu).perf_outputs_dir())
            ));
            let context = Context {
                workspace: self.workspace.clone().with_cpu(cpu),
                valgrind: self.valgrind.clone(),
                jobs: self.jobs,
                reporter: self.reporter,
            };
            let outcome = command(&context)?;
            interrupted()?;
            worst = worst.max(outcome);
        }
        Ok(worst)
    }
}

/// The staged copy of the measured program, removed (with its folder)
/// when dropped: at the end of the run, on an error and on Ctrl-C.
pub struct Staged {
    binary: PathBuf,
    _folder: ScratchDir,
}

impl Staged {
    pub fn path(&self) -> &Path {
        &self.binary
    }
}

/// Builds the harness tests, copies the binary where a rebuild cannot
/// replace it (a folder of this process's own, so that a later `cargo
/// build` cannot pull it from under a suite of measurements), and picks
/// the harnesses `filters` select. Scratch folders that runs killed
/// outright left behind are removed first.
pub fn harnesses(
    runner: &Runner,
    filters: &[String],
) -> anyhow::Result<(Staged, Vec<HarnessName>)> {
    let scratch = runner.output_dir().join(".scratch");
    sweep_stale(&scratch);
    let built = program::build(&runner.workspace)?;
    interrupted()?;
    // The guard exists before the copy, so a copy that fails half-way (a
    // full disk) leaves nothing either.
    let folder = ScratchDir::create(&scratch, "program")?;
    let binary = folder.path().join(program::PROGRAM);
    std::fs::copy(&built, &binary).map_err(|source| {
        regress::MeasureError::io("copy the measured program to", &binary, source)
    })?;
    let staged = Staged {
        binary,
        _folder: folder,
    };
    let names = selected(program::list(staged.path())?, filters)?;
    Ok((staged, names))
}

/// `Err(Interrupted)` once the user pressed Ctrl-C (or sent SIGTERM): the
/// command stops, its guards clean up, and `main` exits with 130.
pub fn interrupted() -> anyhow::Result<()> {
    Ok(regress::process::check()?)
}

/// The harnesses `filters` select, or an error that says how to list them.
pub fn selected(names: Vec<HarnessName>, filters: &[String]) -> anyhow::Result<Vec<HarnessName>> {
    let names = program::select(names, filters);
    if names.is_empty() {
        bail!("no harness matches {filters:?}; `cargo run -p regress -- list` shows them all");
    }
    Ok(names)
}

/// Writes `text` to a file the user named, and says so.
pub fn write_file(reporter: &Reporter, path: &Path, text: &str) -> anyhow::Result<()> {
    regress::atomic_file::write(path, text.as_bytes())?;
    reporter.event(Event::Wrote(path));
    Ok(())
}
