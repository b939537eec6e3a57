//! Writes files whole or not at all, and sets of files likewise.
//!
//! Two runs at once (two `cargo test` invocations, or `regress noise` beside a
//! test run) must never leave a half-written or interleaved output. Each
//! write goes to a file unique to this process and call, then is renamed
//! over the target, which is atomic within one file system.
//!
//! A set of files (`regress bless` of many harnesses) is changed by
//! [`replace_in_folder`]: the new folder is made beside the old one (the
//! unchanged files hard-linked, the changed ones written), then the two
//! are swapped by one `renameat2(RENAME_EXCHANGE)`. Whenever the process
//! dies (SIGKILL, a power cut after the data reached the disk), the folder
//! holds either every old file or every new one; what a dead process left
//! beside it is removed by [`recover_folder`] on the next start.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::measure::{MeasureError, Result};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Writes `contents` to `path` atomically.
pub fn write(path: &Path, contents: &[u8]) -> Result<()> {
    let temporary = temporary_sibling(path);
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    result.map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        MeasureError::io("write", path, source)
    })
}

/// The name of a folder's replacement being made (or of the old folder
/// after the swap, until it is removed): `.<name>.regress-swap-<pid>`.
fn swap_sibling(dir: &Path, pid: u32) -> Option<PathBuf> {
    let name = dir.file_name()?.to_string_lossy().into_owned();
    Some(dir.with_file_name(format!(".{name}.regress-swap-{pid}")))
}

/// Whether a process of that id is alive (a swap it left is then its own).
fn alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes what a process that died while replacing `dir` left beside it:
/// its replacement (the new files, not yet swapped in, or the old ones,
/// swapped out). `dir` itself is whole either way. Called before every
/// replacement and by every command at its start.
pub fn recover_folder(dir: &Path) {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return;
    };
    let prefix = format!(".{}.regress-swap-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = file_name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split('.').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if alive(pid) && pid != std::process::id() {
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if !dir.exists() && is_dir {
            // Only a swap by two renames (a file system without
            // RENAME_EXCHANGE) can leave no folder: the old one is put back.
            let _ = std::fs::rename(entry.path(), dir);
        } else if is_dir {
            let _ = std::fs::remove_dir_all(entry.path());
        } else {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Replaces the files `changes` (a name in `dir`, and its new bytes) all
/// at once: every other entry of `dir` is kept as it is (hard links, so
/// nothing is copied), and the folder is swapped in one step (see the
/// module's documentation). An error leaves `dir` untouched.
pub fn replace_in_folder(dir: &Path, changes: &[(PathBuf, Vec<u8>)]) -> Result<()> {
    recover_folder(dir);
    let staging = swap_sibling(dir, std::process::id()).ok_or_else(|| {
        MeasureError::io(
            "replace",
            dir,
            std::io::Error::other("the folder has no name"),
        )
    })?;
    let result = (|| {
        link_tree(dir, &staging).map_err(|source| MeasureError::io("prepare", &staging, source))?;
        for (name, bytes) in changes {
            let path = staging.join(name);
            let _ = std::fs::remove_file(&path);
            let mut file = std::fs::File::options()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|source| MeasureError::io("write", dir.join(name), source))?;
            file.write_all(bytes)
                .and_then(|()| file.sync_all())
                .map_err(|source| MeasureError::io("write", dir.join(name), source))?;
        }
        std::fs::File::open(&staging)
            .and_then(|folder| folder.sync_all())
            .map_err(|source| MeasureError::io("write", &staging, source))?;
        swap(&staging, dir).map_err(|source| MeasureError::io("replace", dir, source))
    })();
    // After the swap the staging name holds the old files; before it (an
    // error), the partial new ones. Either way they go.
    let _ = std::fs::remove_dir_all(&staging);
    if let Some(parent) = dir.parent() {
        let _ = std::fs::File::open(parent).and_then(|folder| folder.sync_all());
    }
    result
}

/// `to`, a new folder with every entry of `from`: files hard-linked,
/// folders made anew, symlinks copied as links.
fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    if let Ok(meta) = std::fs::metadata(from) {
        let _ = std::fs::set_permissions(to, meta.permissions());
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            link_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::hard_link(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Swaps the folders `a` and `b` in one step; where the file system cannot
/// (no RENAME_EXCHANGE), by two renames, which [`recover_folder`] completes
/// should the process die between them.
fn swap(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |path: &Path| {
        std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("a path with a NUL byte"))
    };
    let (a_c, b_c) = (c(a)?, c(b)?);
    // SAFETY: two valid C strings, relative to the current folder.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a_c.as_ptr(),
            libc::AT_FDCWD,
            b_c.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
            // `b` (the old folder) to a name of its own, `a` in its place;
            // a death between the two is undone by `recover_folder`, which
            // puts the old folder back under its name.
            let aside = swap_sibling(b, std::process::id())
                .map(|path| path.with_extension("old"))
                .ok_or_else(|| std::io::Error::other("the folder has no name"))?;
            std::fs::rename(b, &aside)?;
            if let Err(error) = std::fs::rename(a, b) {
                let _ = std::fs::rename(&aside, b);
                return Err(error);
            }
            std::fs::rename(&aside, a)
        }
        _ => Err(error),
    }
}

fn temporary_sibling(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_leaving_no_temporaries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out.json");
        write(&path, b"first").expect("write");
        write(&path, b"second").expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
    }

    #[test]
    fn a_folder_is_replaced_whole_and_a_dead_swap_is_cleaned_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let baselines = dir.path().join("baselines");
        std::fs::create_dir_all(baselines.join("history")).expect("mkdir");
        std::fs::write(baselines.join("a.json"), "old a").expect("write");
        std::fs::write(baselines.join("b.json"), "old b").expect("write");
        std::fs::write(baselines.join("history/h.json"), "h").expect("write");
        replace_in_folder(
            &baselines,
            &[
                (PathBuf::from("a.json"), b"new a".to_vec()),
                (PathBuf::from("c.json"), b"new c".to_vec()),
            ],
        )
        .expect("replace");
        let read = |name: &str| std::fs::read_to_string(baselines.join(name)).expect("read");
        assert_eq!(read("a.json"), "new a");
        assert_eq!(read("b.json"), "old b");
        assert_eq!(read("c.json"), "new c");
        assert_eq!(read("history/h.json"), "h");
        let names = |dir: &Path| -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .expect("read_dir")
                .map(|entry| {
                    entry
                        .expect("entry")
                        .file_name()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(dir.path()), vec!["baselines"]);
        // What a killed bless leaves: a swap folder of a dead process.
        let dead = dir.path().join(".baselines.regress-swap-999999999");
        std::fs::create_dir(&dead).expect("mkdir");
        std::fs::write(dead.join("a.json"), "half").expect("write");
        recover_folder(&baselines);
        assert_eq!(names(dir.path()), vec!["baselines"]);
        assert_eq!(read("a.json"), "new a");
        // A swap by two renames that died between them: the folder is back.
        std::fs::rename(&baselines, &dead).expect("rename");
        recover_folder(&baselines);
        assert_eq!(read("b.json"), "old b");
    }

    #[test]
    fn an_unwritable_folder_is_an_error_naming_the_file() {
        let err = write(Path::new("/nonexistent-folder/out.json"), b"x").unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent-folder/out.json"),
            "{err}"
        );
    }
}
