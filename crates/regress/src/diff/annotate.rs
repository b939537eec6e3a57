//! The per-function diff people read: Valgrind's own `cg_annotate`, run on
//! the two region profiles with the diff's name normalisation.
//!
//! - Valgrind 3.22+: `cg_annotate --diff --mod-filename=… --mod-funcname=…
//!   BASE HEAD`.
//! - Older (3.19's Perl tools have no `--diff`): `cg_diff --mod-filename=…
//!   --mod-funcname=… BASE HEAD > DIFF`, then `cg_annotate DIFF`.
//!
//! Source annotation is off (`--auto=no`, which both generations accept):
//! the two sides' sources differ and their worktrees are gone by the time
//! anyone reads the file, and with the subtraction method every cost is on
//! line 0 anyway.

use std::path::Path;
use std::process::Command;

use super::normalize::Normalizer;
use crate::error::{Error, Result};
use crate::measure::annotate::run_tool;
use crate::measure::valgrind::{Valgrind, Version};

/// The first Valgrind whose `cg_annotate` diffs two profiles itself.
pub const ANNOTATE_DIFF_SINCE: Version = Version::new(3, 22, 0);

/// `cg_annotate`'s text of head minus base. `scratch` is a folder for the
/// intermediate `cg_diff` profile on older Valgrind.
pub fn annotated_diff(
    valgrind: &Valgrind,
    normalizer: &Normalizer,
    base: &Path,
    head: &Path,
    scratch: &Path,
) -> Result<String> {
    let names = normalizer.tool_args();
    if valgrind.version >= ANNOTATE_DIFF_SINCE {
        let mut command = Command::new(&valgrind.cg_annotate);
        command
            .arg("--diff")
            .arg("--auto=no")
            .args(&names)
            .arg(base)
            .arg(head);
        return run(command, &valgrind.cg_annotate, head);
    }
    let mut command = Command::new(&valgrind.cg_diff);
    command.args(&names).arg(base).arg(head);
    let profile = run(command, &valgrind.cg_diff, head)?;
    let diff_path = scratch.join("diff.cachegrind.out");
    std::fs::create_dir_all(scratch)
        .map_err(|source| Error::io("create the folder", scratch, source))?;
    std::fs::write(&diff_path, profile).map_err(|source| Error::io("write", &diff_path, source))?;
    let mut command = Command::new(&valgrind.cg_annotate);
    command.arg("--auto=no").arg(&diff_path);
    let text = run(command, &valgrind.cg_annotate, &diff_path);
    let _ = std::fs::remove_file(&diff_path);
    text
}

fn run(command: Command, program: &Path, input: &Path) -> Result<String> {
    let text = run_tool(command, program, input)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}
