//! Kept builds: each side's measured program, from the builds kept in
//! its cargo target folder (`<target>/regress/programs/<key>/`), else built
//! and kept there, for a diff of two commits and for a from-source diff
//! alike. Both go through [`revision::program`], the one way bisect and
//! history get a revision's program too, with a [`Builder`] of their own:
//! [`WorktreeSide`] (a commit's worktree of this workspace) and
//! [`PatchedSide`] (this workspace with a library's revision patched in).
//!
//! A key is the content of what can reach the program, not a commit: every
//! build input of the sources built (this workspace's files, and a
//! library's export key, itself a commit or a hash of the working tree's
//! content), the compilers as they run there, the cargo arguments of the
//! build's isolation, and the environment variables that change what a
//! build makes ([`builds_with`]). Builds are deterministic (the same inputs
//! give the same bytes), so a kept program is the one a build would make;
//! its measurements are then kept too ([`crate::program::MeasurementCache`]).
//! So a base shared by many pull requests, a re-run, a head that only
//! changed documents, the second shard of a pull request on a runner that
//! keeps its target folder, and a from-source diff run again on the same
//! sources build nothing.

use std::path::Path;

use regress_source::{build_harnesses, Options, ScratchWorkspace, SourceDirs};

use super::error::DiffError;
use crate::program;
use crate::program::revision::inputs::BuildInputs;
use crate::program::revision::{
    self, cache::fill, cache::ProgramCache, Builder, Built, DoesNotBuild, Program, RevisionError,
};
use crate::program::{build_harness_tests, BuildSpec, PROGRAM};

/// How many of a target folder's kept builds stay: a program is tens of
/// megabytes, and a runner whose target folder is kept would otherwise
/// grow by two of them for every pull request (or every edit of a
/// from-source diff's working tree).
const MAX_KEPT_BUILDS: usize = 8;

/// `builder`'s program of `revision`, kept in (or built into) the program
/// cache of the cargo target folder `target_dir`; the least recently used
/// beyond [`MAX_KEPT_BUILDS`] go.
pub(super) fn keep(
    builder: &dyn Builder,
    target_dir: &Path,
    revision: &str,
) -> Result<Program, DiffError> {
    let root = target_dir.join("regress");
    let built = revision::program(builder, &root, revision)?;
    let cache = ProgramCache::new(&root);
    cache.keep_only_the_newest(&built, MAX_KEPT_BUILDS);
    match built {
        Built::Program(program) => Ok(program),
        // Never kept by these builders (a failed build is an error); an
        // entry that says so was written by something else.
        Built::DoesNotBuild { .. } => Err(DiffError::KeptBuild(Box::new(RevisionError::Cache {
            dir: cache.entry(&builder.key(revision)),
        }))),
    }
}

/// One side of a diff of two commits: its worktree of this workspace, built
/// as `regress run` builds ([`build_harness_tests`]).
pub(super) struct WorktreeSide<'a> {
    spec: BuildSpec<'a>,
    key: String,
}

impl<'a> WorktreeSide<'a> {
    pub(super) fn new(spec: BuildSpec<'a>) -> Result<WorktreeSide<'a>, DiffError> {
        let inputs = BuildInputs::compilers(spec.worktree)?.with_workspace(spec.worktree)?;
        let config = spec.config.join("\n");
        let key = key(&inputs, &["regress diff: this workspace", config.as_str()]);
        Ok(WorktreeSide { spec, key })
    }
}

impl Builder for WorktreeSide<'_> {
    fn describe(&self) -> String {
        format!(
            "this workspace's worktree at {}",
            self.spec.worktree.display()
        )
    }

    fn key(&self, _revision: &str) -> String {
        self.key.clone()
    }

    fn build(
        &self,
        _revision: &str,
        into: &Path,
    ) -> Result<Result<(), DoesNotBuild>, RevisionError> {
        // It copies the program into `into` itself.
        build_harness_tests(&BuildSpec {
            copy_to: &into.join(PROGRAM),
            ..self.spec
        })?;
        let (lock, kept) = (
            self.spec.worktree.join("Cargo.lock"),
            into.join("Cargo.lock"),
        );
        std::fs::copy(&lock, &kept).map_err(|source| RevisionError::io("copy", &kept, source))?;
        Ok(Ok(()))
    }
}

/// One side of a from-source diff: this workspace's scratch copy with the
/// side's library revisions patched in, built by [`build_harnesses`].
pub(super) struct PatchedSide<'a> {
    scratch: &'a ScratchWorkspace,
    dirs: &'a SourceDirs,
    target_dir: &'a Path,
    config: &'a [String],
    options: &'a Options,
    key: String,
}

impl<'a> PatchedSide<'a> {
    /// `sources` names the side's library revisions (their export keys, or
    /// `released`), which together with this workspace's build inputs
    /// decide what the build makes.
    pub(super) fn new(
        scratch: &'a ScratchWorkspace,
        dirs: &'a SourceDirs,
        target_dir: &'a Path,
        config: &'a [String],
        options: &'a Options,
        sources: &str,
    ) -> Result<PatchedSide<'a>, DiffError> {
        let inputs = BuildInputs::compilers(scratch.root())?.with_workspace(dirs.workspace())?;
        let config_text = config.join("\n");
        let features = scratch.features().join(",");
        let key = key(
            &inputs,
            &[
                "regress diff --library",
                sources,
                features.as_str(),
                config_text.as_str(),
            ],
        );
        Ok(PatchedSide {
            scratch,
            dirs,
            target_dir,
            config,
            options,
            key,
        })
    }
}

impl Builder for PatchedSide<'_> {
    fn describe(&self) -> String {
        format!("the scratch copy at {}", self.scratch.root().display())
    }

    fn key(&self, _revision: &str) -> String {
        self.key.clone()
    }

    fn build(
        &self,
        _revision: &str,
        into: &Path,
    ) -> Result<Result<(), DoesNotBuild>, RevisionError> {
        let built = build_harnesses(
            self.scratch,
            self.dirs,
            self.target_dir,
            self.config,
            self.options,
        )?;
        fill(
            into,
            &built.program,
            &self.scratch.root().join("Cargo.lock"),
        )?;
        Ok(Ok(()))
    }
}

/// The key of `inputs` with `parts` and the build's environment.
fn key(inputs: &BuildInputs, parts: &[&str]) -> String {
    let environment = builds_with(std::env::vars_os());
    let mut all = parts.to_vec();
    all.extend(environment.iter().map(String::as_str));
    inputs.key(&all)
}

/// The environment variables, as `NAME=value` and sorted, that change what
/// a build makes: cargo's and rustc's (`CARGO_*` but where it writes and
/// how it prints, `RUSTFLAGS`, `RUSTC`, `RUSTUP_TOOLCHAIN`, ...), the C
/// compilers' (`CC`, `CFLAGS`, their per-target forms), and the TLS
/// libraries' build scripts' (`AWS_LC_*`, `OPENSSL_*`, `S2N_*`).
fn builds_with(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<String> {
    const PREFIXES: [&str; 12] = [
        "CARGO_", "RUST", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "AR",
        "AWS_LC_", "OPENSSL_", "S2N_",
    ];
    const NOT: [&str; 4] = [
        "CARGO_TARGET_DIR",
        "CARGO_TERM_",
        "CARGO_HOME",
        "CARGO_MAKEFLAGS",
    ];
    let mut found: Vec<String> = vars
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            // The variables of a `cargo run`/`cargo test` around the runner
            // never reach its builds (`program::cargo_command`).
            let counts = PREFIXES.iter().any(|p| name.starts_with(p))
                && !NOT.iter().any(|p| name.starts_with(p))
                && !program::set_by_cargo_run(&name);
            counts.then(|| format!("{name}={}", value.to_string_lossy()))
        })
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_build_is_keyed_by_what_changes_a_build_only() {
        let vars = |pairs: &[(&str, &str)]| {
            builds_with(
                pairs
                    .iter()
                    .map(|(name, value)| ((*name).into(), (*value).into()))
                    .collect::<Vec<_>>()
                    .into_iter(),
            )
        };
        assert_eq!(
            vars(&[
                ("RUSTFLAGS", "-Ctarget-cpu=native"),
                ("CARGO_PROFILE_TEST_OPT_LEVEL", "1"),
                ("CC", "gcc"),
                ("CFLAGS_x86_64_unknown_linux_gnu", "-O1"),
                ("OPENSSL_DIR", "/opt/ssl"),
                ("AWS_LC_SYS_CMAKE_BUILDER", "1"),
                ("HOME", "/root"),
                ("PATH", "/usr/bin"),
                ("CARGO_TARGET_DIR", "/t"),
                ("CARGO_TERM_COLOR", "always"),
                ("CARGO_HOME", "/c"),
                ("REGRESS_VALGRIND", "/v"),
                ("CARGO_PKG_NAME", "regress"),
                ("CARGO_MANIFEST_PATH", "/w/Cargo.toml"),
                ("CARGO_TARGET_TMPDIR", "/w/target/tmp"),
            ]),
            [
                "AWS_LC_SYS_CMAKE_BUILDER=1",
                "CARGO_PROFILE_TEST_OPT_LEVEL=1",
                "CC=gcc",
                "CFLAGS_x86_64_unknown_linux_gnu=-O1",
                "OPENSSL_DIR=/opt/ssl",
                "RUSTFLAGS=-Ctarget-cpu=native",
            ]
        );
    }
}
