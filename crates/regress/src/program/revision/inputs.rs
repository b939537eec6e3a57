//! What a revision's program depends on besides the revision: the key of a
//! kept build.
//!
//! The compilers first: rustc (as it runs in the folder the build runs in,
//! so a `rust-toolchain.toml` is honoured) and the C compilers the `cc`
//! crate picks (`cc`, and `clang`, which s2n-tls-sys prefers when it is
//! installed: installing it moved s2n-tls counts by up to 27 %). Then, for
//! builds of a library against this workspace's harnesses, the harness
//! sources: every file of the workspace that can reach the program, so an
//! edited harness is rebuilt. Files that cannot (`baselines/` with its `history/`,
//! documentation, scripts, workflows) are left out, or each history
//! record written would invalidate every kept build.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use regress_source::git::Git;
use regress_source::process::Limits;
use sha2::{Digest, Sha256};

use super::error::{RevisionError, GIT_DETAIL_LINES};
use crate::process::{self, Role};

/// Folders and files of this workspace that never reach the program.
const NOT_BUILD_INPUTS: &[&str] = &[
    "baselines/",
    "perf_outputs/",
    "scripts/",
    ".github/",
    ".ci/",
    "docs/",
];

/// The inputs of builds, hashed.
#[derive(Debug, Clone)]
pub struct BuildInputs {
    hash: Sha256,
}

impl BuildInputs {
    /// The compilers as they run in `dir`.
    pub fn compilers(dir: &Path) -> Result<BuildInputs, RevisionError> {
        let mut hash = Sha256::new();
        for (program, args) in [
            ("rustc", &["-vV"][..]),
            ("cc", &["--version"][..]),
            ("clang", &["--version"][..]),
        ] {
            let mut command = Command::new(program);
            command.args(args).current_dir(dir);
            // A compiler that is not installed is an input too (s2n-tls-sys
            // falls back to GCC without clang).
            let text = match process::output(
                command,
                Path::new(program),
                Duration::from_secs(60),
                1 << 20,
                Role::Work,
            ) {
                Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
                Err(process::ProcessError::Interrupted) => {
                    return Err(process::ProcessError::Interrupted.into())
                }
                Err(_) => "absent".to_owned(),
            };
            update(&mut hash, program.as_bytes());
            update(&mut hash, text.as_bytes());
        }
        Ok(BuildInputs { hash })
    }

    /// Adds the files of the workspace at `root` that can reach the
    /// measured program (tracked and untracked-but-not-ignored, as a
    /// scratch copy takes them), by content.
    pub fn with_workspace(mut self, root: &Path) -> Result<BuildInputs, RevisionError> {
        let limits = Limits {
            cancelled: Some(process::interrupted),
            ..Limits::new(Duration::from_secs(120))
        };
        let finished = Git::work_tree(root, limits).try_run([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])?;
        if !finished.success() {
            return Err(RevisionError::Git {
                args: "ls-files".to_owned(),
                dir: root.to_path_buf(),
                detail: finished.tail(GIT_DETAIL_LINES),
            });
        }
        let mut files: Vec<&[u8]> = finished
            .stdout
            .split(|b| *b == 0)
            .filter(|name| !name.is_empty())
            .filter(|name| is_build_input(&String::from_utf8_lossy(name)))
            .collect();
        files.sort();
        for name in files {
            let path = root.join(String::from_utf8_lossy(name).as_ref());
            // Deleted in the working tree: absent from a scratch copy too.
            let Ok(content) = std::fs::read(&path) else {
                continue;
            };
            update(&mut self.hash, name);
            update(&mut self.hash, &content);
        }
        Ok(self)
    }

    /// The key of a build of `parts` (kind, revision, features) with these
    /// inputs: 32 hex digits.
    pub fn key(&self, parts: &[&str]) -> String {
        let mut hash = self.hash.clone();
        for part in parts {
            update(&mut hash, part.as_bytes());
        }
        hash.finalize()[..16]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

fn update(hash: &mut Sha256, bytes: &[u8]) {
    hash.update((bytes.len() as u64).to_le_bytes());
    hash.update(bytes);
}

/// Whether the workspace file `name` can reach the measured program.
fn is_build_input(name: &str) -> bool {
    !NOT_BUILD_INPUTS
        .iter()
        .any(|prefix| name.starts_with(prefix))
        && !name.ends_with(".md")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_and_documents_are_not_build_inputs() {
        for name in ["harnesses/src/lib.rs", "Cargo.lock", ".cargo/config.toml"] {
            assert!(is_build_input(name), "{name}");
        }
        for name in [
            "baselines/history/s2n-tls/0.3.47.json",
            "README.md",
            "baselines/a.b.json",
            "docs/schemas/baseline.schema.json",
        ] {
            assert!(!is_build_input(name), "{name}");
        }
    }

    #[test]
    fn keys_follow_every_part() {
        let inputs = BuildInputs {
            hash: Sha256::new(),
        };
        assert_ne!(inputs.key(&["a", "bc"]), inputs.key(&["ab", "c"]));
        assert_eq!(inputs.key(&["a"]), inputs.key(&["a"]));
        assert_eq!(inputs.key(&["a"]).len(), 32);
    }
}
