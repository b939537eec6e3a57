//! Parsers for what Valgrind's tools leave behind: Cachegrind's raw profile
//! files (`cachegrind.out.*`, also what `cg_diff` writes), the text report
//! `cg_annotate` prints, Callgrind's dumps read as a Cachegrind profile
//! ([`callgrind_out`], with the program's function [`symbols`]), and DHAT's
//! allocation sites ([`dhat`]).
//!
//! The regression runner counts instructions by running a harness under
//! `valgrind --tool=cachegrind` and reading the `summary:` line of the
//! profile; it then keeps a `cg_annotate` report next to the count so that a
//! regression can be explained function by function. Both are read here.
//!
//! Two Valgrind generations are in use and their tools print differently:
//!
//! * Valgrind 3.19 (Debian 12), with the original Perl `cg_annotate` and
//!   `cg_diff`;
//! * Valgrind 3.24 (Debian trixie, see `scripts/fetch-valgrind.sh`), whose
//!   `cg_annotate` is a Python rewrite with a different layout, `--diff`, and
//!   `--mod-filename`/`--mod-funcname`.
//!
//! The raw profile format is the same in both (3.24 merely drops the `desc:`
//! lines when the cache simulation is off). Every format detail relied on
//! here is pinned by real files from both versions in `tests/fixtures/`.
//!
//! The parsers are strict on purpose: a count that is silently wrong is worse
//! than an error in a tool whose whole job is to notice small changes. A
//! profile without its final `summary:` line (a killed run), a summary that
//! disagrees with the cost lines, or a report without its `PROGRAM TOTALS`
//! line is an error, never a zero.

pub mod annotated;
pub mod cachegrind_out;
pub mod callgrind_out;
pub mod dhat;
pub mod error;
mod function_cost;
mod number;
pub mod symbols;

pub use error::ProfileError;
pub use function_cost::FunctionCost;
