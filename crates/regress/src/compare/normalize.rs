//! Makes the same function carry the same name in two builds.
//!
//! Cachegrind keys every cost by (file, function). Two builds of the same
//! code still name some of them differently, and a function that is merely
//! renamed would show up as "removed" on one side and "added" on the other
//! (measured before this normalisation: ~790 unchanged functions per
//! s2n-tls harness listed twice when s2n-tls-sys came from another folder):
//!
//! - each side is built in a place of its own: a worktree
//!   (`…/target/regress-diff/base-<sha>/harnesses/src/x.rs`), a scratch copy
//!   of the workspace (`…/regress-source/scratch/<id>/…`), a library export
//!   (`…/regress-source/exports/s2n-tls/<key>/tree/…`), the registry
//!   (`~/.cargo/registry/src/<index>/…`) or a git checkout;
//! - the same library file sits at another place in each layout: s2n-tls's
//!   `tls/s2n_send.c` is `s2n-tls-sys-0.3.47/lib/tls/s2n_send.c` from the
//!   registry and `bindings/rust/extended/s2n-tls-sys/lib/tls/s2n_send.c`
//!   in its repository; aws-lc's files are `/aws-lc/crypto/…` (aws-lc-sys
//!   maps its prefix) or `aws-lc-sys-0.47.0/aws-lc/crypto/…`;
//! - versions are part of names: a registry crate's folder
//!   (`rustls-0.23.46/`) and aws-lc's symbol prefix (`aws_lc_0_47_0_`);
//! - a Rust symbol that was demangled with its hash ends in
//!   `::h<16 hex digits>`, which changes whenever the crate graph changes.
//!
//! So every file becomes library-relative (`tls/s2n_send.c`,
//! `crypto/fipsmodule/bn/montgomery.c`, `rustls/src/conn.rs`,
//! `harnesses/src/calibration.rs`) and every version tag goes: a diff of the
//! same source built from two places shows no changed function, and a
//! version bump lines up function by function.
//!
//! The same normaliser serves our own comparison ([`Normalizer::file`],
//! [`Normalizer::function`]) and the text people read: Valgrind's tools are
//! given copies of the two profiles with their names already normalised
//! ([`Normalizer::rewrite_profile`]), so both line functions up the same way
//! and no regex has to be written for three engines (Perl, Python, Rust).
//! Who owns a function is decided from its raw names, which still say where
//! it was built ([`super::attribution`]).

use std::borrow::Cow;

use regex::Regex;

/// Where a build put a source file: everything up to the place's root is
/// removed. A diff worktree (`…/regress-diff/<name>/`), a from-source diff's
/// scratch copy of the workspace (`…/regress-source*/scratch/<id>/`) or
/// library export (`…/regress-source*/exports/<library>/<key>/tree/`), a
/// registry crate's index folder (`…/registry/src/<index>/`), a git
/// dependency's checkout (`…/git/checkouts/<repo>/<rev>/`), and the copy of
/// the OpenSSL tree that `openssl-src` configures and compiles in the build
/// script's output folder (`…/build/openssl-sys-<hash>/out/openssl-build/
/// build/src/`, a new hash for every build of it).
pub const PLACE_PATTERN: &str = "^(?:.*/regress-diff/[^/]+|.*/regress-source[^/]*/scratch/[^/]+\
     |.*/regress-source[^/]*/exports/[^/]+/[^/]+/tree|.*/registry/src/[^/]+\
     |.*/git/checkouts/[^/]+/[^/]+|.*/out/openssl-build/build/src)/";

/// A legacy-mangled Rust symbol's hash, `::h` and 16 hex digits, wherever
/// it appears in a demangled name (generic arguments carry their own).
pub const HASH_PATTERN: &str = "::h[0-9a-f]{16}";

/// aws-lc's versioned symbol prefix (`aws_lc_0_47_0_`, `aws_lc_fips_0_13_1_`).
pub const AWS_LC_PREFIX_PATTERN: &str = "^aws_lc_(?:fips_)?[0-9]+_[0-9]+_[0-9]+_";

/// A function without a symbol, which Callgrind names by its address
/// (`0x0000000000a3bbb4`, aws-lc's ML-KEM assembly): the address moves with
/// the layout, so two builds of the same code would show it as two
/// functions, one removed and one added. Every such function of a file is
/// one unnamed function of that file.
pub const ADDRESS_PATTERN: &str = "^0x[0-9a-f]+$";

/// What [`ADDRESS_PATTERN`] names become.
pub const UNNAMED: &str = "(unnamed)";

/// After the place is gone, the library layouts, first match wins:
/// `(pattern, replacement)`, the replacement in `regex`'s `$name` syntax.
const LAYOUT_RULES: &[(&str, &str)] = &[
    // s2n-tls's C tree, shipped inside s2n-tls-sys as `lib/`.
    (
        "^(?:bindings/rust/extended/s2n-tls-sys|s2n-tls-sys-[0-9][^/]*)/lib/",
        "",
    ),
    // aws-lc inside aws-lc-sys, and the prefix aws-lc-sys maps it to.
    ("^(?:aws-lc-sys(?:-[0-9][^/]*)?/aws-lc|/aws-lc)/", ""),
    // s2n-tls's Rust crates in its repository.
    ("^bindings/rust/extended/(?P<krate>[^/]+)/", "$krate/"),
    // A registry crate's folder: its name without the version.
    (
        "^(?P<krate>[A-Za-z0-9_-]+?)-[0-9]+[.][0-9]+[.][0-9]+[^/]*/",
        "$krate/",
    ),
];

/// One search-and-replace over names.
#[derive(Debug, Clone)]
pub struct Rule {
    regex: Regex,
    replacement: &'static str,
    /// Replace every match, or only the first.
    global: bool,
}

impl Rule {
    /// # Panics
    ///
    /// When `pattern` is not a valid regex; the patterns are constants of
    /// this module, and the unit tests build every one of them.
    fn new(pattern: &str, replacement: &'static str, global: bool) -> Rule {
        let regex = Regex::new(pattern)
            .unwrap_or_else(|error| panic!("normalisation pattern {pattern:?}: {error}"));
        Rule {
            regex,
            replacement,
            global,
        }
    }

    /// The rule applied to one name.
    pub fn apply<'a>(&self, name: &'a str) -> Cow<'a, str> {
        if self.global {
            self.regex.replace_all(name, self.replacement)
        } else {
            self.regex.replace(name, self.replacement)
        }
    }
}

/// The file and function rules of a diff.
#[derive(Debug, Clone)]
pub struct Normalizer {
    place: Rule,
    layouts: Vec<Rule>,
    functions: Vec<Rule>,
}

impl Default for Normalizer {
    fn default() -> Normalizer {
        Normalizer {
            place: Rule::new(PLACE_PATTERN, "", false),
            layouts: LAYOUT_RULES
                .iter()
                .map(|(pattern, replacement)| Rule::new(pattern, replacement, false))
                .collect(),
            functions: vec![
                Rule::new(HASH_PATTERN, "", true),
                Rule::new(AWS_LC_PREFIX_PATTERN, "", false),
                Rule::new(ADDRESS_PATTERN, UNNAMED, false),
            ],
        }
    }
}

impl Normalizer {
    /// The library-relative file name.
    pub fn file<'a>(&self, name: &'a str) -> Cow<'a, str> {
        let placed = self.place.apply(name);
        for rule in &self.layouts {
            if rule.regex.is_match(&placed) {
                return Cow::Owned(rule.apply(&placed).into_owned());
            }
        }
        placed
    }

    /// The function name without hashes and version tags.
    pub fn function<'a>(&self, name: &'a str) -> Cow<'a, str> {
        let mut name = Cow::Borrowed(name);
        for rule in &self.functions {
            if let Cow::Owned(changed) = rule.apply(&name) {
                name = Cow::Owned(changed);
            }
        }
        name
    }

    /// A copy of a `cachegrind.out` profile with every file (`fl=`, `fi=`,
    /// `fe=`) and function (`fn=`) name normalised, for Valgrind's own
    /// tools: they add up the costs of names that became equal, exactly as
    /// our comparison does. Everything else is kept byte for byte.
    pub fn rewrite_profile(&self, profile: &str) -> String {
        let mut out = String::with_capacity(profile.len());
        for line in profile.split_inclusive('\n') {
            let (body, newline) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            match body.split_at_checked(3) {
                Some((key @ ("fl=" | "fi=" | "fe="), name)) => {
                    out.push_str(key);
                    out.push_str(&self.file(name));
                }
                Some(("fn=", name)) => {
                    out.push_str("fn=");
                    out.push_str(&self.function(name));
                }
                _ => out.push_str(body),
            }
            out.push_str(newline);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRY: &str = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f";

    #[test]
    fn worktree_and_scratch_roots_line_up() {
        let n = Normalizer::default();
        for place in [
            "/work/main/target/regress-diff/base-0123456789ab",
            "/home/ci/w/target/regress-diff/head-fedcba987654",
            "/w/target/regress-source/scratch/0011223344556677",
            "/w/target/regress-source-test-x/scratch/8899aabbccddeeff",
        ] {
            assert_eq!(
                n.file(&format!("{place}/harnesses/src/calibration.rs")),
                "harnesses/src/calibration.rs"
            );
        }
    }

    /// The same s2n-tls file from the registry and from the repository's
    /// layout, at two revisions: one name.
    #[test]
    fn library_files_become_library_relative() {
        let n = Normalizer::default();
        let export = "/w/target/regress-source/exports/s2n-tls/0123abcd/tree";
        for (raw, normalised) in [
            (
                format!("{REGISTRY}/s2n-tls-sys-0.3.47/lib/tls/s2n_client_finished.c"),
                "tls/s2n_client_finished.c",
            ),
            (
                format!("{export}/bindings/rust/extended/s2n-tls-sys/lib/tls/s2n_client_finished.c"),
                "tls/s2n_client_finished.c",
            ),
            (
                format!("{REGISTRY}/s2n-tls-0.3.47/src/connection.rs"),
                "s2n-tls/src/connection.rs",
            ),
            (
                format!("{export}/bindings/rust/extended/s2n-tls/src/connection.rs"),
                "s2n-tls/src/connection.rs",
            ),
            (
                "/aws-lc/crypto/fipsmodule/bn/montgomery.c".to_owned(),
                "crypto/fipsmodule/bn/montgomery.c",
            ),
            (
                format!("{REGISTRY}/aws-lc-sys-0.47.0/aws-lc/crypto/fipsmodule/bn/montgomery.c"),
                "crypto/fipsmodule/bn/montgomery.c",
            ),
            (
                "/w/target/regress-source/exports/aws-lc-rs/wt-01/tree/aws-lc-sys/aws-lc/crypto/mem.c"
                    .to_owned(),
                "crypto/mem.c",
            ),
            (
                format!("{REGISTRY}/rustls-0.23.46/src/conn.rs"),
                "rustls/src/conn.rs",
            ),
            (
                "/w/target/regress-source/exports/rustls/abc/tree/rustls/src/conn.rs".to_owned(),
                "rustls/src/conn.rs",
            ),
            (
                format!("{REGISTRY}/windows-sys-0.59.0-rc.1/src/lib.rs"),
                "windows-sys/src/lib.rs",
            ),
            (
                format!("{REGISTRY}/aws-lc-rs-1.19.0/src/aead.rs"),
                "aws-lc-rs/src/aead.rs",
            ),
            (
                "/w/target/debug/build/openssl-sys-c4e3a9e5271b6ab4/out/openssl-build/build/src/crypto/lhash/lhash.c"
                    .to_owned(),
                "crypto/lhash/lhash.c",
            ),
            (
                "/w/target/regress-source/target/debug/build/openssl-sys-dcd7d43f60f2d12e/out/openssl-build/build/src/crypto/bn/x86_64-mont.s"
                    .to_owned(),
                "crypto/bn/x86_64-mont.s",
            ),
            (
                "/home/u/.cargo/git/checkouts/s2n-tls-4ab1d5c1a2b3c4d5/1a2b3c4/bindings/rust/extended/s2n-tls/src/lib.rs"
                    .to_owned(),
                "s2n-tls/src/lib.rs",
            ),
        ] {
            assert_eq!(n.file(&raw), normalised, "{raw}");
        }
    }

    #[test]
    fn other_files_are_kept() {
        let n = Normalizer::default();
        for name in [
            "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/option.rs",
            "./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S",
            "???",
            "/work/main/harnesses/src/calibration.rs",
            "/usr/include/x86_64-linux-gnu/bits/byteswap.h",
        ] {
            assert_eq!(n.file(name), name);
        }
    }

    #[test]
    fn hashes_and_version_prefixes_are_removed() {
        let n = Normalizer::default();
        assert_eq!(
            n.function("harnesses::calibration::spin::h0123456789abcdef"),
            "harnesses::calibration::spin"
        );
        assert_eq!(
            n.function("<alloc::vec::Vec<u8>::h00112233445566aa as core::clone::Clone>::clone::hffeeddccbbaa9988"),
            "<alloc::vec::Vec<u8> as core::clone::Clone>::clone"
        );
        assert_eq!(
            n.function("aws_lc_0_47_0_bn_mul_mont_nohw"),
            "bn_mul_mont_nohw"
        );
        assert_eq!(
            n.function("aws_lc_0_48_1_bn_mul_mont_nohw"),
            "bn_mul_mont_nohw"
        );
        assert_eq!(n.function("aws_lc_fips_0_13_1_SHA256"), "SHA256");
        for name in [
            "s2n_tls::connection::Connection::handshake",
            "foo::h0123",
            "foo::H0123456789ABCDEF",
            "aws_lc_sys::init",
            "s2n_send",
        ] {
            assert_eq!(n.function(name), name);
        }
    }

    #[test]
    fn profiles_are_rewritten_name_by_name() {
        let n = Normalizer::default();
        let profile = format!(
            "desc: I1 cache\ncmd: ./harness\nevents: Ir\n\
             fl={REGISTRY}/s2n-tls-sys-0.3.47/lib/tls/s2n_send.c\n\
             fn=s2n_sendv_with_offset\n10 3\n\
             fl=/aws-lc/crypto/mem.c\nfn=aws_lc_0_47_0_OPENSSL_free\n0 7\n\
             summary: 10"
        );
        assert_eq!(
            n.rewrite_profile(&profile),
            "desc: I1 cache\ncmd: ./harness\nevents: Ir\n\
             fl=tls/s2n_send.c\nfn=s2n_sendv_with_offset\n10 3\n\
             fl=crypto/mem.c\nfn=OPENSSL_free\n0 7\nsummary: 10"
        );
    }
}

#[cfg(test)]
mod unnamed_tests {
    use super::*;

    #[test]
    fn functions_named_by_address_are_one_unnamed_function() {
        let normalizer = Normalizer::default();
        assert_eq!(normalizer.function("0x0000000000a3bbb4"), UNNAMED);
        assert_eq!(normalizer.function("0x0000000000b1c2d0"), UNNAMED);
        // A name that merely contains an address is a name.
        assert_eq!(normalizer.function("f0x12"), "f0x12");
        assert_eq!(normalizer.function("0x12_helper"), "0x12_helper");
    }
}
