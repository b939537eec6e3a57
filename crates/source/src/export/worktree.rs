//! Copying a checkout's working tree, as it is, into an export.
//!
//! "As it is" means what a build of that folder would see, minus what git
//! ignores: every tracked file with its current content (uncommitted edits
//! included, deleted files left out) and every untracked file that is not
//! ignored (`git ls-files --cached --others --exclude-standard`). Symlinks
//! stay symlinks and the executable bit is kept. Nothing is staged or
//! stashed: the files are read, the repository only listed.
//!
//! While copying, everything is hashed (path, kind, length, content, in
//! path order), and that hash is the export's key: an unchanged working
//! tree gets the same key, so its export and its builds can be reused.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::SourceError;
use crate::git::Git;
use crate::library::Library;
use crate::paths::{RelativePath, TreeWriter, UnsafePath};

/// The hash of a copied tree, fed entry by entry.
pub(crate) struct TreeHash(Sha256);

impl TreeHash {
    pub fn new() -> TreeHash {
        TreeHash(Sha256::new())
    }

    /// Frames one entry: its kind, path and length come before its content,
    /// so no two different trees can feed the same bytes.
    fn entry(&mut self, kind: u8, path: &RelativePath, length: u64) {
        self.0.update([kind]);
        self.0.update((path.as_bytes().len() as u64).to_le_bytes());
        self.0.update(path.as_bytes());
        self.0.update(length.to_le_bytes());
    }

    /// The key of the tree: `wt-` and 40 hex digits.
    pub fn finish(self) -> String {
        let digest = self.0.finalize();
        let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        format!("wt-{}", &hex[..40])
    }
}

/// What an entry of the index or of the untracked list is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listed {
    Tracked,
    Gitlink,
    Untracked,
}

/// Copies the files under `paths` (each a file or a folder, matched
/// literally; everything when empty) of the working tree at `work_tree` (a
/// repository's top folder) under `prefix` into `writer`, feeding `hash`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_work_tree(
    library: &'static Library,
    git: &Git,
    work_tree: &Path,
    paths: &[&str],
    prefix: Option<&RelativePath>,
    writer: &mut TreeWriter,
    hash: &mut TreeHash,
    checkout: &Path,
) -> Result<(), SourceError> {
    let unsafe_path = |reason: UnsafePath| SourceError::UnsafePath {
        repo: checkout.to_path_buf(),
        reason,
    };
    let mut listed: BTreeMap<RelativePath, Listed> = BTreeMap::new();
    let ls_files = |args: &[&str]| {
        // Literal pathspecs: a folder's name is never a pattern.
        let mut all = vec!["--literal-pathspecs", "ls-files", "-z"];
        all.extend(args);
        if !paths.is_empty() {
            all.push("--");
            all.extend(paths);
        }
        git.run(all)
    };
    for record in split_records(&ls_files(&["--stage"])?) {
        // `<mode> <object> <stage>\t<path>`
        let tab =
            record
                .iter()
                .position(|&b| b == b'\t')
                .ok_or_else(|| SourceError::Unexpected {
                    command: "git ls-files --stage".to_owned(),
                    reason: "a record without a tab".to_owned(),
                })?;
        let kind = if record.starts_with(b"160000 ") {
            Listed::Gitlink
        } else {
            Listed::Tracked
        };
        listed.insert(
            RelativePath::from_bytes(&record[tab + 1..]).map_err(unsafe_path)?,
            kind,
        );
    }
    let others = ls_files(&["--others", "--exclude-standard"])?;
    for record in split_records(&others) {
        // A nested repository is listed as `dir/`; its files are not ours.
        if record.ends_with(b"/") {
            continue;
        }
        let path = RelativePath::from_bytes(record).map_err(unsafe_path)?;
        listed.entry(path).or_insert(Listed::Untracked);
    }
    for (path, kind) in listed {
        let placed = match prefix {
            Some(prefix) => prefix.join(&path),
            None => path.clone(),
        };
        let source = work_tree.join(path.as_path());
        let target = writer.root().join(placed.as_path());
        if kind == Listed::Gitlink {
            hash.entry(b's', &placed, 0);
            writer
                .folder(&placed)
                .map_err(|error| SourceError::io("create", &target, error))?;
            if library
                .submodules
                .iter()
                .any(|needed| needed.as_bytes() == placed.as_bytes())
            {
                let sub = open_submodule_work_tree(library, &source, &placed, git, checkout)?;
                copy_work_tree(
                    library,
                    &sub,
                    &source,
                    &[],
                    Some(&placed),
                    writer,
                    hash,
                    checkout,
                )?;
            }
            continue;
        }
        let meta = match std::fs::symlink_metadata(&source) {
            Ok(meta) => meta,
            // Deleted in the working tree (still in the index): not there.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(SourceError::io("read", &source, error)),
        };
        if meta.file_type().is_symlink() {
            let link = std::fs::read_link(&source)
                .map_err(|error| SourceError::io("read the symlink", &source, error))?;
            let bytes = link.as_os_str().as_bytes();
            hash.entry(b'l', &placed, bytes.len() as u64);
            hash.0.update(bytes);
            writer
                .symlink(&placed, link.as_os_str())
                .map_err(|error| SourceError::io("create the symlink", &target, error))?;
        } else if meta.is_file() {
            if kind == Listed::Untracked && meta.len() > MAX_UNTRACKED_BYTES {
                return Err(SourceError::OversizedUntracked {
                    repo: checkout.to_path_buf(),
                    path: placed.to_string(),
                    mib: meta.len() >> 20,
                    limit_mib: MAX_UNTRACKED_BYTES >> 20,
                });
            }
            let executable = meta.permissions().mode() & 0o111 != 0;
            hash.entry(if executable { b'x' } else { b'f' }, &placed, meta.len());
            let file =
                File::open(&source).map_err(|error| SourceError::io("read", &source, error))?;
            let mut reader = Hashing {
                inner: file.take(meta.len()),
                hash: &mut hash.0,
                cancelled: git.limits().cancelled,
            };
            let written = writer
                .file(&placed, &mut reader, executable)
                .map_err(|error| SourceError::io("copy", &source, error))?;
            if written != meta.len() {
                return Err(SourceError::io(
                    "copy",
                    &source,
                    std::io::Error::other("the file changed while it was copied; run again"),
                ));
            }
        }
        // A folder where the index has a file: its content, if any, is
        // listed as untracked files of its own.
    }
    Ok(())
}

/// The work tree of a submodule the library needs, checked to be populated.
fn open_submodule_work_tree(
    library: &'static Library,
    dir: &Path,
    placed: &RelativePath,
    parent: &Git,
    checkout: &Path,
) -> Result<Git, SourceError> {
    let git = Git::work_tree(dir, *parent.limits());
    let finished = git.try_run(["rev-parse", "--path-format=absolute", "--show-toplevel"])?;
    let populated = finished.success()
        && std::fs::canonicalize(finished.stdout_text()).ok() == std::fs::canonicalize(dir).ok();
    if !populated {
        return Err(SourceError::SubmoduleMissing {
            library: library.name,
            path: placed.to_string(),
            commit: "the commit the working tree records".to_owned(),
            repo: checkout.to_path_buf(),
            detail: " (its folder is not a checked-out submodule)".to_owned(),
        });
    }
    Ok(git)
}

fn split_records(output: &[u8]) -> impl Iterator<Item = &[u8]> {
    output
        .split(|&b| b == 0)
        .filter(|record| !record.is_empty())
}

/// A reader that feeds what it reads to the tree hash.
struct Hashing<'a, R> {
    inner: R,
    hash: &'a mut Sha256,
    /// Polled before every read (a few KiB), so that Ctrl-C stops even the
    /// copy of a large file at once.
    cancelled: Option<fn() -> bool>,
}

impl<R: Read> Read for Hashing<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if crate::process::interrupted() || self.cancelled.is_some_and(|cancelled| cancelled()) {
            // Not `ErrorKind::Interrupted`, which `io::copy` retries.
            return Err(std::io::Error::other("interrupted while copying"));
        }
        let read = self.inner.read(buffer)?;
        self.hash.update(&buffer[..read]);
        Ok(read)
    }
}

/// The largest untracked file copied from a working tree: a library's
/// build never needs one this large (a core dump, a disk image, a capture
/// left in the checkout), and copying gigabytes would take minutes.
pub(crate) const MAX_UNTRACKED_BYTES: u64 = 256 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy stops at the first read after it is cancelled.
    #[test]
    fn a_cancelled_copy_stops_at_the_next_read() {
        fn yes() -> bool {
            true
        }
        let data = vec![0u8; 1 << 20];
        let mut sha = Sha256::new();
        let mut reader = Hashing {
            inner: &data[..],
            hash: &mut sha,
            cancelled: Some(yes),
        };
        let error = std::io::copy(&mut reader, &mut std::io::sink()).unwrap_err();
        assert!(error.to_string().contains("interrupted"), "{error}");
        let mut sha = Sha256::new();
        let mut reader = Hashing {
            inner: &data[..],
            hash: &mut sha,
            cancelled: None,
        };
        assert_eq!(
            std::io::copy(&mut reader, &mut std::io::sink()).expect("copy"),
            1 << 20
        );
    }
}
