//! Every environment variable `regress` and the harness tests read, in one
//! place: the name each reader uses, and what it means, which
//! `docs/configuration.md` lists (a test keeps the two in step).
//!
//! The variables of the protocol between the runner and a measured child
//! (`REGRESS_CHILD_*`, `REGRESS_FORK_SERVER_PROTOCOL`, `REGRESS_SCALE_*`)
//! are not settings: they live with that protocol in `regress-measure`.

/// `true`: `cargo test` measures and gates the harnesses under Valgrind
/// (read by [`crate::harness_test`]).
pub const ENABLE_VALGRIND: &str = "ENABLE_VALGRIND";

/// The Valgrind to use instead of the one on `PATH`; `cg_annotate` and
/// `cg_diff` are then looked up beside it first.
pub const VALGRIND: &str = "REGRESS_VALGRIND";

/// `callgrind` (the default) or `cachegrind`: which tool counts.
pub const METHOD: &str = "REGRESS_METHOD";

/// The CPU profile of a test run (`REGRESS_CPU=no-avx ENABLE_VALGRIND=true
/// cargo test`); `regress --cpu` wins over it.
pub const CPU: &str = "REGRESS_CPU";

/// `fail` (the default) or `warn`: what a count with no matching baseline
/// entry does.
pub const UNMATCHED: &str = "REGRESS_UNMATCHED";

/// Seconds a child may run before it is killed (default 600).
pub const TIMEOUT: &str = "REGRESS_TIMEOUT_SECS";

/// `native` (the default) or `none`: how heap children run.
pub const HEAP_CHILD: &str = "REGRESS_HEAP_CHILD";

/// `on` (the default) or `off`: whether Callgrind and Cachegrind children
/// are forked from fork servers, or each started under a Valgrind of its
/// own.
pub const FORK_SERVER: &str = "REGRESS_FORK_SERVER";

/// `off` keeps no call paths and draws no flame graphs.
pub const FLAME_GRAPHS: &str = "REGRESS_FLAME_GRAPHS";

/// The workspace root, instead of the nearest ancestor holding both
/// `Cargo.lock` and `baselines/`.
pub const ROOT: &str = "REGRESS_ROOT";

/// `off` builds a library's C sources without the compiler cache
/// (`regress-source` reads it).
pub use regress_source::compiler_cache::ENV_COMPILER_CACHE as COMPILER_CACHE;

/// `1`: the tests that need Valgrind fail without it instead of skipping
/// (read by the test suites' support code).
pub const REQUIRE_VALGRIND: &str = "REGRESS_REQUIRE_VALGRIND";

/// cargo's: where a diff builds (unless it holds the sources the diff
/// builds) and where the workflows find the runner.
pub const CARGO_TARGET_DIR: &str = "CARGO_TARGET_DIR";

/// Every setting above a user may set, in the order
/// `docs/configuration.md` lists them.
pub const SETTINGS: [&str; 12] = [
    ENABLE_VALGRIND,
    VALGRIND,
    METHOD,
    CPU,
    UNMATCHED,
    TIMEOUT,
    REQUIRE_VALGRIND,
    HEAP_CHILD,
    FORK_SERVER,
    FLAME_GRAPHS,
    COMPILER_CACHE,
    ROOT,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/configuration.md's table names exactly these settings, in this
    /// order (and `CARGO_TARGET_DIR`, cargo's own, is explained beside
    /// them).
    #[test]
    fn the_configuration_page_lists_every_setting() {
        let page =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md");
        let text = std::fs::read_to_string(&page).expect("docs/configuration.md");
        let listed: Vec<&str> = text
            .lines()
            .filter_map(|line| line.strip_prefix("| `"))
            .filter_map(|rest| rest.split(['=', '`']).next())
            .collect();
        assert_eq!(listed, SETTINGS, "docs/configuration.md's table");
        assert!(text.contains(&format!("`{CARGO_TARGET_DIR}`")));
    }
}
