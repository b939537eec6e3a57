//! Where the project's files live: committed baselines, generated outputs.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Overrides where the workspace root is (by default: the nearest ancestor
/// holding both `Cargo.lock` and `baselines/`).
pub const ENV_ROOT: &str = "REGRESS_ROOT";

/// The project's root folder and the folders the runner reads and writes.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    pub fn new(root: impl Into<PathBuf>) -> Workspace {
        Workspace { root: root.into() }
    }

    /// Finds the root from `REGRESS_ROOT`, else from `CARGO_MANIFEST_DIR`
    /// (set by `cargo test` and `cargo run`), else from the current folder.
    pub fn discover() -> Result<Workspace> {
        if let Some(root) = std::env::var_os(ENV_ROOT).filter(|root| !root.is_empty()) {
            return Ok(Workspace::new(root));
        }
        let start = match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => std::env::current_dir()
                .map_err(|source| Error::io("read the current folder", ".", source))?,
        };
        Workspace::find_from(&start).ok_or(Error::NoWorkspace { start })
    }

    /// The nearest ancestor of `start` (itself included) that is a root.
    pub fn find_from(start: &Path) -> Option<Workspace> {
        start
            .ancestors()
            .find(|dir| dir.join("Cargo.lock").is_file() && dir.join("baselines").is_dir())
            .map(Workspace::new)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Committed baselines, one JSON file per harness.
    pub fn baselines_dir(&self) -> PathBuf {
        self.root.join("baselines")
    }

    /// Generated profiles, annotations and run records (ignored by git).
    pub fn perf_outputs_dir(&self) -> PathBuf {
        self.root.join("perf_outputs")
    }

    pub fn cargo_lock(&self) -> PathBuf {
        self.root.join("Cargo.lock")
    }

    /// A path relative to the root when it is inside it, for messages.
    pub fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// The file-name form of a harness name: `s2n_tls::handshake` becomes
/// `s2n_tls.handshake` (colons are not portable in file names).
pub fn file_stem(harness: &str) -> String {
    harness.replace("::", ".")
}

/// Checks a harness name is `<library>::<path>` of lower-case words, so that
/// file names, test filters and report keys built from it are safe.
pub fn validate_harness_name(name: &str) -> Result<()> {
    let parts: Vec<&str> = name.split("::").collect();
    let word = |part: &&str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    if parts.len() >= 2 && parts.iter().all(word) {
        Ok(())
    } else {
        Err(Error::HarnessName {
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_and_names() {
        assert_eq!(
            file_stem("s2n_tls::handshake_rsa4096"),
            "s2n_tls.handshake_rsa4096"
        );
        assert!(validate_harness_name("s2n_tls::handshake_rsa4096").is_ok());
        assert!(validate_harness_name("calibration::spin_1m").is_ok());
        assert!(validate_harness_name("handshake").is_err());
        assert!(validate_harness_name("s2n_tls::").is_err());
        assert!(validate_harness_name("../etc::passwd").is_err());
        assert!(validate_harness_name("A::b").is_err());
    }

    #[test]
    fn finds_the_root_from_below() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("Cargo.lock"), "").expect("write");
        std::fs::create_dir(dir.path().join("baselines")).expect("mkdir");
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&deep).expect("mkdir");
        let found = Workspace::find_from(&deep).expect("root");
        assert_eq!(found.root(), dir.path());
        assert!(Workspace::find_from(Path::new("/")).is_none());
    }
}
