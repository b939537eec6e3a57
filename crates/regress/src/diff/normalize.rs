//! Makes the same function carry the same name in two builds.
//!
//! Cachegrind keys every cost by (file, function). Two builds of the same
//! code still name some of them differently, and a function that is merely
//! renamed would show up as "removed" on one side and "added" on the other:
//!
//! - each side is built in its own worktree, so the harness's own files are
//!   `/…/target/regress-diff/base-<sha>/harnesses/src/x.rs` on one side and
//!   `/…/head-<sha>/harnesses/src/x.rs` on the other;
//! - crates come from `~/.cargo/registry/src/<index>/…` (or `git/checkouts`),
//!   whose prefix depends on the machine's `CARGO_HOME`;
//! - a Rust symbol that was not demangled, or was demangled with its hash,
//!   ends in `::h<16 hex digits>`, a hash that changes whenever anything in
//!   the crate's dependency graph changes.
//!
//! One [`Rule`] per kind of name removes those parts. The same rules are
//! applied twice: by [`Normalizer::file`] and [`Normalizer::function`] to
//! our own per-function comparison, and by Valgrind's tools through
//! `--mod-filename` / `--mod-funcname` ([`Rule::expression`]) to the
//! human-readable diff, so both line functions up the same way.
//!
//! # One syntax for three regex engines
//!
//! 3.19's `cg_diff` is Perl and `eval`s the expression as
//! `$name =~ <expression>`; 3.22+'s `cg_annotate` is Python and takes
//! `s/old/new/flags` with only the `g` and `i` flags, unescaping `\/`
//! before handing the pattern to `re`; ours is Rust's `regex`. Each tool
//! accepts a single expression per option (a repeated option replaces the
//! earlier one), so every rule is one pattern with alternatives. The
//! patterns therefore keep to what all three read the same way: `^`,
//! `(?:…|…)`, `.*`, bracket classes and `{n}` counts, with no `$` or `@`
//! (Perl would interpolate them in the `eval`) and no backslashes (the
//! escaping of `/` is the only one [`Rule::expression`] adds). Replacements
//! are empty, because the engines spell capture references differently.
//! Both tools are exercised with these exact expressions by
//! `tests/diff_normalize_tools.rs`.

use std::borrow::Cow;

use regex::Regex;

/// The file-name prefixes that differ between two builds of the same
/// source: a diff worktree's root (`…/regress-diff/<name>/`), a registry
/// crate's index folder (`…/registry/src/<index>/`, leaving
/// `<crate>-<version>/…`), and a git dependency's checkout folder
/// (`…/git/checkouts/<repo>/<rev>/`).
pub const FILE_PATTERN: &str =
    "^(?:.*/regress-diff/[^/]+|.*/registry/src/[^/]+|.*/git/checkouts/[^/]+/[^/]+)/";

/// A legacy-mangled Rust symbol's hash, `::h` and 16 hex digits, wherever
/// it appears in a demangled name (generic arguments carry their own).
pub const FUNCTION_PATTERN: &str = "::h[0-9a-f]{16}";

/// One search-and-replace over names.
#[derive(Debug, Clone)]
pub struct Rule {
    pattern: &'static str,
    /// Replace every match (`g`), or only the first.
    global: bool,
    regex: Regex,
}

impl Rule {
    /// A rule that deletes what `pattern` matches.
    ///
    /// # Panics
    ///
    /// When `pattern` is not a valid regex or uses syntax the Perl and Python
    /// tools would read differently; the patterns are constants of this
    /// module, and the unit tests build every one of them.
    fn delete(pattern: &'static str, global: bool) -> Rule {
        assert!(
            !pattern.contains(['$', '@', '\\']),
            "{pattern:?} would be read differently by Perl's eval or Python's unescaping"
        );
        let regex = Regex::new(pattern)
            .unwrap_or_else(|error| panic!("normalisation pattern {pattern:?}: {error}"));
        Rule {
            pattern,
            global,
            regex,
        }
    }

    /// The rule applied to one name.
    pub fn apply<'a>(&self, name: &'a str) -> Cow<'a, str> {
        if self.global {
            self.regex.replace_all(name, "")
        } else {
            self.regex.replace(name, "")
        }
    }

    /// The rule as an `s/pattern//flags` expression, as `cg_diff` (Perl) and
    /// `cg_annotate` 3.22+ (Python) take it.
    pub fn expression(&self) -> String {
        let flags = if self.global { "g" } else { "" };
        format!("s/{}//{flags}", self.pattern.replace('/', "\\/"))
    }
}

/// The file and function rules of a diff.
#[derive(Debug, Clone)]
pub struct Normalizer {
    pub file: Rule,
    pub function: Rule,
}

impl Default for Normalizer {
    fn default() -> Normalizer {
        Normalizer {
            file: Rule::delete(FILE_PATTERN, false),
            function: Rule::delete(FUNCTION_PATTERN, true),
        }
    }
}

impl Normalizer {
    pub fn file<'a>(&self, name: &'a str) -> Cow<'a, str> {
        self.file.apply(name)
    }

    pub fn function<'a>(&self, name: &'a str) -> Cow<'a, str> {
        self.function.apply(name)
    }

    /// The options that make Valgrind's tools apply the same rules.
    pub fn tool_args(&self) -> [String; 2] {
        [
            format!("--mod-filename={}", self.file.expression()),
            format!("--mod-funcname={}", self.function.expression()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktree_roots_line_up() {
        let n = Normalizer::default();
        assert_eq!(
            n.file("/work/main/target/regress-diff/base-0123456789ab/harnesses/src/calibration.rs"),
            "harnesses/src/calibration.rs"
        );
        assert_eq!(
            n.file("/home/ci/w/target/regress-diff/head-fedcba987654/harnesses/src/calibration.rs"),
            "harnesses/src/calibration.rs"
        );
    }

    #[test]
    fn registry_and_git_prefixes_line_up() {
        let n = Normalizer::default();
        assert_eq!(
            n.file(
                "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/\
                 s2n-tls-sys-0.3.47/lib/tls/s2n_handshake_io.c"
            ),
            "s2n-tls-sys-0.3.47/lib/tls/s2n_handshake_io.c"
        );
        assert_eq!(
            n.file("/home/u/.cargo/registry/src/github.com-1ecc6299db9ec823/rustls-0.23.46/src/conn.rs"),
            "rustls-0.23.46/src/conn.rs"
        );
        assert_eq!(
            n.file("/home/u/.cargo/git/checkouts/s2n-tls-4ab1d5c1a2b3c4d5/1a2b3c4/bindings/rust/lib.rs"),
            "bindings/rust/lib.rs"
        );
    }

    #[test]
    fn other_files_are_kept() {
        let n = Normalizer::default();
        for name in [
            "/aws-lc/crypto/fipsmodule/bn/montgomery.c",
            "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/option.rs",
            "./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S",
            "???",
            "/work/main/harnesses/src/calibration.rs",
        ] {
            assert_eq!(n.file(name), name);
        }
    }

    #[test]
    fn symbol_hashes_are_removed_everywhere_in_a_name() {
        let n = Normalizer::default();
        assert_eq!(
            n.function("harnesses::calibration::spin::h0123456789abcdef"),
            "harnesses::calibration::spin"
        );
        assert_eq!(
            n.function("<alloc::vec::Vec<u8>::h00112233445566aa as core::clone::Clone>::clone::hffeeddccbbaa9988"),
            "<alloc::vec::Vec<u8> as core::clone::Clone>::clone"
        );
        // Not a hash: too short, upper case, or not after `::`.
        for name in [
            "s2n_tls::connection::Connection::handshake",
            "foo::h0123",
            "foo::H0123456789ABCDEF",
            "aws_lc_0_47_0_bn_mul_mont",
        ] {
            assert_eq!(n.function(name), name);
        }
    }

    #[test]
    fn expressions_escape_slashes_and_carry_flags() {
        let n = Normalizer::default();
        assert_eq!(
            n.file.expression(),
            "s/^(?:.*\\/regress-diff\\/[^\\/]+|.*\\/registry\\/src\\/[^\\/]+\
             |.*\\/git\\/checkouts\\/[^\\/]+\\/[^\\/]+)\\///"
        );
        assert_eq!(n.function.expression(), "s/::h[0-9a-f]{16}//g");
        let [file, function] = n.tool_args();
        assert!(file.starts_with("--mod-filename=s/^(?:"));
        assert_eq!(function, "--mod-funcname=s/::h[0-9a-f]{16}//g");
    }

    /// Python's `cg_annotate` splits `s/old/new/flags` with
    /// `s/(.*)(?<!\\)/(.*)(?<!\\)/(g|i|gi|ig|)$` and unescapes `\/`; emulate
    /// the split to check the pattern survives the round trip.
    #[test]
    fn expressions_split_back_into_the_pattern() {
        let n = Normalizer::default();
        for (rule, pattern) in [(&n.file, FILE_PATTERN), (&n.function, FUNCTION_PATTERN)] {
            let expression = rule.expression();
            let body = expression.strip_prefix("s/").expect("s/ prefix");
            let body = body.strip_suffix('g').unwrap_or(body);
            let body = body.strip_suffix("//").expect("empty replacement");
            assert_eq!(body.replace("\\/", "/"), pattern);
        }
    }
}
