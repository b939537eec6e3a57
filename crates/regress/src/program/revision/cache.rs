//! Built programs (and failed builds), one folder per key.
//!
//! ```text
//! target/regress-revisions/programs/<key>/
//!   build.json     what was built, and its harnesses, or why it did not build
//!   harnesses      the measured program
//!   Cargo.lock     the lock it was built with (the runner's fingerprint)
//! ```
//!
//! An entry is made in a staging folder and renamed into place whole, so a
//! folder at a key's path is always complete; an interrupted build leaves
//! only a staging folder, removed by the next build of the same key. The
//! record is read back as hostile input: bounded, every harness name
//! checked.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{DoesNotBuild, RevisionError};
use crate::harness_name::HarnessName;
use crate::program::{self, PROGRAM};

const RECORD: &str = "build.json";
const SCHEMA: u32 = 1;
/// The longest reason kept for a revision that does not build.
const MAX_REASON: usize = 4096;

/// A revision's built program.
#[derive(Debug, Clone)]
pub struct Program {
    /// The cache entry (holds the program and its `Cargo.lock`).
    pub dir: PathBuf,
    pub program: PathBuf,
    /// The harnesses it hosts, sorted.
    pub names: Vec<HarnessName>,
    /// Whether it came from the cache (no build ran).
    pub cached: bool,
}

/// What building a revision gave.
#[derive(Debug, Clone)]
pub enum Built {
    Program(Program),
    /// It does not build; the reason's first lines.
    DoesNotBuild {
        reason: String,
        cached: bool,
    },
}

impl Built {
    pub fn cached(&self) -> bool {
        match self {
            Built::Program(program) => program.cached,
            Built::DoesNotBuild { cached, .. } => *cached,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    schema: u32,
    revision: String,
    /// The harness names; empty when it does not build.
    names: Vec<HarnessName>,
    /// Why it does not build; `None` when it does.
    does_not_build: Option<String>,
}

/// The cache of built programs under a folder.
pub struct ProgramCache {
    root: PathBuf,
}

impl ProgramCache {
    pub fn new(state: &Path) -> ProgramCache {
        ProgramCache {
            root: state.join("programs"),
        }
    }

    /// The folder of `key`'s entry.
    pub fn entry(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    /// Marks `built` as just used and removes the entries beyond the `max`
    /// most recently used (a used stamp in each; an entry without one counts
    /// as oldest). Staging folders of builds still running are left alone.
    /// Best effort: an entry that cannot be marked or removed stays.
    pub fn keep_only_the_newest(&self, built: &Built, max: usize) {
        const USED: &str = "used";
        if let Built::Program(program) = built {
            // Written, not only opened: a write always moves the file's time.
            let now = std::time::SystemTime::now()
                .duration_since(std::time::SystemTime::UNIX_EPOCH)
                .map_or(0, |since| since.as_nanos());
            let _ = std::fs::write(program.dir.join(USED), format!("{now}\n"));
        }
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        let mut kept: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(|entry| {
                let entry = entry.ok()?;
                if entry.file_name().to_string_lossy().starts_with('.')
                    || !entry.file_type().ok()?.is_dir()
                {
                    return None;
                }
                let used = std::fs::metadata(entry.path().join(USED))
                    .and_then(|meta| meta.modified())
                    .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
                Some((used, entry.path()))
            })
            .collect();
        kept.sort_by_key(|(used, _)| std::cmp::Reverse(*used));
        for (_, dir) in kept.into_iter().skip(max) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// The entry of `key`, or a fresh build made by `build` into a staging
    /// folder (see [`super::Builder::build`]) and kept.
    pub fn get_or_build(
        &self,
        key: &str,
        revision: &str,
        build: impl FnOnce(&Path) -> Result<Result<(), DoesNotBuild>, RevisionError>,
    ) -> Result<Built, RevisionError> {
        let dir = self.entry(key);
        if let Some(found) = read(&dir) {
            return Ok(found);
        }
        let staging = self
            .root
            .join(format!(".staging-{key}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging)
            .map_err(|source| RevisionError::io("create the folder", &staging, source))?;
        let guard = RemoveOnDrop(staging.clone());
        let record = match build(&staging)? {
            Ok(()) => {
                let names = program::list(&staging.join(PROGRAM))?;
                Record {
                    schema: SCHEMA,
                    revision: revision.to_owned(),
                    names,
                    does_not_build: None,
                }
            }
            Err(reason) => Record {
                schema: SCHEMA,
                revision: revision.to_owned(),
                names: Vec::new(),
                does_not_build: Some(bounded(&reason.to_string())),
            },
        };
        let text = serde_json::to_string_pretty(&record).expect("a record serialises");
        let path = staging.join(RECORD);
        std::fs::write(&path, text).map_err(|source| RevisionError::io("write", &path, source))?;
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(&staging, &dir)
            .map_err(|source| RevisionError::io("keep the build in", &dir, source))?;
        drop(guard);
        let mut built = read(&dir).ok_or_else(|| RevisionError::Cache { dir: dir.clone() })?;
        match &mut built {
            Built::Program(program) => program.cached = false,
            Built::DoesNotBuild { cached, .. } => *cached = false,
        }
        Ok(built)
    }
}

/// Puts a build's `program` and the `lock` it was built with into `into`,
/// the folder a [`super::Builder::build`] fills: the two files of an entry.
pub fn fill(into: &Path, program: &Path, lock: &Path) -> Result<(), RevisionError> {
    for (from, name) in [(program, PROGRAM), (lock, "Cargo.lock")] {
        let to = into.join(name);
        std::fs::copy(from, &to).map_err(|source| RevisionError::io("copy", &to, source))?;
    }
    Ok(())
}

/// The entry in `dir`, if it is complete and well formed.
fn read(dir: &Path) -> Option<Built> {
    let text = crate::limits::read_capped(&dir.join(RECORD), crate::limits::MAX_SMALL_FILE).ok()?;
    let record: Record = serde_json::from_str(&text).ok()?;
    if record.schema != SCHEMA || record.revision.len() > 256 {
        return None;
    }
    if let Some(reason) = record.does_not_build {
        return Some(Built::DoesNotBuild {
            reason: bounded(&reason),
            cached: true,
        });
    }
    let program = dir.join(PROGRAM);
    if !program.is_file() || !dir.join("Cargo.lock").is_file() {
        return None;
    }
    let mut names = record.names;
    names.sort();
    Some(Built::Program(Program {
        dir: dir.to_path_buf(),
        program,
        names,
        cached: true,
    }))
}

/// At most [`MAX_REASON`] bytes of `reason`, without control characters
/// but line breaks.
fn bounded(reason: &str) -> String {
    let clean: String = reason
        .chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect();
    if clean.len() <= MAX_REASON {
        return clean;
    }
    format!("{}…", crate::format::at_most(&clean, MAX_REASON))
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_most_recently_used_entries_stay() {
        const MAX: usize = 8;
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = ProgramCache::new(dir.path());
        let entry = |name: &str| {
            let path = cache.entry(name);
            std::fs::create_dir_all(&path).expect("mkdir");
            Built::Program(Program {
                dir: path.clone(),
                program: path.join(PROGRAM),
                names: Vec::new(),
                cached: true,
            })
        };
        std::fs::create_dir_all(cache.entry(".staging-k-1")).expect("mkdir");
        for n in 0..MAX + 3 {
            let built = entry(&format!("k{n:02}"));
            // Distinct use times, oldest first.
            std::thread::sleep(std::time::Duration::from_millis(20));
            cache.keep_only_the_newest(&built, MAX);
        }
        let mut left: Vec<String> = std::fs::read_dir(dir.path().join("programs"))
            .expect("read")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected: Vec<String> = (3..MAX + 3).map(|n| format!("k{n:02}")).collect();
        expected.insert(0, ".staging-k-1".to_owned());
        assert_eq!(left, expected);
    }

    #[test]
    fn failures_are_kept_and_hostile_records_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = ProgramCache::new(dir.path());
        let mut builds = 0;
        for _ in 0..2 {
            let built = cache
                .get_or_build("k1", "abc", |_| {
                    builds += 1;
                    Ok(Err(DoesNotBuild::UpdateFailed {
                        command: "cargo update".to_owned(),
                        tail: "error[E0599]: no method\u{1b}[31m".to_owned(),
                    }))
                })
                .expect("cached");
            let Built::DoesNotBuild { reason, .. } = built else {
                panic!("a failure")
            };
            assert_eq!(reason, "`cargo update` failed: error[E0599]: no method[31m");
        }
        assert_eq!(builds, 1, "the failure is kept");

        // A record naming a path instead of a harness is not an entry.
        let entry = dir.path().join("programs/k2");
        std::fs::create_dir_all(&entry).expect("mkdir");
        std::fs::write(
            entry.join(RECORD),
            r#"{"schema":1,"revision":"x","names":["../../x"],"does_not_build":null}"#,
        )
        .expect("write");
        std::fs::write(entry.join(PROGRAM), "").expect("write");
        std::fs::write(entry.join("Cargo.lock"), "").expect("write");
        assert!(read(&entry).is_none());
        assert_eq!(bounded(&"é".repeat(5000)).chars().last(), Some('…'));
    }
}
