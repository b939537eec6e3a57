//! Commits of a TLS library's checkout, each built into this workspace's
//! harnesses with [`regress_source`] (export under `target/`, patch set,
//! scratch copy of the workspace, build), as `regress diff --library`
//! builds each side, but from the checkout's one commit folder
//! ([`regress_source::export_for_walk`]): a bisect or a history builds
//! many commits that differ in a few files, and from one folder each
//! build compiles only those. The user's checkout is only read.

use std::path::{Path, PathBuf};

use regress_source::features::{check_coverage, harness_features, NotCovered};
use regress_source::{
    build_harnesses, export_for_walk, Checkout, Options, PatchSet, Revision, ScratchWorkspace,
    SourceDirs, SourceError,
};

use super::cache::fill;
use super::error::{DoesNotBuild, RevisionError};
use super::inputs::BuildInputs;
use super::Builder;
use crate::program::{isolation, Isolation};

/// Builds commits of one library checkout.
pub struct LibraryRevisions {
    checkout: Checkout,
    dirs: SourceDirs,
    target: PathBuf,
    inputs: BuildInputs,
    options: Options,
}

impl LibraryRevisions {
    /// For `checkout`, building against the workspace `dirs` names (its
    /// harness sources are part of every key) into `target` (default: the
    /// from-source diff's, `target/regress-source/target`, so the
    /// dependencies that do not change are built once for both).
    pub fn new(
        checkout: Checkout,
        dirs: SourceDirs,
        target: Option<&Path>,
        options: Options,
    ) -> Result<LibraryRevisions, RevisionError> {
        let inputs = BuildInputs::compilers(dirs.workspace())?.with_workspace(dirs.workspace())?;
        Ok(LibraryRevisions {
            target: target.map_or_else(|| dirs.build_target(), Path::to_path_buf),
            checkout,
            dirs,
            inputs,
            options,
        })
    }

    pub fn checkout(&self) -> &Checkout {
        &self.checkout
    }
}

impl Builder for LibraryRevisions {
    fn describe(&self) -> String {
        format!(
            "{}'s checkout at {}",
            self.checkout.library(),
            self.checkout.root().display()
        )
    }

    fn key(&self, revision: &str) -> String {
        self.inputs
            .key(&["library", self.checkout.library().name, revision])
    }

    fn build(
        &self,
        revision: &str,
        into: &Path,
    ) -> Result<Result<(), DoesNotBuild>, RevisionError> {
        crate::process::check()?;
        let revision = Revision::Commit {
            reference: revision.to_owned(),
            commit: revision.to_owned(),
        };
        let built = (|| -> Result<Result<(PathBuf, PathBuf), NotCovered>, SourceError> {
            // One folder for every commit of the checkout: the compiler
            // cache then hands back what the last commit built already.
            let exported = export_for_walk(&self.checkout, &revision, &self.dirs, &self.options)?;
            let sets = [PatchSet::from_export(&exported)?];
            if let Err(not_covered) = check_coverage(&sets) {
                return Ok(Err(not_covered));
            }
            let scratch = ScratchWorkspace::prepare(&self.dirs, &sets, &self.options)?;
            let mut extra = match isolation(scratch.root()) {
                Ok(Isolation::Renamed(config)) => config,
                _ => Vec::new(),
            };
            let features = harness_features(&sets);
            if !features.is_empty() {
                extra.extend(["--features".to_owned(), features.join(",")]);
            }
            let built = build_harnesses(&scratch, &self.dirs, &self.target, &extra, &self.options)?;
            Ok(Ok((built.program, scratch.root().join("Cargo.lock"))))
        })();
        crate::process::check()?;
        match built {
            Ok(Ok((program, lock))) => {
                fill(into, &program, &lock)?;
                Ok(Ok(()))
            }
            Ok(Err(not_covered)) => Ok(Err(DoesNotBuild::NotCovered(not_covered))),
            Err(error) if does_not_build(&error) => Ok(Err(DoesNotBuild::Source(Box::new(error)))),
            Err(error) => Err(error.into()),
        }
    }
}

/// Whether `error` says the revision itself does not build (skipped by a
/// bisect, reported by a history), rather than that something around it
/// failed (git, the disk, an interrupt), which ends the command.
pub(super) fn does_not_build(error: &SourceError) -> bool {
    matches!(
        error,
        SourceError::Layout { .. }
            | SourceError::SubmoduleMissing { .. }
            | SourceError::Generation { .. }
            | SourceError::Manifest { .. }
            | SourceError::PatchRejected { .. }
            | SourceError::PatchUnused { .. }
            | SourceError::Cargo { .. }
            | SourceError::HarnessesDoNotCompile { .. }
            | SourceError::Build { .. }
            | SourceError::NoExecutable { .. }
    )
}
