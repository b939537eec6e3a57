//! How the measured program was built, read from the program itself: the
//! compilers and linker, and the versions of the crates it links.
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
//!
//! The crate versions come from the program too, not from a `Cargo.lock`:
//! a lock may hold two versions of a crate (rustls 0.23 and, for the
//! harnesses' optional 0.24 generation, 0.24.0-dev.1), and only the build
//! knows which it linked. The measured program's build script writes them
//! into the section `.regress.libraries` (`harnesses/build.rs`), one
//! `name version` line per crate; the fingerprint keeps those of
//! [`TRACKED_CRATES`]. A program without the section names none, so its
//! counts match no baseline that names some.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::measure::fingerprint::{Toolchain, TRACKED_CRATES};

use object::{Object, ObjectSection};

/// The most `.comment` bytes read; real ones are a few hundred.
const MAX_COMMENT_BYTES: usize = 64 * 1024;
/// The most entries kept, and the longest entry, against a hostile file.
const MAX_ENTRIES: usize = 32;
const MAX_ENTRY_CHARS: usize = 200;

/// The section the measured program's build script writes its crate
/// versions into, and the most of it read (a build has ~100 crates).
const LIBRARIES_SECTION: &str = ".regress.libraries";
const MAX_LIBRARIES_BYTES: usize = 64 * 1024;

/// Why the toolchain of a program cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    #[error("cannot read {path} to see how it was built: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not an object file this runner can read: {detail}")]
    Format { path: PathBuf, detail: String },
}

/// What the measured program says about its own build.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Built {
    pub toolchain: Toolchain,
    /// The versions of [`TRACKED_CRATES`] it links, several of one crate
    /// joined as `0.23.46, 0.24.0-dev.1`.
    pub libraries: BTreeMap<String, String>,
}

/// How the program at `path` was built.
pub fn of(path: &Path) -> Result<Built, ToolchainError> {
    let data = std::fs::read(path).map_err(|source| ToolchainError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let entries = parse_comment(&section(path, &data, ".comment")?);
    Ok(Built {
        toolchain: Toolchain {
            c_compilers: c_compilers(&entries),
            linker: linker(&entries),
        },
        libraries: parse_libraries(&section(path, &data, LIBRARIES_SECTION)?),
    })
}

/// The toolchain lines of the program at `path`, in the order the linker
/// wrote them. A program without a `.comment` section gives an empty list.
pub fn of_program(path: &Path) -> Result<Vec<String>, ToolchainError> {
    let data = std::fs::read(path).map_err(|source| ToolchainError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(parse_comment(&section(path, &data, ".comment")?))
}

/// The names of the sections of the program at `path` that are loaded into
/// memory (ELF `SHF_ALLOC`) and contain `needle`, in file order.
///
/// A string in a loaded section is part of the measured process's layout:
/// one whose length depends on where the program was built (a checkout's
/// path) moves every constant after it, and with their alignment the counts
/// of the routines that copy and compare them. The harnesses' build keeps
/// the checkout's path out of those sections (`scripts/openssl-configure`);
/// `harnesses/tests/layout.rs` holds it to that.
pub fn loaded_sections_naming(path: &Path, needle: &[u8]) -> Result<Vec<String>, ToolchainError> {
    let data = std::fs::read(path).map_err(|source| ToolchainError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let file = object::File::parse(data.as_slice()).map_err(|error| ToolchainError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    let mut found = Vec::new();
    if needle.is_empty() {
        return Ok(found);
    }
    for section in file.sections() {
        let loaded = match section.flags() {
            object::SectionFlags::Elf { sh_flags, .. } => {
                sh_flags.0 & object::elf::SHF_ALLOC.0 != 0
            }
            _ => false,
        };
        if !loaded {
            continue;
        }
        // `.bss` and its kind occupy no file bytes: nothing to search.
        let Ok(bytes) = section.data() else { continue };
        if bytes.windows(needle.len()).any(|window| window == needle) {
            found.push(section.name().unwrap_or("(unnamed)").to_owned());
        }
    }
    Ok(found)
}

/// The bytes of the section `name` of the object file `data` (read from
/// `path`); empty when it has none.
fn section(path: &Path, data: &[u8], name: &str) -> Result<Vec<u8>, ToolchainError> {
    let file = object::File::parse(data).map_err(|error| ToolchainError::Format {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    let Some(section) = file.section_by_name(name) else {
        return Ok(Vec::new());
    };
    section
        .data()
        .map(<[u8]>::to_vec)
        .map_err(|error| ToolchainError::Format {
            path: path.to_path_buf(),
            detail: format!("{name}: {error}"),
        })
}

/// The tracked crates' versions from `name version` lines; lines that are
/// not of that shape (or not of cargo's characters) are passed over.
fn parse_libraries(bytes: &[u8]) -> BTreeMap<String, String> {
    let bytes = &bytes[..bytes.len().min(MAX_LIBRARIES_BYTES)];
    let cargo_text = |text: &str| {
        !text.is_empty()
            && text.len() <= 64
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'))
    };
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(bytes).lines() {
        let Some((name, version)) = line.split_once(' ') else {
            continue;
        };
        if TRACKED_CRATES.contains(&name) && cargo_text(version) {
            let list = versions.entry(name.to_owned()).or_default();
            if !list.iter().any(|known| known == version) {
                list.push(version.to_owned());
            }
        }
    }
    versions
        .into_iter()
        .map(|(name, mut list)| {
            list.sort();
            (name, list.join(", "))
        })
        .collect()
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
    fn library_lines_are_checked_and_grouped() {
        let section = b"aws-lc-rs 1.19.0\nrustls 0.24.0-dev.1\nrustls 0.23.46\nserde 1.0.0\n\
            openssl 0.10.82\nrustls 0.23.46\nrustls \"; rm\nbroken\n";
        let libraries = parse_libraries(section);
        assert_eq!(libraries.len(), 3, "{libraries:?}");
        assert_eq!(libraries["rustls"], "0.23.46, 0.24.0-dev.1");
        assert_eq!(libraries["aws-lc-rs"], "1.19.0");
        assert!(parse_libraries(b"").is_empty());
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
