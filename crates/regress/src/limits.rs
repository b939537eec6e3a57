//! Bounds on what the runner accepts from a file.
//!
//! Records, baselines and diff reports are read back from disk, and in CI
//! from another job's artifacts: every number and string in them is checked
//! against these bounds before anything is computed from it, so that no
//! arithmetic can overflow and no message can be flooded.

use std::io::Read;
use std::path::{Component, Path};

/// Counts are below 2^63: the runner's own come from `i64` profile totals,
/// and the judge's arithmetic on two of them then fits every integer type
/// it uses.
pub const MAX_COUNT: u64 = i64::MAX as u64;

/// The largest record or baseline file read (real ones are about 1 KiB).
pub const MAX_SMALL_FILE: u64 = 1 << 20;

/// The largest output of a Valgrind tool read whole: a Callgrind dump or a
/// DHAT profile (real ones are up to a few MiB).
pub const MAX_TOOL_FILE: u64 = 256 << 20;

/// Reads a text file of at most `max` bytes; a larger one is an error of
/// kind `InvalidData` that says so, read no further than the limit.
pub fn read_capped(path: &Path, max: u64) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the file is larger than {max} bytes, far more than the runner writes"),
        ));
    }
    Ok(text)
}

/// Whether `path` (read from a file) stays below the folder it is relative
/// to: relative, no `..`, no root or prefix, not empty.
pub fn is_contained(path: &Path) -> bool {
    path.components().next().is_some()
        && path
            .components()
            .all(|component| matches!(component, Component::Normal(_)))
}

/// What a hint about an I/O failure says, by its cause: a full disk, a
/// file-size limit and a read-only folder each need another remedy.
pub fn io_hint(error: &std::io::Error) -> &'static str {
    use std::io::ErrorKind;
    match error.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            return "the disk (or the quota) is full: free some space and run again"
        }
        Some(libc::EFBIG) => {
            return "a file-size limit was reached (`ulimit -f`, or a full disk on some file \
                    systems): raise the limit or free space and run again"
        }
        Some(libc::EROFS) => return "the file system is read-only: run from a writable checkout",
        _ => {}
    }
    match error.kind() {
        ErrorKind::PermissionDenied => {
            "permission denied: check the folder's owner and mode, and run again"
        }
        ErrorKind::NotFound => "a folder on the way does not exist",
        _ => "check the folder exists and is writable, and run again",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_no_further_than_the_cap() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, "12345").expect("write");
        assert_eq!(read_capped(&path, 5).expect("fits"), "12345");
        let error = read_capped(&path, 4).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("larger than 4 bytes"), "{error}");
    }

    #[test]
    fn contained_paths_stay_below_their_folder() {
        assert!(is_contained(Path::new("perf_outputs/a.b.json")));
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./a"] {
            assert!(!is_contained(Path::new(bad)), "{bad:?}");
        }
    }

    #[test]
    fn hints_name_the_cause() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(io_hint(&full).contains("disk"), "{}", io_hint(&full));
        let big = std::io::Error::from_raw_os_error(libc::EFBIG);
        assert!(io_hint(&big).contains("file-size limit"));
        let read_only = std::io::Error::from_raw_os_error(libc::EROFS);
        assert!(io_hint(&read_only).contains("read-only"));
    }
}
