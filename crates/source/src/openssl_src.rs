//! OpenSSL source trees, built as the `openssl-src` crate.
//!
//! The harnesses get OpenSSL through `openssl-sys`'s `vendored` feature: it
//! builds the `openssl-src` crate, whose `openssl/` folder is an OpenSSL
//! source tree and whose `src/lib.rs` (the *build logic*) runs `Configure`
//! and `make` on a copy of it. Another OpenSSL cannot be had by moving the
//! lock to another `openssl-src` release: `openssl-sys` requires `^300.2`,
//! and it calls the build logic's API, which changes between releases
//! (0.9.118 calls `Build::openssl_dir`, which the 300.0 releases lack).
//!
//! So any OpenSSL tree is put into a *shell* ([`shell`]): a crate with the
//! manifest and build logic of the `openssl-src` release this workspace's
//! `Cargo.lock` pins, and the tree as its `openssl/` folder (a symbolic
//! link). Every tree is then configured and compiled by the same build
//! logic, with the same options, so two builds differ by OpenSSL's sources
//! alone. The shell's version is the pinned release's with the tree's
//! OpenSSL version as build metadata (`300.5.5+3.0.8`): every requirement
//! accepts it, and the lock and the measured program's fingerprint show
//! what it holds. It is patched in like any library revision's crate
//! ([`crate::PatchSet`]).
//!
//! The trees of OpenSSL's releases come from crates.io: each `openssl-src`
//! release carries one, unpacked by cargo like any dependency ([`release`]).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::cargo::Cargo;
use crate::dirs::SourceDirs;
use crate::error::SourceError;
use crate::manifest::read_package;
use crate::options::Options;
use crate::patch::PatchedCrate;

/// The crate OpenSSL is built through.
pub const KRATE: &str = "openssl-src";

/// The largest version file read from a tree.
const MAX_VERSION_FILE: u64 = 64 * 1024;

/// The largest lock file read (this workspace's is 46 KiB).
const MAX_LOCK_FILE: u64 = 4 * 1024 * 1024;

/// An OpenSSL release number: `3.0.8`, `1.1.1w`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpenSslVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// The 1.x letter release (`w` of 1.1.1w).
    pub letter: Option<char>,
}

impl OpenSslVersion {
    /// Reads `3.0.8` or `1.1.1w`.
    pub fn parse(text: &str) -> Option<OpenSslVersion> {
        let mut parts = text.split('.');
        let number = |part: Option<&str>| part?.parse::<u32>().ok();
        let major = number(parts.next())?;
        let minor = number(parts.next())?;
        let last = parts.next()?;
        if parts.next().is_some() {
            return None;
        }
        let digits = last.trim_end_matches(|c: char| c.is_ascii_lowercase());
        let letters = &last[digits.len()..];
        let letter = match letters.len() {
            0 => None,
            1 => letters.chars().next(),
            _ => return None,
        };
        Some(OpenSslVersion {
            major,
            minor,
            patch: digits.parse().ok()?,
            letter,
        })
    }

    /// The OpenSSL release an `openssl-src` release carries, from its build
    /// metadata (`300.0.13+3.0.8` carries 3.0.8).
    pub fn of_release(release: &semver::Version) -> Option<OpenSslVersion> {
        OpenSslVersion::parse(release.build.as_str())
    }

    /// The version of the OpenSSL tree at `tree`: its `VERSION.dat` (3.0
    /// and later), else the version text of `include/openssl/opensslv.h`
    /// (1.1.1).
    pub fn of_tree(tree: &Path) -> Result<OpenSslVersion, SourceError> {
        let dat = tree.join("VERSION.dat");
        if dat.is_file() {
            let text = read_bounded(&dat, MAX_VERSION_FILE)?;
            return from_version_dat(&text).ok_or_else(|| SourceError::OpenSslVersion {
                path: dat,
                reason: "no MAJOR, MINOR and PATCH numbers".to_owned(),
            });
        }
        let header = tree.join("include/openssl/opensslv.h");
        let text = read_bounded(&header, MAX_VERSION_FILE)?;
        from_version_text(&text).ok_or_else(|| SourceError::OpenSslVersion {
            path: header,
            reason: "no OPENSSL_VERSION_TEXT \"OpenSSL <version> ...\"".to_owned(),
        })
    }

    /// The release line: `(3, 0, 0)` of 3.0.8; `(1, 1, 1)` of 1.1.1w, since
    /// before 3.0 the third number named the line (1.1.0, 1.1.1) and the
    /// letter its patch releases.
    pub fn line(&self) -> (u32, u32, u32) {
        if self.major < 3 {
            (self.major, self.minor, self.patch)
        } else {
            (self.major, self.minor, 0)
        }
    }
}

impl fmt::Display for OpenSslVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(letter) = self.letter {
            write!(f, "{letter}")?;
        }
        Ok(())
    }
}

/// At most `limit` bytes of `path`, as text.
fn read_bounded(path: &Path, limit: u64) -> Result<String, SourceError> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(limit).read_to_string(&mut text))
        .map_err(|error| SourceError::io("read", path, error))?;
    Ok(text)
}

/// `MAJOR=3`, `MINOR=0`, `PATCH=8` lines.
fn from_version_dat(text: &str) -> Option<OpenSslVersion> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.trim().strip_prefix(name)?.strip_prefix('='))
            .and_then(|value| value.trim().parse::<u32>().ok())
    };
    Some(OpenSslVersion {
        major: field("MAJOR")?,
        minor: field("MINOR")?,
        patch: field("PATCH")?,
        letter: None,
    })
}

/// `# define OPENSSL_VERSION_TEXT "OpenSSL 1.1.1w  11 Sep 2023"`.
fn from_version_text(text: &str) -> Option<OpenSslVersion> {
    let line = text
        .lines()
        .find(|line| line.contains("OPENSSL_VERSION_TEXT") && line.contains('"'))?;
    let quoted = line.split('"').nth(1)?;
    let version = quoted.strip_prefix("OpenSSL ")?.split_whitespace().next()?;
    OpenSslVersion::parse(version)
}

/// The folder of `openssl-src` `version` as cargo unpacks it from crates.io
/// (downloading it if need be), found through `cargo metadata` of a probe
/// crate under `probe` that depends on that version alone.
pub fn release(
    version: &semver::Version,
    probe: &Path,
    cargo: &Cargo,
    options: &Options,
) -> Result<PathBuf, SourceError> {
    let dir = probe.join(format!("openssl-src-{version}"));
    let source = dir.join("src");
    std::fs::create_dir_all(&source).map_err(|error| SourceError::io("create", &source, error))?;
    write_if_changed(&source.join("lib.rs"), b"")?;
    let manifest = format!(
        "[package]\nname = \"regress-openssl-src-probe\"\nversion = \"0.0.0\"\n\
         edition = \"2021\"\npublish = false\n\n[dependencies]\n{KRATE} = \"={version}\"\n\n\
         [workspace]\n"
    );
    write_if_changed(&dir.join("Cargo.toml"), manifest.as_bytes())?;
    let (metadata, _) = crate::resolve::metadata(cargo, &dir, &[], options)?;
    metadata
        .packages
        .iter()
        .find(|package| package.name.as_str() == KRATE && package.version == *version)
        .and_then(|package| package.manifest_path.parent())
        .map(|folder| folder.as_std_path().to_path_buf())
        .ok_or_else(|| SourceError::Unexpected {
            command: format!("cargo metadata in {}", dir.display()),
            reason: format!("it names no {KRATE} {version}"),
        })
}

/// The `openssl-src` release this workspace's `Cargo.lock` pins: the build
/// logic every shell carries.
pub fn pinned(workspace: &Path) -> Result<semver::Version, SourceError> {
    let lock = workspace.join("Cargo.lock");
    let text = read_bounded(&lock, MAX_LOCK_FILE)?;
    let table: toml::Table = text.parse().map_err(|error| SourceError::Unexpected {
        command: format!("reading {}", lock.display()),
        reason: format!("it is not valid TOML: {error}"),
    })?;
    let versions = crate::manifest::locked_versions(&table, KRATE);
    match versions.as_slice() {
        [version] => Ok(version.clone()),
        _ => Err(SourceError::Unexpected {
            command: format!("reading {}", lock.display()),
            reason: format!(
                "it pins {} versions of {KRATE}, not one; `cargo build -p harnesses` \
                 with the default features locks it",
                versions.len()
            ),
        }),
    }
}

/// The pinned build logic's folder ([`pinned`], [`release`]).
pub fn logic(dirs: &SourceDirs, cargo: &Cargo, options: &Options) -> Result<PathBuf, SourceError> {
    release(&pinned(dirs.workspace())?, &probes(dirs), cargo, options)
}

/// Where the probe crates of [`release`] are made.
pub fn probes(dirs: &SourceDirs) -> PathBuf {
    dirs.state().join("openssl-src").join("probes")
}

/// The generation step of an OpenSSL export ([`crate::generate`]): the
/// tree's files move into `<tree>/openssl-src/openssl/`, and the pinned
/// build logic makes `<tree>/openssl-src/` the shell around them.
pub(crate) fn generate(
    tree: &Path,
    dirs: &SourceDirs,
    options: &Options,
) -> Result<(), SourceError> {
    let cargo = Cargo::detect(dirs.workspace(), options)?;
    let logic = logic(dirs, &cargo, options)?;
    let into = tree.join(crate::library::OPENSSL_SHELL);
    let openssl = into.join("openssl");
    std::fs::create_dir_all(&openssl)
        .map_err(|error| SourceError::io("create", &openssl, error))?;
    let entries = std::fs::read_dir(tree).map_err(|error| SourceError::io("read", tree, error))?;
    for entry in entries {
        let entry = entry.map_err(|error| SourceError::io("read", tree, error))?;
        if entry.file_name() == crate::library::OPENSSL_SHELL {
            continue;
        }
        let to = openssl.join(entry.file_name());
        std::fs::rename(entry.path(), &to).map_err(|error| SourceError::io("move", &to, error))?;
    }
    shell(&openssl, &logic, &into)?;
    Ok(())
}

/// Makes (or brings up to date) the shell at `into`: the manifest and
/// `src/` of the `openssl-src` crate at `logic`, its version's build
/// metadata replaced by `tree`'s OpenSSL version, and `openssl/` linking to
/// `tree`. Files whose content is unchanged are left alone, so cargo
/// rebuilds nothing when a shell is made again for the same tree.
pub fn shell(tree: &Path, logic: &Path, into: &Path) -> Result<PatchedCrate, SourceError> {
    let openssl = OpenSslVersion::of_tree(tree)?;
    let logic_manifest = logic.join("Cargo.toml");
    let base = read_package(logic, logic).map_err(|(path, reason)| SourceError::Manifest {
        library: "openssl",
        revision: KRATE.to_owned(),
        path,
        reason,
    })?;
    let mut version = base.version.clone();
    version.build = semver::BuildMetadata::new(&openssl.to_string()).map_err(|error| {
        SourceError::OpenSslVersion {
            path: tree.to_path_buf(),
            reason: format!("{openssl} is no build metadata: {error}"),
        }
    })?;
    let text = std::fs::read_to_string(&logic_manifest)
        .map_err(|error| SourceError::io("read", &logic_manifest, error))?;
    let mut manifest: toml::Table = text.parse().map_err(|error| SourceError::Manifest {
        library: "openssl",
        revision: KRATE.to_owned(),
        path: logic_manifest.clone(),
        reason: format!("it is not valid TOML: {error}"),
    })?;
    let Some(toml::Value::Table(package)) = manifest.get_mut("package") else {
        return Err(SourceError::Manifest {
            library: "openssl",
            revision: KRATE.to_owned(),
            path: logic_manifest,
            reason: "it has no [package]".to_owned(),
        });
    };
    package.insert("version".to_owned(), version.to_string().into());
    let source = into.join("src");
    std::fs::create_dir_all(&source).map_err(|error| SourceError::io("create", &source, error))?;
    let written = toml::to_string(&manifest).map_err(|error| SourceError::Unexpected {
        command: format!("writing {}", into.join("Cargo.toml").display()),
        reason: error.to_string(),
    })?;
    write_if_changed(&into.join("Cargo.toml"), written.as_bytes())?;
    let logic_source = logic.join("src");
    let entries = std::fs::read_dir(&logic_source)
        .map_err(|error| SourceError::io("read", &logic_source, error))?;
    for entry in entries {
        let entry = entry.map_err(|error| SourceError::io("read", &logic_source, error))?;
        if entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let from = entry.path();
            let bytes =
                std::fs::read(&from).map_err(|error| SourceError::io("read", &from, error))?;
            write_if_changed(&source.join(entry.file_name()), &bytes)?;
        }
    }
    // A tree already in place (an export's, moved there by [`generate`])
    // needs no link.
    if tree != into.join("openssl") {
        link(&into.join("openssl"), tree)?;
    }
    Ok(PatchedCrate {
        name: KRATE.to_owned(),
        version,
        path: into.to_path_buf(),
    })
}

/// Points the symbolic link `at` to `target` (made absolute), replacing a
/// link that points elsewhere; anything else at `at` is an error.
fn link(at: &Path, target: &Path) -> Result<(), SourceError> {
    let target =
        std::path::absolute(target).map_err(|error| SourceError::io("resolve", target, error))?;
    match std::fs::symlink_metadata(at) {
        Ok(meta) if meta.file_type().is_symlink() => {
            if std::fs::read_link(at).is_ok_and(|current| current == target) {
                return Ok(());
            }
            std::fs::remove_file(at).map_err(|error| SourceError::io("remove", at, error))?;
        }
        Ok(_) => {
            return Err(SourceError::Unexpected {
                command: format!("making the OpenSSL shell at {}", at.display()),
                reason: "something other than a link is where its `openssl` link goes; \
                         remove the folder and run again"
                    .to_owned(),
            })
        }
        Err(_) => {}
    }
    std::os::unix::fs::symlink(&target, at).map_err(|error| SourceError::io("link", at, error))
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), SourceError> {
    if std::fs::read(path).is_ok_and(|current| current == bytes) {
        return Ok(());
    }
    std::fs::write(path, bytes).map_err(|error| SourceError::io("write", path, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_of_every_generation_read_and_print_back() {
        for text in ["1.1.1w", "3.0.8", "3.5.5", "4.0.3"] {
            let version = OpenSslVersion::parse(text).expect(text);
            assert_eq!(version.to_string(), text);
        }
        assert_eq!(
            OpenSslVersion::parse("1.1.1w").map(|v| (v.line(), v.letter)),
            Some(((1, 1, 1), Some('w')))
        );
        assert_eq!(
            OpenSslVersion::parse("3.5.5").map(|v| v.line()),
            Some((3, 5, 0))
        );
        for bad in ["", "3", "3.0", "3.0.x", "3.0.8.1", "1.1.1ww", "-3.0.8"] {
            assert_eq!(OpenSslVersion::parse(bad), None, "{bad}");
        }
        let release = semver::Version::parse("300.0.13+3.0.8").expect("version");
        assert_eq!(
            OpenSslVersion::of_release(&release).map(|v| v.to_string()),
            Some("3.0.8".to_owned())
        );
        let plain = semver::Version::parse("0.3.47").expect("version");
        assert_eq!(OpenSslVersion::of_release(&plain), None);
    }

    #[test]
    fn a_tree_says_its_version_in_either_file() {
        let dir = tempfile::tempdir().expect("temp");
        std::fs::write(
            dir.path().join("VERSION.dat"),
            "MAJOR=4\nMINOR=0\nPATCH=3\nPRE_RELEASE_TAG=\nRELEASE_DATE=\"29 Sep 2026\"\n",
        )
        .expect("write");
        assert_eq!(
            OpenSslVersion::of_tree(dir.path())
                .expect("4.0.3")
                .to_string(),
            "4.0.3"
        );
        let old = tempfile::tempdir().expect("temp");
        std::fs::create_dir_all(old.path().join("include/openssl")).expect("mkdir");
        std::fs::write(
            old.path().join("include/openssl/opensslv.h"),
            "# define OPENSSL_VERSION_NUMBER  0x1010117fL\n\
             # define OPENSSL_VERSION_TEXT    \"OpenSSL 1.1.1w  11 Sep 2023\"\n",
        )
        .expect("write");
        assert_eq!(
            OpenSslVersion::of_tree(old.path())
                .expect("1.1.1w")
                .to_string(),
            "1.1.1w"
        );
        let none = tempfile::tempdir().expect("temp");
        assert!(OpenSslVersion::of_tree(none.path()).is_err());
        std::fs::write(none.path().join("VERSION.dat"), "MAJOR=x\n").expect("write");
        assert!(matches!(
            OpenSslVersion::of_tree(none.path()),
            Err(SourceError::OpenSslVersion { .. })
        ));
    }

    #[test]
    fn a_shell_carries_the_logic_the_tree_and_both_versions() {
        let root = tempfile::tempdir().expect("temp");
        let logic = root.path().join("logic");
        std::fs::create_dir_all(logic.join("src")).expect("mkdir");
        std::fs::write(
            logic.join("Cargo.toml"),
            "[package]\nname = \"openssl-src\"\nversion = \"300.5.5+3.5.5\"\nedition = \"2021\"\n",
        )
        .expect("write");
        std::fs::write(logic.join("src/lib.rs"), "pub fn build() {}\n").expect("write");
        let tree = root.path().join("tree");
        std::fs::create_dir_all(&tree).expect("mkdir");
        std::fs::write(tree.join("VERSION.dat"), "MAJOR=3\nMINOR=0\nPATCH=8\n").expect("write");
        let into = root.path().join("shell");
        let made = shell(&tree, &logic, &into).expect("shell");
        assert_eq!(made.name, KRATE);
        assert_eq!(made.version.to_string(), "300.5.5+3.0.8");
        let package = read_package(&into, &into).expect("package");
        assert_eq!(package.version, made.version);
        assert_eq!(
            std::fs::read_to_string(into.join("src/lib.rs")).expect("lib"),
            "pub fn build() {}\n"
        );
        assert!(into.join("openssl/VERSION.dat").is_file());
        // Made again for the same tree: nothing is rewritten.
        let before = std::fs::metadata(into.join("Cargo.toml"))
            .and_then(|m| m.modified())
            .expect("mtime");
        std::thread::sleep(std::time::Duration::from_millis(20));
        shell(&tree, &logic, &into).expect("again");
        let after = std::fs::metadata(into.join("Cargo.toml"))
            .and_then(|m| m.modified())
            .expect("mtime");
        assert_eq!(before, after);
        // A folder where the link goes is refused, not emptied.
        let blocked = root.path().join("blocked");
        std::fs::create_dir_all(blocked.join("openssl")).expect("mkdir");
        std::fs::write(blocked.join("openssl/keep"), "user data").expect("write");
        assert!(shell(&tree, &logic, &blocked).is_err());
        assert!(blocked.join("openssl/keep").is_file());
    }
}
