//! The functions of the measured program by address: which symbol an
//! instruction lies in.
//!
//! Callgrind charges an instruction to the function whose context it runs
//! in, and code reached by falling through or jumping (not calling) into
//! another symbol stays in the caller's context: aws-lc's
//! `bn_sqr8x_internal` runs on into `__bn_sqr8x_reduction`, `mul4x_internal`
//! into `__bn_post4x_internal`, and Callgrind charged those instructions to
//! the first. Cachegrind, and every reader of a per-function profile,
//! charges an instruction to the symbol its address lies in. With
//! `--dump-instr=yes`, Callgrind's dumps give each cost its instruction's
//! address, and [`Symbols::at`] names the symbol there, so the per-function
//! profile of the default method says what Cachegrind's says
//! ([`super::callgrind_out`]).
//!
//! Only the measured program's own functions are read (its ELF symbol
//! table: the TLS libraries, aws-lc, OpenSSL and the harnesses are linked
//! into it); the costs in shared libraries (glibc) keep Callgrind's names.
//! A program is read once per process: the table is kept by the file's
//! identity (device, inode, size, modification time).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use object::{Object, ObjectSymbol, SymbolKind};

use super::{MeasureError, Result};

/// The most function symbols read from one program (the measured program
/// has about 60,000).
const MAX_SYMBOLS: usize = 4_000_000;

/// A file's device, inode, size and modification time (seconds, nanoseconds).
type FileIdentity = (u64, u64, u64, i64, i64);

/// Why [`Symbols::parse`] cannot read a program's function symbols.
#[derive(Debug, thiserror::Error)]
pub enum SymbolsError {
    /// Not an object file `object` reads, in its words.
    #[error(transparent)]
    NotElf(object::Error),
    #[error("more than {MAX_SYMBOLS} function symbols")]
    TooMany,
}

/// A program's function symbols, sorted by address.
#[derive(Debug, Default)]
pub struct Symbols {
    /// (start, end or `u64::MAX` when the symbol has no size, name).
    functions: Vec<(u64, u64, String)>,
}

impl Symbols {
    /// The function symbols of the ELF file `data`. Of several symbols at
    /// one address, a global one is kept over a local one, and a plain name
    /// over a compiler's alias (`f.localalias`).
    pub fn parse(data: &[u8]) -> std::result::Result<Symbols, SymbolsError> {
        let file = object::File::parse(data).map_err(SymbolsError::NotElf)?;
        let mut found: Vec<(u64, u64, bool, String)> = Vec::new();
        for symbol in file.symbols() {
            if symbol.kind() != SymbolKind::Text || symbol.is_undefined() || symbol.address() == 0 {
                continue;
            }
            let Ok(name) = symbol.name() else { continue };
            if name.is_empty() {
                continue;
            }
            if found.len() == MAX_SYMBOLS {
                return Err(SymbolsError::TooMany);
            }
            let end = match symbol.size() {
                0 => u64::MAX,
                size => symbol.address().saturating_add(size),
            };
            found.push((symbol.address(), end, symbol.is_global(), name.to_owned()));
        }
        // Per address, the preferred name first.
        found.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(b.2.cmp(&a.2))
                .then(a.3.contains('.').cmp(&b.3.contains('.')))
                .then(a.3.len().cmp(&b.3.len()))
                .then(a.3.cmp(&b.3))
        });
        found.dedup_by_key(|symbol| symbol.0);
        Ok(Symbols {
            functions: found
                .into_iter()
                .map(|(start, end, _, name)| (start, end, name))
                .collect(),
        })
    }

    /// The symbols of the program at `path`, read once per process.
    pub fn of(path: &Path) -> Result<Arc<Symbols>> {
        static KNOWN: OnceLock<Mutex<HashMap<FileIdentity, Arc<Symbols>>>> = OnceLock::new();
        let meta =
            std::fs::metadata(path).map_err(|source| MeasureError::io("read", path, source))?;
        let key = (
            meta.dev(),
            meta.ino(),
            meta.size(),
            meta.mtime(),
            meta.mtime_nsec(),
        );
        let known = KNOWN.get_or_init(Default::default);
        if let Some(symbols) = known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&key)
        {
            return Ok(symbols.clone());
        }
        let data = std::fs::read(path).map_err(|source| MeasureError::io("read", path, source))?;
        let symbols =
            Arc::new(
                Symbols::parse(&data).map_err(|reason| MeasureError::BadSymbols {
                    path: path.to_path_buf(),
                    reason,
                })?,
            );
        let mut known = known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // A process measures a few programs; never let the table grow
        // without bound.
        if known.len() >= 8 {
            known.clear();
        }
        known.insert(key, symbols.clone());
        Ok(symbols)
    }

    /// A table of `(start, end, name)`, sorted by start (tests).
    #[cfg(test)]
    pub(crate) fn from_functions(functions: &[(u64, u64, &str)]) -> Symbols {
        Symbols {
            functions: functions
                .iter()
                .map(|(start, end, name)| (*start, *end, (*name).to_owned()))
                .collect(),
        }
    }

    /// The name of the function symbol `address` lies in, if any.
    pub fn at(&self, address: u64) -> Option<&str> {
        let index = self
            .functions
            .partition_point(|(start, _, _)| *start <= address)
            .checked_sub(1)?;
        let (_, end, name) = &self.functions[index];
        (address < *end).then_some(name.as_str())
    }

    /// How many function symbols there are.
    pub fn len(&self) -> usize {
        self.functions.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }
}

/// Whether `name` is a mangled symbol (Itanium `_Z…`, Rust v0 `_R…`),
/// which Callgrind shows demangled: such a symbol is not compared with a
/// function's name.
pub fn is_mangled(name: &str) -> bool {
    name.starts_with("_Z") || name.starts_with("_R")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(entries: &[(u64, u64, &str)]) -> Symbols {
        Symbols::from_functions(entries)
    }

    #[test]
    fn an_address_is_named_by_the_symbol_it_lies_in() {
        let symbols = table(&[
            (0x100, 0x140, "mul4x_internal"),
            (0x140, u64::MAX, "post4x"),
        ]);
        assert_eq!(symbols.at(0xff), None);
        assert_eq!(symbols.at(0x100), Some("mul4x_internal"));
        assert_eq!(symbols.at(0x13f), Some("mul4x_internal"));
        assert_eq!(symbols.at(0x140), Some("post4x"));
        // A symbol without a size reaches the next one.
        assert_eq!(symbols.at(0x9999), Some("post4x"));
        // Past a sized symbol's end, before the next: no function.
        let gap = table(&[(0x100, 0x110, "f"), (0x200, 0x210, "g")]);
        assert_eq!(gap.at(0x150), None);
    }

    /// The test binary itself: its own functions are found where its
    /// symbol table puts them, and the table is read once.
    #[test]
    fn this_program_s_functions_are_found() {
        let exe = std::env::current_exe().expect("exe");
        let symbols = Symbols::of(&exe).expect("symbols");
        assert!(symbols.len() > 100, "{}", symbols.len());
        let again = Symbols::of(&exe).expect("again");
        assert!(Arc::ptr_eq(&symbols, &again));
        let data = std::fs::read(&exe).expect("read");
        let file = object::File::parse(data.as_slice()).expect("ELF");
        let sized = file
            .symbols()
            .find(|s| s.kind() == SymbolKind::Text && s.size() > 8 && s.is_global())
            .expect("a sized global function");
        let name = symbols.at(sized.address() + 4).expect("found");
        let same_address: Vec<_> = file
            .symbols()
            .filter(|s| s.address() == sized.address() && s.kind() == SymbolKind::Text)
            .map(|s| s.name().unwrap_or_default().to_owned())
            .collect();
        assert!(
            same_address.iter().any(|n| n == name),
            "{name} {same_address:?}"
        );
        assert!(Symbols::parse(b"not an ELF file").is_err());
        let dir = tempfile::tempdir().expect("tempdir");
        let junk = dir.path().join("harness");
        std::fs::write(&junk, b"not an ELF file").expect("write");
        let error = Symbols::of(&junk).expect_err("not a program").to_string();
        assert!(error.contains("function symbols"), "{error}");
    }

    #[test]
    fn mangled_names_are_told_apart() {
        assert!(is_mangled(
            "_ZN9harnesses8registry7entries17heb549e57c43e34aeE"
        ));
        assert!(is_mangled("_RNvCs1234_7mycrate3foo"));
        assert!(!is_mangled("__bn_post4x_internal"));
        assert!(!is_mangled("s2n_send"));
    }
}
