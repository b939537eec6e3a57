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
//! 4. The workspace crates the measured program does not link (the runner's:
//!    `regress` and the crates only it uses, which the harness tests need as
//!    dev-dependencies) are built at `opt-level` 0: the revision's test
//!    binary is never run, only its program is measured, and unoptimised
//!    they compile in a fraction of the time. Which crates those are is read
//!    from the revision's manifests (`unlinked_members`).
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
    let unlinked = unlinked_members(worktree, &members);
    let mut config = Vec::new();
    for member in &members {
        config.extend([
            "--config".to_owned(),
            format!("profile.dev.package.\"{member}\".codegen-units={INCREMENTAL_CODEGEN_UNITS}"),
        ]);
    }
    // The runner's crates are built for the harness tests, which a revision
    // build never runs (it measures the program): unoptimised, they compile
    // in a fraction of the time, and the program does not link them.
    for member in &unlinked {
        config.extend([
            "--config".to_owned(),
            format!("profile.dev.package.\"{member}\".opt-level=0"),
        ]);
    }
    Ok(Isolation::Renamed(config))
}

/// The workspace members the measured program does not link: not
/// [`PROGRAM_PACKAGE`], and not reached from it through normal or build
/// dependencies on path crates (read from the manifests: a normal or build
/// dependency with a `path`, or `workspace = true` naming one in
/// `[workspace.dependencies]`). Their optimisation level cannot change the
/// program. Anything this reading does not understand (a member glob, a
/// manifest that does not parse, no program package) gives none, and the
/// build is the plain one.
fn unlinked_members(worktree: &Path, members: &[String]) -> Vec<String> {
    linked_members(worktree)
        .map(|linked| {
            members
                .iter()
                .filter(|member| !linked.contains(member.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The package names of the members [`PROGRAM_PACKAGE`] links, itself
/// included; `None` when the manifests say something this cannot follow.
fn linked_members(root: &Path) -> Option<std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let read = |dir: &Path| -> Option<toml::Table> {
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .ok()?
            .parse::<toml::Table>()
            .ok()
    };
    let manifest = read(root)?;
    let workspace = manifest.get("workspace")?.as_table()?;
    // Member folders by package name, and the workspace's path dependencies.
    let mut by_name: BTreeMap<String, (std::path::PathBuf, toml::Table)> = BTreeMap::new();
    for member in workspace.get("members")?.as_array()? {
        let relative = member.as_str()?;
        if relative.contains(['*', '?', '[']) || relative.split('/').any(|part| part == "..") {
            return None;
        }
        let dir = root.join(relative);
        let member_manifest = read(&dir)?;
        let name = member_manifest
            .get("package")?
            .get("name")?
            .as_str()?
            .to_owned();
        by_name.insert(name, (dir, member_manifest));
    }
    let workspace_paths: BTreeMap<&str, std::path::PathBuf> = workspace
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|table| {
            table
                .iter()
                .filter_map(|(key, value)| {
                    let path = value.get("path")?.as_str()?;
                    Some((key.as_str(), root.join(path)))
                })
                .collect()
        })
        .unwrap_or_default();
    let name_of = |dir: &Path| -> Option<String> {
        let wanted = dir.canonicalize().ok()?;
        by_name
            .iter()
            .find(|(_, (member, _))| member.canonicalize().ok().as_deref() == Some(&wanted))
            .map(|(name, _)| name.clone())
    };
    let linked_dependencies = |dir: &Path, manifest: &toml::Table| -> Vec<std::path::PathBuf> {
        let mut tables: Vec<&toml::Table> = Vec::new();
        for kind in ["dependencies", "build-dependencies"] {
            if let Some(table) = manifest.get(kind).and_then(toml::Value::as_table) {
                tables.push(table);
            }
        }
        if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
            for target in targets.values().filter_map(toml::Value::as_table) {
                for kind in ["dependencies", "build-dependencies"] {
                    if let Some(table) = target.get(kind).and_then(toml::Value::as_table) {
                        tables.push(table);
                    }
                }
            }
        }
        let mut paths = Vec::new();
        for table in tables {
            for (key, value) in table {
                if let Some(path) = value.get("path").and_then(toml::Value::as_str) {
                    paths.push(dir.join(path));
                } else if value.get("workspace").and_then(toml::Value::as_bool) == Some(true) {
                    if let Some(path) = workspace_paths.get(key.as_str()) {
                        paths.push(path.clone());
                    }
                }
            }
        }
        paths
    };
    let mut linked = BTreeSet::new();
    let mut queue = vec![super::PROGRAM_PACKAGE.to_owned()];
    if !by_name.contains_key(super::PROGRAM_PACKAGE) {
        return None;
    }
    while let Some(name) = queue.pop() {
        if !linked.insert(name.clone()) {
            continue;
        }
        let (dir, manifest) = by_name.get(&name)?;
        for path in linked_dependencies(dir, manifest) {
            // A path crate outside the workspace is not a member to rename.
            if let Some(member) = name_of(&path) {
                queue.push(member);
            }
        }
    }
    Some(linked)
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

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn package(root: &Path, dir: &str, name: &str, dependencies: &str) {
        write(
            &root.join(dir).join("Cargo.toml"),
            &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n\n{dependencies}"),
        );
    }

    /// Only the members the program reaches through normal and build
    /// dependencies are linked; the runner, reached only through the
    /// program's dev-dependencies, is not.
    #[test]
    fn the_members_the_program_does_not_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(
            &root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"harnesses\", \"crates/measure\", \"crates/runner\", \
             \"crates/gen\", \"crates/process\"]\n\
             [workspace.dependencies]\nmeasure = { path = \"crates/measure\" }\n\
             runner = { path = \"crates/runner\" }\nserde = \"1\"\n",
        );
        package(
            root,
            "harnesses",
            "harnesses",
            "[dependencies]\nmeasure = { workspace = true }\nserde = { workspace = true }\n\
             [build-dependencies]\ngen = { path = \"../crates/gen\" }\n\
             [dev-dependencies]\nrunner = { workspace = true }\n",
        );
        package(root, "crates/measure", "measure", "");
        package(root, "crates/gen", "gen", "");
        package(
            root,
            "crates/runner",
            "runner",
            "[dependencies]\nmeasure = { workspace = true }\nprocess = { path = \"../process\" }\n",
        );
        package(root, "crates/process", "process", "");
        let members: Vec<String> = ["harnesses", "measure", "runner", "gen", "process"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(unlinked_members(root, &members), vec!["runner", "process"]);

        // A member glob is not followed: no member is taken as unlinked.
        write(
            &root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"harnesses\", \"crates/*\"]\n",
        );
        assert!(unlinked_members(root, &members).is_empty());
    }

    /// This project as it is: the program links the measure crate, not the
    /// runner's.
    #[test]
    fn this_workspace_links_measure_and_not_the_runner() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let linked = linked_members(&root).expect("this workspace's manifests");
        assert!(
            linked.contains("harnesses") && linked.contains("regress-measure"),
            "{linked:?}"
        );
        for runner in [
            "regress",
            "regress-source",
            "regress-profile",
            "regress-process",
        ] {
            assert!(!linked.contains(runner), "{runner} in {linked:?}");
        }
    }

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
