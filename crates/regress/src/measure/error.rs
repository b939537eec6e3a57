//! The measure stage's error: finding Valgrind, running a harness's child
//! under it, reading what it left, and writing the record. Every one says
//! what went wrong, where, and what to do next.

use std::path::PathBuf;

use crate::harness_name::HarnessName;

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("{tool} was not found{searched}.\n  {hint}")]
    ToolMissing {
        tool: &'static str,
        searched: String,
        hint: &'static str,
    },

    #[error("cannot tell the version of {program}: it printed {output:?}")]
    ToolVersion { program: PathBuf, output: String },

    #[error(
        "{harness} failed under Valgrind ({status}){}.\n\
         --- its stderr (last lines) ---\n{stderr}\n--- end of stderr ---\n\
         Full logs: {logs}",
        MeasureError::reason_of(stderr).map(|reason| format!(": {reason}")).unwrap_or_default()
    )]
    ChildFailed {
        harness: HarnessName,
        status: String,
        /// The last lines of its stderr, then Valgrind's log when Valgrind
        /// itself failed; the first line of the message names the child's
        /// own reason from them ([`MeasureError::reason_of`]), so reports,
        /// which keep that line, say why.
        stderr: String,
        logs: PathBuf,
    },

    #[error(
        "{harness} did not finish under Valgrind within {seconds} s and was killed.\n  \
         Raise the limit with REGRESS_TIMEOUT_SECS=<seconds> if the path is just slow. Logs: {logs}"
    )]
    Timeout {
        harness: HarnessName,
        seconds: u64,
        logs: PathBuf,
    },

    #[error(
        "{harness} ran under Valgrind and exited cleanly but wrote no report: {binary} is not a \
         measured program (its `main` must call `regress_measure::program::serve` first)."
    )]
    NoReport {
        harness: HarnessName,
        binary: PathBuf,
    },

    #[error("{program} failed ({status}) on {input}: {stderr}")]
    Annotate {
        program: PathBuf,
        status: String,
        input: PathBuf,
        stderr: String,
    },

    #[error("cannot read the profile {path}: {source}")]
    Profile {
        path: PathBuf,
        #[source]
        source: regress_profile::ProfileError,
    },

    #[error(
        "the annotated total of {harness} ({annotated}) disagrees with the raw profile ({raw}); \
         the profile is damaged or the tools disagree"
    )]
    AnnotationMismatch {
        harness: HarnessName,
        annotated: i64,
        raw: i64,
    },

    #[error("{harness}: the region count is {count}, not positive; the measurement is broken")]
    NonPositiveCount { harness: HarnessName, count: i64 },

    #[error(
        "cannot {action} {path}: {source}.\n  {}",
        crate::limits::io_hint(source)
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} is not a valid {what}: {source}")]
    Json {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error("{path} is not a valid {what}: {source}")]
    Toml {
        what: &'static str,
        path: PathBuf,
        /// Boxed: the parser's error is large, and every `Result` of the
        /// runner would carry its size.
        #[source]
        source: Box<toml::de::Error>,
    },

    #[error(
        "{path} has schema {found}, and this runner reads schema {expected}; measure again \
         (`cargo run -p regress -- run`) to write a current one"
    )]
    Schema {
        path: PathBuf,
        found: u32,
        expected: u32,
    },

    #[error("cannot turn the {what} into JSON: {source}")]
    Serialize {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    #[error(
        "there is no CPU profile {name:?}; the profiles are {known} (see README, \"CPU profiles\")"
    )]
    UnknownCpuProfile { name: String, known: String },

    #[error(
        "{harness}: the CPU profile `{profile}` did not reach {library}: {evidence}.\n  \
         Its count would be the default paths' under another name, so nothing was recorded. \
         The library ignores OPENSSL_ia32cap (a build without run-time dispatch, or a version \
         that reads the mask differently): measure it without --cpu, or report it to the \
         library."
    )]
    CpuProfileNotApplied {
        harness: HarnessName,
        profile: String,
        library: String,
        evidence: String,
    },

    #[error("{variable}={value:?} must be {expected}")]
    BadSetting {
        variable: &'static str,
        value: String,
        expected: String,
    },

    #[error(
        "no workspace root (a folder with Cargo.lock and baselines/) above {start}; \
         run from inside the project or set REGRESS_ROOT"
    )]
    NoWorkspace { start: PathBuf },

    #[error(
        "REGRESS_ROOT={value:?} {problem}.\n  \
         Set REGRESS_ROOT to the project's root (the folder holding Cargo.lock and baselines/), \
         or unset it to find the root from the current folder."
    )]
    BadRoot { value: PathBuf, problem: String },

    #[error("refusing to use {path}: {reason}")]
    UnsafePath { path: PathBuf, reason: String },

    #[error(transparent)]
    HarnessName(#[from] crate::harness_name::InvalidHarnessName),

    #[error(
        "the measurement record {path} is invalid: {problem}.\n  \
         Measure again (`cargo run -p regress -- run`) to write a sound one, or remove it."
    )]
    BadRecord {
        path: PathBuf,
        problem: crate::measure::measurement::RecordProblem,
    },

    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),

    #[error(transparent)]
    Coverage(#[from] crate::coverage::CoverageError),

    #[error(transparent)]
    Toolchain(#[from] crate::toolchain::ToolchainError),

    #[error(
        "{harness}: Valgrind ({program}) exited cleanly but did not run the measured program: \
         it wrote no profile and the program wrote no report.\n  \
         Check that {program} is a working Valgrind (`{program} --tool=cachegrind true`); \
         its log says:\n{log}"
    )]
    ValgrindDidNotRun {
        harness: HarnessName,
        program: PathBuf,
        log: String,
    },

    #[error(
        "{harness} could not be measured because {folder} cannot take more data: {cause}.\n  \
         {}. (The child exited with {status}; its logs, if any, are in {folder}.)",
        crate::limits::io_hint(cause)
    )]
    OutputFull {
        harness: HarnessName,
        folder: PathBuf,
        status: String,
        cause: std::io::Error,
    },

    #[error(
        "{harness}: the two children of a subtraction saw different CPU features \
         ({before:?} vs {after:?}); the difference of their counts would be meaningless.\n  \
         Measure again on a machine that does not migrate the process between unlike CPUs."
    )]
    CpuFeaturesDiffer {
        harness: HarnessName,
        before: Vec<String>,
        after: Vec<String>,
    },

    #[error(
        "{harness}: the two children of a subtraction were forked at different positions of \
         their fork servers ({last:?} and {before:?}), so their counts do not start from the \
         same instructions.\n  \
         Measure again with REGRESS_FORK_SERVER=off (every child started on its own), and \
         report this: it is a fault of the runner."
    )]
    ForkPositionsDiffer {
        harness: HarnessName,
        last: Option<u64>,
        before: Option<u64>,
    },

    #[error(
        "the harness binary {binary} is gone (rebuilt or removed while measuring?); run again"
    )]
    BinaryGone { binary: PathBuf },

    #[error(
        "cannot build the heap hooks with {compiler}: {reason}\n  \
         Install a C compiler (Debian/Ubuntu: `sudo apt-get install gcc`; the TLS libraries \
         need one too) or name one with CC=<compiler>."
    )]
    HeapHooks { compiler: PathBuf, reason: String },

    #[error(
        "{path} is not a Callgrind dump of a counted run's part: {reason}.\n  \
         The logs of the child are beside it; a program from before parts cannot be split."
    )]
    BadDump {
        path: PathBuf,
        #[source]
        reason: super::split::DumpProblem,
    },

    #[error(
        "cannot read the function symbols of the measured program {path}: {error}.\n  \
         A Callgrind measurement charges each instruction to the function it lies in by them; \
         rebuild the program (`cargo test --no-run -p harnesses --test perf`) and measure again."
    )]
    BadSymbols {
        path: PathBuf,
        #[source]
        error: regress_profile::symbols::SymbolsError,
    },

    #[error(
        "{harness}: its parts do not add up to its count: client {client} + server {server} + \
         glue {glue} = {sum} (Callgrind), but the run counts {total} ({method}).\n  \
         A part boundary is outside the counted run, or the two tools counted differently \
         (`--vex-guest-chase=no` must be given to both); the dumps are in {logs}."
    )]
    PartsDoNotAddUp {
        harness: HarnessName,
        client: u64,
        server: u64,
        glue: u64,
        sum: u64,
        total: u64,
        method: String,
        logs: PathBuf,
    },

    #[error(
        "{path} is not a heap report this runner reads: {reason}.\n  \
         Measure again; if it persists, the measured program and the runner disagree \
         (build both from one checkout)."
    )]
    BadHeapReport { path: PathBuf, reason: String },

    #[error(
        "{path} is not a DHAT profile this runner reads: {error}.\n  \
         Measure again; if it persists, this Valgrind's DHAT writes another format \
         (scripts/fetch-valgrind.sh fetches one the runner reads)."
    )]
    BadAllocationSites {
        path: PathBuf,
        #[source]
        error: regress_profile::dhat::DhatError,
    },

    #[error(transparent)]
    Flame(#[from] super::flame::FlameError),

    #[error("interrupted (SIGINT or SIGTERM); every child process was stopped")]
    Interrupted,

    #[error("{binary} list failed ({status}): {stderr}")]
    HarnessList {
        binary: PathBuf,
        status: String,
        stderr: String,
    },

    #[error(
        "{harness} failed while being scaled natively on {threads} thread(s) ({status}).\n\
         --- its stderr (last lines) ---\n{stderr}\n--- end of stderr ---\n  \
         Run `cargo test -p harnesses --test perf -- {harness} --exact` to see it fail alone."
    )]
    ScaleFailed {
        harness: HarnessName,
        threads: usize,
        status: String,
        stderr: String,
    },

    #[error(
        "{harness} ran natively and exited cleanly but wrote no scaling report: {binary} is not \
         a measured program (its `main` must call `regress_measure::program::serve` first)."
    )]
    ScaleNoReport {
        harness: HarnessName,
        binary: PathBuf,
    },
}

pub type Result<T, E = MeasureError> = std::result::Result<T, E>;

/// The line `ChildFailed`'s stderr has before Valgrind's own log.
pub(crate) const VALGRIND_LOG_HEADING: &str = "\n--- Valgrind's log (last lines) ---\n";

/// The most a child failure's reason keeps of its stderr line, in bytes.
const MAX_REASON: usize = 240;

impl MeasureError {
    /// Why a failed child says it failed, from the last lines of its
    /// stderr: a panic's message (the line after `panicked at`), else the
    /// last line that is not empty (a harness error: the program prints it
    /// last). Control characters are dropped and the line is cut to
    /// [`MAX_REASON`] bytes, since it comes from a child and goes into
    /// reports.
    pub fn reason_of(stderr: &str) -> Option<String> {
        // Only the child's own stderr, not Valgrind's log after it.
        let own = stderr
            .split(VALGRIND_LOG_HEADING)
            .next()
            .unwrap_or_default();
        let lines: Vec<&str> = own.lines().map(str::trim).collect();
        let panic = lines
            .iter()
            .rposition(|line| line.contains("panicked at"))
            .and_then(|at| lines.get(at + 1))
            .filter(|line| !line.is_empty());
        let line = panic.or_else(|| lines.iter().rev().find(|line| !line.is_empty()))?;
        let reason: String = line.chars().filter(|c| !c.is_control()).collect();
        if reason.len() > MAX_REASON {
            return Some(format!("{}…", crate::format::at_most(&reason, MAX_REASON)));
        }
        Some(reason)
    }

    /// Whether the error is an interrupt (SIGINT or SIGTERM), not a failure.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self,
            MeasureError::Interrupted
                | MeasureError::Process(crate::process::ProcessError::Interrupted)
        )
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MeasureError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_childs_reason_is_its_own_last_words() {
        let harness_error =
            "starting\ns2n_tls::x: server handshake failed: error decrypting data\n\n";
        assert_eq!(
            MeasureError::reason_of(harness_error).as_deref(),
            Some("s2n_tls::x: server handshake failed: error decrypting data")
        );
        let panic = "thread 'main' (7) panicked at src/a.rs:1:2:\nboom\n\
                     note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(MeasureError::reason_of(panic).as_deref(), Some("boom"));
        assert_eq!(MeasureError::reason_of("\n \n"), None);
        let hostile = format!("\u{1b}[31m{}", "é".repeat(MAX_REASON));
        let reason = MeasureError::reason_of(&hostile).expect("a reason");
        assert!(!reason.contains('\u{1b}'), "{reason:?}");
        assert!(
            reason.len() <= MAX_REASON + '…'.len_utf8(),
            "{}",
            reason.len()
        );
        assert!(reason.ends_with('…'));

        let error = MeasureError::ChildFailed {
            harness: crate::fixtures::name("s2n_tls::x"),
            status: "exit code 3".into(),
            stderr: format!("{harness_error}{VALGRIND_LOG_HEADING}==1== valgrind: fine"),
            logs: PathBuf::from("/tmp/logs"),
        };
        let first = error.to_string().lines().next().map(str::to_owned);
        assert_eq!(
            first.as_deref(),
            Some(
                "s2n_tls::x failed under Valgrind (exit code 3): \
                 s2n_tls::x: server handshake failed: error decrypting data."
            )
        );
        let silent = MeasureError::ChildFailed {
            harness: crate::fixtures::name("s2n_tls::x"),
            status: "exit code 3".into(),
            stderr: String::new(),
            logs: PathBuf::from("/tmp/logs"),
        };
        assert!(silent
            .to_string()
            .starts_with("s2n_tls::x failed under Valgrind (exit code 3).\n"));
    }
}
