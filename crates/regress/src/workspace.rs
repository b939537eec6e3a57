//! Where the project's files live: committed baselines, generated outputs.

use std::path::{Path, PathBuf};

use crate::measure::cpu_profile::CpuProfile;
use crate::measure::{MeasureError, Result};
pub use regress_source::paths::inside;

/// The project's root folder and the folders the runner reads and writes,
/// seen under one CPU profile: each profile's outputs have a folder of
/// their own, so that no command ever reads one profile's records as
/// another's.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    cpu: CpuProfile,
}

impl Workspace {
    /// The workspace at `root`, under the default CPU profile.
    pub fn new(root: impl Into<PathBuf>) -> Workspace {
        Workspace {
            root: root.into(),
            cpu: CpuProfile::Default,
        }
    }

    /// The same workspace under the CPU profile `cpu`.
    pub fn with_cpu(mut self, cpu: CpuProfile) -> Workspace {
        self.cpu = cpu;
        self
    }

    /// The CPU profile whose outputs this workspace reads and writes.
    pub fn cpu(&self) -> CpuProfile {
        self.cpu
    }

    /// Finds the root from `REGRESS_ROOT`, else from `CARGO_MANIFEST_DIR`
    /// (set by `cargo test` and `cargo run`), else from the current folder;
    /// the CPU profile from `REGRESS_CPU`.
    pub fn discover() -> Result<Workspace> {
        Ok(Workspace::find_root()?.with_cpu(CpuProfile::from_env()?))
    }

    fn find_root() -> Result<Workspace> {
        let workspace = match std::env::var_os(crate::env::ROOT).filter(|root| !root.is_empty()) {
            Some(root) => Workspace::from_variable(PathBuf::from(root))?,
            None => {
                let start = match std::env::var_os("CARGO_MANIFEST_DIR") {
                    Some(dir) => PathBuf::from(dir),
                    None => std::env::current_dir().map_err(|source| {
                        MeasureError::io("read the current folder", ".", source)
                    })?,
                };
                Workspace::find_from(&start).ok_or(MeasureError::NoWorkspace { start })?
            }
        };
        workspace.check_own_folders()?;
        Ok(workspace)
    }

    /// The root `REGRESS_ROOT` names, which must be what discovery would
    /// find: a folder holding `Cargo.lock` and `baselines/`.
    fn from_variable(root: PathBuf) -> Result<Workspace> {
        let bad = |problem: &str| MeasureError::BadRoot {
            value: root.clone(),
            problem: problem.to_owned(),
        };
        match std::fs::metadata(&root) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad("does not exist"))
            }
            Err(error) => return Err(bad(&format!("cannot be read ({error})"))),
            Ok(meta) if !meta.is_dir() => {
                return Err(bad("is not a folder (it is a file or another non-folder)"))
            }
            Ok(_) => {}
        }
        if !root.join("Cargo.lock").is_file() {
            return Err(bad("is not a workspace: it has no Cargo.lock"));
        }
        if !root.join("baselines").is_dir() {
            return Err(bad("is not a workspace: it has no baselines/ folder"));
        }
        Ok(Workspace::new(root))
    }

    /// The folders the runner writes in (`baselines/`, `perf_outputs/`,
    /// `target/`) must be real folders of the project, not links that lead
    /// elsewhere: the runner writes, moves and deletes only inside its own
    /// folders ([`Workspace::own`]).
    fn check_own_folders(&self) -> Result<()> {
        for folder in ["baselines", "perf_outputs", "target"] {
            self.own(Path::new(folder))?;
        }
        // A bless killed outright left its half-made set beside baselines/
        // (which is whole, old or new): it goes.
        crate::atomic_file::recover_folder(&self.baselines_dir());
        Ok(())
    }

    /// `relative` below the root, checked before the runner writes, moves
    /// or removes it: no link and nothing but folders on the way
    /// ([`regress_source::paths::inside`], the one check every writer
    /// uses).
    pub fn own(&self, relative: &Path) -> Result<PathBuf> {
        inside(&self.root, relative).map_err(|error| MeasureError::UnsafePath {
            path: self.root.join(relative),
            reason: error.to_string(),
        })
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

    /// Generated profiles, annotations and run records (ignored by git):
    /// `perf_outputs/` for the default CPU profile, `perf_outputs/cpu-NAME/`
    /// for another.
    pub fn perf_outputs_dir(&self) -> PathBuf {
        let outputs = self.root.join("perf_outputs");
        match self.cpu.output_folder() {
            Some(folder) => outputs.join(folder),
            None => outputs,
        }
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

    #[test]
    fn each_cpu_profile_has_its_own_outputs() {
        let workspace = Workspace::new("/p");
        assert_eq!(workspace.perf_outputs_dir(), Path::new("/p/perf_outputs"));
        let no_avx = workspace.clone().with_cpu(CpuProfile::NoAvx);
        assert_eq!(
            no_avx.perf_outputs_dir(),
            Path::new("/p/perf_outputs/cpu-no-avx")
        );
        // Baselines are shared: entries differ by fingerprint.
        assert_eq!(no_avx.baselines_dir(), workspace.baselines_dir());
    }
}
