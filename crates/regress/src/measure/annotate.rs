//! Turns raw Cachegrind profiles into the annotated text people read.
//!
//! With the marker method, the profile of the child *is* the region's
//! profile. With subtraction, the region's profile is the difference of two
//! whole-process profiles, which `cg_diff` computes on every Valgrind
//! version; `cg_annotate` then reads it like any other profile.

use std::path::Path;
use std::process::Command;

use crate::error::{Error, Result};
use crate::measure::valgrind::Valgrind;

/// `cg_annotate PROFILE`: the function-by-function summary.
pub fn annotate(valgrind: &Valgrind, profile: &Path) -> Result<String> {
    let output = Command::new(&valgrind.cg_annotate)
        .arg(profile)
        .output()
        .map_err(|source| Error::Spawn {
            program: valgrind.cg_annotate.clone(),
            source,
        })?;
    if !output.status.success() {
        return Err(Error::Annotate {
            program: valgrind.cg_annotate.clone(),
            status: output.status.to_string(),
            input: profile.to_path_buf(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `cg_diff BEFORE AFTER`: a profile of AFTER minus BEFORE, written to `out`.
pub fn diff(valgrind: &Valgrind, before: &Path, after: &Path, out: &Path) -> Result<()> {
    let output = Command::new(&valgrind.cg_diff)
        .arg(before)
        .arg(after)
        .output()
        .map_err(|source| Error::Spawn {
            program: valgrind.cg_diff.clone(),
            source,
        })?;
    if !output.status.success() {
        return Err(Error::Annotate {
            program: valgrind.cg_diff.clone(),
            status: output.status.to_string(),
            input: after.to_path_buf(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    std::fs::write(out, &output.stdout).map_err(|source| Error::io("write", out, source))
}
