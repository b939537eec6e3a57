//! Published versions of a library, from crates.io, each built into this
//! workspace's harnesses.
//!
//! A published version needs no export and no patch: cargo downloads it
//! like any dependency once the lock names it. The lock is moved in the
//! scratch copy of the workspace that [`ScratchWorkspace`] keeps for
//! builds without patches, with `cargo update -p <crate>@<locked>
//! --precise <version>` (s2n-tls pins its s2n-tls-sys exactly, so the sys
//! crate follows); this workspace's own `Cargo.lock` is never touched. A
//! version the harnesses do not cover ([`regress_source::features`]) is
//! reported without a build; one whose API they cover but which does not
//! compile, or which the workspace's requirement rejects, is reported with
//! cargo's reason.

use std::path::{Path, PathBuf};

use regress_source::features::{Coverage, DecidedBy};
use regress_source::openssl_src;
use regress_source::process::{self as source_process, RunOptions};
use regress_source::{build_harnesses, Library, Options, PatchSet, ScratchWorkspace, SourceDirs};

use super::cache::fill;
use super::error::{DoesNotBuild, RevisionError};
use super::inputs::BuildInputs;
use super::library::does_not_build;
use super::Builder;
use crate::program::{isolation, Isolation};

/// Builds published versions of one library.
pub struct PublishedVersions {
    library: &'static Library,
    coverage: &'static Coverage,
    dirs: SourceDirs,
    target: PathBuf,
    inputs: BuildInputs,
    options: Options,
}

impl PublishedVersions {
    /// `None` for a library whose covered versions the harnesses do not
    /// say (it cannot have a history).
    pub fn new(
        library: &'static Library,
        dirs: SourceDirs,
        target: Option<&Path>,
        options: Options,
    ) -> Result<Option<PublishedVersions>, RevisionError> {
        let Some(coverage) = Coverage::of(library.name) else {
            return Ok(None);
        };
        let inputs = BuildInputs::compilers(dirs.workspace())?.with_workspace(dirs.workspace())?;
        Ok(Some(PublishedVersions {
            library,
            coverage,
            target: target.map_or_else(|| dirs.build_target(), Path::to_path_buf),
            dirs,
            inputs,
            options,
        }))
    }

    /// What the harnesses cover of the library.
    pub fn coverage(&self) -> &'static Coverage {
        self.coverage
    }

    /// The crate whose version is the library's.
    pub fn krate(&self) -> &'static str {
        self.coverage.krate
    }

    /// Why the harnesses cannot build `version`, when they do not cover it.
    pub fn not_covered(&self, version: &semver::Version) -> Option<DoesNotBuild> {
        self.coverage
            .generation(version)
            .is_none()
            .then(|| DoesNotBuild::VersionNotCovered {
                library: self.library,
                version: version.clone(),
                covered: self.coverage.covered().to_string(),
            })
    }

    /// The patch set of `openssl-src` `version`: its OpenSSL tree in a
    /// shell of the pinned build logic, under the state folder.
    fn openssl_shell(&self, version: &semver::Version) -> Result<PatchSet, RevisionError> {
        let cargo = regress_source::cargo::Cargo::detect(self.dirs.workspace(), &self.options)?;
        let probes = openssl_src::probes(&self.dirs);
        let release = openssl_src::release(version, &probes, &cargo, &self.options)?;
        let logic = openssl_src::logic(&self.dirs, &cargo, &self.options)?;
        let into = probes
            .with_file_name("shells")
            .join(format!("openssl-src-{version}"));
        let krate = openssl_src::shell(&release.join("openssl"), &logic, &into)?;
        Ok(PatchSet {
            library: self.library,
            revision: format!("{} {version}", openssl_src::KRATE),
            key: format!("{}-{version}", openssl_src::KRATE),
            crates: vec![krate],
        })
    }

    /// Moves the scratch copy's lock to `version`; `Ok(Err(reason))` when
    /// cargo refuses.
    fn move_lock(
        &self,
        scratch: &ScratchWorkspace,
        version: &semver::Version,
    ) -> Result<Result<(), DoesNotBuild>, RevisionError> {
        let lock = scratch.root().join("Cargo.lock");
        let locked = locked_versions(&lock, self.krate())?;
        if locked.contains(version) {
            return Ok(Ok(()));
        }
        let compatible = |v: &semver::Version| {
            v.major == version.major && (v.major != 0 || v.minor == version.minor)
        };
        let Some(from) = locked
            .iter()
            .find(|v| compatible(v))
            .or(locked.first().filter(|_| locked.len() == 1))
        else {
            return Ok(Err(DoesNotBuild::LockCannotMove {
                krate: self.krate(),
                locked: display_versions(&locked),
                version: version.clone(),
            }));
        };
        let spec = format!("{}@{from}", self.krate());
        let program = scratch.cargo().program(
            scratch.root(),
            [
                "update",
                "-p",
                spec.as_str(),
                "--precise",
                &version.to_string(),
            ],
        );
        let finished = source_process::run(
            &program,
            &self.options.limits(self.options.timeouts.cargo),
            RunOptions::default(),
        )
        .map_err(regress_source::SourceError::from)?;
        if !finished.success() {
            return Ok(Err(DoesNotBuild::UpdateFailed {
                command: finished.command.clone(),
                tail: finished.tail(12),
            }));
        }
        if !locked_versions(&lock, self.krate())?.contains(version) {
            return Ok(Err(DoesNotBuild::NotLocked {
                command: finished.command.clone(),
                krate: self.krate(),
                version: version.clone(),
            }));
        }
        Ok(Ok(()))
    }
}

impl Builder for PublishedVersions {
    fn describe(&self) -> String {
        format!("{} from crates.io", self.library)
    }

    fn key(&self, revision: &str) -> String {
        self.inputs.key(&["published", self.library.name, revision])
    }

    fn refuses(&self, revision: &str) -> Option<String> {
        // Not a version: `build` says so.
        let version = semver::Version::parse(revision).ok()?;
        self.not_covered(&version).map(|reason| reason.to_string())
    }

    fn build(
        &self,
        revision: &str,
        into: &Path,
    ) -> Result<Result<(), DoesNotBuild>, RevisionError> {
        crate::process::check()?;
        let version = semver::Version::parse(revision).map_err(|error| RevisionError::Git {
            args: "version".to_owned(),
            dir: PathBuf::new(),
            detail: format!("{revision:?} is not a version: {error}"),
        })?;
        if let Some(reason) = self.not_covered(&version) {
            return Ok(Err(reason));
        }
        let scratch = match self.coverage.decided_by {
            // The release's tree in a shell of the pinned build logic,
            // patched in (see `regress_source::openssl_src`).
            DecidedBy::OpenSslRelease => {
                let shell = self.openssl_shell(&version)?;
                ScratchWorkspace::prepare(&self.dirs, &[shell], &self.options)?
            }
            DecidedBy::CrateVersion => {
                let scratch = ScratchWorkspace::prepare(&self.dirs, &[], &self.options)?;
                if let Err(reason) = self.move_lock(&scratch, &version)? {
                    return Ok(Err(reason));
                }
                scratch
            }
        };
        let mut extra = match isolation(scratch.root())? {
            Isolation::Renamed(config) => config,
            Isolation::NeedsOwnTargetDir { .. } => Vec::new(),
        };
        let features: Vec<&str> = self
            .coverage
            .generation(&version)
            .map(|generation| generation.features.to_vec())
            .unwrap_or_default();
        if !features.is_empty() {
            extra.extend(["--features".to_owned(), features.join(",")]);
        }
        let built = build_harnesses(&scratch, &self.dirs, &self.target, &extra, &self.options);
        crate::process::check()?;
        let built = match built {
            Ok(built) => built,
            Err(error) if does_not_build(&error) => {
                return Ok(Err(DoesNotBuild::Source(Box::new(error))))
            }
            Err(error) => return Err(error.into()),
        };
        fill(into, &built.program, &scratch.root().join("Cargo.lock"))?;
        Ok(Ok(()))
    }
}

/// The versions of `krate` in the lock file at `lock`.
fn locked_versions(lock: &Path, krate: &str) -> Result<Vec<semver::Version>, RevisionError> {
    let text =
        std::fs::read_to_string(lock).map_err(|source| RevisionError::io("read", lock, source))?;
    let table: toml::Table = text.parse().map_err(|error: toml::de::Error| {
        RevisionError::Measure(crate::MeasureError::Toml {
            what: "Cargo.lock",
            path: lock.to_path_buf(),
            source: Box::new(error),
        })
    })?;
    Ok(regress_source::manifest::locked_versions(&table, krate))
}

fn display_versions(versions: &[semver::Version]) -> String {
    versions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
