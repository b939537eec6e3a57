//! Builds one side's measured program.
//!
//! Both sides build into one cargo target folder, so the dependencies (aws-lc,
//! s2n-tls's C code, the OpenSSL bindings: minutes of compiling) are built
//! once. By default that folder is the diff's own
//! (`target/regress-diff/target`, kept between diffs); with
//! `CARGO_TARGET_DIR` or `--target-dir` it can be one other builds use too.
//!
//! Sharing needs care, because cargo names a workspace crate's artifacts by
//! its path *relative to the workspace root*, and decides they are up to
//! date by comparing times: two checkouts of this project write artifacts of
//! the same names, and a checkout whose sources are older than another
//! checkout's last build takes that build's binary for its own. So:
//!
//! 1. The diff's builds set `codegen-units` of each workspace crate
//!    explicitly, to what rustc uses by default for an incremental dev build
//!    (256). The code is the same as a plain `cargo test` build's, but the
//!    setting is part of cargo's artifact hash, so the diff's artifacts never
//!    take the names of a regular checkout's build, in either direction.
//! 2. Each worktree is created just before it is built, so its sources are
//!    newer than the other side's artifacts and cargo rebuilds the workspace
//!    crates; the worktrees are never inside the target folder (cargo would
//!    record their files relative to it and check the wrong side's).
//! 3. The test binary is copied out as soon as it is built, before the other
//!    side's build replaces it; a binary older than its worktree, should
//!    cargo ever reuse one anyway, is refused.
//!
//! When a commit configures `codegen-units` (or `incremental`) itself, point
//! 1 would change its code generation; such a commit builds in the diff's own
//! target folder instead ([`isolation`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ProgramError;
use super::Side;
use crate::program::{self, cargo, cargo_command, BuildRequest};

/// rustc's default number of codegen units for an incremental build, which
/// is what cargo's dev and test profiles do for workspace crates.
const INCREMENTAL_CODEGEN_UNITS: u32 = 256;

/// How a commit's workspace crates are kept apart from other builds in a
/// shared target folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// `--config` arguments that give the workspace crates artifact names of
    /// their own without changing their code.
    Renamed(Vec<String>),
    /// The commit's manifest sets the profile keys the renaming uses, so the
    /// build must not share a target folder with anyone else's builds.
    NeedsOwnTargetDir { reason: String },
}

/// Decides how to isolate the workspace at `worktree`'s builds.
pub fn isolation(worktree: &Path) -> Result<Isolation, ProgramError> {
    let manifest_path = worktree.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path)
        .map_err(|source| ProgramError::io("read", &manifest_path, source))?;
    if let Some(reason) = profile_conflict(&manifest) {
        return Ok(Isolation::NeedsOwnTargetDir { reason });
    }
    let members = workspace_members(worktree)?;
    Ok(Isolation::Renamed(
        members
            .iter()
            .flat_map(|member| {
                [
                    "--config".to_owned(),
                    format!(
                        "profile.dev.package.\"{member}\".codegen-units={INCREMENTAL_CODEGEN_UNITS}"
                    ),
                ]
            })
            .collect(),
    ))
}

/// Why a manifest's profiles rule the renaming out, if they do: a dev or
/// test profile (or a package override in one) that sets `codegen-units` or
/// `incremental`.
fn profile_conflict(manifest: &str) -> Option<String> {
    let Ok(value) = manifest.parse::<toml::Table>() else {
        // cargo will say what is wrong with it when it builds.
        return None;
    };
    let profiles = value.get("profile")?.as_table()?;
    for profile in ["dev", "test"] {
        let Some(table) = profiles.get(profile).and_then(toml::Value::as_table) else {
            continue;
        };
        let mut tables = vec![(format!("profile.{profile}"), table)];
        if let Some(packages) = table.get("package").and_then(toml::Value::as_table) {
            for (name, settings) in packages {
                if let Some(settings) = settings.as_table() {
                    tables.push((format!("profile.{profile}.package.{name}"), settings));
                }
            }
        }
        for (path, settings) in tables {
            for key in ["codegen-units", "incremental"] {
                if settings.contains_key(key) {
                    return Some(format!("Cargo.toml sets {path}.{key}"));
                }
            }
        }
    }
    None
}

/// The package names of the workspace at `worktree`.
fn workspace_members(worktree: &Path) -> Result<Vec<String>, ProgramError> {
    #[derive(Deserialize)]
    struct Metadata {
        packages: Vec<Package>,
    }
    #[derive(Deserialize)]
    struct Package {
        name: String,
    }
    let cargo = cargo();
    let mut command = cargo_command();
    command
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(worktree);
    // In a group of its own, with a time limit (see `crate::process`).
    let output = crate::process::output(
        command,
        &cargo,
        std::time::Duration::from_secs(300),
        64 << 20,
        crate::process::Role::Work,
    )?;
    let fail = |detail: String| ProgramError::Metadata {
        dir: worktree.to_path_buf(),
        detail,
    };
    if !output.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ));
    }
    let metadata: Metadata = serde_json::from_slice(&output.stdout)
        .map_err(|error| fail(format!("unexpected output: {error}")))?;
    Ok(metadata.packages.into_iter().map(|p| p.name).collect())
}

/// One side's build.
pub struct BuildSpec<'a> {
    pub side: Side,
    pub commit: &'a str,
    pub worktree: &'a Path,
    pub target_dir: &'a Path,
    /// Extra `cargo` arguments from [`Isolation::Renamed`].
    pub config: &'a [String],
    /// Where to copy the built test binary (a file path).
    pub copy_to: &'a Path,
}

/// Builds the measured program of a worktree (as [`program::build_program`]
/// does for `regress run`) and copies it to `spec.copy_to`. Cargo's progress
/// and diagnostics go to the terminal.
pub fn build_harness_tests(spec: &BuildSpec<'_>) -> Result<PathBuf, ProgramError> {
    let built = program::build_program(&BuildRequest {
        dir: spec.worktree,
        target_dir: Some(spec.target_dir),
        cargo_args: spec.config,
        // Incremental builds are what `cargo test` does for workspace
        // crates, and what the codegen-units setting of [`isolation`]
        // assumes; the runner's own environment must not turn them off.
        default_incremental: true,
    })
    .map_err(|source| ProgramError::Build {
        side: spec.side,
        commit: spec.commit.to_owned(),
        source,
    })?;
    check_fresh(spec, &built)?;
    if let Some(parent) = spec.copy_to.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|source| ProgramError::io("create the folder", parent, source))?;
    }
    std::fs::copy(&built, spec.copy_to)
        .map_err(|source| ProgramError::io("copy the measured program to", spec.copy_to, source))?;
    Ok(spec.copy_to.to_path_buf())
}

/// Refuses a binary older than the worktree it claims to come from: cargo
/// judged it up to date from another checkout's build (see the module
/// documentation), so it is not this commit's code.
fn check_fresh(spec: &BuildSpec<'_>, built: &Path) -> Result<(), ProgramError> {
    let modified = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|meta| meta.modified())
            .map_err(|source| ProgramError::io("read the time of", path, source))
    };
    let checked_out = modified(&spec.worktree.join("Cargo.toml"))?;
    if modified(built)? < checked_out {
        return Err(ProgramError::StaleBuild {
            side: spec.side,
            commit: spec.commit.to_owned(),
            binary: built.to_path_buf(),
            target_dir: spec.target_dir.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_settings_that_rule_out_renaming() {
        assert_eq!(profile_conflict("[workspace]\nmembers = []\n"), None);
        let this_project = "[profile.dev.package.\"*\"]\nopt-level = 3\n\
                            [profile.dev.package.harnesses]\nopt-level = 3\n\
                            [profile.release]\ndebug = \"line-tables-only\"\n";
        assert_eq!(profile_conflict(this_project), None);
        assert_eq!(
            profile_conflict("[profile.dev]\ncodegen-units = 1\n").as_deref(),
            Some("Cargo.toml sets profile.dev.codegen-units")
        );
        assert_eq!(
            profile_conflict("[profile.test.package.harnesses]\nincremental = false\n").as_deref(),
            Some("Cargo.toml sets profile.test.package.harnesses.incremental")
        );
        // A release profile is not what `cargo test` builds with.
        assert_eq!(
            profile_conflict("[profile.release]\ncodegen-units = 1\n"),
            None
        );
        assert_eq!(profile_conflict("not = [toml"), None);
    }
}
