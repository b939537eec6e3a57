//! The measured program: what the runner starts under Valgrind.
//!
//! It links the harnesses and the in-process side of measurement
//! (`regress-measure`) and nothing else: not the runner, not a test
//! framework. An edit to the runner therefore cannot move a count.
//! `harnesses list` prints the names (the perf harnesses, then the
//! `constant_flow::` operations); `harnesses run NAME` runs one natively;
//! `harnesses search LIBRARY` looks for costlier hostile flights.

harnesses::embed_library_versions!();

fn main() -> std::process::ExitCode {
    // `harnesses search LIBRARY`: the search for costlier hostile flights,
    // under Callgrind (`scripts/hostile-search.sh`). A measured child never
    // has arguments.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("search") {
        return match harnesses::tls::hostile::search::main(&args[1..]) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("harnesses search: {error}");
                std::process::ExitCode::from(2)
            }
        };
    }
    // The perf harnesses, then the constant-flow operations (which are not
    // perf harnesses: the runner tells them apart by their name's prefix).
    let mut entries = harnesses::registry::all();
    entries.extend(harnesses::constant_flow::entries());
    regress_measure::program::main(entries)
}
