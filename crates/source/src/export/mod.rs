//! One revision of a library checkout, exported into this workspace's
//! `target/` and made buildable.
//!
//! An export lives at `target/regress-source/exports/<library>/<key>/`:
//! `tree/` is the source (after generation, see [`crate::generate`]) and
//! `export.json` says what it is. The key is the commit for a commit, and
//! `wt-<hash of the copied files>` for a dirty working tree, so the same
//! content always lands in the same folder and is reused, not rebuilt.
//!
//! **Only what a build reads is exported** ([`Library::export`]): the
//! provided crates' folders, the workspace manifest they inherit their
//! package fields and dependencies from, and what the generation step
//! copies (s2n-tls's C tree). Why not the whole revision:
//!
//! * a repository may lack objects the build never reads. A partial clone
//!   does; so does the rustls mirror this project was checked against,
//!   which lacks `rustls-provider-test/tests/rfc-9180-test-vectors.json` in
//!   every recent commit, so a whole-tree export of any of them failed. A
//!   missing object *inside* the exported paths is still an error (the
//!   build would read it); outside them it is never asked for;
//! * the working tree's key hashes only those paths, so an edit to a
//!   README or a test leaves the key, the export and the build as they
//!   were;
//! * less to copy and hash (s2n-tls's `tests/` is most of its repository).
//!
//! Not exported: the library's own `Cargo.lock` (every build resolves
//! with this workspace's scratch lock, see [`crate::scratch`]), and files a
//! manifest names only for publishing (`readme`, `license-file`,
//! `include`), which `cargo build` does not read.
//!
//! Exports are made in a temporary folder beside the final one and renamed
//! into place only when complete (tree written, layout checked, generation
//! done), so a folder at a key's path is always a finished export: a killed
//! run leaves only a temporary folder, which the next run removes.

mod commit;
mod live;
mod worktree;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::checkout::{check_layout, Checkout};
use crate::dirs::SourceDirs;
use crate::error::SourceError;
use crate::git::short;
use crate::library::{Generation, Library};
use crate::options::Options;
use crate::paths::TreeWriter;
use crate::revision::Revision;

use commit::{write_commit, CommitSource};
use worktree::{copy_work_tree, TreeHash};

/// Bumped whenever an export's content or layout changes meaning, so that
/// exports made by an older version are made again rather than trusted.
/// 2: only the paths a build reads ([`Library::export`]).
const EXPORT_FORMAT: u32 = 2;

const RECORD: &str = "export.json";
const TREE: &str = "tree";

/// A finished export of one revision.
#[derive(Debug, Clone)]
pub struct Export {
    pub library: &'static Library,
    /// What was asked for.
    pub revision: Revision,
    /// What it turned out to be, for messages: `v1.2 (0123456789ab)`, or
    /// `the working tree (wt-…)`.
    pub label: String,
    /// The commit, or `wt-<hash>` for a working tree with changes. Equal
    /// keys mean equal sources.
    pub key: String,
    /// The source tree, ready for cargo: the key's folder, or for a
    /// working tree with changes its checkout's live folder ([`live`]).
    pub tree: PathBuf,
    /// Whether this call made it (`false`: an earlier one did).
    pub created: bool,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Record {
    format: u32,
    library: String,
    key: String,
    label: String,
}

/// Exports `revision` of `checkout` (or finds the export already made) and
/// runs the library's generation step in it. A working tree with changes
/// is then built from its checkout's live folder ([`live`]), which the
/// export is mirrored into; a commit from the folder of its key, so that
/// the two sides of a diff stay built side by side.
pub fn export(
    checkout: &Checkout,
    revision: &Revision,
    dirs: &SourceDirs,
    options: &Options,
) -> Result<Export, SourceError> {
    export_placed(checkout, revision, dirs, options, false)
}

/// [`export`] for a walk over many commits (a bisect, a history): a
/// commit, too, is built from one folder per checkout, its commit folder
/// ([`live::commits_name`]), which the export is mirrored into. Built
/// from the folder of its key, every commit would be a new package path to
/// cargo and a new source path to the compiler cache: all of the
/// library's C code compiled again for each (about 25 s for s2n-tls). From
/// one folder, only the files that differ from the last commit built there
/// are rewritten, cargo reruns the build scripts, and the compiler cache
/// hands back every object whose source did not change. A working tree
/// with changes still goes to the live folder, as in [`export`].
///
/// One run at a time uses a checkout's commit folder: bisect and history
/// hold their state lock from export to build.
pub fn export_for_walk(
    checkout: &Checkout,
    revision: &Revision,
    dirs: &SourceDirs,
    options: &Options,
) -> Result<Export, SourceError> {
    export_placed(checkout, revision, dirs, options, true)
}

/// The export of `revision`, built from the live folder when it is a
/// working tree with changes, else from the commit folder when `walk`
/// says so, else from the folder of its key.
fn export_placed(
    checkout: &Checkout,
    revision: &Revision,
    dirs: &SourceDirs,
    options: &Options,
    walk: bool,
) -> Result<Export, SourceError> {
    let mut exported = export_keyed(checkout, revision, dirs, options)?;
    if !exported.created && exported.library.generation == Generation::OpenSslShell {
        // An OpenSSL export made earlier carries the build logic pinned
        // then: the shell is brought up to the one pinned now (only files
        // that differ are written).
        crate::openssl_src::generate(&exported.tree, dirs, options)?;
    }
    let folder = if exported.key.starts_with(live::PREFIX) {
        live::name(checkout.root())
    } else if walk {
        live::commits_name(checkout.root())
    } else {
        return Ok(exported);
    };
    exported.tree = mirror_into(&exported, checkout, dirs, &folder)?;
    Ok(exported)
}

/// Mirrors `exported`'s tree into the checkout's folder `folder` (under
/// the library's exports) and returns that folder's tree.
fn mirror_into(
    exported: &Export,
    checkout: &Checkout,
    dirs: &SourceDirs,
    folder: &str,
) -> Result<PathBuf, SourceError> {
    let into = dirs
        .exports(checkout.library().name)
        .join(folder)
        .join(TREE);
    let mirrored = live::mirror(&exported.tree, &into)
        .map_err(|error| SourceError::io("bring up to date", &into, error))?;
    if mirrored != live::Mirrored::default() {
        // A build script that names what it reruns on (s2n-tls-sys names
        // only environment variables) is not rerun by cargo when a C
        // file changes: a new build script time makes it run again.
        live::touch_build_scripts(&into, checkout.library())
            .map_err(|error| SourceError::io("touch the build scripts in", &into, error))?;
    }
    Ok(into)
}

/// The export of `revision` in the folder of its key.
fn export_keyed(
    checkout: &Checkout,
    revision: &Revision,
    dirs: &SourceDirs,
    options: &Options,
) -> Result<Export, SourceError> {
    let library = checkout.library();
    let parent = dirs.exports(library.name);
    std::fs::create_dir_all(&parent).map_err(|error| SourceError::io("create", &parent, error))?;
    remove_abandoned(&parent);
    // A clean working tree is its HEAD commit: same key, same export.
    let (commit, label) = match revision {
        Revision::Commit { commit, .. } => (Some(commit.clone()), revision.label()),
        Revision::WorkingTree if checkout.is_clean()? => {
            let head = checkout.resolve(crate::revision::Side::Head, "HEAD")?;
            let commit = head.commit().expect("resolve gives a commit").to_owned();
            let label = format!("the working tree (clean, HEAD {})", short(&commit));
            (Some(commit), label)
        }
        Revision::WorkingTree => (None, String::new()),
    };
    if let Some(commit) = &commit {
        if let Some(found) = existing(&parent, library, revision, commit, &label) {
            return Ok(found);
        }
    }
    let staging = Staging::new(&parent)?;
    let mut writer = TreeWriter::create(&staging.path.join(TREE))
        .map_err(|error| SourceError::io("create", staging.path.join(TREE), error))?;
    let (key, label) = match commit {
        Some(commit) => {
            let source = CommitSource {
                library,
                git: checkout
                    .git()
                    .with_limits(options.limits(options.timeouts.export)),
                git_dir: checkout.common_dir().to_path_buf(),
                work_tree: Some(checkout.root().to_path_buf()),
                checkout: checkout.root(),
            };
            write_commit(&source, &commit, library.export, None, &mut writer)?;
            (commit, label)
        }
        None => {
            let mut hash = TreeHash::new();
            copy_work_tree(
                library,
                &checkout
                    .git()
                    .with_limits(options.limits(options.timeouts.export)),
                checkout.root(),
                library.export,
                None,
                &mut writer,
                &mut hash,
                checkout.root(),
            )?;
            let key = hash.finish();
            let label = format!("the working tree ({})", &key[..15]);
            if let Some(found) = existing(&parent, library, revision, &key, &label) {
                return Ok(found);
            }
            (key, label)
        }
    };
    let tree = staging.path.join(TREE);
    check_layout(library, &tree, Some(&label))?;
    crate::generate::generate(library, &tree, &label, dirs, options)?;
    let record = Record {
        format: EXPORT_FORMAT,
        library: library.name.to_owned(),
        key: key.clone(),
        label: label.clone(),
    };
    let record_path = staging.path.join(RECORD);
    std::fs::write(
        &record_path,
        serde_json::to_vec_pretty(&record).expect("serializable"),
    )
    .map_err(|error| SourceError::io("write", &record_path, error))?;
    let finished = parent.join(&key);
    let created = staging.publish(&finished)?;
    Ok(Export {
        library,
        revision: revision.clone(),
        label,
        key,
        tree: finished.join(TREE),
        created,
    })
}

/// The finished export at `parent/key`, if there is one of this format.
/// One of another format is removed, to be made again.
fn existing(
    parent: &Path,
    library: &'static Library,
    revision: &Revision,
    key: &str,
    label: &str,
) -> Option<Export> {
    let dir = parent.join(key);
    let record: Option<Record> = std::fs::read(dir.join(RECORD))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    match record {
        Some(record) if record.format == EXPORT_FORMAT && record.key == key => Some(Export {
            library,
            revision: revision.clone(),
            label: label.to_owned(),
            key: key.to_owned(),
            tree: dir.join(TREE),
            created: false,
        }),
        _ => {
            if dir.exists() {
                discard(&dir);
            }
            None
        }
    }
}

/// A temporary folder that becomes an export by one rename, or is removed.
struct Staging {
    path: PathBuf,
    published: bool,
}

/// Prefix of temporary folders; the process id follows, so a folder whose
/// process is gone can be told from one still being written.
const STAGING_PREFIX: &str = ".staging-";

impl Staging {
    fn new(parent: &Path) -> Result<Staging, SourceError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = parent.join(format!(
            "{STAGING_PREFIX}{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir(&path).map_err(|error| SourceError::io("create", &path, error))?;
        Ok(Staging {
            path,
            published: false,
        })
    }

    /// Renames the staging folder to `finished`. `Ok(false)` when another
    /// run got there first: its export (same key, same content) is kept.
    fn publish(mut self, finished: &Path) -> Result<bool, SourceError> {
        match std::fs::rename(&self.path, finished) {
            Ok(()) => {
                self.published = true;
                Ok(true)
            }
            Err(_) if finished.join(RECORD).is_file() => Ok(false),
            Err(error) => Err(SourceError::io("move the export to", finished, error)),
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            discard(&self.path);
        }
    }
}

/// Removes a folder so that it never looks like an export while it goes:
/// it is first renamed out of the way, then deleted. Best effort.
fn discard(dir: &Path) {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let doomed = dir.with_file_name(format!(
        "{STAGING_PREFIX}{}-discard-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    ));
    let target = if std::fs::rename(dir, &doomed).is_ok() {
        doomed
    } else {
        dir.to_path_buf()
    };
    make_writable(&target);
    let _ = std::fs::remove_dir_all(&target);
}

/// Generated or copied trees may contain read-only folders; removal needs
/// them writable.
fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let mode = meta.permissions().mode();
    if mode & 0o700 != 0o700 {
        let _ = std::fs::set_permissions(dir, PermissionsExt::from_mode(mode | 0o700));
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            make_writable(&entry.path());
        }
    }
}

/// Removes staging folders whose process no longer runs (a run that was
/// killed outright).
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(STAGING_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        if !process_alive(pid) {
            make_writable(&entry.path());
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
