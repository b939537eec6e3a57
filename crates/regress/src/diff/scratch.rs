//! The diff's scratch state: its lock, its cargo target folder, and the
//! outputs of the previous diff it clears.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::error::DiffError;

/// The cargo target folder both sides share: `explicit` (`--target-dir`),
/// else `from_env` (`CARGO_TARGET_DIR`), else `own`, a folder of the diff's
/// own. It must not contain `worktrees`: cargo records the source files
/// inside its target folder relative to that folder, so the head build would
/// check the base worktree's files for changes and reuse the base binary. An
/// explicit folder that does is an error; an inherited one is passed over,
/// and returned second so the caller can say so.
pub(super) fn choose_target_dir(
    explicit: Option<&Path>,
    from_env: Option<&Path>,
    worktrees: &Path,
    own: &Path,
) -> Result<(PathBuf, Option<PathBuf>), DiffError> {
    let absolute = |dir: &Path| {
        std::path::absolute(dir).map_err(|source| DiffError::io("resolve", dir, source))
    };
    if let Some(dir) = explicit {
        let dir = absolute(dir)?;
        if worktrees.starts_with(&dir) {
            return Err(DiffError::TargetDirContainsWorktrees {
                target_dir: dir,
                worktrees: worktrees.to_path_buf(),
            });
        }
        return Ok((dir, None));
    }
    if let Some(dir) = from_env {
        let dir = absolute(dir)?;
        if !worktrees.starts_with(&dir) {
            return Ok((dir, None));
        }
        return Ok((own.to_path_buf(), Some(dir)));
    }
    Ok((own.to_path_buf(), None))
}

/// Takes the diff lock of this checkout, waiting (after calling `waiting`)
/// for a diff that holds it.
pub(super) fn lock(scratch: &Path, waiting: impl FnOnce()) -> Result<File, DiffError> {
    let path = scratch.join(".lock");
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| DiffError::io("open", &path, source))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => {
            waiting();
            file.lock()
                .map_err(|source| DiffError::io("lock", &path, source))?;
            Ok(file)
        }
        Err(TryLockError::Error(source)) => Err(DiffError::io("lock", &path, source)),
    }
}

/// Removes what an earlier diff wrote to `outputs`, so nothing stale is
/// mistaken for this run's result.
pub(super) fn clear_outputs(outputs: &Path) -> Result<(), DiffError> {
    match std::fs::read_dir(outputs) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let ours = matches!(name.as_ref(), "base" | "head" | ".scratch")
                    || name.ends_with(".diff.txt")
                    || name.starts_with("report.");
                if !ours {
                    continue;
                }
                let removed = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                removed.map_err(|source| DiffError::io("remove", &path, source))?;
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(DiffError::io("list", outputs, source)),
    }
    std::fs::create_dir_all(outputs)
        .map_err(|source| DiffError::io("create the folder", outputs, source))
}

pub(super) struct RemoveOnDrop(pub(super) PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_outputs_keeps_what_is_not_ours() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outputs = dir.path().join("diff");
        std::fs::create_dir_all(outputs.join("base")).expect("mkdir");
        for file in ["a.diff.txt", "report.md", "report.json", "notes.txt"] {
            std::fs::write(outputs.join(file), "x").expect("write");
        }
        clear_outputs(&outputs).expect("clear");
        let mut left: Vec<String> = std::fs::read_dir(&outputs)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["notes.txt"]);
        clear_outputs(&dir.path().join("new")).expect("a missing folder is created");
        assert!(dir.path().join("new").is_dir());
    }

    #[test]
    fn the_target_folder_never_contains_the_worktrees() {
        let worktrees = Path::new("/repo/target/regress-diff");
        let own = Path::new("/repo/target/regress-diff/target");
        let pick = |explicit: Option<&str>, env: Option<&str>| {
            choose_target_dir(explicit.map(Path::new), env.map(Path::new), worktrees, own)
        };
        assert_eq!(
            pick(None, None).expect("default"),
            (own.to_path_buf(), None)
        );
        assert_eq!(
            pick(None, Some("/cache/cargo")).expect("env"),
            (PathBuf::from("/cache/cargo"), None)
        );
        // The checkout's own target/ holds the worktrees: passed over.
        assert_eq!(
            pick(None, Some("/repo/target")).expect("env"),
            (own.to_path_buf(), Some(PathBuf::from("/repo/target")))
        );
        assert_eq!(
            pick(Some("/elsewhere"), Some("/cache/cargo")).expect("explicit"),
            (PathBuf::from("/elsewhere"), None)
        );
        let error = pick(Some("/repo/target"), None).unwrap_err();
        assert!(
            matches!(error, DiffError::TargetDirContainsWorktrees { .. }),
            "{error}"
        );
        // A relative folder is taken from the current folder, not from the
        // worktree cargo runs in.
        let (relative, _) = pick(Some("some/dir"), None).expect("relative");
        assert!(relative.is_absolute());
    }

    #[test]
    fn the_lock_is_exclusive() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = lock(dir.path(), || {}).expect("lock");
        let other = OpenOptions::new()
            .write(true)
            .open(dir.path().join(".lock"))
            .expect("open");
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
