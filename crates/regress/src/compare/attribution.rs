//! Where a function lives, so a reader sees at a glance whose change it is.
//!
//! A pull request to this project changes harnesses; a dependency bump
//! changes the TLS library, aws-lc or a Rust crate; a toolchain bump changes
//! std. The per-function diff says which functions moved, and this module
//! names their owner from the two things a Cachegrind profile records: the
//! function's (demangled) name and the source file its instructions came
//! from.
//!
//! The function name decides first, because Cachegrind charges inlined code
//! to the file it was written in but to the function it was inlined into:
//! `s2n_stuffer_read_uint16` in `/usr/include/…/byteswap.h` is s2n-tls's
//! code, and `regress_measure::child::write_report` in
//! `/rustc/…/core/src/result.rs` is the harness's. The file decides for
//! names that carry no owner (`bn_mul_mont` in `/aws-lc/…`, `__memcpy_…` in
//! glibc's `./string/…`), and names alone are a last resort for code without
//! debug information (`???`), such as a system OpenSSL.
//!
//! Both raw names and names after [`super::normalize`] are understood.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Who owns a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// The TLS library's C code: s2n-tls (the C sources shipped in
    /// `s2n-tls-sys`), or the system OpenSSL (`libssl`, `libcrypto`).
    TlsLibrary,
    /// aws-lc, the crypto under s2n-tls and aws-lc-rs (`/aws-lc/` sources,
    /// `aws_lc_<version>_` symbols).
    AwsLc,
    /// The Rust TLS crates: the s2n-tls and openssl bindings, rustls and
    /// its helpers, aws-lc-rs.
    RustTlsCrate,
    /// This project: the harnesses and the measurement protocol around them.
    Harness,
    /// Rust's standard library and glibc.
    Runtime,
    /// Any other crate from the registry.
    OtherCrate,
    /// No rule recognised the name (typically `???` with no debug info).
    Unknown,
}

impl Origin {
    /// How the origin reads in a table.
    pub fn label(self) -> &'static str {
        match self {
            Origin::TlsLibrary => "TLS library (C)",
            Origin::AwsLc => "aws-lc",
            Origin::RustTlsCrate => "Rust TLS crate",
            Origin::Harness => "harness",
            Origin::Runtime => "std/glibc",
            Origin::OtherCrate => "other crate",
            Origin::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The owner of `function`, whose instructions Cachegrind attributed to
/// `file`.
pub fn attribute(file: &str, function: &str) -> Origin {
    by_function(function)
        .or_else(|| by_file(file))
        .or_else(|| by_bare_name(function))
        .unwrap_or(Origin::Unknown)
}

/// Names that say who owns them: prefixed C symbols and Rust paths.
fn by_function(function: &str) -> Option<Origin> {
    let Some(krate) = rust_crate_of(function) else {
        // C symbols: aws-lc prefixes every one of its own with its version.
        if function.starts_with("aws_lc_") {
            return Some(Origin::AwsLc);
        }
        if function.starts_with("s2n_") {
            return Some(Origin::TlsLibrary);
        }
        return None;
    };
    Some(match krate {
        "harnesses" | "regress_measure" | "regress" => Origin::Harness,
        "std" | "core" | "alloc" | "test" | "getopts" | "panic_unwind" | "panic_abort" => {
            Origin::Runtime
        }
        "aws_lc_sys" | "aws_lc_fips_sys" => Origin::AwsLc,
        krate if is_rust_tls_crate(&krate.replace('_', "-")) => Origin::RustTlsCrate,
        _ => Origin::OtherCrate,
    })
}

/// The crate a demangled Rust name starts in: `s2n_tls` for
/// `<s2n_tls::connection::Connection as core::ops::drop::Drop>::drop`.
fn rust_crate_of(function: &str) -> Option<&str> {
    let mut name = function.trim_start_matches(['<', '&', '(', '[']);
    for prefix in ["mut ", "const ", "*mut ", "*const ", "dyn ", "impl "] {
        if let Some(rest) = name.strip_prefix(prefix) {
            name = rest.trim_start_matches(['<', '&']);
        }
    }
    let (krate, _) = name.split_once("::")?;
    let is_identifier = !krate.is_empty()
        && krate
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    is_identifier.then_some(krate)
}

/// Crate names (as in the registry folder, with dashes) of the Rust TLS
/// stack.
fn is_rust_tls_crate(name: &str) -> bool {
    matches!(
        name,
        "s2n-tls"
            | "s2n-tls-sys"
            | "s2n-tls-tokio"
            | "rustls"
            | "webpki"
            | "openssl"
            | "openssl-sys"
            | "openssl-macros"
            | "aws-lc-rs"
    ) || name.starts_with("rustls-")
}

/// Owners known from the source file.
fn by_file(file: &str) -> Option<Origin> {
    if file.contains("/aws-lc/") || file.starts_with("aws-lc/") {
        return Some(Origin::AwsLc);
    }
    // A library built from its repository (`regress diff --library`).
    if file.contains("/bindings/rust/extended/s2n-tls-sys/lib/") {
        return Some(Origin::TlsLibrary);
    }
    // OpenSSL built from source (`openssl-src`, the harnesses' default):
    // its debug information names the copy `openssl-sys`'s build script
    // compiled, `<target>/.../out/openssl-build/build/src/ssl/...`.
    if file.contains("/openssl-build/build/src/") {
        return Some(Origin::TlsLibrary);
    }
    if file.contains("/bindings/rust/extended/") || file.contains("/exports/rustls/") {
        return Some(Origin::RustTlsCrate);
    }
    if let Some((krate, rest)) = registry_crate(file) {
        return Some(match krate {
            // The C library's sources travel inside the -sys crate.
            "s2n-tls-sys" if rest.starts_with("lib/") => Origin::TlsLibrary,
            "openssl-src" => Origin::TlsLibrary,
            "aws-lc-sys" | "aws-lc-fips-sys" => Origin::AwsLc,
            krate if is_rust_tls_crate(krate) => Origin::RustTlsCrate,
            _ => Origin::OtherCrate,
        });
    }
    if file.starts_with("/rustc/")
        || file.starts_with("/rust/deps/")
        || file.contains("/library/std/")
        || file.contains("/library/core/")
        || file.contains("/library/alloc/")
    {
        return Some(Origin::Runtime);
    }
    if file.starts_with("harnesses/")
        || file.contains("/harnesses/")
        || file.starts_with("crates/measure/")
        || file.contains("/crates/measure/")
    {
        return Some(Origin::Harness);
    }
    // glibc's debug information names its files relative to its build
    // folder: `./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S`.
    if file.starts_with("./") {
        return Some(Origin::Runtime);
    }
    None
}

/// The crate folder a registry file lives in, as (name, path inside it):
/// from a raw path (`…/registry/src/<index>/<name>-<version>/<rest>`) or a
/// normalised one (`<name>-<version>/<rest>`).
fn registry_crate(file: &str) -> Option<(&str, &str)> {
    let inside = match file.find("/registry/src/") {
        Some(at) => file[at + "/registry/src/".len()..].split_once('/')?.1,
        None => file,
    };
    let (folder, rest) = inside.split_once('/')?;
    let (name, version) = folder.rsplit_once('-')?;
    // `<name>-<major>.<minor>.<patch>[-pre]`: the version is the last part
    // that starts with a digit and holds a dot.
    let (name, version) = if version.starts_with(|c: char| c.is_ascii_digit()) {
        (name, version)
    } else {
        let (name, _) = name.rsplit_once('-')?;
        let version = &folder[name.len() + 1..];
        (name, version)
    };
    let looks_like_version =
        version.starts_with(|c: char| c.is_ascii_digit()) && version.contains('.');
    let looks_like_name = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (looks_like_version && looks_like_name).then_some((name, rest))
}

/// Unprefixed C names, for code without debug information.
fn by_bare_name(function: &str) -> Option<Origin> {
    const OPENSSL_PREFIXES: &[&str] = &[
        "SSL_", "ssl_", "ssl3_", "tls1_", "tls13_", "tls_", "dtls1_", "ossl_", "OSSL_", "OPENSSL_",
        "EVP_", "evp_", "CRYPTO_", "BN_", "bn_", "RSA_", "rsa_", "EC_", "ec_", "ecp_", "X509",
        "x509_", "ASN1_", "asn1_", "ERR_", "BIO_", "PEM_", "OBJ_", "HMAC", "SHA256", "SHA512",
        "sha256_", "sha512_", "aesni_", "gcm_", "ChaCha20", "Poly1305", "RAND_", "rand_", "DH_",
        "ECDSA_", "ecdsa_", "x25519_", "X25519",
    ];
    const RUNTIME_NAMES: &[&str] = &[
        "(below main)",
        "malloc",
        "free",
        "calloc",
        "realloc",
        "memcpy",
        "memmove",
        "memset",
        "memcmp",
        "strlen",
        "main",
    ];
    if OPENSSL_PREFIXES.iter().any(|p| function.starts_with(p)) {
        return Some(Origin::TlsLibrary);
    }
    let base = function.split('@').next().unwrap_or(function);
    if function.starts_with('_')
        || function.starts_with("pthread_")
        || RUNTIME_NAMES.contains(&base)
    {
        return Some(Origin::Runtime);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRY: &str = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f";
    const RUSTC: &str = "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library";

    #[test]
    fn aws_lc_by_symbol_and_by_path() {
        assert_eq!(
            attribute("???", "aws_lc_0_47_0_bn_mul_mont_nohw"),
            Origin::AwsLc
        );
        assert_eq!(
            attribute("/aws-lc/crypto/fipsmodule/bn/montgomery.c", "bn_mul_mont"),
            Origin::AwsLc
        );
        assert_eq!(
            attribute(
                &format!("{REGISTRY}/aws-lc-sys-0.47.0/aws-lc/crypto/mem.c"),
                "OPENSSL_free"
            ),
            Origin::AwsLc
        );
    }

    #[test]
    fn s2n_c_code_is_the_tls_library() {
        let file = format!("{REGISTRY}/s2n-tls-sys-0.3.47/lib/tls/s2n_handshake_io.c");
        assert_eq!(attribute(&file, "s2n_negotiate_impl"), Origin::TlsLibrary);
        assert_eq!(
            attribute("s2n-tls-sys-0.3.47/lib/tls/s2n_handshake_io.c", "x"),
            Origin::TlsLibrary
        );
        // Inlined header code is charged to the header, but it is s2n's.
        assert_eq!(
            attribute(
                "/usr/include/x86_64-linux-gnu/bits/byteswap.h",
                "s2n_stuffer_read_uint16"
            ),
            Origin::TlsLibrary
        );
    }

    #[test]
    fn a_library_built_from_its_repository() {
        let export = "/w/target/regress-source/exports";
        assert_eq!(
            attribute(
                &format!("{export}/s2n-tls/0a1b/tree/bindings/rust/extended/s2n-tls-sys/lib/tls/s2n_send.c"),
                "static_helper"
            ),
            Origin::TlsLibrary
        );
        assert_eq!(
            attribute(
                &format!("{export}/s2n-tls/0a1b/tree/bindings/rust/extended/s2n-tls/src/lib.rs"),
                "helper"
            ),
            Origin::RustTlsCrate
        );
        assert_eq!(
            attribute(
                &format!("{export}/rustls/0a1b/tree/rustls/src/conn.rs"),
                "x"
            ),
            Origin::RustTlsCrate
        );
        assert_eq!(
            attribute(
                &format!("{export}/aws-lc-rs/wt-1/tree/aws-lc-sys/aws-lc/crypto/mem.c"),
                "x"
            ),
            Origin::AwsLc
        );
    }

    #[test]
    fn rust_crates_by_path_and_by_name() {
        assert_eq!(
            attribute(
                &format!("{REGISTRY}/s2n-tls-0.3.47/src/connection.rs"),
                "s2n_tls::connection::Connection::poll_negotiate"
            ),
            Origin::RustTlsCrate
        );
        assert_eq!(
            attribute(
                &format!("{RUSTC}/core/src/result.rs"),
                "<s2n_tls::connection::Connection as core::ops::drop::Drop>::drop"
            ),
            Origin::RustTlsCrate
        );
        assert_eq!(
            attribute(
                "rustls-0.23.46/src/conn.rs",
                "rustls::conn::ConnectionCommon<T>::process_new_packets"
            ),
            Origin::RustTlsCrate
        );
        assert_eq!(
            attribute(
                "rustls-webpki-0.103.1/src/cert.rs",
                "webpki::cert::Cert::from_der"
            ),
            Origin::RustTlsCrate
        );
        assert_eq!(
            attribute(
                "openssl-0.10.82/src/ssl/mod.rs",
                "openssl::ssl::SslStream<S>::connect"
            ),
            Origin::RustTlsCrate
        );
        assert_eq!(
            attribute(
                &format!("{REGISTRY}/serde_json-1.0.154/src/ser.rs"),
                "serde_json::ser::format_escaped_str"
            ),
            Origin::OtherCrate
        );
        assert_eq!(
            attribute("errno-0.3.14/src/unix.rs", "errno::sys::errno"),
            Origin::OtherCrate
        );
    }

    #[test]
    fn the_harness_and_its_protocol() {
        assert_eq!(
            attribute(
                "harnesses/src/calibration.rs",
                "harnesses::calibration::spin"
            ),
            Origin::Harness
        );
        assert_eq!(
            attribute(
                "/work/main/target/regress-diff/head-0123/harnesses/src/calibration.rs",
                "spin"
            ),
            Origin::Harness
        );
        assert_eq!(
            attribute(
                &format!("{RUSTC}/core/src/result.rs"),
                "regress_measure::child::write_report"
            ),
            Origin::Harness
        );
        assert_eq!(
            attribute("crates/measure/src/child.rs", "run_counted"),
            Origin::Harness
        );
    }

    #[test]
    fn std_and_glibc() {
        assert_eq!(
            attribute(
                &format!("{RUSTC}/alloc/src/raw_vec.rs"),
                "<alloc::raw_vec::RawVec<u8>>::grow_one"
            ),
            Origin::Runtime
        );
        assert_eq!(
            attribute(
                "./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S",
                "__memcpy_avx_unaligned_erms"
            ),
            Origin::Runtime
        );
        assert_eq!(
            attribute("./malloc/./malloc/malloc.c", "_int_free"),
            Origin::Runtime
        );
        assert_eq!(attribute("???", "(below main)"), Origin::Runtime);
        assert_eq!(attribute("???", "fopen@@GLIBC_2.2.5"), Origin::Unknown);
        assert_eq!(attribute("???", "malloc"), Origin::Runtime);
        assert_eq!(
            attribute(
                "/rust/deps/getopts-0.2.24/src/lib.rs",
                "getopts::Options::parse"
            ),
            Origin::Runtime
        );
    }

    #[test]
    fn openssl_built_from_source() {
        let build =
            "/w/target/debug/build/openssl-sys-a146e625f3302b4e/out/openssl-build/build/src";
        for (file, function) in [
            ("crypto/bn/x86_64-mont5.s", "bn_sqr8x_internal"),
            ("ssl/statem/statem_srvr.c", "tls_construct_server_hello"),
            ("crypto/sha/sha256-x86_64.s", "sha256_block_data_order_avx2"),
        ] {
            assert_eq!(
                attribute(&format!("{build}/{file}"), function),
                Origin::TlsLibrary,
                "{file}"
            );
        }
    }

    #[test]
    fn system_openssl_without_debug_info() {
        assert_eq!(attribute("???", "SSL_do_handshake"), Origin::TlsLibrary);
        assert_eq!(attribute("???", "ossl_statem_accept"), Origin::TlsLibrary);
        assert_eq!(attribute("???", "EVP_DigestSignFinal"), Origin::TlsLibrary);
        assert_eq!(attribute("???", "???"), Origin::Unknown);
    }

    #[test]
    fn registry_folders_split_into_name_and_version() {
        assert_eq!(
            registry_crate("s2n-tls-sys-0.3.47/lib/tls/x.c"),
            Some(("s2n-tls-sys", "lib/tls/x.c"))
        );
        assert_eq!(
            registry_crate(&format!("{REGISTRY}/aws-lc-rs-1.19.0/src/lib.rs")),
            Some(("aws-lc-rs", "src/lib.rs"))
        );
        assert_eq!(
            registry_crate("windows-sys-0.59.0-rc.1/src/lib.rs"),
            Some(("windows-sys", "src/lib.rs"))
        );
        assert_eq!(registry_crate("harnesses/src/lib.rs"), None);
        assert_eq!(registry_crate("./string/x.S"), None);
        assert_eq!(registry_crate("???"), None);
    }

    #[test]
    fn crate_of_a_rust_name() {
        assert_eq!(rust_crate_of("core::ptr::drop_in_place<x>"), Some("core"));
        assert_eq!(rust_crate_of("<&mut std::io::Stderr as x>::f"), Some("std"));
        // A primitive's impl names no crate; its file (std's) decides.
        assert_eq!(rust_crate_of("<*const u8 as core::fmt::Debug>::fmt"), None);
        assert_eq!(rust_crate_of("plain_c_function"), None);
        assert_eq!(rust_crate_of("(below main)"), None);
    }
}
