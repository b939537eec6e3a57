//! The fault campaign: plays every way the runner was seen to fail, or
//! could (hostile files, missing, hanging and crashing tools, full output
//! folders, interrupts at each stage of `run`, `noise` and `diff`, bad refs,
//! concurrent runs), and checks for each one the exit code, the first line
//! of the message, that no process it started survives, and that no file
//! outside `perf_outputs/` changed (the user's repository included).
//!
//! Run it with `scripts/fault-campaign.sh`, which builds `regress` and the
//! measured program once and passes them here:
//!
//! ```text
//! fault_campaign [--regress PATH] [--program PATH] [--out FILE.md] [--only TEXT]
//! ```
//!
//! Fake tools (shell scripts, see `fakes.rs`) stand in for Valgrind and
//! cargo, so most cases take a second; the measured program is the real
//! one, run natively by the fake Valgrind.

mod bisect_cases;
mod cases;
mod diff_cases;
mod fakes;
mod hostile_cases;
mod interrupt_cases;
mod world;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use regress::report::markdown::code;
use world::{Tools, World};

struct Options {
    regress: PathBuf,
    program: PathBuf,
    out: Option<PathBuf>,
    only: Option<String>,
}

/// Why the campaign cannot start.
#[derive(Debug, thiserror::Error)]
enum OptionsError {
    #[error("{0} needs a value")]
    NeedsValue(String),
    #[error("unknown argument {0:?}")]
    Unknown(String),
    /// This example's own path cannot be read.
    #[error(transparent)]
    Exe(std::io::Error),
    #[error("cannot tell where regress is; pass --regress PATH")]
    NoRegress,
    #[error(transparent)]
    Workspace(regress::MeasureError),
    #[error(transparent)]
    Build(regress::program::BuildError),
}

fn options() -> Result<Options, OptionsError> {
    let mut args = std::env::args().skip(1);
    let (mut regress, mut program, mut out, mut only) = (None, None, None, None);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| OptionsError::NeedsValue(arg.clone()))
        };
        match arg.as_str() {
            "--regress" => regress = Some(PathBuf::from(value()?)),
            "--program" => program = Some(PathBuf::from(value()?)),
            "--out" => out = Some(PathBuf::from(value()?)),
            "--only" => only = Some(value()?),
            other => return Err(OptionsError::Unknown(other.to_owned())),
        }
    }
    // By default: the `regress` built beside this example, and the measured
    // program as the runner builds it (one build, reused by every case).
    let regress = match regress {
        Some(path) => path,
        None => std::env::current_exe()
            .map_err(OptionsError::Exe)?
            .parent()
            .and_then(|examples| examples.parent())
            .map(|dir| dir.join("regress"))
            .ok_or(OptionsError::NoRegress)?,
    };
    let program = match program {
        Some(path) => path,
        None => {
            let root =
                regress::workspace::Workspace::discover().map_err(OptionsError::Workspace)?;
            regress::program::build(&root).map_err(OptionsError::Build)?
        }
    };
    Ok(Options {
        regress,
        program,
        out,
        only,
    })
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("fault_campaign: {error}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let base = tempfile::tempdir().expect("tempdir");
    let program = base.path().join("harnesses");
    std::fs::copy(&options.program, &program).expect("copy the measured program");
    let root = regress::workspace::Workspace::discover().expect("the project's root");
    let tools = Tools {
        regress: options.regress.clone(),
        program,
        cargo_lock: root.cargo_lock(),
    };

    let mut rows = Vec::new();
    let mut failures = 0;
    for (index, case) in cases::all().into_iter().enumerate() {
        if options
            .only
            .as_ref()
            .is_some_and(|only| !case.name.contains(only.as_str()))
        {
            continue;
        }
        let world = World::new(base.path(), index, &tools);
        let case_started = Instant::now();
        let played = (case.play)(&world, &tools);
        let seconds = case_started.elapsed().as_secs_f64();
        let message = played
            .ended
            .message()
            .replace(&*world.root.to_string_lossy(), "…");
        let mut problems = played.problems.clone();
        if played.ended.code != Some(case.code) {
            problems.push(format!(
                "exit {:?}, expected {}",
                played.ended.code, case.code
            ));
        }
        if !message.contains(case.message) {
            problems.push(format!("the message lacks {:?}", case.message));
        }
        problems.extend(played.survivors.iter().map(|s| format!("survivor: {s}")));
        problems.extend(played.changed.iter().cloned());
        let verdict = if problems.is_empty() { "ok" } else { "FAILED" };
        eprintln!(
            "[{verdict}] {} ({seconds:.1} s): {}",
            case.name, played.command
        );
        if !problems.is_empty() {
            failures += 1;
            eprintln!("    message: {message}");
            for problem in &problems {
                eprintln!("    {problem}");
            }
            eprintln!("    stderr:\n{}", played.ended.stderr);
        }
        rows.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            case.name,
            played
                .ended
                .code
                .map_or("none".to_owned(), |c| c.to_string()),
            code(&message),
            played.survivors.len(),
            played.changed.len(),
            played.bytes,
            if problems.is_empty() {
                "ok".to_owned()
            } else {
                code(&problems.join("; "))
            },
        ));
    }
    let elapsed = started.elapsed().as_secs_f64();
    let table = format!(
        "| case | exit | first line of the message | processes left | files changed outside perf_outputs/ | bytes lost | result |\n\
         | --- | ---: | --- | ---: | ---: | ---: | --- |\n{}\n\n{} cases, {} failed, in {elapsed:.0} s (`scripts/fault-campaign.sh`)\n",
        rows.join("\n"),
        rows.len(),
        failures
    );
    print!("{table}");
    if let Some(out) = &options.out {
        if let Err(error) = std::fs::write(out, &table) {
            eprintln!("fault_campaign: cannot write {}: {error}", out.display());
            return ExitCode::from(2);
        }
    }
    println!("{} passed, {failures} failed", rows.len() - failures);
    if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
