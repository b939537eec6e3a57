//! Writes files whole or not at all.
//!
//! Two runs at once (two `cargo test` invocations, or `regress noise` beside a
//! test run) must never leave a half-written or interleaved output. Each
//! write goes to a file unique to this process and call, then is renamed
//! over the target, which is atomic within one file system.

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
    fn an_unwritable_folder_is_an_error_naming_the_file() {
        let err = write(Path::new("/nonexistent-folder/out.json"), b"x").unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent-folder/out.json"),
            "{err}"
        );
    }
}
