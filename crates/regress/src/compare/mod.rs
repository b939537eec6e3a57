//! Two measurement sets, compared: the stage `regress diff`, `regress
//! bisect` and `regress history` share to say what moved between two
//! builds, and in which functions.
//!
//! The pieces, in the order a comparison flows through them:
//!
//! - `normalize` makes the same function carry the same name in both
//!   builds (build places, library layouts, versions, symbol hashes), for
//!   our own comparison and for `cg_annotate`'s ([`Normalizer`]);
//! - `annotated_diff` writes the human-readable per-function diff with
//!   Valgrind's own tools ([`annotated_diff`]);
//! - `attribution` says where each function lives (the TLS library's C
//!   code, aws-lc, the Rust crates, the harness, std/glibc: [`Origin`]);
//! - `functions` computes per-function deltas ([`function_deltas`]) and
//!   judges each harness against its threshold ([`HarnessDiff`]), and
//!   `figure_deltas` its other figures (sides, stages, heap) and, when the
//!   heap moved, the allocation sites that changed ([`figure_diffs`],
//!   [`site_deltas`]).
//!
//! Nothing here builds, measures or prints.

mod annotated_diff;
mod attribution;
mod figure_deltas;
mod functions;
mod normalize;

pub use annotated_diff::{annotated_diff, ANNOTATE_DIFF_SINCE};
pub use attribution::{attribute, Origin};
pub use figure_deltas::{
    figure_diffs, heap_moved, regressed, site_deltas, site_text, FigureDiff, SiteDelta, MAX_FRAMES,
    MAX_SITES,
};
pub use functions::{
    function_deltas, origin_deltas, sort, FunctionDelta, HarnessDiff, OriginDelta, Verdict,
    IMPLAUSIBLE_DROP_PERCENT,
};
pub use normalize::{Normalizer, Rule, AWS_LC_PREFIX_PATTERN, HASH_PATTERN, PLACE_PATTERN};
