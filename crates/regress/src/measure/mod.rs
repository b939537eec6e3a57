//! Measuring one harness, start to finish.
//!
//! In the order a measurement flows through them:
//!
//! - [`valgrind`] finds Valgrind and picks the counting method from its
//!   version;
//! - [`cachegrind`] re-executes a harness's test binary under Cachegrind in
//!   a pinned environment, and [`fork_server`] forks its Callgrind children
//!   from one program under one Valgrind;
//! - [`annotate`] runs `cg_diff` and `cg_annotate` on the profiles;
//! - [`fingerprint`] says what a count depends on;
//! - [`runner`] ties those together and writes the annotated profile and
//!   the [`measurement`] record;
//! - [`overhead`] reads the harness's own share of a region from its
//!   profile;
//! - [`split`] reads a Callgrind child's dumps (with `regress-profile`'s
//!   Callgrind reader, and the program's function table [`symbols`] keeps)
//!   into the count of each part of the run (client, server, their stages,
//!   the glue), [`heap_hooks`]
//!   builds the library a heap child preloads, and [`metrics`] is what
//!   both add to a record.
//!
//! [`flame`] rebuilds call paths from a Callgrind child's call graph and
//! draws them as flame graphs.
//!
//! Their error is [`MeasureError`] (`error`); [`setting`] reads the
//! settings that are one word of a few.
//!
//! [`scale`] is the wall-clock counterpart: the same harnesses run natively
//! on 1..N threads.

pub mod annotate;
pub mod cachegrind;
pub mod costs;
pub mod cpu_profile;
mod error;
pub mod fingerprint;
pub mod flame;
pub mod fork_server;
pub mod header;
pub mod heap_hooks;
pub mod measurement;
pub mod metrics;
pub mod overhead;
pub mod runner;
pub mod scale;
pub mod scratch;
pub mod setting;
pub mod split;
pub mod symbols;
pub mod valgrind;

pub use error::{MeasureError, Result};
