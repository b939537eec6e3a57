//! The arguments of the commands over many revisions: `bisect` and
//! `history` (kept apart from `cli.rs`, which has every other command's).

use std::path::PathBuf;

use clap::Args;
use regress::history::versions::VersionRange;
use regress::program::LibraryCheckout;
use regress::HarnessName;
use regress_source::Library;

use crate::cli::{library_checkout, LibrarySpecError};

/// `regress bisect GOOD BAD --harness NAME`.
#[derive(Args)]
#[command(after_help = "\
Searches GOOD, then BAD's first-parent line back to GOOD (`git rev-list --first-parent \
--ancestry-path GOOD..BAD`), for the first revision whose count of the harness differs from \
GOOD's beyond the harness's threshold (--by N: by N instructions or more). It measures at most \
ceil(log2(n)) + 1 of n revisions when all build; a revision that does not build is skipped, \
like `git bisect skip`. Without --library the revisions are this workspace's commits, built in \
a private clone under target/regress-revisions/; with --library NAME=PATH they are commits of \
that library's checkout, built into this workspace's harnesses. Neither repository, nor its \
bisect state, is touched. Every build and count is kept (target/regress-revisions/, \
target/regress-source/measured/), so a bisect run again measures nothing twice.

Outputs: perf_outputs/bisect/<commit>/ (each revision's profiles), \
perf_outputs/bisect/<harness>.diff.txt (the step's per-function diff), \
perf_outputs/bisect/result.json.

Exit codes: 0 the step was found; 1 no step beyond the threshold between GOOD and BAD; 2 an \
error (a bad ref, GOOD not an ancestor of BAD, GOOD not measurable, only unbuildable revisions \
left where the step is); 130 interrupted (children stopped, builds and counts kept).")]
pub struct BisectArgs {
    /// The revision whose count is the reference (older).
    #[arg(value_name = "GOOD", allow_hyphen_values = true)]
    pub good: String,

    /// The revision whose count moved (newer; GOOD must be its ancestor).
    #[arg(value_name = "BAD", allow_hyphen_values = true)]
    pub bad: String,

    /// The one harness to bisect, by its full name (`regress list`).
    // Parsed into a `HarnessName` (its `FromStr`): a name that is not a
    // harness name is refused, in its words, before anything runs.
    #[arg(long, value_name = "NAME")]
    pub harness: HarnessName,

    /// Bisect a TLS library's checkout instead of this workspace:
    /// NAME=PATH, NAME one of s2n-tls, rustls, aws-lc-rs, openssl.
    #[arg(long, value_name = "NAME=PATH")]
    pub library: Option<String>,

    /// Hunt a step of at least N instructions instead of one beyond the
    /// harness's threshold.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub by: Option<u64>,

    /// With --library: the cargo target folder of the builds [default:
    /// target/regress-source/target, shared with `regress diff --library`].
    #[arg(long, value_name = "DIR", requires = "library")]
    pub target_dir: Option<PathBuf>,
}

/// `regress history --library NAME --versions RANGE`.
#[derive(Args)]
#[command(after_help = "\
--versions A..=B (or A..B, end excluded) measures every published version of the library \
in the range, as crates.io has them: each is locked in a scratch copy of this workspace \
(`cargo update --precise`; this workspace's Cargo.lock is untouched), built once, and all of \
the library's paths are measured. --revs A..B does the same over commits of a checkout \
(--library NAME=PATH), every commit of B's first-parent line after A, or every N-th (--every), \
or the tagged ones (--tags). A version or revision whose API the harnesses do not cover, or \
that does not build, is reported and skipped.

Results go to baselines/history/<library>/<version>.json (revisions: baselines/history/<library>/rev/<commit>.json), \
one file each, with the fingerprint; a version already measured with this Valgrind is not \
measured again. The table (each step's change and the function that moved most) is printed at \
the end; --markdown alone prints it from baselines/history/ without measuring. `regress readme` writes \
the history tables of docs/results/history.md and `regress report` draws the history.

Exit codes: 0 done (skipped versions are reported, not failures); 2 an error (no published \
version in the range, a bad range, a failed measurement); 130 interrupted (what was measured \
is kept).")]
pub struct HistoryArgs {
    /// The library: NAME (s2n-tls, rustls, aws-lc-rs, openssl) with --versions, or
    /// NAME=PATH of its checkout with --revs.
    // Read as it is parsed: a name regress does not know is refused before
    // anything runs.
    #[arg(long, value_name = "NAME[=PATH]", value_parser = history_library)]
    pub library: HistoryLibrary,

    /// Published versions: A..=B or A..B.
    // Parsed into a `VersionRange` (its `FromStr`): a bad range is refused,
    // in its words, before anything runs.
    #[arg(long, value_name = "RANGE", conflicts_with = "revs")]
    pub versions: Option<VersionRange>,

    /// With --versions: only the newest patch release of each minor
    /// release (for OpenSSL, of each OpenSSL release line: 3.0, 3.1, ...).
    #[arg(long, requires = "versions")]
    pub newest_patch: bool,

    /// Commits of the checkout: A..B (B's first-parent line after A).
    // Split into its two revisions (A, B) as it is parsed; git resolves
    // each when the history is planned.
    #[arg(long, value_name = "A..B", value_parser = revision_range)]
    pub revs: Option<(String, String)>,

    /// With --revs: every N-th commit (B always included).
    #[arg(long, value_name = "N", requires = "revs", value_parser = clap::value_parser!(u64).range(1..))]
    pub every: Option<u64>,

    /// With --revs: only the commits a tag points at (B always included).
    #[arg(long, requires = "revs", conflicts_with = "every")]
    pub tags: bool,

    /// Only harnesses whose name contains this (repeatable).
    #[arg(long = "harness", value_name = "NAME")]
    pub harnesses: Vec<String>,

    /// Print the stored history as a Markdown table (without a range:
    /// measure nothing).
    #[arg(long)]
    pub markdown: bool,

    /// Where the history files are [default: baselines/history/ in this workspace].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// The cargo target folder of the builds [default:
    /// target/regress-source/target, shared with `regress diff --library`].
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
}

/// `history --library`: a library's name (with --versions, or --markdown
/// alone) or NAME=PATH of its checkout (with --revs). Which of the two the
/// other arguments need is checked by the command.
#[derive(Debug, Clone)]
pub enum HistoryLibrary {
    Named(&'static Library),
    Checkout(LibraryCheckout),
}

/// A `history --library` that names no library regress knows.
#[derive(Debug, thiserror::Error)]
pub enum HistoryLibraryError {
    #[error(
        "--library {name:?} is not a library regress knows ({known}); give its name alone \
         with --versions, NAME=PATH of its checkout with --revs.\n  \
         `regress history --help` shows the forms."
    )]
    Unknown { name: String, known: String },

    #[error(transparent)]
    Checkout(#[from] LibrarySpecError),
}

/// `history --library NAME[=PATH]`: with a `=`, a checkout
/// ([`library_checkout`]); without, a library's name.
fn history_library(text: &str) -> Result<HistoryLibrary, HistoryLibraryError> {
    if text.contains('=') {
        return Ok(HistoryLibrary::Checkout(library_checkout(text)?));
    }
    Library::named(text)
        .map(HistoryLibrary::Named)
        .map_err(|_| HistoryLibraryError::Unknown {
            name: text.to_owned(),
            known: regress_source::library::known_names(),
        })
}

/// A `--revs` without the `..` between its two revisions.
#[derive(Debug, thiserror::Error)]
#[error(
    "--revs {range:?} has no `..` between two revisions (A..B).\n  \
     `regress history --help` shows the forms."
)]
pub struct RevsRangeError {
    range: String,
}

/// `--revs A..B` as its two revisions, `(A, B)`.
fn revision_range(text: &str) -> Result<(String, String), RevsRangeError> {
    text.split_once("..")
        .map(|(from, to)| (from.to_owned(), to.to_owned()))
        .ok_or_else(|| RevsRangeError {
            range: text.to_owned(),
        })
}
