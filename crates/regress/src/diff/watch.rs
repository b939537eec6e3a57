//! `regress diff --library NAME=PATH --watch BASE`: the diff again each time
//! a source file of a checkout changes, as `cargo watch` and `bacon` do.
//!
//! What is watched is what an export copies (each library's
//! [`regress_source::Library::export`] paths), so an edit to a README or a
//! test does not start a build. Changes are found by polling: every file's
//! modification time and length, twice a second; no inotify limit or
//! platform backend to run out of, and a tree of s2n-tls's size is a few
//! milliseconds to stat. A burst of saves (an editor's write and rename, a
//! `git checkout`) is one change: the watch waits until the files have
//! been quiet for [`SETTLE`].
//!
//! Ctrl-C while a diff runs stops it as any diff is stopped (every child
//! in its own process group, told to stop, waited for); while waiting, the
//! watch returns [`DiffError::Interrupted`] at the next poll. Nothing runs
//! in the background between diffs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::error::DiffError;
use super::interrupt;

/// How often the files are looked at.
pub const POLL: Duration = Duration::from_millis(500);

/// How long the files must stay unchanged before a change is acted on.
pub const SETTLE: Duration = Duration::from_millis(300);

/// The most files a watch follows: s2n-tls's exported paths are a few
/// thousand.
pub const MAX_FILES: usize = 200_000;

/// What was seen of each watched file: its modification time and length.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot(BTreeMap<PathBuf, (Option<SystemTime>, u64)>);

impl Snapshot {
    /// The files under `paths` (files or folders, relative to `root`;
    /// symlinks are not followed), at most [`MAX_FILES`]. A path that does
    /// not exist is no file.
    pub fn take(root: &Path, paths: &[&str]) -> Snapshot {
        let mut files = BTreeMap::new();
        let mut pending: Vec<PathBuf> = paths.iter().map(|path| root.join(path)).collect();
        while let Some(path) = pending.pop() {
            if files.len() >= MAX_FILES {
                break;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                if path.file_name().is_some_and(|name| name == ".git") {
                    continue;
                }
                if let Ok(entries) = std::fs::read_dir(&path) {
                    pending.extend(entries.flatten().map(|entry| entry.path()));
                }
            } else {
                files.insert(path, (meta.modified().ok(), meta.len()));
            }
        }
        Snapshot(files)
    }

    /// This snapshot and `other` together (the files of several checkouts).
    pub fn merged(mut self, other: Snapshot) -> Snapshot {
        self.0.extend(other.0);
        self
    }

    /// How many files it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The files that differ from `earlier` (changed, added or gone), at
    /// most `limit`.
    pub fn changed_since(&self, earlier: &Snapshot, limit: usize) -> Vec<PathBuf> {
        let mut changed: Vec<PathBuf> = self
            .0
            .iter()
            .filter(|(path, seen)| earlier.0.get(*path) != Some(seen))
            .map(|(path, _)| path.clone())
            .chain(
                earlier
                    .0
                    .keys()
                    .filter(|path| !self.0.contains_key(*path))
                    .cloned(),
            )
            .collect();
        changed.truncate(limit);
        changed
    }
}

/// Waits until `take` sees something other than `last` and has stayed the
/// same for [`SETTLE`]; returns the new snapshot. `Err(Interrupted)` on
/// Ctrl-C.
pub fn wait_for_change(
    last: &Snapshot,
    take: impl Fn() -> Snapshot,
    poll: Duration,
) -> Result<Snapshot, DiffError> {
    // The binary installs the Ctrl-C handler at start; without one, Ctrl-C
    // ends the process at once, which leaves nothing behind while waiting.
    loop {
        sleep(poll)?;
        let seen = take();
        if &seen == last {
            continue;
        }
        // Settle: a burst of saves is one change.
        let mut settled = seen;
        loop {
            sleep(SETTLE)?;
            let again = take();
            if again == settled {
                return Ok(settled);
            }
            settled = again;
        }
    }
}

/// Sleeps `duration`, in small steps, returning early on Ctrl-C.
fn sleep(duration: Duration) -> Result<(), DiffError> {
    let until = Instant::now() + duration;
    loop {
        interrupt::check()?;
        let now = Instant::now();
        if now >= until {
            return Ok(());
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_sees_edits_additions_and_removals_under_the_paths_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("tls")).expect("mkdir");
        std::fs::create_dir_all(root.join("tests")).expect("mkdir");
        std::fs::write(root.join("tls/a.c"), "int a;").expect("write");
        std::fs::write(root.join("tests/t.c"), "test").expect("write");
        let paths = ["tls", "api"];
        let first = Snapshot::take(root, &paths);
        assert_eq!(first.len(), 1, "tests/ is not watched, api/ does not exist");

        std::fs::write(root.join("tests/t.c"), "another test").expect("write");
        assert_eq!(Snapshot::take(root, &paths), first);

        std::fs::write(root.join("tls/a.c"), "int a = 1;").expect("write");
        std::fs::write(root.join("tls/b.c"), "int b;").expect("write");
        let second = Snapshot::take(root, &paths);
        assert_eq!(
            second.changed_since(&first, 10),
            [root.join("tls/a.c"), root.join("tls/b.c")]
        );
        std::fs::remove_file(root.join("tls/b.c")).expect("rm");
        let third = Snapshot::take(root, &paths);
        assert_eq!(third.changed_since(&second, 10), [root.join("tls/b.c")]);
    }

    /// A change made while waiting ends the wait, with the settled state.
    #[test]
    fn waiting_ends_at_a_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("tls")).expect("mkdir");
        std::fs::write(root.join("tls/a.c"), "int a;").expect("write");
        let first = Snapshot::take(&root, &["tls"]);
        let writer = {
            let root = root.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                std::fs::write(root.join("tls/a.c"), "int a = 2;").expect("write");
            })
        };
        let seen = wait_for_change(
            &first,
            || Snapshot::take(&root, &["tls"]),
            Duration::from_millis(20),
        )
        .expect("a change");
        writer.join().expect("writer");
        assert_eq!(seen.changed_since(&first, 10), [root.join("tls/a.c")]);
    }
}
