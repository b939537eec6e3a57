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

#[cfg(test)]
mod tests {
    use super::*;

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
