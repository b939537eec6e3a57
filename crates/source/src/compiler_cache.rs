//! A C compiler cache for the builds of library revisions: `ccache`, under
//! `target/regress-source/ccache/`, so an edit of one `.c` file recompiles
//! that file alone.
//!
//! s2n-tls-sys's build script compiles every C file of the library each
//! time it runs, and it runs whenever a file of its package changed: one
//! edit recompiled all of s2n-tls. With the cache, the files that did not
//! change come out of it.
//!
//! The cache is in *masquerade* mode: a folder of links named `clang`,
//! `cc`, `gcc`, `clang++`, `c++` and `g++`, all pointing at `ccache`, goes
//! first on the build's `PATH`. A build script that runs `clang` runs
//! ccache, which runs the real `clang` (the next one on `PATH`) with the
//! same arguments, or hands back the object that exact command produced
//! before. Nothing else changes: no `CC` is set (s2n-tls-sys picks clang
//! and LTO only when `CC` is not pinned), the command lines and the working
//! folder are the compiler's own, so the objects, and the measured program,
//! are byte for byte the ones an uncached build makes
//! (`scripts/compiler-cache-check.sh` checks it). ccache keys each object
//! on the compiler (its size and time), the arguments, the working folder
//! and the preprocessed source; a cached object is never reused for
//! different input.
//!
//! No ccache on `PATH`, or [`ENV_COMPILER_CACHE`]`=off`: builds run as
//! before. `scripts/install-deps.sh` installs ccache.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use regress_process::Program;

use crate::dirs::SourceDirs;
use crate::error::SourceError;

/// `off` builds without the compiler cache.
pub const ENV_COMPILER_CACHE: &str = "REGRESS_COMPILER_CACHE";

/// The compiler names the cache stands in for.
const COMPILERS: [&str; 6] = ["clang", "clang++", "cc", "c++", "gcc", "g++"];

/// The most the cache may hold; ccache evicts the oldest beyond it.
const MAX_SIZE: &str = "5G";

/// The cache, ready to put on a build's `PATH`.
#[derive(Debug, Clone)]
pub struct CompilerCache {
    /// The folder of links named after the compilers.
    links: PathBuf,
    /// ccache's own folder (`CCACHE_DIR`).
    store: PathBuf,
}

impl CompilerCache {
    /// The cache under `dirs`' state folder, its links made; `None` when it
    /// is turned off or ccache is not installed.
    pub fn prepare(dirs: &SourceDirs) -> Result<Option<CompilerCache>, SourceError> {
        if std::env::var(ENV_COMPILER_CACHE).is_ok_and(|value| value.trim() == "off") {
            return Ok(None);
        }
        let Some(ccache) = find_on_path("ccache") else {
            return Ok(None);
        };
        let root = dirs.state().join("ccache");
        let links = root.join("bin");
        std::fs::create_dir_all(&links)
            .map_err(|error| SourceError::io("create", &links, error))?;
        for compiler in COMPILERS {
            let link = links.join(compiler);
            match std::fs::read_link(&link) {
                Ok(target) if target == ccache => continue,
                Ok(_) => {
                    std::fs::remove_file(&link)
                        .map_err(|error| SourceError::io("replace", &link, error))?;
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(SourceError::io("read the link", &link, error)),
            }
            std::os::unix::fs::symlink(&ccache, &link)
                .map_err(|error| SourceError::io("create the link", &link, error))?;
        }
        Ok(Some(CompilerCache {
            links,
            store: root.join("store"),
        }))
    }

    /// `program` with the cache first on its `PATH`.
    pub fn apply(&self, program: Program) -> Program {
        let mut path = OsString::from(self.links.as_os_str());
        if let Some(rest) = std::env::var_os("PATH").filter(|rest| !rest.is_empty()) {
            path.push(":");
            path.push(rest);
        }
        program
            .env("PATH", path)
            .env("CCACHE_DIR", &self.store)
            .env("CCACHE_MAXSIZE", MAX_SIZE)
            // The user's own ccache settings do not apply here: the
            // defaults keep objects identical to an uncached build's.
            .env("CCACHE_CONFIGPATH", self.store.join("ccache.conf"))
            .env_remove("CCACHE_BASEDIR")
            .env_remove("CCACHE_NOHASHDIR")
            .env_remove("CCACHE_SLOPPINESS")
            .env_remove("CCACHE_DISABLE")
            .env_remove("CCACHE_PREFIX")
    }

    /// ccache's folder.
    pub fn store(&self) -> &Path {
        &self.store
    }
}

/// The first executable `name` on `PATH`, its links resolved.
fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
        .and_then(|found| std::fs::canonicalize(found).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With ccache installed, the links are made (and made again when one
    /// points elsewhere), and the build's PATH starts with them.
    #[test]
    fn links_name_every_compiler_and_lead_the_path() {
        let Some(ccache) = find_on_path("ccache") else {
            eprintln!("skipped: no ccache on PATH");
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let dirs = SourceDirs::new(dir.path()).expect("dirs");
        let links = dirs.state().join("ccache/bin");
        std::fs::create_dir_all(&links).expect("mkdir");
        std::os::unix::fs::symlink("/bin/true", links.join("clang")).expect("link");
        let cache = CompilerCache::prepare(&dirs)
            .expect("prepare")
            .expect("ccache is installed");
        for compiler in COMPILERS {
            assert_eq!(
                std::fs::read_link(links.join(compiler)).expect("link"),
                ccache
            );
        }
        // What a build sees: the links first on its PATH, ccache's folder
        // under the state folder.
        let finished = regress_process::run(
            &cache.apply(Program::new("env")),
            &crate::Options::default().git_limits(),
            regress_process::RunOptions {
                capture_stdout: true,
                ..regress_process::RunOptions::default()
            },
        )
        .expect("env runs");
        let environment = finished.stdout_text();
        let expected_path = format!("PATH={}:", links.display());
        assert!(
            environment
                .lines()
                .any(|line| line.starts_with(&expected_path)),
            "{environment}"
        );
        assert!(
            environment
                .lines()
                .any(|line| line == format!("CCACHE_DIR={}", cache.store().display())),
            "{environment}"
        );
        // And through it, `cc` is still the compiler.
        let version = regress_process::run(
            &cache.apply(Program::new("cc").arg("--version")),
            &crate::Options::default().git_limits(),
            regress_process::RunOptions {
                capture_stdout: true,
                ..regress_process::RunOptions::default()
            },
        )
        .expect("cc runs through ccache");
        assert!(version.success(), "{}", version.tail(10));
    }
}
