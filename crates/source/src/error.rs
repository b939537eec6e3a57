//! Errors of turning a library checkout into a patch set. Each says what
//! went wrong, in terms of the user's checkout and revision, and what to do
//! next.

use std::path::PathBuf;

use crate::process::ProcessError;
use crate::revision::Side;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("unknown library {name:?}; the libraries regress can build from source are: {known}")]
    UnknownLibrary { name: String, known: String },

    #[error(
        "{path} is not a git checkout ({detail}).\n  \
         Give the folder of a clone of the library's repository (`git clone` it first)."
    )]
    NotAGitRepository { path: PathBuf, detail: String },

    #[error(
        "{path} does not look like a checkout of {library}{at}: missing {missing}.\n  \
         Is it the right repository, and the right --library name?"
    )]
    Layout {
        library: &'static str,
        path: PathBuf,
        /// ` at <revision>` when a revision was checked, else empty.
        at: String,
        missing: String,
    },

    #[error("the {side} revision is empty; name a branch, tag or commit")]
    EmptyRevision { side: Side },

    #[error(
        "the {side} revision {reference:?} starts with `-`, so git would read it as an \
         option.\n  Name the commit another way: its hash, or a full ref such as \
         refs/heads/<branch>."
    )]
    RevisionLooksLikeOption { side: Side, reference: String },

    #[error(
        "the {side} revision {reference:?} does not name a commit in {repo}{detail}.\n  \
         Check the spelling (`git -C {repo} log --oneline -5 {reference}`); for a remote \
         branch, fetch it first."
    )]
    RevisionNotFound {
        side: Side,
        reference: String,
        repo: PathBuf,
        detail: String,
    },

    #[error(
        "the base must be a committed revision, not the working tree of {repo}{dirty}.\n  \
         Name a branch, tag or commit as the base; the working tree (uncommitted edits \
         included) can only be the head side."
    )]
    BaseNotCommitted { repo: PathBuf, dirty: &'static str },

    #[error(
        "{base} and {head} have no common history in {repo}: there is no merge base, so a \
         comparison would compare two unrelated projects.\n  {hint}"
    )]
    NoMergeBase {
        base: String,
        head: String,
        repo: PathBuf,
        hint: &'static str,
    },

    #[error(
        "{library} needs the submodule {path} at {commit}, but {repo} does not have it{detail}.\n  \
         Initialise it in your checkout (`git -C {repo} submodule update --init {path}`); \
         regress never changes your checkout itself."
    )]
    SubmoduleMissing {
        library: &'static str,
        path: String,
        commit: String,
        repo: PathBuf,
        detail: String,
    },

    #[error(
        "refusing {what} from {repo}: {reason}.\n  \
         A path like that could write outside the export folder; check the repository."
    )]
    UnsafeContent {
        what: &'static str,
        repo: PathBuf,
        reason: String,
    },

    #[error(
        "refusing a path from {repo}: {reason}.\n  \
         A path like that could write outside the export folder; check the repository."
    )]
    UnsafePath {
        repo: PathBuf,
        #[source]
        reason: crate::paths::UnsafePath,
    },

    #[error(
        "refusing an untracked file from {repo}: {path} is {mib} MiB, more than the {limit_mib} \
         MiB an untracked file of an exported working tree may have.\n  \
         Move it out of the checkout, add it to .gitignore, or compare a commit instead."
    )]
    OversizedUntracked {
        repo: PathBuf,
        path: String,
        mib: u64,
        limit_mib: u64,
    },

    #[error("`{command}` failed ({status}): {stderr}")]
    Git {
        command: String,
        status: String,
        stderr: String,
    },

    #[error(
        "generating {library}'s {step} for {revision} failed. {detail}\n  \
         The whole output is in {log}."
    )]
    Generation {
        library: &'static str,
        revision: String,
        step: &'static str,
        /// The exit status, the last lines of output, and a hint if any.
        detail: String,
        log: PathBuf,
    },

    #[error(
        "{library} at {revision}: {path} is not a manifest regress can use: {reason}.\n  \
         Check that the revision is a checkout of the library's repository."
    )]
    Manifest {
        library: &'static str,
        revision: String,
        path: PathBuf,
        reason: String,
    },

    #[error(
        "{library} at {revision} carries {krate} {version}, which this workspace cannot use: \
         {requirement}.\n  \
         Measure a revision of {library} whose {krate} version satisfies that requirement, or \
         change the requirement in this workspace's manifest in a commit of its own."
    )]
    PatchRejected {
        library: &'static str,
        revision: String,
        krate: String,
        version: String,
        requirement: String,
    },

    #[error(
        "{library} at {revision}: cargo did not use {package} from {path}: {detail}.\n  \
         The patch would silently build the crates.io crate instead, so nothing is built."
    )]
    PatchUnused {
        library: &'static str,
        revision: String,
        /// `<crate> <version>`.
        package: String,
        path: PathBuf,
        detail: String,
    },

    #[error(
        "`{command}` failed ({status}) in the scratch copy {dir}. Its last lines:\n{tail}{context}"
    )]
    Cargo {
        command: String,
        dir: PathBuf,
        status: String,
        tail: String,
        context: String,
    },

    #[error(
        "the harnesses do not compile against {sources}: {krate} says\n{first_error}\n  \
         That revision's API differs from the one the harnesses use (version skew); measure a \
         revision with the API of this workspace's version, or adapt the harnesses."
    )]
    HarnessesDoNotCompile {
        sources: String,
        krate: String,
        first_error: String,
    },

    #[error(
        "building the harnesses against {sources} failed ({status}) without a compiler error. \
         cargo's last lines:\n{tail}\n  The whole output is in {log}."
    )]
    Build {
        sources: String,
        status: String,
        tail: String,
        log: PathBuf,
    },

    #[error("cargo built no {what} for {sources}; does this workspace still have it?")]
    NoExecutable { what: String, sources: String },

    #[error("{path} is not inside {target}; regress only writes under this workspace's target/")]
    OutsideTarget { path: PathBuf, target: PathBuf },

    #[error("{path} is not valid UTF-8, which cargo's --config values need; move it")]
    NonUtf8Path { path: PathBuf },

    #[error(
        "cannot tell which OpenSSL the tree holds: {path}: {reason}.\n  \
         Is it an OpenSSL source tree (VERSION.dat, or include/openssl/opensslv.h for 1.1.1)?"
    )]
    OpenSslVersion { path: PathBuf, reason: String },

    #[error("unexpected output from `{command}`: {reason}")]
    Unexpected { command: String, reason: String },

    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(transparent)]
    NotCovered(#[from] crate::features::NotCovered),

    #[error(transparent)]
    Process(#[from] ProcessError),
}

impl SourceError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> SourceError {
        SourceError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
