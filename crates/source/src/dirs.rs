//! Where this crate writes: only under this workspace's `target/`.
//!
//! ```text
//! target/regress-source/
//!   exports/<library>/<key>/     one revision's source tree (+ export.json)
//!   scratch/<id>/                a copy of this workspace for one patch set
//!   generate-target/             cargo target of s2n-tls's binding generator
//!   target/                      the harness builds of both sides (shared)
//!   logs/                        output of generation steps and builds
//! ```

use std::path::{Path, PathBuf};

use crate::error::SourceError;

/// The folders of one workspace's from-source builds.
#[derive(Debug, Clone)]
pub struct SourceDirs {
    workspace: PathBuf,
    state: PathBuf,
}

impl SourceDirs {
    /// `<workspace>/target/regress-source`.
    pub fn new(workspace: &Path) -> Result<SourceDirs, SourceError> {
        SourceDirs::named(workspace, "regress-source")
    }

    /// `<workspace>/target/<name>`: tests use folders of their own. `name`
    /// is one plain path component.
    pub fn named(workspace: &Path, name: &str) -> Result<SourceDirs, SourceError> {
        let workspace = std::fs::canonicalize(workspace)
            .map_err(|source| SourceError::io("find the workspace", workspace, source))?;
        if !crate::manifest::is_crate_name(name) {
            return Err(SourceError::OutsideTarget {
                path: PathBuf::from(name),
                target: workspace.join("target"),
            });
        }
        let dirs = SourceDirs {
            state: workspace.join("target").join(name),
            workspace,
        };
        std::fs::create_dir_all(&dirs.state)
            .map_err(|source| SourceError::io("create", &dirs.state, source))?;
        Ok(dirs)
    }

    /// The workspace whose harnesses are built.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The folder everything else is in.
    pub fn state(&self) -> &Path {
        &self.state
    }

    pub fn exports(&self, library: &str) -> PathBuf {
        self.state.join("exports").join(library)
    }

    pub fn scratch(&self) -> PathBuf {
        self.state.join("scratch")
    }

    pub fn generate_target(&self) -> PathBuf {
        self.state.join("generate-target")
    }

    /// The default cargo target folder of harness builds, shared by both
    /// sides so that unpatched dependencies (aws-lc-sys: minutes) build once.
    pub fn build_target(&self) -> PathBuf {
        self.state.join("target")
    }

    pub fn logs(&self) -> Result<PathBuf, SourceError> {
        let logs = self.state.join("logs");
        std::fs::create_dir_all(&logs)
            .map_err(|source| SourceError::io("create", &logs, source))?;
        Ok(logs)
    }
}
