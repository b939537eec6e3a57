//! A scratch copy of this workspace for one combination of patch sets.
//!
//! Why a copy: a patch whose version differs from `Cargo.lock`'s is ignored
//! by cargo until `cargo update -p <crate> --precise <version>` moves the
//! lock, and even a plain `cargo metadata` with a patch writes
//! `[[patch.unused]]` into `Cargo.lock`. Neither may touch the real
//! workspace. So each combination of patched libraries gets its own copy,
//! `target/regress-source/scratch/<id>/`, of the workspace's files (tracked
//! and untracked-but-not-ignored, as they are on disk), whose `Cargo.lock`
//! starts as the real one and is then moved for the patches.
//!
//! The copy is synchronised, not recreated: files whose content did not
//! change keep their modification time, so cargo does not rebuild the
//! harnesses when nothing changed. A lock file keeps two runs from using
//! the same copy at once.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::cargo::Cargo;
use crate::dirs::SourceDirs;
use crate::error::SourceError;
use crate::git::Git;
use crate::options::Options;
use crate::patch::PatchSet;
use crate::paths::{RelativePath, TreeWriter};
use crate::resolve::{self, LockUpdate};

/// A scratch copy with patches applied and its lock moved to match.
#[derive(Debug)]
pub struct ScratchWorkspace {
    root: PathBuf,
    cargo: Cargo,
    patches: Vec<PatchSet>,
    args: Vec<String>,
    /// The harness build's features for these patches.
    features: Vec<String>,
    /// The lock moves `cargo update --precise` made (none without skew).
    pub lock_updates: Vec<LockUpdate>,
    _lock: File,
}

impl ScratchWorkspace {
    /// Copies the workspace for `patches`, checks each patch against the
    /// workspace's requirements, moves the copy's `Cargo.lock` where the
    /// versions differ, and checks that cargo really uses every patched
    /// crate from its export, with the harness features these versions
    /// need ([`crate::features::harness_features`]; a version the harnesses
    /// do not cover is refused first).
    pub fn prepare(
        dirs: &SourceDirs,
        patches: &[PatchSet],
        options: &Options,
    ) -> Result<ScratchWorkspace, SourceError> {
        crate::features::check_coverage(patches)?;
        let features = crate::features::harness_features(patches);
        let scratch = dirs.scratch();
        std::fs::create_dir_all(&scratch)
            .map_err(|error| SourceError::io("create", &scratch, error))?;
        let id = scratch_id(patches);
        let lock = lock(&scratch.join(format!("{id}.lock")))?;
        let root = scratch.join(&id);
        // The copy's lock as the last run left it: the sync below puts the
        // workspace's back and resolving moves it again, so it is rewritten
        // every time, and the harnesses' build script, which reruns when
        // the lock changes, would rebuild them at every diff.
        let lock_path = root.join("Cargo.lock");
        let earlier = std::fs::read(&lock_path).ok().zip(
            std::fs::metadata(&lock_path)
                .and_then(|m| m.modified())
                .ok(),
        );
        sync_workspace(dirs.workspace(), &root, options)?;
        let cargo = Cargo::detect(dirs.workspace(), options)?;
        let lock_updates =
            resolve::apply(&cargo, &root, patches, &feature_args(&features), options)?;
        if let Some((content, modified)) = earlier {
            // The same content again: its time too, so cargo sees no change.
            if std::fs::read(&lock_path).is_ok_and(|now| now == content) {
                if let Ok(file) = File::options().write(true).open(&lock_path) {
                    let _ = file.set_modified(modified);
                }
            }
        }
        Ok(ScratchWorkspace {
            args: crate::patch::cargo_args(patches)?,
            features,
            root,
            cargo,
            patches: patches.to_vec(),
            lock_updates,
            _lock: lock,
        })
    }

    /// The copy's top folder (run cargo there).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The `--config` arguments of the patches.
    pub fn cargo_args(&self) -> &[String] {
        &self.args
    }

    /// The harness features the patched versions need
    /// (`harnesses/rustls-0-24`, ...), empty for the default build.
    pub fn features(&self) -> &[String] {
        &self.features
    }

    /// [`ScratchWorkspace::features`] as cargo arguments.
    pub fn feature_args(&self) -> Vec<String> {
        feature_args(&self.features)
    }

    pub fn patches(&self) -> &[PatchSet] {
        &self.patches
    }

    pub fn cargo(&self) -> &Cargo {
        &self.cargo
    }
}

/// `--features a,b`, or nothing.
fn feature_args(features: &[String]) -> Vec<String> {
    if features.is_empty() {
        return Vec::new();
    }
    vec!["--features".to_owned(), features.join(",")]
}

/// `<16 hex digits>` naming the combination of patched libraries and their
/// crates, not the revisions: one scratch copy serves every revision of a
/// library (the commits of a bisect or a history, BASE and HEAD of a diff,
/// the edits of a live folder) one after the other, under its lock. The
/// patches are `--config` arguments and the lock is resolved again at each
/// `prepare`, so nothing of a revision stays in the copy; what does stay is
/// the workspace crates' paths, and with them their artifacts: the runner
/// crates the harness tests link (`regress` and the crates under it, which
/// no library reaches) are compiled once, not once per revision, and only
/// what depends on the patched crates is rebuilt.
fn scratch_id(patches: &[PatchSet]) -> String {
    let mut hash = Sha256::new();
    for set in patches {
        hash.update(set.library.name.as_bytes());
        hash.update([0]);
        for krate in &set.crates {
            hash.update(krate.name.as_bytes());
            hash.update([0]);
        }
        hash.update([1]);
    }
    hash.finalize()[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Takes an exclusive advisory lock on `path` (created if needed), held
/// until the returned file is dropped.
fn lock(path: &Path) -> Result<File, SourceError> {
    use std::os::unix::io::AsRawFd;
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|error| SourceError::io("open the lock", path, error))?;
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(file);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(SourceError::io("lock", path, error));
        }
    }
}

/// Makes `to` hold exactly the workspace's tracked and untracked (not
/// ignored) files, rewriting only those whose content or mode changed.
fn sync_workspace(workspace: &Path, to: &Path, options: &Options) -> Result<(), SourceError> {
    let git = Git::work_tree(workspace, options.git_limits());
    let listing = git.run([
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
    ])?;
    let mut wanted = BTreeSet::new();
    for record in listing
        .split(|&b| b == 0)
        .filter(|r| !r.is_empty() && !r.ends_with(b"/"))
    {
        let path = RelativePath::from_bytes(record).map_err(|reason| SourceError::UnsafePath {
            repo: workspace.to_path_buf(),
            reason,
        })?;
        wanted.insert(path);
    }
    if !to.exists() {
        TreeWriter::create(to).map_err(|error| SourceError::io("create", to, error))?;
    }
    let mut writer = TreeWriter::existing(to);
    let mut kept = BTreeSet::new();
    for path in &wanted {
        let source = workspace.join(path.as_path());
        let Ok(meta) = std::fs::symlink_metadata(&source) else {
            continue; // deleted in the working tree
        };
        if !meta.is_file() {
            continue; // symlinks and folders: this workspace has none worth copying
        }
        kept.insert(path.as_path().to_path_buf());
        let target = to.join(path.as_path());
        if same_file(&source, &target, &meta) {
            continue;
        }
        // Written beside the target, then renamed over it.
        let fresh = RelativePath::new(&format!("{}.regress-new", path)).map_err(|reason| {
            SourceError::UnsafePath {
                repo: workspace.to_path_buf(),
                reason,
            }
        })?;
        let fresh_path = to.join(fresh.as_path());
        let _ = std::fs::remove_file(&fresh_path);
        let mut file =
            File::open(&source).map_err(|error| SourceError::io("read", &source, error))?;
        writer
            .file(&fresh, &mut file, meta.permissions().mode() & 0o111 != 0)
            .map_err(|error| SourceError::io("write", &fresh_path, error))?;
        if std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
            std::fs::remove_dir_all(&target)
                .map_err(|error| SourceError::io("remove", &target, error))?;
        }
        std::fs::rename(&fresh_path, &target)
            .map_err(|error| SourceError::io("write", &target, error))?;
    }
    remove_others(to, Path::new(""), &kept)
}

/// Whether `target` already has `source`'s content and executable bit.
fn same_file(source: &Path, target: &Path, meta: &std::fs::Metadata) -> bool {
    let Ok(existing) = std::fs::symlink_metadata(target) else {
        return false;
    };
    if !existing.is_file()
        || existing.len() != meta.len()
        || (existing.permissions().mode() & 0o111 != 0) != (meta.permissions().mode() & 0o111 != 0)
    {
        return false;
    }
    match (std::fs::read(source), std::fs::read(target)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Removes every file under `root/relative` that is not in `kept`.
fn remove_others(
    root: &Path,
    relative: &Path,
    kept: &BTreeSet<PathBuf>,
) -> Result<(), SourceError> {
    let dir = root.join(relative);
    let entries = std::fs::read_dir(&dir).map_err(|error| SourceError::io("list", &dir, error))?;
    for entry in entries.flatten() {
        let path = relative.join(entry.file_name());
        // The entry itself, not what a link points at: a link is removed
        // as a file, never descended into.
        let kind = entry
            .file_type()
            .map_err(|error| SourceError::io("read", entry.path(), error))?;
        if kind.is_dir() {
            remove_others(root, &path, kept)?;
        } else if !kept.contains(&path) {
            std::fs::remove_file(entry.path())
                .map_err(|error| SourceError::io("remove", entry.path(), error))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::{RUSTLS, S2N_TLS};
    use crate::patch::PatchedCrate;

    fn set(library: &'static crate::library::Library, commit: &str) -> PatchSet {
        PatchSet {
            library,
            revision: commit.to_owned(),
            key: commit.to_owned(),
            crates: vec![PatchedCrate {
                name: format!("{}-sys", library.name),
                version: semver::Version::new(0, 3, 47),
                path: PathBuf::from(format!("/exports/{}/{commit}/tree", library.name)),
            }],
        }
    }

    /// Every revision of a library shares one scratch copy (so the runner
    /// crates are built once, not per revision); another library, or the
    /// released crates (no patch), gets its own.
    #[test]
    fn one_scratch_copy_per_library_not_per_revision() {
        let first = scratch_id(&[set(&S2N_TLS, "aaaa")]);
        assert_eq!(first, scratch_id(&[set(&S2N_TLS, "bbbb")]));
        assert_eq!(first.len(), 16);
        assert_ne!(first, scratch_id(&[set(&RUSTLS, "aaaa")]));
        assert_ne!(first, scratch_id(&[]));
        assert_ne!(
            first,
            scratch_id(&[set(&S2N_TLS, "aaaa"), set(&RUSTLS, "aaaa")])
        );
    }
}
