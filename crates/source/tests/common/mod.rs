//! Test repositories in the libraries' real layouts, built at test time
//! from the crate sources already in the cargo registry (found with
//! `cargo metadata` on this workspace), and a snapshot of a repository to
//! prove that nothing touched it. No copy of an upstream repository is
//! used or committed.

#![allow(dead_code)]

pub mod repos;
pub mod snapshot;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use regress_source::{Options, SourceDirs};

/// This workspace's root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// A state folder of the test's own under `target/`, so tests do not share
/// scratch copies with each other or with `regress`.
/// It starts empty (a test proves what one run does) but for the cargo
/// target folder of harness builds, kept so a second run does not compile
/// aws-lc and s2n-tls again.
pub fn dirs(name: &str) -> SourceDirs {
    let name = format!("regress-source-test-{name}");
    let state = workspace().join("target").join(&name);
    if let Ok(entries) = std::fs::read_dir(&state) {
        for entry in entries {
            let entry = entry.expect("entry");
            if entry.file_name() != "target" {
                std::fs::remove_dir_all(entry.path()).expect("remove the previous run's state");
            }
        }
    }
    SourceDirs::named(&workspace(), &name).expect("dirs")
}

pub fn options() -> Options {
    Options::default()
}

/// The version of `name` this workspace's `Cargo.lock` holds (one).
pub fn locked_version(name: &str) -> String {
    let lock: toml::Table = std::fs::read_to_string(workspace().join("Cargo.lock"))
        .expect("Cargo.lock")
        .parse()
        .expect("lock TOML");
    let versions: Vec<&str> = lock["package"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| package["name"].as_str() == Some(name))
        .filter_map(|package| package["version"].as_str())
        .collect();
    assert_eq!(versions.len(), 1, "{name}: {versions:?}");
    versions[0].to_owned()
}

/// Where the registry unpacked `name` `version` for this workspace.
pub fn registry_source(name: &str, version: &str) -> PathBuf {
    static PACKAGES: OnceLock<Vec<(String, String, PathBuf)>> = OnceLock::new();
    let packages = PACKAGES.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let output = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--locked"])
            .current_dir(workspace())
            .output()
            .expect("cargo metadata");
        assert!(output.status.success(), "{output:?}");
        let metadata: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("metadata JSON");
        metadata["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|package| {
                let manifest = PathBuf::from(package["manifest_path"].as_str().expect("path"));
                (
                    package["name"].as_str().expect("name").to_owned(),
                    package["version"].as_str().expect("version").to_owned(),
                    manifest.parent().expect("folder").to_path_buf(),
                )
            })
            .collect()
    });
    packages
        .iter()
        .find(|(n, v, _)| n == name && v == version)
        .map(|(_, _, dir)| dir.clone())
        .unwrap_or_else(|| panic!("{name} {version} is not in this workspace's graph"))
}

/// Runs git in `dir` with a fixed identity and dates (so the same content
/// gives the same commits) and returns its trimmed output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=regress test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "protocol.file.allow=always",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?} in {}: {output:?}",
        dir.display()
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Copies a file or folder (following nothing: the registry has no links).
pub fn copy(from: &Path, to: &Path) {
    let meta = std::fs::metadata(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    if meta.is_dir() {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read_dir") {
            let entry = entry.expect("entry");
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(from, to).expect("copy");
    }
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Replaces the first occurrence of `from` in the file at `path`.
pub fn replace_in(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}
