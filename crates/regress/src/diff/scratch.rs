//! The diff's scratch state: its lock, its cargo target folder, and the
//! outputs of the previous diff, kept aside until this one completes.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::error::DiffError;
use crate::report::events::{DiffStep, Event, Listener};
use crate::workspace::Workspace;

/// [`choose_target_dir`] with `CARGO_TARGET_DIR` read from the environment,
/// saying so when it is passed over: the target folder of a diff of two
/// commits and of a library diff alike.
pub(super) fn target_dir(
    explicit: Option<&Path>,
    worktrees: &Path,
    own: &Path,
    workspace: &Workspace,
    listener: &dyn Listener,
) -> Result<PathBuf, DiffError> {
    let from_env = std::env::var_os(crate::env::CARGO_TARGET_DIR).filter(|dir| !dir.is_empty());
    let (dir, why_not_env) =
        choose_target_dir(explicit, from_env.as_deref().map(Path::new), worktrees, own)?;
    if let Some(env_dir) = why_not_env {
        listener.event(Event::Diff(DiffStep::TargetDirPassedOver {
            env_dir: &env_dir,
            dir: &workspace.display_path(&dir),
        }));
    }
    Ok(dir)
}

/// The cargo target folder both sides share: `explicit` (`--target-dir`),
/// else `from_env` (`CARGO_TARGET_DIR`), else `own`, a folder of the diff's
/// own. It must not contain `worktrees`: cargo records the source files
/// inside its target folder relative to that folder, so the head build would
/// check the base worktree's files for changes and reuse the base binary. An
/// explicit folder that does is an error; an inherited one is passed over,
/// and returned second so the caller can say so.
fn choose_target_dir(
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

/// The diff lock of a checkout: one diff at a time. While it is held, the
/// previous diff's outputs are kept aside ([`DiffLock::set_aside_outputs`]);
/// when it is released they are dropped if this diff completed its outputs
/// ([`DiffLock::outputs_complete`]) and put back otherwise (an error,
/// Ctrl-C), so a diff that does not finish leaves the last complete report
/// as it was. The folders set aside belong to the lock, not to the process:
/// releasing one lock never touches another's.
#[derive(Debug)]
pub struct DiffLock {
    _file: File,
    set_aside: Vec<SetAside>,
}

impl Drop for DiffLock {
    fn drop(&mut self) {
        for outputs in self.set_aside.drain(..) {
            let complete = outputs.complete && !crate::process::interrupted();
            finish(&outputs.dir, complete);
        }
    }
}

/// An output folder whose previous contents are kept aside, and whether
/// this diff completed it.
#[derive(Debug)]
struct SetAside {
    dir: PathBuf,
    complete: bool,
}

/// Where the previous diff's outputs wait while a new diff runs.
const PREVIOUS: &str = ".previous";

/// How every diff of the checkout at `root` begins, whatever its sides
/// (two commits, or library sources): its scratch folder
/// (`target/regress-diff`, returned) is created, its lock taken (after
/// calling `waiting` when another diff holds it), and the previous diff's
/// outputs in `outputs` set aside. Both kinds write the same outputs, so
/// they share the lock.
pub(super) fn begin(
    root: &Path,
    outputs: &Path,
    waiting: impl FnOnce(),
) -> Result<(PathBuf, DiffLock), DiffError> {
    // Everything the diff writes, moves or removes is below these two
    // folders: neither may be reached through a link, nor may the folder
    // the previous outputs wait in (which is emptied and removed).
    let workspace = crate::workspace::Workspace::new(root);
    let scratch = workspace.own(Path::new("target/regress-diff"))?;
    if let Ok(relative) = outputs.strip_prefix(root) {
        workspace.own(&relative.join(PREVIOUS))?;
    }
    std::fs::create_dir_all(&scratch)
        .map_err(|source| DiffError::io("create the folder", &scratch, source))?;
    let mut lock = lock(&scratch, waiting)?;
    lock.set_aside_outputs(outputs)?;
    Ok((scratch, lock))
}

/// Takes the diff lock of this checkout, waiting (after calling `waiting`)
/// for a diff that holds it.
fn lock(scratch: &Path, waiting: impl FnOnce()) -> Result<DiffLock, DiffError> {
    let path = scratch.join(".lock");
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| DiffError::io("open", &path, source))?;
    match file.try_lock() {
        Ok(()) => Ok(DiffLock {
            _file: file,
            set_aside: Vec::new(),
        }),
        Err(TryLockError::WouldBlock) => {
            waiting();
            file.lock()
                .map_err(|source| DiffError::io("lock", &path, source))?;
            Ok(DiffLock {
                _file: file,
                set_aside: Vec::new(),
            })
        }
        Err(TryLockError::Error(source)) => Err(DiffError::io("lock", &path, source)),
    }
}

/// Whether `name` is an output a diff writes into its folder (everything
/// else there is the user's and left alone).
fn is_ours(name: &str) -> bool {
    matches!(name, "base" | "head" | ".scratch") || name.ends_with(".diff.txt")
}

/// The outputs a diff writes in `dir`, except its report (`report.*`, which
/// the command replaces whole when the diff has completed).
fn ours(dir: &Path) -> Vec<(String, PathBuf)> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    is_ours(&name).then(|| (name, entry.path()))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn remove(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
}

impl DiffLock {
    /// Sets the previous diff's per-harness outputs in `outputs` aside (into
    /// `.previous/`), so that nothing stale is mistaken for this run's result
    /// and nothing complete is lost before this run completes. Its report
    /// stays where it is until the command replaces it. The lock puts them
    /// back or drops them when released.
    pub(super) fn set_aside_outputs(&mut self, outputs: &Path) -> Result<(), DiffError> {
        std::fs::create_dir_all(outputs)
            .map_err(|source| DiffError::io("create the folder", outputs, source))?;
        let previous = outputs.join(PREVIOUS);
        let previous_kind = std::fs::symlink_metadata(&previous).map(|meta| meta.file_type());
        if previous_kind.as_ref().is_ok_and(|kind| !kind.is_dir()) {
            return Err(crate::MeasureError::UnsafePath {
                path: previous,
                reason: "it is not a folder the diff made (a link or a file): remove it and run \
                         again; the diff never empties or follows it"
                    .to_owned(),
            }
            .into());
        }
        if previous_kind.is_ok() {
            // A diff killed outright (no chance to clean up) left `.previous`
            // with the last complete outputs, and its own partial ones beside.
            for (_, path) in ours(outputs) {
                remove(&path).map_err(|source| DiffError::io("remove", &path, source))?;
            }
        } else {
            std::fs::create_dir(&previous)
                .map_err(|source| DiffError::io("create the folder", &previous, source))?;
            for (name, path) in ours(outputs) {
                if name == ".scratch" {
                    remove(&path).map_err(|source| DiffError::io("remove", &path, source))?;
                    continue;
                }
                let aside = previous.join(&name);
                std::fs::rename(&path, &aside)
                    .map_err(|source| DiffError::io("move aside", &path, source))?;
            }
        }
        self.set_aside.push(SetAside {
            dir: outputs.to_path_buf(),
            complete: false,
        });
        Ok(())
    }

    /// This diff has written all of its outputs in `outputs`: the previous
    /// ones can go when the lock is released.
    pub(super) fn outputs_complete(&mut self, outputs: &Path) {
        for set_aside in self
            .set_aside
            .iter_mut()
            .filter(|set_aside| set_aside.dir == outputs)
        {
            set_aside.complete = true;
        }
    }
}

/// Drops the outputs set aside (`complete`), or puts them back in place of
/// this diff's partial ones. Errors are ignored: this runs while unwinding,
/// and what it could not move is still in `.previous/`, where the next diff
/// finds it.
fn finish(outputs: &Path, complete: bool) {
    let previous = outputs.join(PREVIOUS);
    if !complete {
        for (_, path) in ours(outputs) {
            let _ = remove(&path);
        }
        for (name, path) in ours(&previous) {
            let _ = std::fs::rename(&path, outputs.join(name));
        }
    }
    let _ = std::fs::remove_dir_all(&previous);
}

pub(super) struct RemoveOnDrop(pub(super) PathBuf);

impl RemoveOnDrop {
    /// `dir`, emptied of what an earlier run left there, removed again when
    /// dropped.
    pub(super) fn fresh(dir: PathBuf) -> RemoveOnDrop {
        let _ = std::fs::remove_dir_all(&dir);
        RemoveOnDrop(dir)
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A diff that does not complete leaves the previous outputs as they
    /// were; one that completes replaces them; the user's files stay.
    #[test]
    fn previous_outputs_wait_until_the_new_ones_are_complete() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lock_dir = dir.path().join("scratch");
        std::fs::create_dir_all(&lock_dir).expect("mkdir");
        let outputs = dir.path().join("diff");
        std::fs::create_dir_all(outputs.join("base")).expect("mkdir");
        for file in ["a.diff.txt", "report.md", "report.json", "notes.txt"] {
            std::fs::write(outputs.join(file), "old").expect("write");
        }

        // Fails half-way: its partial outputs go, the old ones come back.
        {
            let mut lock = lock(&lock_dir, || {}).expect("lock");
            lock.set_aside_outputs(&outputs).expect("set aside");
            assert_eq!(
                names(&outputs),
                [".previous", "notes.txt", "report.json", "report.md"]
            );
            std::fs::create_dir_all(outputs.join("head")).expect("mkdir");
            std::fs::write(outputs.join("b.diff.txt"), "partial").expect("write");
        }
        assert_eq!(
            names(&outputs),
            [
                "a.diff.txt",
                "base",
                "notes.txt",
                "report.json",
                "report.md"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(outputs.join("a.diff.txt")).expect("read"),
            "old"
        );

        // Completes: the old outputs are gone, the new ones stay.
        {
            let mut lock = lock(&lock_dir, || {}).expect("lock");
            lock.set_aside_outputs(&outputs).expect("set aside");
            std::fs::write(outputs.join("c.diff.txt"), "new").expect("write");
            lock.outputs_complete(&outputs);
        }
        assert_eq!(
            names(&outputs),
            ["c.diff.txt", "notes.txt", "report.json", "report.md"]
        );

        // Killed outright earlier: `.previous` is the complete set.
        std::fs::create_dir_all(outputs.join(".previous")).expect("mkdir");
        std::fs::write(outputs.join(".previous/d.diff.txt"), "complete").expect("write");
        {
            let mut lock = lock(&lock_dir, || {}).expect("lock");
            lock.set_aside_outputs(&outputs).expect("set aside");
            assert_eq!(
                names(&outputs),
                [".previous", "notes.txt", "report.json", "report.md"]
            );
        }
        assert!(outputs.join("d.diff.txt").is_file());
    }

    /// Releasing one lock leaves another lock's outputs alone (they used to
    /// share one list in the process, and a test that released its lock
    /// put back the outputs another test had just completed).
    #[test]
    fn each_lock_finishes_only_its_own_outputs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        for scratch in [&first, &second] {
            std::fs::create_dir_all(scratch.join("diff")).expect("mkdir");
            std::fs::write(scratch.join("diff/a.diff.txt"), "old").expect("write");
        }
        let mut held = lock(&first, || {}).expect("lock");
        held.set_aside_outputs(&first.join("diff"))
            .expect("set aside");
        {
            let mut other = lock(&second, || {}).expect("lock");
            other
                .set_aside_outputs(&second.join("diff"))
                .expect("set aside");
        }
        // The other lock put its own outputs back, and only those.
        assert_eq!(names(&second.join("diff")), ["a.diff.txt"]);
        assert_eq!(names(&first.join("diff")), [".previous"]);
        std::fs::write(first.join("diff/b.diff.txt"), "new").expect("write");
        held.outputs_complete(&first.join("diff"));
        drop(held);
        assert_eq!(names(&first.join("diff")), ["b.diff.txt"]);
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
