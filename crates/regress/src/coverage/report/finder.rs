//! Where the source of a profile's file is on this machine (its own path,
//! or a registry package's by the locked version), and its functions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::coverage::source::{self, Language, Span};
use crate::limits;

/// The largest source file read.
const MAX_SOURCE: u64 = 16 << 20;

/// Where the source of a profile's file is on this machine.
#[derive(Debug, Clone, Default)]
pub struct SourceFinder {
    /// `$CARGO_HOME/registry/src/*`.
    registries: Vec<PathBuf>,
    /// The versions of `aws-lc-sys` and `openssl-src` the harnesses were
    /// built with (their debug paths name no version, or a build folder
    /// that is gone).
    versions: BTreeMap<String, String>,
}

/// The packages whose sources are found in cargo's registry by version.
const PACKAGES: [&str; 2] = ["aws-lc-sys", "openssl-src"];

impl SourceFinder {
    /// Looks in cargo's registry (`CARGO_HOME`, else `~/.cargo`), for the
    /// versions of `aws-lc-sys` and `openssl-src` that `lock` (the text of
    /// a `Cargo.lock`) pins.
    pub fn new(lock: &str) -> SourceFinder {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
        let mut registries: Vec<PathBuf> = home
            .and_then(|home| std::fs::read_dir(home.join("registry/src")).ok())
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect();
        registries.sort();
        SourceFinder {
            registries,
            versions: locked_versions(lock),
        }
    }

    /// The source file of `path`, if it is on this machine.
    pub fn find(&self, path: &str) -> Option<PathBuf> {
        let direct = Path::new(path);
        if direct.is_absolute() && direct.is_file() {
            return Some(direct.to_path_buf());
        }
        let (package, rest) = if let Some(rest) = path.strip_prefix("/aws-lc/") {
            ("aws-lc-sys", format!("aws-lc/{rest}"))
        } else if let Some((_, rest)) = path.split_once("/openssl-build/build/src/") {
            ("openssl-src", format!("openssl/{rest}"))
        } else {
            return None;
        };
        if rest.split('/').any(|segment| segment == "..") {
            return None;
        }
        let version = self.versions.get(package)?;
        self.registries
            .iter()
            .map(|registry| registry.join(format!("{package}-{version}")).join(&rest))
            .find(|candidate| candidate.is_file())
    }
}

/// The versions of [`PACKAGES`] in the text of a `Cargo.lock`.
fn locked_versions(lock: &str) -> BTreeMap<String, String> {
    let mut versions = BTreeMap::new();
    let mut name: Option<&str> = None;
    for line in lock.lines() {
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"'));
        } else if let (Some(value), Some(package)) = (line.strip_prefix("version = "), name) {
            let version = value.trim_matches('"');
            if PACKAGES.contains(&package)
                && !version.is_empty()
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
            {
                versions.insert(package.to_owned(), version.to_owned());
            }
            name = None;
        }
    }
    versions
}

/// The functions of the source at `path` (none for a language whose
/// functions are not read, or a file that cannot be read).
pub fn spans_of(path: &Path) -> Option<Vec<Span>> {
    let language = Language::of(&path.to_string_lossy())?;
    let text = limits::read_capped(path, MAX_SOURCE).ok()?;
    Some(source::functions(&text, language))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_packages_are_found_in_the_locked_version() {
        let lock = "[[package]]\nname = \"aws-lc-sys\"\nversion = \"0.47.0\"\n\n\
                    [[package]]\nname = \"openssl-src\"\nversion = \"300.5.5+3.5.5\"\n\n\
                    [[package]]\nname = \"other\"\nversion = \"1.0.0\"\n";
        let versions = locked_versions(lock);
        assert_eq!(versions.len(), 2, "{versions:?}");
        assert_eq!(versions["openssl-src"], "300.5.5+3.5.5");
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir
            .path()
            .join("openssl-src-300.5.5+3.5.5/openssl/ssl/s3_lib.c");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, "int f(void) { return 0; }\n").expect("write");
        let finder = SourceFinder {
            registries: vec![dir.path().to_path_buf()],
            versions,
        };
        assert_eq!(
            finder.find(
                "/w/target/debug/build/openssl-sys-1/out/openssl-build/build/src/ssl/s3_lib.c"
            ),
            Some(file)
        );
        assert_eq!(
            finder.find("/w/out/openssl-build/build/src/../../etc/passwd"),
            None
        );
        assert_eq!(finder.find("/aws-lc/crypto/mem.c"), None);
    }
}
