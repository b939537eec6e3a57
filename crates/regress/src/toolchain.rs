//! Which compilers and linker built the measured program, read from the
//! program itself.
//!
//! A count depends on the C compiler as much as on rustc: s2n-tls-sys
//! compiles s2n-tls with clang and link-time optimisation when clang is
//! installed, and falls back to GCC without LTO otherwise (measured on one
//! machine: `s2n_tls::record_aes128gcm_16k` 5,588,569 with clang, 5,853,707
//! with GCC, -4.5 %). Guessing the choice from the environment would repeat
//! each build script's logic; the program says it itself. Every compiler
//! and linker that produced a part of an ELF file leaves a line in its
//! `.comment` section ("GCC: (Debian 12.2.0-14+deb12u1) 12.2.0", "clang
//! version 14.0.6", "Linker: LLD 22.1.2", "rustc version 1.95.0"), and the
//! linker merges them without repeats. That list is part of the
//! fingerprint.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

/// The most `.comment` bytes read; real ones are a few hundred.
const MAX_COMMENT_BYTES: usize = 64 * 1024;
/// The most entries kept, and the longest entry, against a hostile file.
const MAX_ENTRIES: usize = 32;
const MAX_ENTRY_CHARS: usize = 200;

/// Why the toolchain of a program cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    #[error("cannot read {path} to see which compilers built it: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not an object file this runner can read: {detail}")]
    Format { path: PathBuf, detail: String },
}

/// The toolchain lines of the program at `path`, in the order the linker
/// wrote them. A program without a `.comment` section gives an empty list.
pub fn of_program(path: &Path) -> Result<Vec<String>, ToolchainError> {
    let data = std::fs::read(path).map_err(|source| ToolchainError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let file = object::File::parse(&*data).map_err(|error| ToolchainError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    let Some(section) = file.section_by_name(".comment") else {
        return Ok(Vec::new());
    };
    let bytes = section.data().map_err(|error| ToolchainError::Format {
        path: path.to_path_buf(),
        detail: format!(".comment: {error}"),
    })?;
    Ok(parse_comment(bytes))
}

/// Splits a `.comment` section into its NUL-separated lines: printable
/// ASCII only, trimmed, without repeats, bounded in number and length.
fn parse_comment(bytes: &[u8]) -> Vec<String> {
    let bytes = &bytes[..bytes.len().min(MAX_COMMENT_BYTES)];
    let mut entries: Vec<String> = Vec::new();
    for raw in bytes.split(|byte| *byte == 0) {
        let text: String = raw
            .iter()
            .map(|&byte| {
                if byte.is_ascii_graphic() || byte == b' ' {
                    char::from(byte)
                } else {
                    '?'
                }
            })
            .take(MAX_ENTRY_CHARS)
            .collect();
        let text = text.trim();
        if !text.is_empty() && !entries.iter().any(|entry| entry == text) {
            entries.push(text.to_owned());
        }
        if entries.len() == MAX_ENTRIES {
            break;
        }
    }
    entries
}

/// The C compilers and the linker that built the program at `path`.
pub fn of(path: &Path) -> Result<crate::measure::fingerprint::Toolchain, ToolchainError> {
    let entries = of_program(path)?;
    Ok(crate::measure::fingerprint::Toolchain {
        c_compilers: c_compilers(&entries),
        linker: linker(&entries),
    })
}

/// The entries that name a C compiler (everything but rustc and the
/// linker, which the fingerprint records apart).
pub fn c_compilers(toolchain: &[String]) -> Vec<String> {
    toolchain
        .iter()
        .filter(|entry| !entry.starts_with("rustc version") && !entry.starts_with("Linker:"))
        .cloned()
        .collect()
}

/// The linker entry, if the linker left one.
pub fn linker(toolchain: &[String]) -> Option<String> {
    toolchain
        .iter()
        .find_map(|entry| entry.strip_prefix("Linker:"))
        .map(|rest| rest.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REAL: &[u8] = b"\0rustc version 1.95.0 (59807616e 2026-04-14)\0\
        Linker: LLD 22.1.2 (/checkout/src/llvm-project/llvm 1cb4e38)\0\
        GCC: (Debian 12.2.0-14+deb12u1) 12.2.0\0GCC: (Debian 12.2.0-14+deb12u1) 12.2.0\0\
        clang version 14.0.6\0";

    #[test]
    fn splits_dedupes_and_classifies_the_comment() {
        let entries = parse_comment(REAL);
        assert_eq!(entries.len(), 4, "{entries:?}");
        assert_eq!(
            c_compilers(&entries),
            vec![
                "GCC: (Debian 12.2.0-14+deb12u1) 12.2.0".to_owned(),
                "clang version 14.0.6".to_owned()
            ]
        );
        assert_eq!(
            linker(&entries).as_deref(),
            Some("LLD 22.1.2 (/checkout/src/llvm-project/llvm 1cb4e38)")
        );
    }

    #[test]
    fn hostile_comments_are_bounded() {
        let mut bytes = Vec::new();
        for index in 0..1000 {
            bytes.extend_from_slice(format!("entry {index} \u{1b}[31m").as_bytes());
            bytes.extend(std::iter::repeat_n(b'x', 500));
            bytes.push(0);
        }
        let entries = parse_comment(&bytes);
        assert_eq!(entries.len(), MAX_ENTRIES);
        assert!(entries.iter().all(|entry| entry.len() <= MAX_ENTRY_CHARS));
        assert!(entries
            .iter()
            .all(|entry| entry.bytes().all(|b| b.is_ascii_graphic() || b == b' ')));
        assert!(parse_comment(b"").is_empty());
    }

    #[test]
    fn reads_this_test_binary() {
        let exe = std::env::current_exe().expect("current exe");
        let entries = of_program(&exe).expect("an ELF file with a .comment");
        assert!(
            entries
                .iter()
                .any(|entry| entry.starts_with("rustc version")),
            "{entries:?}"
        );
        let error = of_program(Path::new("Cargo.toml")).expect_err("not an object file");
        assert!(error.to_string().contains("not an object file"), "{error}");
    }
}
