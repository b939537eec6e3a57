//! Reading a crate's name and version from a manifest in an export.
//!
//! The manifest comes from the user's repository (or from whoever wrote the
//! revision), so it is read as untrusted input: bounded in size, parsed as
//! TOML, the name checked against cargo's character set and the version
//! against semver, before either is put into a cargo argument or a message.

use std::path::{Path, PathBuf};

/// The largest manifest read (s2n-tls's is 2 KiB, rustls's workspace 4).
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// The longest crate name or version string accepted.
const MAX_FIELD_CHARS: usize = 64;

/// A crate name as cargo allows it: ASCII letters, digits, `-` and `_`.
pub fn is_crate_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_FIELD_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The versions of `krate` a parsed `Cargo.lock` holds, in its order
/// (versions that are not semver are left out).
pub fn locked_versions(lock: &toml::Table, krate: &str) -> Vec<semver::Version> {
    lock.get("package")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|package| package.get("name").and_then(toml::Value::as_str) == Some(krate))
        .filter_map(|package| package.get("version")?.as_str())
        .filter_map(|version| semver::Version::parse(version).ok())
        .collect()
}

/// A package's identity from its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageId {
    pub name: String,
    pub version: semver::Version,
}

/// Reads the `[package]` name and version of `dir/Cargo.toml`, following
/// `version.workspace = true` to the workspace root, which is looked for no
/// higher than `top` (the export's root).
pub fn read_package(dir: &Path, top: &Path) -> Result<PackageId, (PathBuf, String)> {
    let path = dir.join("Cargo.toml");
    let manifest = read_table(&path)?;
    let fail = |reason: String| (path.clone(), reason);
    let package = manifest
        .get("package")
        .and_then(toml::Value::as_table)
        .ok_or_else(|| fail("it has no [package] table".to_owned()))?;
    let name = package
        .get("name")
        .and_then(toml::Value::as_str)
        .ok_or_else(|| fail("package.name is missing or not a string".to_owned()))?;
    if !is_crate_name(name) {
        return Err(fail(format!("package.name {name:?} is not a crate name")));
    }
    let version = match package.get("version") {
        Some(toml::Value::String(version)) => version.clone(),
        Some(toml::Value::Table(table))
            if table.get("workspace").and_then(toml::Value::as_bool) == Some(true) =>
        {
            workspace_version(dir, top)?
        }
        _ => {
            return Err(fail(
                "package.version is missing or not a string".to_owned(),
            ))
        }
    };
    Ok(PackageId {
        name: name.to_owned(),
        version: parse_version(&version).map_err(|error| fail(error.to_string()))?,
    })
}

/// Why [`parse_version`] refuses a version string.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    #[error("the version is longer than {MAX_FIELD_CHARS} characters")]
    TooLong,
    #[error("version {text:?} is not semver: {source}")]
    NotSemver { text: String, source: semver::Error },
}

/// A version string checked to be a bounded semver version.
pub fn parse_version(text: &str) -> Result<semver::Version, VersionError> {
    if text.len() > MAX_FIELD_CHARS {
        return Err(VersionError::TooLong);
    }
    semver::Version::parse(text).map_err(|source| VersionError::NotSemver {
        text: text.to_owned(),
        source,
    })
}

/// `[workspace.package].version` of the nearest workspace root above
/// `dir`, not above `top`.
fn workspace_version(dir: &Path, top: &Path) -> Result<String, (PathBuf, String)> {
    let mut current = dir.parent();
    while let Some(folder) = current {
        if !folder.starts_with(top) {
            break;
        }
        let path = folder.join("Cargo.toml");
        if path.is_file() {
            let table = read_table(&path)?;
            if let Some(workspace) = table.get("workspace").and_then(toml::Value::as_table) {
                return workspace
                    .get("package")
                    .and_then(|package| package.get("version"))
                    .and_then(toml::Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        (
                            path.clone(),
                            "workspace.package.version is missing or not a string".to_owned(),
                        )
                    });
            }
        }
        current = folder.parent();
    }
    Err((
        dir.join("Cargo.toml"),
        "version.workspace = true, but no workspace root was found in the export".to_owned(),
    ))
}

fn read_table(path: &Path) -> Result<toml::Table, (PathBuf, String)> {
    use std::io::Read;
    let fail = |reason: String| (path.to_path_buf(), reason);
    let meta = std::fs::symlink_metadata(path).map_err(|error| fail(error.to_string()))?;
    if !meta.is_file() {
        return Err(fail("it is not a regular file".to_owned()));
    }
    if meta.len() > MAX_MANIFEST_BYTES {
        return Err(fail(format!(
            "it is larger than {MAX_MANIFEST_BYTES} bytes"
        )));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_MANIFEST_BYTES).read_to_string(&mut text))
        .map_err(|error| fail(error.to_string()))?;
    text.parse::<toml::Table>()
        .map_err(|error| fail(format!("it is not valid TOML: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, relative: &str, text: &str) {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn reads_plain_and_inherited_versions() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(
            root,
            "a/Cargo.toml",
            "[package]\nname = \"a\"\nversion = \"0.3.47\"\n",
        );
        write(
            root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"b\"]\n[workspace.package]\nversion = \"1.2.3-dev.1\"\n",
        );
        write(
            root,
            "b/Cargo.toml",
            "[package]\nname = \"b_b\"\nversion.workspace = true\n",
        );
        let a = read_package(&root.join("a"), root).expect("a");
        assert_eq!(
            (a.name.as_str(), a.version.to_string().as_str()),
            ("a", "0.3.47")
        );
        let b = read_package(&root.join("b"), root).expect("b");
        assert_eq!(b.version.to_string(), "1.2.3-dev.1");
    }

    #[test]
    fn hostile_manifests_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for (text, expected) in [
            (
                "[package]\nname = \"a b\"\nversion = \"1.0.0\"\n",
                "not a crate name",
            ),
            ("[package]\nname = \"a\"\nversion = \"1.0\"\n", "not semver"),
            (
                "[package]\nname = \"a\"\nversion = \"1.0.0-\\\"; rm\"\n",
                "not semver",
            ),
            ("[package]\nname = \"a\"\n", "version is missing"),
            ("[package\n", "not valid TOML"),
            ("[workspace]\n", "no [package]"),
        ] {
            write(root, "x/Cargo.toml", text);
            let (_, reason) = read_package(&root.join("x"), root).unwrap_err();
            assert!(reason.contains(expected), "{text:?}: {reason}");
        }
        write(
            root,
            "x/Cargo.toml",
            &format!(
                "[package]\nname = \"a\"\nversion = \"1.0.0\"\n#{}\n",
                "x".repeat(2 << 20)
            ),
        );
        let (_, reason) = read_package(&root.join("x"), root).unwrap_err();
        assert!(reason.contains("larger than"), "{reason}");
        write(
            root,
            "y/Cargo.toml",
            "[package]\nname = \"y\"\nversion.workspace = true\n",
        );
        let (_, reason) = read_package(&root.join("y"), &root.join("y")).unwrap_err();
        assert!(reason.contains("no workspace root"), "{reason}");
    }

    #[test]
    fn crate_names() {
        assert!(is_crate_name("s2n-tls-sys"));
        assert!(is_crate_name("aws_lc_rs"));
        assert!(!is_crate_name("a.b"));
        assert!(!is_crate_name("\"x\""));
        assert!(!is_crate_name(""));
    }
}
