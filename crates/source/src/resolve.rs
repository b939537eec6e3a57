//! Making cargo really use the patched crates in a scratch copy, or saying
//! precisely why it cannot.
//!
//! cargo's own behaviour is the trap here: a `[patch]` entry that does not
//! fit is *ignored*, with only a warning ("Patch `…` was not used in the
//! crate graph"), and the build silently uses crates.io's crate instead. A
//! measurement of that build would be a measurement of the wrong code. So:
//!
//! 1. every requirement on a patched crate in the unpatched graph is checked
//!    against the version the revision carries (`=0.3.47` rejects 0.3.48):
//!    a rejection is [`SourceError::PatchRejected`], naming the requirement
//!    and who states it. Only the requirements of the patch's own version
//!    line count when the graph has that line: the harnesses require rustls
//!    `^0.23` and, for their 0.24 generation, `=0.24.0-dev.1`, and a patch
//!    of rustls 0.24 replaces the second while crates.io's 0.23 stays for
//!    the first (a `[patch]` only takes the place of compatible versions).
//!    Without a version of the patch's line in the graph, every requirement
//!    counts: the patch has to replace one of them, and the message names
//!    the ones it cannot;
//! 2. where the version differs from the lock's, `cargo update -p
//!    <crate>@<locked> --precise <version>` with the patches moves the
//!    scratch copy's lock (the only way cargo takes a patch of another
//!    version);
//! 3. `cargo metadata` with the patches must then resolve every patched
//!    crate to its export folder, with no crates.io copy of the patch's
//!    version line left (another line may stay, as rustls 0.23 does beside a
//!    patched 0.24) and no "not used" warning; otherwise
//!    [`SourceError::PatchUnused`].
//!
//! Every `cargo metadata` runs with the harness build's features
//! ([`crate::features::harness_features`]): the graph is feature
//! dependent, and rustls 0.24 is only in it with `harnesses/rustls-0-24`.

use std::path::{Path, PathBuf};

use cargo_metadata::{DependencyKind, Metadata};

use crate::cargo::Cargo;
use crate::error::SourceError;
use crate::options::Options;
use crate::patch::{PatchSet, PatchedCrate};
use crate::process::{self, RunOptions};

/// How many lines of a failed cargo command an error shows.
const TAIL_LINES: usize = 20;

/// A version the scratch copy's lock was moved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockUpdate {
    pub krate: String,
    pub from: semver::Version,
    pub to: semver::Version,
}

/// Checks, updates and verifies (see the module documentation);
/// `features` are the harness build's `--features` arguments.
pub(crate) fn apply(
    cargo: &Cargo,
    scratch: &Path,
    sets: &[PatchSet],
    features: &[String],
    options: &Options,
) -> Result<Vec<LockUpdate>, SourceError> {
    let plain = metadata(cargo, scratch, features, options)?.0;
    let patched_names: Vec<&str> = sets
        .iter()
        .flat_map(|set| set.crates.iter().map(|krate| krate.name.as_str()))
        .collect();
    let mut updates = Vec::new();
    for set in sets {
        for krate in &set.crates {
            check_requirements(&plain, set, krate, &patched_names)?;
            let locked = locked_versions(&plain, &krate.name);
            if !locked.contains(&krate.version) {
                if let Some(from) = pick_locked(&locked, &krate.version) {
                    updates.push((set, krate, from));
                }
            }
        }
    }
    let args = crate::patch::cargo_args(sets)?;
    let mut done = Vec::new();
    for (set, krate, from) in updates {
        // An earlier update may have moved this crate along with its parent.
        if lock_has(scratch, &krate.name, &krate.version) {
            continue;
        }
        let spec = format!("{}@{from}", krate.name);
        let version = krate.version.to_string();
        let mut update_args = vec!["update", "-p", spec.as_str(), "--precise", version.as_str()];
        update_args.extend(args.iter().map(String::as_str));
        run_cargo(
            cargo,
            scratch,
            &update_args,
            options,
            &format!(
                "\n  (moving {} from {from} to {version} for {})",
                krate.name,
                set.describe()
            ),
        )?;
        done.push(LockUpdate {
            krate: krate.name.clone(),
            from,
            to: krate.version.clone(),
        });
    }
    let mut patched_args = args.clone();
    patched_args.extend(features.iter().cloned());
    let (patched, warnings) = metadata(cargo, scratch, &patched_args, options)?;
    verify_used(&patched, &warnings, sets)?;
    Ok(done)
}

/// Checks that cargo uses every crate of `sets` from its export, given
/// `cargo metadata`'s output with the patches and its diagnostic output.
pub fn verify_used(
    patched: &Metadata,
    warnings: &str,
    sets: &[PatchSet],
) -> Result<(), SourceError> {
    for set in sets {
        for krate in &set.crates {
            check_used(patched, warnings, set, krate)?;
        }
    }
    Ok(())
}

/// Refuses a version that a requirement in the unpatched graph rejects.
fn check_requirements(
    plain: &Metadata,
    set: &PatchSet,
    krate: &PatchedCrate,
    patched_names: &[&str],
) -> Result<(), SourceError> {
    let mut rejecting = Vec::new();
    let mut required = false;
    let found = requirements(plain, &krate.name);
    let own_line = found
        .iter()
        .any(|(_, _, resolved)| same_line(resolved, &krate.version));
    for (dependent, req, resolved) in found {
        // A patched crate's own requirements come from the export instead.
        if patched_names.contains(&dependent.name.as_str()) {
            continue;
        }
        // Another version line stays as it is beside the patch.
        if own_line && !same_line(resolved, &krate.version) {
            continue;
        }
        required = true;
        if !req.matches(&krate.version) {
            rejecting.push(format!(
                "`{req}` (required by {} {})",
                dependent.name.as_str(),
                dependent.version
            ));
        }
    }
    if !rejecting.is_empty() {
        return Err(SourceError::PatchRejected {
            library: set.library.name,
            revision: set.revision.clone(),
            krate: krate.name.clone(),
            version: krate.version.to_string(),
            requirement: rejecting.join(", "),
        });
    }
    if !required && locked_versions(plain, &krate.name).is_empty() {
        return Err(unused(
            set,
            krate,
            "nothing in this workspace's dependency graph uses it".to_owned(),
        ));
    }
    Ok(())
}

/// Every `(dependent package, requirement, version it resolved to)` on
/// `name` among the dependencies the resolved graph actually uses.
pub fn requirements<'m>(
    metadata: &'m Metadata,
    name: &str,
) -> Vec<(
    &'m cargo_metadata::Package,
    &'m semver::VersionReq,
    &'m semver::Version,
)> {
    let mut found = Vec::new();
    let Some(resolve) = &metadata.resolve else {
        return found;
    };
    let members = &metadata.workspace_members;
    for node in &resolve.nodes {
        let dependent = &metadata[&node.id];
        for edge in &node.deps {
            let resolved = &metadata[&edge.pkg];
            if resolved.name.as_str() != name {
                continue;
            }
            let kinds: Vec<DependencyKind> = edge.dep_kinds.iter().map(|info| info.kind).collect();
            for dependency in &dependent.dependencies {
                let counts =
                    dependency.kind != DependencyKind::Development || members.contains(&node.id);
                // A package can require two versions of a crate (the
                // harnesses: rustls 0.23, and 0.24 renamed and optional):
                // this edge resolved through the requirement its version
                // meets, not the other one.
                if dependency.name == name
                    && counts
                    && kinds.contains(&dependency.kind)
                    && dependency.req.matches(&resolved.version)
                {
                    found.push((dependent, &dependency.req, &resolved.version));
                }
            }
        }
    }
    found
}

/// The crates.io versions of `name` in the resolved graph.
fn locked_versions(metadata: &Metadata, name: &str) -> Vec<semver::Version> {
    let Some(resolve) = &metadata.resolve else {
        return Vec::new();
    };
    resolve
        .nodes
        .iter()
        .map(|node| &metadata[&node.id])
        .filter(|package| {
            package.name.as_str() == name
                && package.source.as_ref().is_some_and(|s| s.is_crates_io())
        })
        .map(|package| package.version.clone())
        .collect()
}

/// Whether two versions are on one version line, the way cargo's caret
/// requirements see it: the same major version, or below 1.0 the same
/// minor (below 0.1 the same patch). Pre-releases belong to their line
/// (0.24.0-dev.1 is 0.24).
pub fn same_line(a: &semver::Version, b: &semver::Version) -> bool {
    match (a.major, b.major) {
        (0, 0) if a.minor == 0 && b.minor == 0 => a.patch == b.patch,
        (0, 0) => a.minor == b.minor,
        (a, b) => a == b,
    }
}

/// The locked version to move: the one on `to`'s line, else the only one.
fn pick_locked(locked: &[semver::Version], to: &semver::Version) -> Option<semver::Version> {
    locked
        .iter()
        .find(|v| same_line(v, to))
        .or(if locked.len() == 1 {
            locked.first()
        } else {
            None
        })
        .cloned()
}

/// Whether the scratch `Cargo.lock` already has `name` at `version`.
fn lock_has(scratch: &Path, name: &str, version: &semver::Version) -> bool {
    let Ok(text) = std::fs::read_to_string(scratch.join("Cargo.lock")) else {
        return false;
    };
    let Ok(lock) = text.parse::<toml::Table>() else {
        return false;
    };
    lock.get("package")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .any(|package| {
            package.get("name").and_then(toml::Value::as_str) == Some(name)
                && package.get("version").and_then(toml::Value::as_str)
                    == Some(version.to_string().as_str())
        })
}

/// Refuses a patch cargo did not use: the crate must resolve only to its
/// export folder, and cargo must not have warned about it.
fn check_used(
    patched: &Metadata,
    warnings: &str,
    set: &PatchSet,
    krate: &PatchedCrate,
) -> Result<(), SourceError> {
    if let Some(line) = warnings.lines().find(|line| {
        line.contains("was not used in the crate graph")
            && line.contains(&format!("`{} v{}", krate.name, krate.version))
    }) {
        return Err(unused(set, krate, format!("cargo says: {}", line.trim())));
    }
    let Some(resolve) = &patched.resolve else {
        return Err(unused(
            set,
            krate,
            "cargo resolved no dependency graph".to_owned(),
        ));
    };
    let wanted = canonical(&krate.path);
    let mut from_export = false;
    for node in &resolve.nodes {
        let package = &patched[&node.id];
        if package.name.as_str() != krate.name {
            continue;
        }
        let folder = package
            .manifest_path
            .parent()
            .map(|p| canonical(p.as_std_path()));
        if folder.as_ref() == Some(&wanted) && package.version == krate.version {
            from_export = true;
        } else if same_line(&package.version, &krate.version) {
            return Err(unused(
                set,
                krate,
                format!(
                    "the graph still has {} {} from {}",
                    krate.name,
                    package.version,
                    package
                        .source
                        .as_ref()
                        .map_or_else(|| package.manifest_path.to_string(), ToString::to_string)
                ),
            ));
        }
    }
    if !from_export {
        return Err(unused(
            set,
            krate,
            "it is not in the resolved graph".to_owned(),
        ));
    }
    Ok(())
}

fn unused(set: &PatchSet, krate: &PatchedCrate, detail: String) -> SourceError {
    SourceError::PatchUnused {
        library: set.library.name,
        revision: set.revision.clone(),
        package: format!("{} {}", krate.name, krate.version),
        path: krate.path.clone(),
        detail,
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `cargo metadata` of the scratch copy with `args`: the parsed metadata
/// and cargo's diagnostic output (where "not used" warnings appear).
pub fn metadata(
    cargo: &Cargo,
    dir: &Path,
    args: &[String],
    options: &Options,
) -> Result<(Metadata, String), SourceError> {
    let mut all = vec![
        "metadata".to_owned(),
        "--format-version".to_owned(),
        "1".to_owned(),
        "--filter-platform".to_owned(),
        cargo.host().to_owned(),
    ];
    all.extend(args.iter().cloned());
    let finished = run_cargo(cargo, dir, &all, options, "")?;
    let text = std::str::from_utf8(&finished.stdout).map_err(|_| SourceError::Unexpected {
        command: finished.command.clone(),
        reason: "output that is not UTF-8".to_owned(),
    })?;
    let metadata =
        cargo_metadata::MetadataCommand::parse(text).map_err(|error| SourceError::Unexpected {
            command: finished.command.clone(),
            reason: error.to_string(),
        })?;
    Ok((metadata, finished.tail(200)))
}

fn run_cargo<S: AsRef<str>>(
    cargo: &Cargo,
    dir: &Path,
    args: &[S],
    options: &Options,
    context: &str,
) -> Result<process::Finished, SourceError> {
    let program = cargo.program(dir, args.iter().map(AsRef::as_ref));
    let finished = process::run(
        &program,
        &options.limits(options.timeouts.cargo),
        RunOptions {
            capture_stdout: true,
            ..RunOptions::default()
        },
    )?;
    if !finished.success() {
        return Err(SourceError::Cargo {
            command: finished.command.clone(),
            dir: dir.to_path_buf(),
            status: finished.status.to_string(),
            tail: finished.tail(TAIL_LINES),
            context: context.to_owned(),
        });
    }
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> semver::Version {
        semver::Version::parse(text).expect("version")
    }

    #[test]
    fn version_lines() {
        assert!(same_line(&v("0.24.0-dev.1"), &v("0.24.0")));
        assert!(same_line(&v("0.3.42"), &v("0.3.47")));
        assert!(!same_line(&v("0.23.46"), &v("0.24.0-dev.1")));
        assert!(!same_line(&v("0.0.1"), &v("0.0.2")));
        assert!(same_line(&v("1.19.0"), &v("1.2.0")));
        assert!(!same_line(&v("1.0.0"), &v("2.0.0")));
    }

    #[test]
    fn the_compatible_locked_version_is_moved() {
        assert_eq!(
            pick_locked(&[v("0.23.46")], &v("0.23.47")),
            Some(v("0.23.46"))
        );
        assert_eq!(
            pick_locked(&[v("0.22.4"), v("0.23.46")], &v("0.23.40")),
            Some(v("0.23.46"))
        );
        assert_eq!(pick_locked(&[v("1.0.0"), v("2.0.0")], &v("3.0.0")), None);
        assert_eq!(pick_locked(&[v("1.0.0")], &v("3.0.0")), Some(v("1.0.0")));
    }
}
