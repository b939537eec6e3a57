//! The measured program: what the runner starts under Valgrind.
//!
//! It links the harnesses and the in-process side of measurement
//! (`regress-measure`) and nothing else: not the runner, not a test
//! framework. An edit to the runner therefore cannot move a count.
//! `harnesses list` prints the names (the perf harnesses, then the
//! `constant_flow::` operations); `harnesses run NAME` runs one natively.

harnesses::embed_library_versions!();

fn main() -> std::process::ExitCode {
    // The perf harnesses, then the constant-flow operations (which are not
    // perf harnesses: the runner tells them apart by their name's prefix).
    let mut entries = harnesses::registry::all();
    entries.extend(harnesses::constant_flow::entries());
    regress_measure::program::main(entries)
}
