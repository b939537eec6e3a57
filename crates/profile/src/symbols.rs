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
//! ([`crate::callgrind_out`]).
//!
//! Only the measured program's own functions are read (its ELF symbol
//! table: the TLS libraries, aws-lc, OpenSSL and the harnesses are linked
//! into it); the costs in shared libraries (glibc) keep Callgrind's names.

use object::{Object, ObjectSymbol, SymbolKind};

/// Why a program's function symbols cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SymbolsError {
    #[error("not an ELF file the symbol reader knows: {0}")]
    NotElf(#[source] object::Error),
    #[error("more than {MAX_SYMBOLS} function symbols")]
    TooMany,
}

/// The most function symbols read from one program (the measured program
/// has about 60,000).
const MAX_SYMBOLS: usize = 4_000_000;

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
    pub fn parse(data: &[u8]) -> Result<Symbols, SymbolsError> {
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

    /// A table of `(start, end, name)`, sorted by start, given directly
    /// (tests of what reads a table).
    pub fn from_functions(functions: &[(u64, u64, &str)]) -> Symbols {
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

    #[test]
    fn what_is_no_elf_file_is_refused() {
        let error = Symbols::parse(b"not an ELF file").expect_err("no ELF");
        assert!(error.to_string().contains("not an ELF file"), "{error}");
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
