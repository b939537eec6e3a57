//! The measured program: what the runner starts under Valgrind.
//!
//! It links the harnesses and the in-process side of measurement
//! (`regress-measure`) and nothing else: not the runner, not a test
//! framework. An edit to the runner therefore cannot move a count.
//! `harnesses list` prints the names; `harnesses run NAME` runs one natively.

harnesses::embed_library_versions!();

fn main() -> std::process::ExitCode {
    regress_measure::program::main(harnesses::registry::all())
}
