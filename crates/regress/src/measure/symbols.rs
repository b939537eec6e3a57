//! The measured program's function symbols, read once per process: the
//! table ([`Symbols`], `regress-profile`'s, which the Callgrind reader
//! charges instructions by) is kept by the file's identity (device, inode,
//! size, modification time).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use regress_profile::symbols::Symbols;

use super::{MeasureError, Result};

/// A file's device, inode, size and modification time (seconds, nanoseconds).
type FileIdentity = (u64, u64, u64, i64, i64);

/// The symbols of the program at `path`, read once per process.
pub fn of(path: &Path) -> Result<Arc<Symbols>> {
    static KNOWN: OnceLock<Mutex<HashMap<FileIdentity, Arc<Symbols>>>> = OnceLock::new();
    let meta = std::fs::metadata(path).map_err(|source| MeasureError::io("read", path, source))?;
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
    let symbols = Arc::new(
        Symbols::parse(&data).map_err(|error| MeasureError::BadSymbols {
            path: path.to_path_buf(),
            error,
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

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectSymbol, SymbolKind};

    /// The test binary itself: its own functions are found where its
    /// symbol table puts them, and the table is read once.
    #[test]
    fn this_program_s_functions_are_found() {
        let exe = std::env::current_exe().expect("exe");
        let symbols = of(&exe).expect("symbols");
        assert!(symbols.len() > 100, "{}", symbols.len());
        let again = of(&exe).expect("again");
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
        let error = of(&junk).expect_err("not a program").to_string();
        assert!(error.contains("function symbols"), "{error}");
    }
}
