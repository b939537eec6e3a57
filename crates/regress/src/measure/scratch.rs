//! Scratch folders under `perf_outputs/.scratch/`: one per measurement (the
//! child's files and logs) and one per run (the staged copy of the measured
//! program, tens of MiB).
//!
//! Each is a guard that removes its folder when dropped, so a run that ends
//! (cleanly, with an error, or on Ctrl-C) leaves nothing behind, except a
//! failed measurement's folder, kept on purpose as the evidence its error
//! message points to. A run killed outright cannot clean up: every folder
//! carries the id of the process that made it, and [`sweep_stale`] removes
//! those whose process is gone.

use std::path::{Path, PathBuf};

use super::{MeasureError, Result};

/// A scratch folder, removed when dropped unless [`ScratchDir::keep`] was
/// called.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    keep: bool,
}

impl ScratchDir {
    /// Creates `parent/<label>.pid<this process>`, replacing what an earlier
    /// holder of the same name left.
    pub fn create(parent: &Path, label: &str) -> Result<ScratchDir> {
        let path = parent.join(format!("{label}.pid{}", std::process::id()));
        if path.exists() {
            let _ = std::fs::remove_dir_all(&path);
        }
        std::fs::create_dir_all(&path)
            .map_err(|source| MeasureError::io("create the scratch folder", &path, source))?;
        Ok(ScratchDir { path, keep: false })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the folder in place when dropped.
    pub fn keep(&mut self) {
        self.keep = true;
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The process that made a scratch folder, from its name:
/// `<label>.pid<N>`, or the names of earlier versions, `binary.<N>` and
/// `<stem>.<N>.<counter>`.
fn owner(name: &str) -> Option<u32> {
    if let Some((_, pid)) = name.rsplit_once(".pid") {
        return pid.parse().ok();
    }
    if let Some(pid) = name.strip_prefix("binary.") {
        return pid.parse().ok();
    }
    let mut parts = name.rsplit('.');
    let counter = parts.next()?;
    let pid = parts.next()?;
    counter.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether process `pid` is alive (or, to be safe, might be).
fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes the scratch folders in `dir` whose process is gone; returns how
/// many. Folders of live processes (another run at the same time) and
/// anything not named like a scratch folder are left alone.
pub fn sweep_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_dir
            && pid != std::process::id()
            && !alive(pid)
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_whose_they_are() {
        assert_eq!(owner("s2n_tls.handshake.3.pid412"), Some(412));
        assert_eq!(owner("binary.77"), Some(77));
        assert_eq!(owner("s2n_tls.handshake.77.0"), Some(77));
        assert_eq!(owner("notes"), None);
        assert_eq!(owner("a.b"), None);
    }

    #[test]
    fn a_guard_removes_its_folder_unless_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = {
            let scratch = ScratchDir::create(dir.path(), "a.b.0").expect("create");
            std::fs::write(scratch.path().join("log"), "x").expect("write");
            scratch.path().to_path_buf()
        };
        assert!(!path.exists());
        let kept = {
            let mut scratch = ScratchDir::create(dir.path(), "a.b.1").expect("create");
            scratch.keep();
            scratch.path().to_path_buf()
        };
        assert!(kept.is_dir());
    }

    #[test]
    fn sweeping_removes_only_the_folders_of_dead_processes() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A process that has certainly exited: a child we reaped.
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let ours = std::process::id();
        for name in [
            format!("binary.{dead}"),
            format!("a.b.{dead}.0"),
            format!("a.b.0.pid{dead}"),
            format!("binary.{ours}"),
            format!("a.b.1.pid{ours}"),
            "notes".to_owned(),
        ] {
            std::fs::create_dir(dir.path().join(name)).expect("mkdir");
        }
        assert_eq!(sweep_stale(dir.path()), 3);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            vec![
                format!("a.b.1.pid{ours}"),
                format!("binary.{ours}"),
                "notes".to_owned()
            ]
        );
    }
}
