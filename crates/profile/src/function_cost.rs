//! The one type both parsers produce: what a function cost.

use serde::{Deserialize, Serialize};

/// The instructions (Cachegrind's `Ir` event) executed in one function of one
/// source file.
///
/// A function is identified by the pair because that is how Cachegrind
/// attributes costs: code inlined from a header is charged to the header's
/// file, so one symbol can appear under several files (`_dl_relocate_object`
/// shows up under `dl-reloc.c`, `do-rel.h` and `dl-machine.h`).
///
/// `instructions` is signed because profiles written by `cg_diff` and reports
/// from `cg_annotate --diff` hold differences, which go both ways.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCost {
    /// The source file as Cachegrind names it (the debug info's path, after
    /// any `--mod-filename`); `???` when there is no debug info.
    pub file: String,
    /// The function (symbol) name, after any `--mod-funcname`.
    pub function: String,
    /// Instructions executed (`Ir`), or their difference in a diff.
    pub instructions: i64,
}
