//! `regress`: the commands that are not a test run.
//!
//! `cargo test` (and `ENABLE_VALGRIND=true cargo test`) is the everyday
//! entry point. This binary adds what a test run cannot do: measure and gate
//! the whole suite with one summary, write baselines on request, measure
//! noise, compare libraries and commits, and write reports.
//!
//! This file only names the commands and turns how they ended into the exit
//! code; the arguments are in `cli.rs`, what each command does in
//! `commands/`, and everything printed goes through one
//! [`regress::report::Reporter`].

mod cli;
mod cli_history;
mod commands;

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use regress::process::{serve_sentinel, Sentinel, SENTINEL_ARGUMENT};
use regress::report::Reporter;
use regress::workspace::Workspace;

use cli::{Cli, Command, CpuChoice};
use commands::{Context, Outcome};

fn main() -> ExitCode {
    let arguments: Vec<OsString> = std::env::args_os().collect();
    if arguments.get(1).map(OsString::as_os_str) == Some(OsStr::new(SENTINEL_ARGUMENT)) {
        return sentinel(&arguments[2..]);
    }
    let cli = Cli::parse();
    let reporter = Reporter::new();
    // Before any thread or child exists: it marks this process's
    // environment, which every child inherits.
    let sentinel = start_sentinel(&reporter);
    prepare_signals(&reporter);
    let result = run(cli, &reporter);
    // The idle fork servers of the measurements, with their folders (before
    // the sentinel, which would kill them and leave the folders).
    regress::measure::fork_server::shut_down();
    // Whatever carries this run's marks is killed (this process excepted);
    // then a descendant that left its child's process group (a daemon a
    // Valgrind wrapper started) and was adopted: none may outlive the
    // command.
    if let Some(sentinel) = sentinel {
        sentinel.finish();
    }
    regress::process::kill_adopted();
    if regress::process::interrupted() {
        // Whatever the command was doing when it stopped, the user asked it
        // to: 130, as a shell reports an interrupted command.
        reporter.note("interrupted: stopped every child process and cleaned up");
        return ExitCode::from(regress::process::EXIT_INTERRUPTED);
    }
    match result {
        Ok(outcome) => exit_code(outcome),
        Err(error) => {
            reporter.note(&describe(&error));
            exit_code(Outcome::Failed)
        }
    }
}

/// The sentinel that kills what this run leaves if it is killed outright
/// (`regress::process::Sentinel`); a run goes on without one, warned.
fn start_sentinel(reporter: &Reporter) -> Option<Sentinel> {
    let started = Sentinel::start(
        Path::new("/proc/self/exe"),
        &[OsStr::new(SENTINEL_ARGUMENT)],
    );
    match started {
        Ok(sentinel) => Some(sentinel),
        Err(error) => {
            reporter.note(&format!("warning: {error}"));
            None
        }
    }
}

/// `regress` started as the sentinel of another `regress`.
fn sentinel(arguments: &[OsString]) -> ExitCode {
    match serve_sentinel(arguments) {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

/// Ctrl-C and SIGTERM stop the children and let the command clean up
/// (`regress::process`); a file-size limit makes writes fail with an error
/// the command can report (EFBIG) instead of killing it with SIGXFSZ.
fn prepare_signals(reporter: &Reporter) {
    if let Err(error) = regress::process::install_interrupt_handler() {
        reporter.note(&format!(
            "warning: cannot handle Ctrl-C ({error}); an interrupted run may leave children \
             and scratch folders behind"
        ));
    }
    if let Err(error) = regress::process::adopt_orphans() {
        reporter.note(&format!(
            "warning: cannot become the subreaper of child processes ({error}); a daemon a \
             tool starts may outlive the command"
        ));
    }
    // SAFETY: setting a signal's disposition to "ignore" has no other effect.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

fn run(cli: Cli, reporter: &Reporter) -> anyhow::Result<Outcome> {
    let workspace = Workspace::discover()?;
    let (workspace, every_cpu) = match cli.cpu {
        Some(CpuChoice::One(cpu)) => (workspace.with_cpu(cpu), false),
        Some(CpuChoice::All) => (workspace, true),
        None => (workspace, false),
    };
    let context = Context {
        workspace,
        valgrind: cli.valgrind,
        jobs: cli.jobs,
        reporter,
    };
    match cli.command {
        Command::Run(filters) if every_cpu => {
            context.each_cpu(|context| commands::run::run(context, &filters))
        }
        Command::Bless(filters) if every_cpu => {
            context.each_cpu(|context| commands::bless::bless(context, &filters))
        }
        Command::Noise(args) if every_cpu => {
            context.each_cpu(|context| commands::noise::noise(context, &args))
        }
        Command::Compare(args) if every_cpu => commands::compare::cpu_matrix(&context, &args),
        _ if every_cpu => anyhow::bail!(
            "`--cpu all` applies to run, bless, noise and compare; name one profile ({})",
            regress::measure::cpu_profile::CpuProfile::names()
        ),
        Command::Run(filters) => commands::run::run(&context, &filters),
        Command::Bless(filters) => commands::bless::bless(&context, &filters),
        Command::Noise(args) => commands::noise::noise(&context, &args),
        Command::List => commands::list::list(&context),
        Command::Scale(args) => commands::scale::scale(&context, &args),
        Command::Report(args) => commands::report::report(&context, &args),
        Command::Compare(args) => commands::compare::compare(&context, &args),
        Command::Readme(args) => commands::readme::readme(&context, &args),
        Command::Diff(args) => commands::diff::diff(&context, args),
        Command::DiffMerge(args) => commands::diff::merge(&context, &args),
        Command::DiffComment(args) => commands::diff::comment(&context, &args),
        Command::Bisect(args) => commands::bisect::bisect(&context, &args),
        Command::History(args) => commands::history::history(&context, &args),
        Command::ConstantFlow(args) => commands::constant_flow::constant_flow(&context, &args),
        Command::Coverage(args) => commands::coverage::coverage(&context, &args),
    }
}

/// The documented exit codes of every command: 0 clean, 1 regressed (or, for
/// `readme --check`, out of date), 2 an error (130: interrupted, above).
fn exit_code(outcome: Outcome) -> ExitCode {
    match outcome {
        Outcome::Clean => ExitCode::SUCCESS,
        Outcome::Regressed => ExitCode::from(1),
        Outcome::Failed => ExitCode::from(2),
    }
}

/// The error and its causes, skipping a cause whose text the message above
/// it already includes (most of the library's errors quote their source).
fn describe(error: &anyhow::Error) -> String {
    let mut text = format!("error: {error}");
    let mut shown = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !shown.contains(&cause) {
            text.push_str(&format!("\n  caused by: {cause}"));
            shown = cause;
        }
    }
    text
}
