//! The folder a checkout's working tree is built from: one per checkout,
//! kept between runs, and brought up to date file by file.
//!
//! Each content of a working tree is exported to a folder of its own
//! (`wt-<hash>`). Built from there, every edit would be a new package path
//! to cargo: a new artifact hash, so all of s2n-tls, the crates above it
//! and a new scratch copy of the workspace built from nothing. Instead the
//! finished export is mirrored into `wt-live-<hash of the checkout's
//! path>/tree`, rewriting only the files whose content or mode differ and
//! removing those that went, so unchanged files keep their times. When
//! anything changed, each crate's `build.rs` gets a new time, so cargo
//! runs the build scripts again (s2n-tls-sys's names only environment
//! variables to rerun on, so cargo would not rerun it for an edited C
//! file), and rebuilds what depends on them; the compiler cache
//! ([`crate::compiler_cache`]) hands back every C file that did not
//! change. The live folder's name is as long as an export's (`wt-` and 40
//! characters), so paths compiled into the program keep their length.
//!
//! One run at a time uses a checkout's live folder: `regress diff` holds
//! its workspace's lock from export to measurement.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use sha2::{Digest, Sha256};

/// What the keys of working trees with changes start with.
pub(crate) const PREFIX: &str = "wt-";

/// The live folder's name for the checkout at `root`.
pub(crate) fn name(root: &Path) -> String {
    // `wt-live-` and 35 hex digits: 43 characters, as `wt-<40 hex>`; the
    // letters make it no export's key.
    format!("wt-live-{}", &path_hex(root)[..35])
}

/// The name of the folder the checkout at `root` builds its commits from
/// in a walk over many ([`super::export_for_walk`]): `commits-` and 32 hex
/// digits, 40 characters, as long as a commit's key, so paths compiled
/// into the program keep their length; the letters make it no key.
pub(crate) fn commits_name(root: &Path) -> String {
    format!("commits-{}", &path_hex(root)[..32])
}

fn path_hex(root: &Path) -> String {
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What a mirror changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Mirrored {
    /// Files and links written (new or changed).
    pub written: usize,
    /// Entries removed.
    pub removed: usize,
}

/// Makes `to` hold exactly what `from` holds (files, executable bits,
/// symlinks, folders), writing only what differs.
pub(crate) fn mirror(from: &Path, to: &Path) -> io::Result<Mirrored> {
    let mut done = Mirrored::default();
    mirror_dir(from, to, &mut done)?;
    Ok(done)
}

fn mirror_dir(from: &Path, to: &Path, done: &mut Mirrored) -> io::Result<()> {
    match std::fs::symlink_metadata(to) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            std::fs::remove_file(to)?;
            done.removed += 1;
            std::fs::create_dir(to)?;
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => std::fs::create_dir_all(to)?,
        Err(error) => return Err(error),
    }
    let mut names: BTreeSet<OsString> = BTreeSet::new();
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let (source, target) = (entry.path(), to.join(&name));
        let meta = std::fs::symlink_metadata(&source)?;
        if meta.file_type().is_symlink() {
            let link = std::fs::read_link(&source)?;
            if std::fs::read_link(&target).ok() != Some(link.clone()) {
                remove_any(&target)?;
                std::os::unix::fs::symlink(&link, &target)?;
                done.written += 1;
            }
        } else if meta.is_dir() {
            mirror_dir(&source, &target, done)?;
        } else if meta.is_file() && !same_file(&source, &meta, &target)? {
            remove_any(&target)?;
            crate::paths::copy_file(&source, &target, &meta)?;
            done.written += 1;
        }
        names.insert(name);
    }
    for entry in std::fs::read_dir(to)? {
        let entry = entry?;
        if !names.contains(&entry.file_name()) {
            remove_any(&entry.path())?;
            done.removed += 1;
        }
    }
    Ok(())
}

/// Sets the modification time of each crate's `build.rs` in `tree` to now,
/// so cargo compiles and runs it again: the library's sources changed.
///
/// The OpenSSL shell has no build script: its C tree is compiled by the
/// build script of `openssl-sys`, its dependent, which cargo reruns only
/// when the shell's library is rebuilt, and cargo rebuilds that only when
/// a file the compiler read changed (`src/lib.rs`), never for a C file of
/// `openssl/`. So the shell's `src/lib.rs` is touched instead: without it,
/// a bisect or a history over an OpenSSL checkout's commits (one folder for
/// every commit) and an edit of the working tree built the first commit's
/// OpenSSL again and again.
pub(crate) fn touch_build_scripts(
    tree: &Path,
    library: &crate::library::Library,
) -> io::Result<()> {
    let now = std::time::SystemTime::now();
    let touched = match library.generation {
        crate::library::Generation::OpenSslShell => "src/lib.rs",
        _ => "build.rs",
    };
    for krate in library.crates {
        let file = tree.join(krate.dir).join(touched);
        if file.is_file() {
            File::options().write(true).open(&file)?.set_modified(now)?;
        }
    }
    Ok(())
}

/// Whether `target` is a regular file with `source`'s executable bit and
/// bytes.
fn same_file(source: &Path, meta: &std::fs::Metadata, target: &Path) -> io::Result<bool> {
    let existing = match std::fs::symlink_metadata(target) {
        Ok(existing) => existing,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    let executable = |m: &std::fs::Metadata| m.permissions().mode() & 0o111 != 0;
    if !existing.is_file()
        || existing.len() != meta.len()
        || executable(&existing) != executable(meta)
    {
        return Ok(false);
    }
    let (mut a, mut b) = (File::open(source)?, File::open(target)?);
    let (mut x, mut y) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let n = read_full(&mut a, &mut x)?;
        let m = read_full(&mut b, &mut y)?;
        if n != m || x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

fn read_full(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

fn remove_any(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn mtime(path: &Path) -> SystemTime {
        std::fs::metadata(path)
            .expect("meta")
            .modified()
            .expect("mtime")
    }

    /// A changed tree makes cargo run the C build again: each crate's
    /// build script is touched, and for the OpenSSL shell (no build script;
    /// `openssl-sys`'s compiles its tree) the shell's library.
    #[test]
    fn a_changed_tree_touches_what_makes_cargo_build_the_c_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let old = SystemTime::now() - Duration::from_secs(3600);
        let set_old = |path: &Path| {
            File::options()
                .write(true)
                .open(path)
                .expect("open")
                .set_modified(old)
                .expect("set time");
        };
        let openssl = crate::library::Library::named("openssl").expect("openssl");
        let lib = dir.path().join("openssl-src/src/lib.rs");
        let c_file = dir.path().join("openssl-src/openssl/ssl/s3_lib.c");
        write(&lib, "// logic");
        write(&c_file, "int x;");
        set_old(&lib);
        set_old(&c_file);
        touch_build_scripts(dir.path(), openssl).expect("touch");
        assert!(mtime(&lib) > old, "the shell's library is touched");
        assert_eq!(mtime(&c_file), old, "the C file is left alone");

        let s2n = crate::library::Library::named("s2n-tls").expect("s2n-tls");
        let krate = s2n.crates.first().expect("a crate");
        let script = dir.path().join(krate.dir).join("build.rs");
        write(&script, "fn main() {}");
        set_old(&script);
        touch_build_scripts(dir.path(), s2n).expect("touch");
        assert!(mtime(&script) > old, "the build script is touched");
    }

    /// Only what changed is written: an unchanged file keeps its time (what
    /// cargo and the compiler cache go by), a changed one is new, a gone one
    /// is removed, and the result equals the source.
    #[test]
    fn only_changed_files_are_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (from, to) = (dir.path().join("from"), dir.path().join("to"));
        write(&from.join("tls/a.c"), "int a;");
        write(&from.join("tls/b.c"), "int b;");
        write(&from.join("gone.h"), "x");
        std::os::unix::fs::symlink("tls/a.c", from.join("link")).expect("link");
        assert_eq!(
            mirror(&from, &to).expect("first"),
            Mirrored {
                written: 4,
                removed: 0
            }
        );
        // Make the copies old, then change one file and remove another.
        let old = SystemTime::now() - Duration::from_secs(3600);
        for file in ["tls/a.c", "tls/b.c"] {
            File::options()
                .write(true)
                .open(to.join(file))
                .expect("open")
                .set_modified(old)
                .expect("set time");
        }
        write(&from.join("tls/b.c"), "int b2;");
        std::fs::remove_file(from.join("gone.h")).expect("rm");
        assert_eq!(
            mirror(&from, &to).expect("second"),
            Mirrored {
                written: 1,
                removed: 1
            }
        );
        assert_eq!(mtime(&to.join("tls/a.c")), old, "unchanged keeps its time");
        assert_ne!(mtime(&to.join("tls/b.c")), old);
        assert_eq!(
            std::fs::read_to_string(to.join("tls/b.c")).expect("read"),
            "int b2;"
        );
        assert!(!to.join("gone.h").exists());
        assert_eq!(
            std::fs::read_link(to.join("link")).expect("link"),
            Path::new("tls/a.c")
        );
        // Nothing to do the third time.
        assert_eq!(mirror(&from, &to).expect("third"), Mirrored::default());
    }

    #[test]
    fn a_live_name_is_as_long_as_a_key_and_per_checkout() {
        let one = name(Path::new("/a/s2n-tls"));
        assert_eq!(one.len(), "wt-".len() + 40);
        assert_ne!(one, name(Path::new("/b/s2n-tls")));
        assert_eq!(one, name(Path::new("/a/s2n-tls")));
        let commits = commits_name(Path::new("/a/s2n-tls"));
        assert_eq!(commits.len(), 40, "a commit's key");
        assert!(!commits.bytes().all(|b| b.is_ascii_hexdigit()), "no key");
        assert_ne!(commits, commits_name(Path::new("/b/s2n-tls")));
        assert_ne!(commits, one);
    }
}
