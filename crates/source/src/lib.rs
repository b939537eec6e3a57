//! "Library L at revision R of checkout PATH" as something cargo can build
//! this workspace's harnesses against.
//!
//! The people this project serves maintain TLS libraries; their pull
//! requests change the library's *source*. To answer "did my s2n-tls branch
//! make the RSA handshake slower", each side of a comparison is the library
//! at one revision of their own checkout, with this workspace's harnesses
//! built against it, and neither repository is edited:
//!
//! 1. [`Library::named`] and [`Checkout::open`]: which library, and a check
//!    that PATH is a git checkout of it in its real layout;
//! 2. [`Checkout::sides`]: the base and head revisions (the head defaults to
//!    the working tree as it is, uncommitted edits included);
//! 3. [`export()`]: each side copied, read-only towards the user's
//!    repository, into `target/regress-source/exports/<library>/<key>/`,
//!    made buildable ([`generate`]: s2n-tls's bindings), keyed by commit or
//!    content hash so an unchanged side is reused;
//! 4. [`PatchSet::from_export`]: the crates it provides, their versions,
//!    and the `--config 'patch.crates-io.<crate>.path="…"'` arguments;
//! 5. [`ScratchWorkspace::prepare`]: a copy of this workspace where the
//!    patches are checked against the requirements, the lock is moved for
//!    version skew, and cargo is verified to really use the patches;
//! 6. [`build_harnesses`]: the harnesses built there, executables returned,
//!    a compile failure reported with the revision and the first error;
//! 7. [`Library::affects_harness`]: which harnesses a library's code reaches.
//!
//! Nothing is written outside this workspace's `target/`. The user's
//! checkout is only read: its work tree, index, stash, refs and objects are
//! never changed and no worktree is added (see [`git`]).
//!
//! About aws-lc-rs: its repository builds `aws-lc-sys` from the
//! `aws-lc-sys/aws-lc` submodule with files that are generated *and
//! committed* (symbol-prefix headers in `generated-include/`, per-target
//! source lists in `builder/cc_builder/`, bindings in `src/`), so the sound
//! minimum is to export that submodule at the commit the revision records
//! and generate nothing. A revision that moves the submodule without
//! regenerating those files is the library's own inconsistency; its build
//! fails (or is built as committed), as it would in the library's CI.

pub mod affected;
pub mod cargo;
pub mod checkout;
pub mod compile;
pub mod compiler_cache;
pub mod dirs;
pub mod error;
pub mod export;
pub mod features;
pub mod generate;
pub mod git;
pub mod library;
pub mod manifest;
pub mod openssl_src;
pub mod options;
pub mod patch;
pub mod paths;
/// Every child process (git, cargo, the binding generator) runs in a
/// process group of its own with a time limit: the `regress-process` crate,
/// shared with the runner.
pub use regress_process as process;
pub mod resolve;
pub mod revision;
pub mod scratch;

pub use checkout::Checkout;
pub use compile::{build_harnesses, harness_build_args, BuiltHarnesses};
pub use dirs::SourceDirs;
pub use error::SourceError;
pub use export::{export, export_for_walk, Export};
pub use library::{Library, LIBRARIES};
pub use options::{Options, Timeouts};
pub use patch::{PatchSet, PatchedCrate};
pub use resolve::LockUpdate;
pub use revision::{Revision, RevisionRequest, Side, Sides};
pub use scratch::ScratchWorkspace;
