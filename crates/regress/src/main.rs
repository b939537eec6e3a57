//! `regress`: the commands that are not a test run.
//!
//! `cargo test` (and `ENABLE_VALGRIND=true cargo test`) is the everyday
//! entry point. This binary adds what a test run cannot do: measure and gate
//! the whole suite with one summary, write baselines on request, and measure
//! run-to-run noise.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::bail;
use clap::{Parser, Subcommand};

use regress::baseline::{self, BaselineFile, Blessed};
use regress::gate::{self, UnmatchedPolicy, Verdict, VerdictMessage};
use regress::noise::Spread;
use regress::report::{count, Table};
use regress::valgrind::Valgrind;
use regress::workspace::Workspace;
use regress::{cachegrind, discover, parallel, Measurement, Runner};

/// Exit code when a harness regressed beyond its threshold.
const EXIT_REGRESSED: u8 = 1;
/// Exit code for errors (bad input, missing tools, failed harnesses).
const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    version,
    about = "Instruction-count regression harness for TLS libraries"
)]
struct Cli {
    /// The valgrind program to use (default: $REGRESS_VALGRIND, else PATH).
    #[arg(long, global = true, value_name = "PATH")]
    valgrind: Option<PathBuf>,

    /// Parallel Valgrind processes (default: the number of cores).
    #[arg(long, short = 'j', global = true)]
    jobs: Option<usize>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure harnesses under Valgrind and gate them against baselines.
    Run {
        /// Only harnesses whose name contains this (repeatable).
        #[arg(long = "harness", value_name = "NAME")]
        harnesses: Vec<String>,
    },
    /// Write baselines from the latest measurements in perf_outputs/.
    Bless {
        /// Only harnesses whose name contains this (repeatable).
        #[arg(long = "harness", value_name = "NAME")]
        harnesses: Vec<String>,
    },
    /// Measure every harness several times and print the run-to-run spread.
    Noise {
        /// Measurements per harness.
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// Only harnesses whose name contains this (repeatable).
        #[arg(long = "harness", value_name = "NAME")]
        harnesses: Vec<String>,
    },
    /// List the harnesses.
    List,
    /// Time paths natively on 1..N threads (wall clock, not Valgrind).
    Scale {
        /// Only harnesses whose name contains this (repeatable). Default:
        /// full handshakes (RSA, ECDSA), mTLS and chain verification.
        #[arg(long = "harness", value_name = "NAME")]
        harnesses: Vec<String>,
        /// The largest thread count (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Seconds per thread count.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// Also write all tables as Markdown to this file.
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
        /// Also write all results as JSON to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Write an HTML page with charts of the latest measurements and scaling runs.
    Report {
        /// The folder for index.html and the SVG charts.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Compare libraries path by path, from the latest measurements.
    Compare {
        /// Also write the table as Markdown to this file.
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
        /// Also write the comparison as JSON to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Compare the instruction counts of two commits, function by function.
    Diff(regress::diff::command::DiffArgs),
    /// Merge the report.json files of `regress diff --shard` runs into one report.
    DiffMerge(regress::diff::command::MergeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{}", describe(&error));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let workspace = Workspace::discover()?;
    match cli.command {
        Command::List => {
            let binary = discover::build(&workspace)?;
            for name in discover::list(&binary)? {
                println!("{name}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bless { harnesses } => bless(&workspace, &harnesses),
        Command::Scale {
            harnesses,
            threads,
            seconds,
            markdown,
            json,
        } => scale(&workspace, &harnesses, threads, seconds, markdown, json),
        Command::Report { out } => {
            let comparison = regress::compare::from_workspace(&workspace)?;
            let scalings = regress::html::read_scalings(&workspace)?;
            if comparison.paths.is_empty() && scalings.is_empty() {
                bail!("nothing to report: run `cargo run -p regress -- run` (and `scale`) first");
            }
            let dir = out.unwrap_or_else(|| workspace.perf_outputs_dir().join("report"));
            let index = regress::html::write(&dir, &comparison, &scalings)?;
            println!("{}", index.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { markdown, json } => {
            let comparison = regress::compare::from_workspace(&workspace)?;
            if comparison.paths.is_empty() {
                bail!(
                    "no library measurements in {}; run `cargo run -p regress -- run` first",
                    workspace.display_path(&workspace.perf_outputs_dir())
                );
            }
            print!("{}", comparison.to_text());
            if let Some(path) = markdown {
                regress::compare::write(&path, &comparison.to_markdown())?;
            }
            if let Some(path) = json {
                regress::compare::write(&path, &comparison.to_json())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run { harnesses } => {
            let runner = runner(workspace, cli.valgrind)?;
            gate_suite(&runner, &harnesses, parallel::workers(cli.jobs))
        }
        Command::Noise { runs, harnesses } => {
            if runs < 2 {
                bail!("--runs must be at least 2 to measure a spread");
            }
            let runner = runner(workspace, cli.valgrind)?;
            noise(&runner, &harnesses, runs, parallel::workers(cli.jobs))
        }
        Command::Diff(args) => Ok(diff_exit_code(regress::diff::command::diff(
            &workspace,
            cli.valgrind.as_deref(),
            cli.jobs,
            args,
        )?)),
        Command::DiffMerge(args) => Ok(diff_exit_code(regress::diff::command::merge(
            &workspace, args,
        )?)),
    }
}

/// `regress diff`'s documented exit codes: 0, 1 for a regression beyond a
/// threshold, 2 for anything that kept the diff from being complete.
fn diff_exit_code(outcome: regress::diff::Outcome) -> ExitCode {
    match outcome {
        regress::diff::Outcome::Clean => ExitCode::SUCCESS,
        regress::diff::Outcome::Regressed => ExitCode::from(EXIT_REGRESSED),
        regress::diff::Outcome::Incomplete => ExitCode::from(EXIT_ERROR),
    }
}

/// The error and its causes, skipping a cause whose text the message above
/// it already includes (most of this crate's errors quote their source).
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

fn runner(workspace: Workspace, valgrind: Option<PathBuf>) -> anyhow::Result<Runner> {
    let valgrind = match valgrind {
        Some(path) => Valgrind::at(&path)?,
        None => Valgrind::from_env()?,
    };
    eprintln!(
        "Valgrind {} at {} (method: {})",
        valgrind.version,
        valgrind.program.display(),
        valgrind.method
    );
    Ok(Runner::new(
        workspace,
        valgrind,
        cachegrind::timeout_from_env()?,
    )?)
}

/// Builds the harness tests and picks the harnesses to measure.
fn harnesses(runner: &Runner, filters: &[String]) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let binary = discover::stage(&discover::build(&runner.workspace)?, runner.output_dir())?;
    let names = discover::select(discover::list(&binary)?, filters);
    if names.is_empty() {
        bail!("no harness matches {filters:?}; `regress list` shows them all");
    }
    Ok((binary, names))
}

fn gate_suite(runner: &Runner, filters: &[String], workers: usize) -> anyhow::Result<ExitCode> {
    let policy = UnmatchedPolicy::from_env().map_err(anyhow::Error::msg)?;
    let (binary, names) = harnesses(runner, filters)?;
    let started = Instant::now();
    let total = names.len();
    let results = parallel::map(
        &names,
        workers,
        |name| runner.measure(name, &binary),
        |done, name, result| progress(done, total, name, result.as_ref().ok(), started),
    );
    eprintln!(
        "measured {total} harnesses in {:.1} s on {workers} workers",
        started.elapsed().as_secs_f64()
    );

    let mut table = Table::new(&["harness", "instructions", "per byte", "baseline", "verdict"]);
    let (mut regressed, mut errors) = (0, 0);
    for (name, result) in names.iter().zip(results) {
        let measurement = match result {
            Ok(measurement) => measurement,
            Err(error) => {
                errors += 1;
                eprintln!("error: {error}");
                table.row(vec![
                    name.clone(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "ERROR".into(),
                ]);
                continue;
            }
        };
        let loaded = BaselineFile::load(&runner.workspace.baselines_dir(), name);
        let verdict = match gate::evaluate(&measurement, loaded) {
            Ok(verdict) => verdict,
            Err(error) => {
                errors += 1;
                eprintln!("error: {error}");
                continue;
            }
        };
        let baseline = match &verdict {
            Verdict::Unchanged { instructions } => count(*instructions),
            Verdict::WithinThreshold { baseline, .. }
            | Verdict::Regressed { baseline, .. }
            | Verdict::Improved { baseline, .. } => count(*baseline),
            Verdict::Unmatched { .. } => "none".into(),
        };
        let label = match &verdict {
            Verdict::Unchanged { .. } => "unchanged",
            Verdict::WithinThreshold { .. } => "within threshold",
            Verdict::Regressed { .. } => "REGRESSED",
            Verdict::Improved { .. } => "improved",
            Verdict::Unmatched { .. } => "NOT GATED",
        };
        if !matches!(
            verdict,
            Verdict::Unchanged { .. } | Verdict::WithinThreshold { .. }
        ) {
            eprintln!(
                "{}",
                VerdictMessage {
                    harness: name,
                    verdict: &verdict,
                    annotated: &measurement.annotated.display().to_string(),
                }
            );
        }
        if verdict.fails(policy) {
            regressed += 1;
        }
        table.row(vec![
            name.clone(),
            count(measurement.instructions),
            per_byte(&measurement),
            baseline,
            label.into(),
        ]);
    }
    print!("{}", table.to_text());
    Ok(if errors > 0 {
        ExitCode::from(EXIT_ERROR)
    } else if regressed > 0 {
        ExitCode::from(EXIT_REGRESSED)
    } else {
        ExitCode::SUCCESS
    })
}

fn noise(
    runner: &Runner,
    filters: &[String],
    runs: usize,
    workers: usize,
) -> anyhow::Result<ExitCode> {
    let (binary, names) = harnesses(runner, filters)?;
    let jobs: Vec<(usize, &String)> = names
        .iter()
        .flat_map(|name| (0..runs).map(move |run| (run, name)))
        .collect();
    let started = Instant::now();
    let total = jobs.len();
    let results = parallel::map(
        &jobs,
        workers,
        |(_, name)| runner.measure(name, &binary),
        |done, (_, name), result| progress(done, total, name, result.as_ref().ok(), started),
    );
    let mut spreads: Vec<Spread> = names
        .iter()
        .map(|name| Spread {
            harness: name.clone(),
            counts: Vec::new(),
        })
        .collect();
    let mut failures = 0;
    for ((_, name), result) in jobs.iter().zip(results) {
        match result {
            Ok(measurement) => {
                if let Some(spread) = spreads.iter_mut().find(|s| &s.harness == *name) {
                    spread.counts.push(measurement.instructions);
                }
            }
            Err(error) => {
                failures += 1;
                eprintln!("error: measuring {name}: {error}");
            }
        }
    }
    spreads.retain(|spread| !spread.counts.is_empty());
    eprintln!(
        "{total} measurements in {:.1} s on {workers} workers (Valgrind {}, method {})",
        started.elapsed().as_secs_f64(),
        runner.valgrind.version,
        runner.valgrind.method
    );
    let mut table = Table::new(&[
        "harness",
        "runs",
        "min",
        "max",
        "spread",
        "spread %",
        "recommended threshold",
    ]);
    for spread in &spreads {
        let threshold = spread.recommended_threshold();
        table.row(vec![
            spread.harness.clone(),
            spread.counts.len().to_string(),
            count(spread.min()),
            count(spread.max()),
            count(spread.spread()),
            format!("{:.4}", spread.spread_percent()),
            format!(
                "{}% / {}",
                threshold.relative_percent,
                count(threshold.absolute)
            ),
        ]);
    }
    print!("{}", table.to_text());
    if failures > 0 {
        eprintln!(
            "{failures} of {total} measurements failed; their harnesses have fewer runs above"
        );
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    Ok(ExitCode::SUCCESS)
}

fn bless(workspace: &Workspace, filters: &[String]) -> anyhow::Result<ExitCode> {
    let records = Measurement::read_all(workspace)?;
    let records: Vec<Measurement> = records
        .into_iter()
        .filter(|m| filters.is_empty() || filters.iter().any(|f| m.harness.contains(f.as_str())))
        .collect();
    if records.is_empty() {
        bail!(
            "no measurements to bless in {}; run `ENABLE_VALGRIND=true cargo test` or \
             `cargo run -p regress -- run` first",
            workspace.display_path(&workspace.perf_outputs_dir())
        );
    }
    for record in &records {
        let outcome = baseline::bless(&workspace.baselines_dir(), record)?;
        let line = match outcome {
            Blessed::Created { path, instructions } => {
                format!(
                    "created {} with {}",
                    workspace.display_path(&path),
                    count(instructions)
                )
            }
            Blessed::Added { path, instructions } => format!(
                "added an entry for this machine to {}: {}",
                workspace.display_path(&path),
                count(instructions)
            ),
            Blessed::Updated { path, from, to } => format!(
                "updated {}: {} -> {}",
                workspace.display_path(&path),
                count(from),
                count(to)
            ),
            Blessed::Unchanged { path, instructions } => format!(
                "{} already holds {}",
                workspace.display_path(&path),
                count(instructions)
            ),
        };
        println!("{}: {line}", record.harness);
    }
    Ok(ExitCode::SUCCESS)
}

fn per_byte(measurement: &Measurement) -> String {
    measurement
        .instructions_per_byte()
        .map_or_else(|| "-".into(), |per_byte| format!("{per_byte:.3}"))
}

/// One line per finished measurement: which harness, how many of how many,
/// elapsed time. Quiet when stderr is not a terminal (CI logs, pipes), where
/// the summary table says it all.
fn progress(
    done: usize,
    total: usize,
    name: &str,
    measured: Option<&Measurement>,
    started: Instant,
) {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let what = measured.map_or_else(|| "failed".to_owned(), |m| count(m.instructions));
    eprintln!(
        "[{done}/{total}] {name}: {what} ({:.1} s elapsed)",
        started.elapsed().as_secs_f64()
    );
}

fn scale(
    workspace: &Workspace,
    filters: &[String],
    threads: Option<usize>,
    seconds: f64,
    markdown: Option<PathBuf>,
    json: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    if !(seconds.is_finite() && seconds > 0.0) {
        bail!("--seconds must be a positive number");
    }
    let threads = parallel::workers(threads);
    let binary = discover::build(workspace)?;
    let all = discover::list(&binary)?;
    let names: Vec<String> = if filters.is_empty() {
        all.into_iter()
            .filter(|name| {
                regress::scale::DEFAULT_PATHS
                    .iter()
                    .any(|path| name.ends_with(path))
            })
            .collect()
    } else {
        discover::select(all, filters)
    };
    if names.is_empty() {
        bail!("no harness matches {filters:?}; `regress list` shows them all");
    }
    let outputs = workspace.perf_outputs_dir().join("scale");
    let mut results = Vec::new();
    let mut text = String::new();
    for (index, name) in names.iter().enumerate() {
        if std::io::stderr().is_terminal() {
            eprintln!(
                "[{}/{}] {name}: 1..{threads} threads, {seconds} s each",
                index + 1,
                names.len()
            );
        }
        let scaling = regress::scale::scale(
            &binary,
            name,
            threads,
            std::time::Duration::from_secs_f64(seconds),
            &outputs.join(".scratch"),
        )?;
        println!("{name}\n{}", scaling.table().to_text());
        text.push_str(&format!(
            "### {name}\n\n{}\n",
            scaling.table().to_markdown()
        ));
        regress::atomic_file::write(
            &outputs.join(format!("{}.json", regress::workspace::file_stem(name))),
            serde_json::to_string_pretty(&scaling)?.as_bytes(),
        )?;
        results.push(scaling);
    }
    if let Some(path) = markdown {
        regress::atomic_file::write(&path, text.as_bytes())?;
    }
    if let Some(path) = json {
        regress::atomic_file::write(&path, serde_json::to_string_pretty(&results)?.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}
