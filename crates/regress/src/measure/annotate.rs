//! Turns raw Cachegrind profiles into the annotated text people read.
//!
//! With the marker method, the profile of the child *is* the region's
//! profile. With subtraction, the region's profile is the difference of two
//! whole-process profiles, which `cg_diff` computes on every Valgrind
//! version; `cg_annotate` then reads it like any other profile.

use std::path::Path;
use std::process::Command;

use super::{MeasureError, Result};
use crate::measure::cachegrind;
use crate::measure::valgrind::Valgrind;
use crate::process::{self, Role};

/// The most output kept from one tool (real annotations are a few MiB).
const MAX_TOOL_OUTPUT: usize = 256 << 20;

/// `cg_annotate PROFILE`: the function-by-function summary.
pub fn annotate(valgrind: &Valgrind, profile: &Path) -> Result<String> {
    let mut command = Command::new(&valgrind.cg_annotate);
    command.arg(profile);
    let text = run_tool(command, &valgrind.cg_annotate, profile)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// `cg_diff BEFORE AFTER`: a profile of AFTER minus BEFORE, written to `out`.
pub fn diff(valgrind: &Valgrind, before: &Path, after: &Path, out: &Path) -> Result<()> {
    let mut command = Command::new(&valgrind.cg_diff);
    command.arg(before).arg(after);
    let profile = run_tool(command, &valgrind.cg_diff, after)?;
    std::fs::write(out, profile).map_err(|source| MeasureError::io("write", out, source))
}

/// Runs one of Valgrind's tools (`program`, reading `input`) and returns
/// its standard output; a failure quotes its standard error. The one way
/// the runner and `regress diff` call `cg_annotate` and `cg_diff`: in a
/// process group of its own, within the child time limit
/// (`REGRESS_TIMEOUT_SECS`).
pub fn run_tool(command: Command, program: &Path, input: &Path) -> Result<Vec<u8>> {
    let timeout = cachegrind::timeout_from_env()?;
    let output = process::output(command, program, timeout, MAX_TOOL_OUTPUT, Role::Work)?;
    if !output.status.success() {
        return Err(MeasureError::Annotate {
            program: program.to_path_buf(),
            status: output.status.to_string(),
            input: input.to_path_buf(),
            stderr: process::stderr_text(&output),
        });
    }
    Ok(output.stdout)
}
