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
///
/// A file read by the runner can be anything a checkout or an artifact
/// holds: the file is opened without blocking (a FIFO in a baseline's
/// place would otherwise wait for a writer forever, deaf to Ctrl-C and
/// SIGTERM), and anything but a regular file (a FIFO, a device, a socket,
/// a folder) is refused before a byte is read, as is a file whose size is
/// over the cap.
pub fn read_capped(path: &Path, max: u64) -> std::io::Result<String> {
    let file = open_regular(path, max)?;
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(text)
}

/// Opens `path` for reading as [`read_capped`] does: without blocking, a
/// regular file only (after following links), at most `max` bytes.
pub fn open_regular(path: &Path, max: u64) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO (named pipe)"
        } else if kind.is_dir() {
            "a folder"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is {what}, not a regular file: replace it with the file it stands for"),
        ));
    }
    if meta.len() > max {
        return Err(too_large(max));
    }
    // Reads of a regular file never block; the flag is cleared all the same
    // so that nothing downstream sees EAGAIN.
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor this function owns, with valid flags.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

fn too_large(max: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("the file is larger than {max} bytes, far more than the runner writes"),
    )
}

/// Reads a binary file as [`read_capped`] reads a text file.
pub fn read_bytes_capped(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = open_regular(path, max)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

/// Refuses a JSON text in which an object has the same key twice: a
/// parser keeps the last of them, so a forged file could show one value to
/// a reader of its text and another to the runner (two `head` objects in a
/// report). Returns the first repeated key, with its object's path.
pub fn refuse_duplicate_keys(text: &str) -> Result<(), RepeatedKey> {
    use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};

    /// One JSON value, walked for repeated keys; `at` is where it is.
    struct Walk<'a> {
        at: &'a str,
        depth: usize,
    }

    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E: Error>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E: Error>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E: Error>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E: Error>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E: Error>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E: Error>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut index = 0usize;
            loop {
                let at = format!("{}[{index}]", self.at);
                let walk = Walk {
                    at: &at,
                    depth: self.depth + 1,
                };
                if seq.next_element_seed(walk)?.is_none() {
                    return Ok(());
                }
                index += 1;
            }
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut keys = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                let at = format!("{}.{key}", self.at);
                if !keys.insert(key) {
                    return Err(A::Error::custom(format!("the key {at:?} appears twice")));
                }
                map.next_value_seed(Walk {
                    at: &at,
                    depth: self.depth + 1,
                })?;
            }
            Ok(())
        }
    }

    let mut deserializer = serde_json::Deserializer::from_str(text);
    Walk { at: "", depth: 0 }
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end())
        .map_err(RepeatedKey)
}

/// Why [`refuse_duplicate_keys`] refuses a JSON text: the first key an
/// object repeats (`the key ".head" appears twice`), or what makes the
/// text no JSON at all, in `serde_json`'s words.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RepeatedKey(serde_json::Error);

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
    fn a_fifo_or_a_folder_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("baseline.json");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let error = read_capped(&fifo, 100).unwrap_err();
        assert!(error.to_string().contains("FIFO"), "{error}");
        let error = read_capped(dir.path(), 100).unwrap_err();
        assert!(error.to_string().contains("a folder"), "{error}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 10]).expect("write");
        let error = read_bytes_capped(&big, 9).unwrap_err();
        assert!(error.to_string().contains("larger than 9"), "{error}");
        assert_eq!(read_bytes_capped(&big, 10).expect("fits").len(), 10);
    }

    #[test]
    fn a_repeated_key_is_refused_wherever_it_is() {
        assert!(refuse_duplicate_keys(r#"{"a": 1, "b": [{"c": 1, "d": 2}]}"#).is_ok());
        let error = refuse_duplicate_keys(r#"{"head": {"x": 1}, "head": {"x": 2}}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("\".head\" appears twice"), "{error}");
        let error = refuse_duplicate_keys(r#"{"h": [{"v": 1}, {"v": 1, "v": 2}]}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains(".h[1].v"), "{error}");
        // The same key in two objects is not a repeat.
        assert!(refuse_duplicate_keys(r#"[{"v": 1}, {"v": 2}]"#).is_ok());
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
