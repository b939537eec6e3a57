//! Paths that come from a repository, and writing them into an export.
//!
//! A repository is input, and input can be hostile: a crafted tree may name
//! `../../x`, an absolute path, a `.git` folder, or put a file *under* a
//! symlink it also contains (`link -> /etc`, then `link/passwd`). Every path
//! taken from git is checked by [`RelativePath::from_bytes`], and every file
//! is written by a [`TreeWriter`], which creates each folder itself, refuses
//! to go through anything that is not a real folder it can see, and never
//! overwrites (files are created with `O_EXCL`, which does not follow a
//! symlink in the last component). So nothing is ever written outside the
//! export folder.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// The longest path accepted from a repository (Linux's PATH_MAX).
const MAX_PATH_BYTES: usize = 4096;

/// Why a path from a repository is refused by [`RelativePath`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsafePath {
    #[error("an empty path")]
    Empty,
    #[error("a path longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
    #[error("{path:?} contains a NUL byte")]
    Nul { path: String },
    #[error("{path:?} is absolute")]
    Absolute { path: String },
    #[error("{path:?} has an empty component")]
    EmptyComponent { path: String },
    #[error("{path:?} has a `{component}` component")]
    DotComponent { path: String, component: String },
    #[error("{path:?} has a `.git` component")]
    GitComponent { path: String },
}

/// A checked path relative to the root of a tree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelativePath(PathBuf);

impl RelativePath {
    /// Checks a path given as text (the library data, a submodule path).
    pub fn new(path: &str) -> Result<RelativePath, UnsafePath> {
        RelativePath::from_bytes(path.as_bytes())
    }

    /// Checks a path as git prints it with `-z`: plain bytes, `/`-separated.
    pub fn from_bytes(bytes: &[u8]) -> Result<RelativePath, UnsafePath> {
        let shown = || String::from_utf8_lossy(bytes).into_owned();
        if bytes.is_empty() {
            return Err(UnsafePath::Empty);
        }
        if bytes.len() > MAX_PATH_BYTES {
            return Err(UnsafePath::TooLong);
        }
        if bytes.contains(&0) {
            return Err(UnsafePath::Nul { path: shown() });
        }
        if bytes[0] == b'/' {
            return Err(UnsafePath::Absolute { path: shown() });
        }
        for part in bytes.split(|&b| b == b'/') {
            match part {
                b"" => return Err(UnsafePath::EmptyComponent { path: shown() }),
                b"." | b".." => {
                    return Err(UnsafePath::DotComponent {
                        path: shown(),
                        component: String::from_utf8_lossy(part).into_owned(),
                    })
                }
                _ if part.eq_ignore_ascii_case(b".git") => {
                    return Err(UnsafePath::GitComponent { path: shown() })
                }
                _ => {}
            }
        }
        Ok(RelativePath(PathBuf::from(OsString::from_vec(
            bytes.to_vec(),
        ))))
    }

    pub fn as_path(&self) -> &Path {
        &self.0
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_os_str().as_bytes()
    }

    /// `self/child`, both already checked.
    pub fn join(&self, child: &RelativePath) -> RelativePath {
        RelativePath(self.0.join(&child.0))
    }
}

impl std::fmt::Display for RelativePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.display())
    }
}

/// Writes files into a folder it created, never outside it.
pub struct TreeWriter {
    root: PathBuf,
    folders: HashSet<PathBuf>,
}

impl TreeWriter {
    /// Creates `root` (which must not exist yet) and writes under it.
    pub fn create(root: &Path) -> io::Result<TreeWriter> {
        std::fs::create_dir(root)?;
        Ok(TreeWriter {
            root: root.to_path_buf(),
            folders: HashSet::new(),
        })
    }

    /// Writes into an existing folder (one this crate made).
    pub fn existing(root: &Path) -> TreeWriter {
        TreeWriter {
            root: root.to_path_buf(),
            folders: HashSet::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates a new file with `content`, executable or not.
    pub fn file(
        &mut self,
        path: &RelativePath,
        content: &mut dyn Read,
        executable: bool,
    ) -> io::Result<u64> {
        let full = self.prepare(path)?;
        let mut file = File::options()
            .write(true)
            .create_new(true)
            .mode(if executable { 0o755 } else { 0o644 })
            .open(&full)?;
        io::copy(content, &mut file)
    }

    /// Creates a symlink pointing at `target` (kept as it is: an export
    /// never follows it, and neither does anything that copies it later).
    pub fn symlink(&mut self, path: &RelativePath, target: &OsStr) -> io::Result<()> {
        let full = self.prepare(path)?;
        std::os::unix::fs::symlink(target, full)
    }

    /// Creates a folder (an uninitialised submodule looks like this).
    pub fn folder(&mut self, path: &RelativePath) -> io::Result<()> {
        self.prepare(path)?;
        self.ensure_folder(path.as_path())
    }

    /// Makes sure every parent folder of `path` exists as a real folder and
    /// returns the full path of `path` itself.
    fn prepare(&mut self, path: &RelativePath) -> io::Result<PathBuf> {
        if let Some(parent) = path.as_path().parent() {
            let mut partial = PathBuf::new();
            for component in parent.components() {
                match component {
                    Component::Normal(name) => partial.push(name),
                    _ => return Err(io::Error::other(format!("unexpected path {path}"))),
                }
                self.ensure_folder(&partial.clone())?;
            }
        }
        Ok(self.root.join(path.as_path()))
    }

    fn ensure_folder(&mut self, relative: &Path) -> io::Result<()> {
        if self.folders.contains(relative) {
            return Ok(());
        }
        let full = self.root.join(relative);
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.file_type().is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} is not a folder (a file or symlink is in the way)",
                    relative.display()
                )))
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => std::fs::create_dir(&full)?,
            Err(error) => return Err(error),
        }
        self.folders.insert(relative.to_path_buf());
        Ok(())
    }
}

/// Copies the tree at `from` to the new folder `to`, keeping symlinks as
/// symlinks and the executable bit; never follows a link out of `from`.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    // Every entry checks for Ctrl-C, so a copy of thousands of files stops
    // at once.
    if crate::process::interrupted() {
        return Err(io::Error::other("interrupted while copying"));
    }
    let meta = std::fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        return std::os::unix::fs::symlink(std::fs::read_link(from)?, to);
    }
    if meta.is_file() {
        copy_file(from, to, &meta)?;
        return Ok(());
    }
    std::fs::create_dir(to)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        copy_tree(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}

/// Copies one regular file to a new path, with its executable bit.
pub fn copy_file(from: &Path, to: &Path, meta: &std::fs::Metadata) -> io::Result<u64> {
    use std::os::unix::fs::PermissionsExt;
    let executable = meta.permissions().mode() & 0o111 != 0;
    let mut source = File::open(from)?;
    let mut target = File::options()
        .write(true)
        .create_new(true)
        .mode(if executable { 0o755 } else { 0o644 })
        .open(to)?;
    io::copy(&mut source, &mut target)
}

/// `root/relative`, checked for a write, a move or a removal: `relative`
/// is plain components (no `..`, not absolute), and none of them that
/// exists is a symlink or anything else than a folder on the way (the last
/// one may be a file). The one check before the runner changes a path in
/// its own folders, so that nothing is ever written, moved or deleted
/// through a link: a link planted where the runner writes (a committed
/// symlink in an export, a `perf_outputs/diff/.previous` pointing outside)
/// is an error naming it, never followed. `root` itself is trusted (the
/// project's folder, however it is reached).
pub fn inside(root: &Path, relative: &Path) -> io::Result<PathBuf> {
    let mut full = root.to_path_buf();
    let mut components = relative.components().peekable();
    if components.peek().is_none() {
        return Err(io::Error::other(format!(
            "an empty path below {}",
            root.display()
        )));
    }
    while let Some(component) = components.next() {
        let Component::Normal(name) = component else {
            return Err(io::Error::other(format!(
                "{} leaves {} (only plain names are allowed below it)",
                relative.display(),
                root.display()
            )));
        };
        full.push(name);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(meta) => meta,
            // Nothing there yet: nothing below it can be a link either.
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(root.join(relative)),
            Err(error) => return Err(error),
        };
        let last = components.peek().is_none();
        if meta.file_type().is_symlink() {
            return Err(io::Error::other(format!(
                "{} is a symlink (to {}); the runner never writes, moves or deletes through a \
                 link: remove it (or make it a real folder) and run again",
                full.display(),
                std::fs::read_link(&full)
                    .map(|target| target.display().to_string())
                    .unwrap_or_else(|_| "?".to_owned())
            )));
        }
        if !last && !meta.is_dir() {
            return Err(io::Error::other(format!(
                "{} is not a folder (a file is in the way)",
                full.display()
            )));
        }
    }
    Ok(full)
}

/// Every symlink at or below `path` (not followed), at most `limit` of
/// them: a tree a process other than the runner will write into (a
/// generator, a build script) must have none, as the runner cannot stop
/// that process from following one.
pub fn symlinks_below(path: &Path, limit: usize) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(next) = stack.pop() {
        let meta = match std::fs::symlink_metadata(&next) {
            Ok(meta) => meta,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        if meta.file_type().is_symlink() {
            found.push(next);
            if found.len() >= limit {
                break;
            }
        } else if meta.is_dir() {
            for entry in std::fs::read_dir(&next)? {
                stack.push(entry?.path());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Whether `path` is `root` or inside it, compared component by component
/// after both are made absolute and free of `..`, without touching the disk.
pub fn is_within(path: &Path, root: &Path) -> bool {
    normalize(path).starts_with(normalize(root))
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_refuses_a_link_on_the_way_and_at_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("real/deeper")).expect("mkdir");
        std::fs::create_dir(&outside).expect("mkdir");
        std::os::unix::fs::symlink(&outside, root.join("link")).expect("link");
        std::os::unix::fs::symlink(&outside, root.join("real/last")).expect("link");
        std::fs::write(root.join("file"), "x").expect("write");
        assert_eq!(
            inside(&root, Path::new("real/deeper/new")).expect("fine"),
            root.join("real/deeper/new")
        );
        assert_eq!(
            inside(&root, Path::new("file")).expect("a file at the end"),
            root.join("file")
        );
        for bad in ["link", "link/x", "real/last", "file/x", "../x", "/etc", ""] {
            let error = inside(&root, Path::new(bad)).unwrap_err();
            if bad.starts_with("link") || bad == "real/last" {
                assert!(error.to_string().contains("is a symlink"), "{bad}: {error}");
            }
        }
        assert_eq!(
            symlinks_below(&root, 10).expect("walk"),
            vec![root.join("link"), root.join("real/last")]
        );
    }

    #[test]
    fn hostile_paths_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../../b",
            "./a",
            "a//b",
            ".git/config",
            "x/.GIT/hooks",
            "a/.",
        ] {
            assert!(RelativePath::new(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(RelativePath::from_bytes(b"a\0b").is_err());
        for good in [
            "a",
            "a/b.c",
            ".gitignore",
            "x/.github/y",
            "weird name/\u{e9}",
        ] {
            assert!(RelativePath::new(good).is_ok(), "{good:?} was refused");
        }
    }

    #[test]
    fn a_refusal_says_what_is_wrong_with_the_path() {
        let said = |path: &[u8]| {
            RelativePath::from_bytes(path)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(said(b""), "an empty path");
        assert_eq!(
            said(&[b'a'; MAX_PATH_BYTES + 1]),
            "a path longer than 4096 bytes"
        );
        assert_eq!(said(b"a\0b"), r#""a\0b" contains a NUL byte"#);
        assert_eq!(said(b"/etc/passwd"), r#""/etc/passwd" is absolute"#);
        assert_eq!(said(b"a//b"), r#""a//b" has an empty component"#);
        assert_eq!(said(b"a/../b"), r#""a/../b" has a `..` component"#);
        assert_eq!(said(b"x/.GIT/y"), r#""x/.GIT/y" has a `.git` component"#);
    }

    #[test]
    fn the_writer_never_goes_through_a_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).expect("mkdir");
        let mut writer = TreeWriter::create(&dir.path().join("tree")).expect("create");
        writer
            .symlink(
                &RelativePath::new("link").expect("path"),
                outside.as_os_str(),
            )
            .expect("symlink");
        let error = writer
            .file(
                &RelativePath::new("link/planted").expect("path"),
                &mut &b"x"[..],
                false,
            )
            .unwrap_err();
        assert!(error.to_string().contains("not a folder"), "{error}");
        assert!(!outside.join("planted").exists());
        // Nor over an existing file or link.
        assert!(writer
            .file(
                &RelativePath::new("link").expect("path"),
                &mut &b"x"[..],
                false
            )
            .is_err());
    }

    #[test]
    fn copies_keep_links_and_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let from = dir.path().join("from");
        std::fs::create_dir_all(from.join("sub")).expect("mkdir");
        std::fs::write(from.join("sub/run.sh"), "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(from.join("sub/run.sh"), PermissionsExt::from_mode(0o755))
            .expect("chmod");
        std::os::unix::fs::symlink("/nonexistent", from.join("dangling")).expect("link");
        let to = dir.path().join("to");
        copy_tree(&from, &to).expect("copy");
        let mode = std::fs::metadata(to.join("sub/run.sh"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
        assert_eq!(
            std::fs::read_link(to.join("dangling")).expect("link"),
            Path::new("/nonexistent")
        );
    }

    #[test]
    fn within_is_lexical() {
        assert!(is_within(Path::new("/w/target/x"), Path::new("/w/target")));
        assert!(!is_within(
            Path::new("/w/target/../src"),
            Path::new("/w/target")
        ));
        assert!(!is_within(Path::new("/w/targets"), Path::new("/w/target")));
    }
}
