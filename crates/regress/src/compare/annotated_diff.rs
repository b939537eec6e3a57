//! The per-function diff people read: Valgrind's own `cg_annotate`, run on
//! copies of the two region profiles whose names the diff has normalised
//! ([`Normalizer::rewrite_profile`]), so the text lines functions up exactly
//! as the report does.
//!
//! - Valgrind 3.22+: `cg_annotate --diff BASE HEAD`.
//! - Older (3.19's Perl tools have no `--diff`): `cg_diff BASE HEAD > DIFF`,
//!   then `cg_annotate DIFF`.
//!
//! Source annotation is off (`--auto=no`, which both generations accept):
//! the two sides' sources differ and their worktrees are gone by the time
//! anyone reads the file, and with the subtraction method every cost is on
//! line 0 anyway.

use std::path::Path;
use std::process::Command;

use super::normalize::Normalizer;
use crate::measure::annotate::run_tool;
use crate::measure::valgrind::{Valgrind, Version};
use crate::measure::{MeasureError, Result};

/// The largest region profile copied (real ones are tens of KiB).
const MAX_PROFILE_BYTES: u64 = 256 << 20;

/// The first Valgrind whose `cg_annotate` diffs two profiles itself.
pub const ANNOTATE_DIFF_SINCE: Version = Version::new(3, 22, 0);

/// `cg_annotate`'s text of head minus base. `scratch` is a folder for the
/// normalised copies and the intermediate `cg_diff` profile; they are
/// removed afterwards.
pub fn annotated_diff(
    valgrind: &Valgrind,
    normalizer: &Normalizer,
    base: &Path,
    head: &Path,
    scratch: &Path,
) -> Result<String> {
    std::fs::create_dir_all(scratch)
        .map_err(|source| MeasureError::io("create the folder", scratch, source))?;
    let copies = [
        (base, scratch.join("base.normalised.cachegrind.out")),
        (head, scratch.join("head.normalised.cachegrind.out")),
    ];
    for (from, to) in &copies {
        let text = crate::limits::read_capped(from, MAX_PROFILE_BYTES)
            .map_err(|source| MeasureError::io("read", from, source))?;
        std::fs::write(to, normalizer.rewrite_profile(&text))
            .map_err(|source| MeasureError::io("write", to, source))?;
    }
    let (base, head) = (&copies[0].1, &copies[1].1);
    let diff_path = scratch.join("diff.cachegrind.out");
    let text = if valgrind.version >= ANNOTATE_DIFF_SINCE {
        let mut command = Command::new(&valgrind.cg_annotate);
        command.arg("--diff").arg("--auto=no").arg(base).arg(head);
        run(command, &valgrind.cg_annotate, head)
    } else {
        let mut command = Command::new(&valgrind.cg_diff);
        command.arg(base).arg(head);
        run(command, &valgrind.cg_diff, head).and_then(|profile| {
            std::fs::write(&diff_path, profile)
                .map_err(|source| MeasureError::io("write", &diff_path, source))?;
            let mut command = Command::new(&valgrind.cg_annotate);
            command.arg("--auto=no").arg(&diff_path);
            run(command, &valgrind.cg_annotate, &diff_path)
        })
    };
    for path in [base, head, &diff_path] {
        let _ = std::fs::remove_file(path);
    }
    text
}

fn run(command: Command, program: &Path, input: &Path) -> Result<String> {
    let text = run_tool(command, program, input)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}
