//! Everything about a user's repository that this crate promises not to
//! change, captured so that two captures can be compared: the work tree
//! (every file, link and mode, untracked and ignored ones included), and
//! the whole `.git` folder byte for byte: index, refs, stash, objects,
//! config, `modules/` of submodules, and the absence of `worktrees/`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::git;

#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Path (relative to the repository root) -> kind, mode and content.
    files: BTreeMap<String, String>,
    stash: String,
    status: String,
}

impl Snapshot {
    pub fn take(root: &Path) -> Snapshot {
        let mut files = BTreeMap::new();
        walk(root, root, &mut files);
        Snapshot {
            files,
            stash: git(root, &["stash", "list"]),
            status: git(
                root,
                &["--no-optional-locks", "status", "--porcelain", "--ignored"],
            ),
        }
    }

    /// Panics with the differences when `self` and `other` differ.
    pub fn assert_same(&self, other: &Snapshot) {
        let mut differences = Vec::new();
        for (path, before) in &self.files {
            match other.files.get(path) {
                None => differences.push(format!("removed: {path}")),
                Some(after) if after != before => differences.push(format!("changed: {path}")),
                Some(_) => {}
            }
        }
        for path in other.files.keys() {
            if !self.files.contains_key(path) {
                differences.push(format!("added: {path}"));
            }
        }
        if self.stash != other.stash {
            differences.push(format!("stash: {:?} -> {:?}", self.stash, other.stash));
        }
        if self.status != other.status {
            differences.push(format!("status: {:?} -> {:?}", self.status, other.status));
        }
        assert!(
            differences.is_empty(),
            "the repository changed:\n{}",
            differences.join("\n")
        );
    }

    /// Whether `.git/worktrees` exists in the snapshot.
    pub fn has_worktrees(&self) -> bool {
        self.files
            .keys()
            .any(|path| path.starts_with(".git/worktrees"))
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|entry| entry.expect("entry"))
        .collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let relative = path
            .strip_prefix(root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        let mode = meta.permissions().mode();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).expect("link");
            files.insert(relative, format!("link {mode:o} {}", target.display()));
        } else if meta.is_dir() {
            files.insert(relative.clone(), format!("dir {mode:o}"));
            walk(root, &path, files);
        } else {
            let content = std::fs::read(&path).expect("read");
            files.insert(relative, format!("file {mode:o} {}", digest(&content)));
        }
    }
}

/// A content fingerprint (FNV-1a, 128 bits from two seeds): enough to see
/// that a byte changed, without a hashing dependency in the tests.
fn digest(bytes: &[u8]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for &byte in bytes {
        a = (a ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        b = (b ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3 ^ 0x9e37);
    }
    format!("{a:016x}{b:016x}-{}", bytes.len())
}
