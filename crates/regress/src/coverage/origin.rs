//! Whose source a profile's file is, by its path: one of the TLS libraries,
//! another Rust crate, Rust's standard library, this workspace, or the
//! system (glibc and the like).
//!
//! The paths are those the debug information holds:
//!
//! | library | path |
//! |---|---|
//! | s2n-tls (its C) | `…/s2n-tls-sys-0.3.47/lib/tls/s2n_psk.c`, `…/s2n-tls-sys/lib/…` |
//! | aws-lc | `/aws-lc/crypto/…` (aws-lc-sys maps its build folder there), `…/aws-lc-sys-*/…` |
//! | OpenSSL | `…/openssl-build/build/src/ssl/…` (openssl-src), `…/openssl-src-*/openssl/…` |
//! | rustls | `…/rustls-0.23.46/src/…`, a checkout's `…/rustls/src/…` |
//! | Rust crates | `…/registry/src/<index>/<crate>-<version>/…` |
//! | Rust std | `/rustc/<hash>/library/…` |
//! | workspace | `…/harnesses/…`, `…/crates/measure/…` |
//! | system | everything else (`./malloc/malloc.c`, `/usr/include/…`) |

use std::fmt;

use serde::{Deserialize, Serialize};

/// The libraries `regress coverage --library` knows, by name.
pub const NAMES: [&str; 8] = [
    "s2n-tls",
    "aws-lc",
    "rustls",
    "openssl",
    "rust-crates",
    "rust-std",
    "workspace",
    "system",
];

/// Whose source a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    S2nTls,
    AwsLc,
    Rustls,
    Openssl,
    RustCrates,
    RustStd,
    Workspace,
    System,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::S2nTls => NAMES[0],
            Origin::AwsLc => NAMES[1],
            Origin::Rustls => NAMES[2],
            Origin::Openssl => NAMES[3],
            Origin::RustCrates => NAMES[4],
            Origin::RustStd => NAMES[5],
            Origin::Workspace => NAMES[6],
            Origin::System => NAMES[7],
        }
    }

    /// The origin `name` names.
    pub fn named(name: &str) -> Option<Origin> {
        [
            Origin::S2nTls,
            Origin::AwsLc,
            Origin::Rustls,
            Origin::Openssl,
            Origin::RustCrates,
            Origin::RustStd,
            Origin::Workspace,
            Origin::System,
        ]
        .into_iter()
        .find(|origin| origin.name() == name)
    }

    /// Whether this is one of the TLS libraries (whose every compiled file
    /// is worth listing, run or not).
    pub fn is_tls_library(self) -> bool {
        matches!(
            self,
            Origin::S2nTls | Origin::AwsLc | Origin::Rustls | Origin::Openssl
        )
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A file of a profile: whose it is, and its path inside that library
/// (`tls/s2n_psk.c`, `src/conn.rs`, `crypto/fipsmodule/bn/mul.c`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub origin: Origin,
    pub relative: String,
}

/// `name-1.2.3` as (`name`, `1.2.3`): a crate folder of cargo's registry.
fn crate_folder(segment: &str) -> Option<(&str, &str)> {
    let (name, version) = segment.rsplit_once('-')?;
    version
        .starts_with(|c: char| c.is_ascii_digit())
        .then_some((name, version))
}

/// Where the file at `path` (as a profile names it) comes from.
pub fn classify(path: &str) -> Place {
    let segments: Vec<&str> = path.split('/').collect();
    let after = |index: usize| segments[index + 1..].join("/");
    let place = |origin: Origin, relative: String| Place { origin, relative };
    for (index, segment) in segments.iter().enumerate() {
        let next = segments.get(index + 1).copied();
        if (segment.starts_with("s2n-tls-sys-") || *segment == "s2n-tls-sys") && next == Some("lib")
        {
            return place(Origin::S2nTls, after(index + 1));
        }
        if *segment == "aws-lc" && index + 1 < segments.len() {
            return place(Origin::AwsLc, after(index));
        }
        if segment.starts_with("aws-lc-sys-") {
            let relative = after(index);
            let relative = relative
                .strip_prefix("aws-lc/")
                .unwrap_or(&relative)
                .to_owned();
            return place(Origin::AwsLc, relative);
        }
        if *segment == "openssl-build"
            && next == Some("build")
            && segments.get(index + 2) == Some(&"src")
        {
            return place(Origin::Openssl, after(index + 2));
        }
        if segment.starts_with("openssl-src-") && next == Some("openssl") {
            return place(Origin::Openssl, after(index + 1));
        }
    }
    if segments.get(1) == Some(&"rustc") && segments.get(3) == Some(&"library") {
        return place(Origin::RustStd, after(3));
    }
    for (index, segment) in segments.iter().enumerate() {
        let next = segments.get(index + 1).copied();
        if segment.starts_with("index.") && index > 0 && segments[index - 1] == "src" {
            if let Some((name, _)) = next.and_then(crate_folder) {
                let relative = after(index + 1);
                return if name == "rustls" {
                    place(Origin::Rustls, relative)
                } else {
                    place(Origin::RustCrates, format!("{name}/{relative}"))
                };
            }
        }
        if *segment == "rustls" && next == Some("src") && index > 0 {
            return place(Origin::Rustls, after(index));
        }
        if (*segment == "harnesses" && next == Some("src"))
            || (*segment == "crates" && next == Some("measure"))
        {
            return place(Origin::Workspace, segments[index..].join("/"));
        }
    }
    place(Origin::System, path.trim_start_matches("./").to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_profile_paths_are_classified() {
        let registry = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f";
        for (path, origin, relative) in [
            (
                format!("{registry}/s2n-tls-sys-0.3.47/lib/tls/s2n_psk.c"),
                Origin::S2nTls,
                "tls/s2n_psk.c",
            ),
            (
                "/tmp/x/bindings/rust/extended/s2n-tls-sys/lib/crypto/s2n_hash.c".to_owned(),
                Origin::S2nTls,
                "crypto/s2n_hash.c",
            ),
            (
                "/aws-lc/crypto/fipsmodule/bn/mul.c".to_owned(),
                Origin::AwsLc,
                "crypto/fipsmodule/bn/mul.c",
            ),
            (
                "/w/target/debug/build/aws-lc-sys-7112a0310a05ba2f/out/include/openssl/x.h"
                    .to_owned(),
                Origin::AwsLc,
                "out/include/openssl/x.h",
            ),
            (
                "/w/target/debug/build/openssl-sys-a1/out/openssl-build/build/src/ssl/s3_lib.c"
                    .to_owned(),
                Origin::Openssl,
                "ssl/s3_lib.c",
            ),
            (
                format!("{registry}/rustls-0.23.46/src/conn.rs"),
                Origin::Rustls,
                "src/conn.rs",
            ),
            (
                "/tmp/checkout/rustls/src/conn.rs".to_owned(),
                Origin::Rustls,
                "src/conn.rs",
            ),
            (
                format!("{registry}/rustls-webpki-0.103.16/src/der.rs"),
                Origin::RustCrates,
                "rustls-webpki/src/der.rs",
            ),
            (
                "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ptr/mod.rs"
                    .to_owned(),
                Origin::RustStd,
                "core/src/ptr/mod.rs",
            ),
            (
                "/work/main/harnesses/src/s2n_tls/handshake.rs".to_owned(),
                Origin::Workspace,
                "harnesses/src/s2n_tls/handshake.rs",
            ),
            (
                "./malloc/./malloc/malloc.c".to_owned(),
                Origin::System,
                "malloc/./malloc/malloc.c",
            ),
        ] {
            let place = classify(&path);
            assert_eq!(
                (place.origin, place.relative.as_str()),
                (origin, relative),
                "{path}"
            );
        }
        assert_eq!(Origin::named("aws-lc"), Some(Origin::AwsLc));
        assert_eq!(Origin::named("boringssl"), None);
    }
}
