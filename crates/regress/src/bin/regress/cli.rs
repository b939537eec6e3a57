//! The command line: every argument of every command, and nothing that
//! acts on them (that is `commands/`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use regress::coverage::Origin;
use regress::diff::shard::Shard;
use regress::measure::cpu_profile::CpuProfile;
use regress::program::LibraryCheckout;
use regress_source::Library;

#[derive(Parser)]
#[command(
    version,
    about = "Instruction-count regression harness for TLS libraries"
)]
pub struct Cli {
    /// The valgrind program to use (default: $REGRESS_VALGRIND, else PATH).
    #[arg(long, global = true, value_name = "PATH")]
    pub valgrind: Option<PathBuf>,

    /// Parallel Valgrind processes (default: the number of cores).
    #[arg(long, short = 'j', global = true)]
    pub jobs: Option<usize>,

    /// The CPU profile: features hidden from aws-lc and OpenSSL, one of
    /// default, no-avx, no-aesni, baseline (default: $REGRESS_CPU, else
    /// default). `all`: each in turn (run, bless, noise) or side by side
    /// (compare).
    #[arg(long, global = true, value_name = "PROFILE", value_parser = cpu_choice)]
    pub cpu: Option<CpuChoice>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Measure harnesses under Valgrind and gate them against baselines.
    Run(Filters),
    /// Write baselines from the latest measurements in perf_outputs/.
    Bless(Filters),
    /// Measure every harness several times and print the run-to-run spread.
    Noise(NoiseArgs),
    /// List the harnesses.
    List,
    /// Time paths natively on 1..N threads (wall clock, not Valgrind).
    Scale(ScaleArgs),
    /// Write an HTML page with charts of the latest measurements and scaling runs.
    Report(ReportArgs),
    /// Compare libraries path by path, from the latest measurements.
    Compare(CompareArgs),
    /// Regenerate the generated tables of docs/results/*.md from baselines/ (or check them).
    Readme(ReadmeArgs),
    /// Compare the instruction counts of two commits, function by function.
    Diff(DiffArgs),
    /// Merge the report.json files of `regress diff --shard` runs into one report.
    DiffMerge(MergeArgs),
    /// Render a pull request comment from an untrusted report.json.
    DiffComment(CommentArgs),
    /// Find the first revision between GOOD and BAD that moved one harness's count.
    Bisect(crate::cli_history::BisectArgs),
    /// Measure a library's paths over its published versions (or a checkout's revisions).
    History(crate::cli_history::HistoryArgs),
    /// Check that secret-dependent operations execute the same instructions under every secret.
    ConstantFlow(ConstantFlowArgs),
    /// Which source files, functions and lines of each library the measured harnesses execute.
    Coverage(CoverageArgs),
}

#[derive(Args)]
pub struct CoverageArgs {
    /// Only this library: s2n-tls, aws-lc, rustls, openssl, rust-crates,
    /// rust-std, workspace or system.
    #[arg(long, value_name = "NAME", value_parser = origin)]
    pub library: Option<Origin>,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = CoverageFormat::Text)]
    pub format: CoverageFormat,
}

/// The forms `regress coverage` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CoverageFormat {
    Text,
    Markdown,
    Json,
}

/// A `--library` of `regress coverage` that names no library.
#[derive(Debug, thiserror::Error)]
#[error(
    "no library is called {name:?}; the libraries are {}",
    regress::coverage::origin::NAMES.join(", ")
)]
pub struct UnknownOrigin {
    name: String,
}

fn origin(text: &str) -> Result<Origin, UnknownOrigin> {
    Origin::named(text.trim()).ok_or_else(|| UnknownOrigin {
        name: text.trim().to_owned(),
    })
}

#[derive(Args)]
pub struct ConstantFlowArgs {
    /// Only operations (`<library>::<operation>`) whose name contains this.
    #[arg(long, value_name = "FILTER", value_parser = filter)]
    pub operation: Option<String>,
    /// Measurements per variant; every run after the first must count
    /// exactly what the first did.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
}

#[derive(Args)]
pub struct Filters {
    /// Only harnesses whose name contains this (repeatable); a filter that
    /// is exactly a harness name selects only it.
    #[arg(long = "harness", value_name = "NAME", value_parser = filter)]
    pub harnesses: Vec<String>,
}

/// What `--cpu` names: one profile, or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuChoice {
    One(CpuProfile),
    All,
}

fn cpu_choice(text: &str) -> Result<CpuChoice, regress::MeasureError> {
    if text.trim() == "all" {
        return Ok(CpuChoice::All);
    }
    CpuProfile::parse(text).map(CpuChoice::One)
}

/// An empty `--harness` (or `--operation`) filter.
#[derive(Debug, thiserror::Error)]
#[error(
    "an empty filter would select every harness; name part of a harness \
                    (`regress list` shows them), or leave --harness out to select all"
)]
pub struct EmptyFilter;

/// A `--harness` filter: an empty one would silently select every harness.
fn filter(text: &str) -> Result<String, EmptyFilter> {
    if text.trim().is_empty() {
        return Err(EmptyFilter);
    }
    Ok(text.to_owned())
}

#[derive(Args)]
pub struct NoiseArgs {
    /// Measurements per harness (at least 2).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..))]
    pub runs: u32,
    #[command(flatten)]
    pub filters: Filters,
}

#[derive(Args)]
pub struct ScaleArgs {
    /// Only harnesses whose name contains this (repeatable). Default:
    /// full handshakes (RSA, ECDSA), mTLS and chain verification.
    #[command(flatten)]
    pub filters: Filters,
    /// The largest thread count (default: the number of cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seconds per thread count.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Also write all tables as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write all results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Args)]
pub struct ReportArgs {
    /// The folder for index.html and the SVG charts.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Args)]
pub struct CompareArgs {
    /// Also write the table as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the comparison as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Args)]
pub struct ReadmeArgs {
    /// Only check that every page's tables agree with baselines/; exit 1 if not.
    #[arg(long)]
    pub check: bool,
}

/// `regress diff`: compare the instruction counts of two commits, or of two
/// revisions of a TLS library's own repository (`--library`).
#[derive(Args)]
#[command(after_help = "\
Each commit is built in a temporary git worktree under target/regress-diff/ and measured \
with the same Valgrind; your work tree, index and uncommitted changes are never touched.

With --library NAME=PATH (s2n-tls, rustls, aws-lc-rs, openssl; repeatable), BASE and HEAD are \
revisions of that library's git checkout at PATH, and HEAD defaults to its working tree as \
it is, uncommitted edits included. Each side is exported under target/regress-source/, and \
this workspace's harnesses are built against it in a scratch copy; neither repository is \
changed. Only the harnesses the library's code reaches are measured (--all-harnesses: every \
one). --base-released compares HEAD (then the only revision given) with the release this \
workspace's Cargo.lock pins. A side measured before with the same program and Valgrind is \
not measured again.

Outputs (perf_outputs/diff/): report.json (docs/schemas/diff-report.schema.json), report.md (for a pull request \
comment), <harness>.diff.txt (cg_annotate's per-function diff), <harness>.flame.diff.svg \
(head's flame graph, red where it grew and blue where it shrank), base/ and head/ (the raw \
region profiles, call paths and flame graphs).

Exit codes: 0 nothing regressed beyond its threshold; 1 a harness regressed beyond its \
threshold; 2 an error (a bad ref, a failed build or measurement, a missing shard); 130 \
interrupted (SIGINT or SIGTERM: children stopped, worktrees removed, the previous report kept).")]
pub struct DiffArgs {
    /// The commit (with --library: the library revision) to compare against.
    #[arg(value_name = "BASE", allow_hyphen_values = true)]
    pub base: Option<String>,

    /// The commit to measure [default: HEAD; uncommitted changes are not part
    /// of it]. With --library: a library revision [default: its working tree
    /// as it is, uncommitted edits included].
    #[arg(value_name = "HEAD", allow_hyphen_values = true)]
    pub head: Option<String>,

    /// Compare HEAD with the merge base of BASE and HEAD (what a pull request
    /// changes), like `git diff BASE...HEAD`.
    #[arg(long)]
    pub merge_base: bool,

    /// Build the harnesses against a TLS library's own git checkout:
    /// NAME=PATH, NAME one of s2n-tls, rustls, aws-lc-rs, openssl (repeatable).
    #[arg(long = "library", value_name = "NAME=PATH")]
    pub libraries: Vec<String>,

    /// With --library: the base is the release this workspace's Cargo.lock
    /// pins, and the one revision given is HEAD.
    #[arg(long, requires = "libraries")]
    pub base_released: bool,

    /// With --library: measure every harness, not only those the library's
    /// code reaches.
    #[arg(long, requires = "libraries")]
    pub all_harnesses: bool,

    /// With --library and HEAD left out (the working tree): after the diff,
    /// wait for a source file of the checkout to change, then build, measure
    /// and print the verdicts again, until Ctrl-C.
    #[arg(long, requires = "libraries", conflicts_with_all = ["head", "bmf", "shard"])]
    pub watch: bool,

    #[command(flatten)]
    pub filters: Filters,

    /// Measure only the K-th of N parts of the harness list, for CI runners
    /// that share the work; merge their report.json with `regress diff-merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,

    /// Also write the head's counts as Bencher Metric Format JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,

    /// The cargo target folder both sides build in [default:
    /// $CARGO_TARGET_DIR, else target/regress-diff/target (with --library,
    /// target/regress-source/target)]. It must not contain where the sides'
    /// sources are: target/regress-diff/ (with --library,
    /// target/regress-source/).
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,

    /// Build each side with its own rust-toolchain.toml and .cargo/config.toml
    /// even when the head changes them (to measure a toolchain change
    /// locally); without it such a diff is refused.
    #[arg(long)]
    pub allow_build_change: bool,

    /// Acknowledge a harness the gate holds for a maintainer's look: one
    /// present on one side only (removed, added, renamed) or one whose count
    /// dropped by more than half. Repeatable; naming a harness that needs no
    /// acknowledgement is an error.
    #[arg(long = "accept", value_name = "HARNESS")]
    pub accept: Vec<String>,
}

/// `regress diff-merge`: one report from the reports of several shards.
#[derive(Args)]
#[command(after_help = "\
Writes perf_outputs/diff/report.json and report.md, prints the table, and exits like \
`regress diff`: 0, 1 for a regression (or a harness that needs --accept), 2 when a shard is \
missing or a harness failed.")]
pub struct MergeArgs {
    /// The report.json of each shard.
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,

    /// Also write the head's counts as Bencher Metric Format JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,

    /// Acknowledge a harness the gate holds for a maintainer's look: one
    /// present on one side only (removed, added, renamed) or one whose count
    /// dropped by more than half. Repeatable; naming a harness that needs no
    /// acknowledgement is an error.
    #[arg(long = "accept", value_name = "HARNESS")]
    pub accept: Vec<String>,
}

/// `regress diff-comment`: the pull request comment, from a report.json that
/// is read as hostile input.
#[derive(Args)]
#[command(after_help = "\
Reads REPORT.json (at most 8 MiB, the schema this runner writes: docs/schemas/diff-report.schema.json) as untrusted input: every count must be below \
2^63 and agree with the verdict the judge gives it, every name must be a harness name, every \
other string is length-capped and shown only inside code spans. A forged report can show \
wrong numbers, never markup, mentions, links or HTML. The comment starts with the one marker \
line `<!-- regress-diff -->`. Exit codes: 0 written, 2 the report was refused.")]
pub struct CommentArgs {
    /// The report.json to render (for example a CI artifact).
    #[arg(value_name = "REPORT")]
    pub report: PathBuf,

    /// Write the comment to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `--library NAME=PATH` that does not name a library's checkout.
#[derive(Debug, thiserror::Error)]
#[error(
    "--library {spec:?}: {reason}.\n  \
     Write it as NAME=PATH, for example --library s2n-tls=../s2n-tls; the libraries \
     regress builds from source are: {known}."
)]
pub struct LibrarySpecError {
    spec: String,
    reason: &'static str,
    known: String,
}

impl LibrarySpecError {
    fn new(spec: &str, reason: &'static str) -> LibrarySpecError {
        LibrarySpecError {
            spec: spec.to_owned(),
            reason,
            known: regress_source::library::known_names(),
        }
    }

    /// `spec` names a library alone where its checkout is needed.
    pub fn without_checkout(spec: &str) -> LibrarySpecError {
        LibrarySpecError::new(
            spec,
            "there is no `=` between the library's name and its checkout",
        )
    }
}

/// `--library NAME=PATH` as a library and the folder of its checkout: the
/// text is read here, at the edge, and the commands get the typed value.
pub fn library_checkout(spec: &str) -> Result<LibraryCheckout, LibrarySpecError> {
    let bad = |reason: &'static str| LibrarySpecError::new(spec, reason);
    let Some((name, path)) = spec.split_once('=') else {
        return Err(LibrarySpecError::without_checkout(spec));
    };
    if path.is_empty() {
        return Err(bad("the checkout's path is empty"));
    }
    let library = Library::named(name).map_err(|_| bad("that library is not one regress knows"))?;
    Ok(LibraryCheckout {
        library,
        path: PathBuf::from(path),
        spec: spec.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn library_specs() {
        let checkout = library_checkout("s2n-tls=../s2n-tls").expect("valid");
        assert_eq!(
            (checkout.library.name, checkout.path.as_path()),
            ("s2n-tls", Path::new("../s2n-tls"))
        );
        assert_eq!(checkout.spec, "s2n-tls=../s2n-tls");
        let checkout = library_checkout("rustls=/a=b").expect("valid");
        assert_eq!(checkout.path, PathBuf::from("/a=b"));
        for (spec, reason) in [
            ("s2n-tls", "no `=`"),
            ("s2n-tls=", "path is empty"),
            ("boringssl=/x", "not one regress knows"),
            ("=/x", "not one regress knows"),
        ] {
            let message = library_checkout(spec).unwrap_err().to_string();
            assert!(message.contains(reason), "{spec}: {message}");
            assert!(
                message.contains("s2n-tls, rustls, aws-lc-rs, openssl"),
                "{message}"
            );
        }
    }

    /// `bisect --harness` takes a harness's name, checked as it is parsed:
    /// anything else is refused, in the name's own words, before anything
    /// runs.
    #[test]
    fn bisect_takes_a_harness_name() {
        let parse =
            |text: &str| Cli::try_parse_from(["regress", "bisect", "v1", "v2", "--harness", text]);
        let Ok(Cli {
            command: Command::Bisect(args),
            ..
        }) = parse("s2n_tls::handshake_rsa4096")
        else {
            panic!("a harness name parses");
        };
        assert_eq!(args.harness, "s2n_tls::handshake_rsa4096");
        for bad in ["../x", "handshake_rsa4096", ""] {
            let error = parse(bad).err().expect("refused").to_string();
            assert!(error.contains("is not a harness name"), "{bad:?}: {error}");
        }
    }

    /// `history --library` and `--versions` (and `--revs`) are read as the
    /// arguments are parsed: a library regress does not know, a bad range
    /// or a `--revs` without `..` is refused, in its words, before
    /// anything runs.
    #[test]
    fn history_reads_its_library_and_range_as_it_parses() {
        use crate::cli_history::HistoryLibrary;

        let parse = |args: &[&str]| {
            Cli::try_parse_from(["regress", "history"].iter().chain(args)).map(|cli| {
                let Command::History(args) = cli.command else {
                    panic!("history parses into its arguments");
                };
                args
            })
        };
        let args = parse(&["--library", "rustls", "--versions", "0.23.40..=0.23.47"])
            .expect("a name and a range parse");
        assert!(matches!(args.library, HistoryLibrary::Named(library) if library.name == "rustls"));
        let range = args.versions.expect("a range");
        assert_eq!(range.to_string(), "0.23.40..=0.23.47");
        assert_eq!(range.from, semver::Version::new(0, 23, 40));
        let args = parse(&["--library", "s2n-tls=../s2n-tls", "--revs", "v1.5.0..main"])
            .expect("a checkout and two revisions parse");
        assert!(matches!(
            &args.library,
            HistoryLibrary::Checkout(checkout) if checkout.library.name == "s2n-tls"
        ));
        assert_eq!(args.revs, Some(("v1.5.0".to_owned(), "main".to_owned())));

        for (bad, said) in [
            (
                &["--library", "boringssl", "--versions", "1.0.0..=1.0.1"][..],
                "not a library regress knows",
            ),
            (
                &["--library", "boringssl", "--markdown"],
                "not a library regress knows",
            ),
            (
                &["--library", "boringssl=/x", "--revs", "a..b"],
                "not one regress knows",
            ),
            (
                &["--library", "rustls", "--versions", "0.23"],
                "no `..=` or `..`",
            ),
            (
                &["--library", "rustls", "--versions", "0.23.46..=0.23.40"],
                "it is empty",
            ),
            (
                &["--library", "rustls", "--versions", "x..=0.23.4"],
                "is not a version",
            ),
            (
                &["--library", "rustls=/x", "--revs", "main"],
                "has no `..` between two revisions",
            ),
        ] {
            let error = parse(bad).err().expect("refused").to_string();
            assert!(error.contains(said), "{bad:?}: {error}");
            if said.contains("regress knows") {
                assert!(
                    error.contains("s2n-tls, rustls, aws-lc-rs, openssl"),
                    "{bad:?}: {error}"
                );
            }
        }
    }
}
