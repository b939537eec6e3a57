//! The heap hooks: a small shared library that a heap child preloads.
//!
//! Its source (`heap_hooks.c`) is part of the runner, not of the measured
//! program: the program only finds it at run time (`regress_measure::heap`),
//! so the instruction counts never include it, and one hooks library
//! measures both sides of a diff. It is compiled once with the system C
//! compiler (`$CC`, else `cc`; the TLS libraries need one anyway) into the
//! output folder, named after a hash of its source.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{MeasureError, Result};
use crate::process::{self, Role};

/// The hooks' source.
pub const SOURCE: &str = include_str!("heap_hooks.c");

/// Where the hooks library of this source lives under `outputs`.
pub fn path_in(outputs: &Path) -> PathBuf {
    outputs
        .join(".tools")
        .join(format!("heap-hooks-{:016x}.so", fnv1a(SOURCE.as_bytes())))
}

/// The hooks library in `outputs`, compiled first if it is not there.
///
/// The test binary measures harnesses on several threads at once, and
/// several runners may share `outputs`: one thread of a process compiles
/// while the others wait, and every compilation writes files named for
/// its process and its turn, renamed into place at once, so a concurrent
/// one (another process) never sees or removes a half-written library.
pub fn build(outputs: &Path) -> Result<PathBuf> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static TURN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let library = path_in(outputs);
    if library.is_file() {
        return Ok(library);
    }
    let folder = library.parent().unwrap_or(outputs);
    std::fs::create_dir_all(folder).map_err(|source| MeasureError::io("create", folder, source))?;
    let unique = format!(
        "{}.{}",
        std::process::id(),
        TURN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let source_path = folder.join(format!("heap-hooks.{unique}.c"));
    std::fs::write(&source_path, SOURCE)
        .map_err(|source| MeasureError::io("write", &source_path, source))?;
    let partial = library.with_extension(format!("so.{unique}.partial"));
    let compiler = std::env::var_os("CC").map_or_else(|| PathBuf::from("cc"), PathBuf::from);
    let mut command = Command::new(&compiler);
    command
        .args(["-O2", "-shared", "-fPIC", "-Wall", "-o"])
        .arg(&partial)
        .arg(&source_path)
        .arg("-lpthread");
    let output = process::output(
        command,
        &compiler,
        crate::measure::cachegrind::quick_timeout(),
        1 << 20,
        Role::Work,
    );
    let _ = std::fs::remove_file(&source_path);
    let output = output.map_err(|error| MeasureError::HeapHooks {
        compiler: compiler.clone(),
        reason: error.to_string(),
    })?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(MeasureError::HeapHooks {
            compiler,
            reason: format!("{}: {}", output.status, process::stderr_text(&output)),
        });
    }
    std::fs::rename(&partial, &library)
        .map_err(|source| MeasureError::io("rename", &partial, source))?;
    Ok(library)
}

/// FNV-1a, 64 bits: a stable name for the source (not a security hash).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hooks compile, and export the attach function and the
    /// allocator's entry points.
    #[test]
    fn the_hooks_compile_and_export_the_allocator() {
        if crate::measure::valgrind::find_on_path("cc").is_none()
            && std::env::var_os("CC").is_none()
        {
            eprintln!("SKIPPED (no C compiler)");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let library = build(dir.path()).expect("the hooks compile");
        assert_eq!(library, path_in(dir.path()));
        let bytes = std::fs::read(&library).expect("read");
        for symbol in [
            "regress_heap_attach",
            "malloc",
            "posix_memalign",
            "reallocarray",
        ] {
            assert!(
                bytes.windows(symbol.len()).any(|w| w == symbol.as_bytes()),
                "{symbol}"
            );
        }
        // A second build reuses the library.
        assert_eq!(build(dir.path()).expect("again"), library);
    }
}
