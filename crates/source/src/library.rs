//! The TLS libraries a checkout can be measured from, as data.
//!
//! Each entry says what a checkout of that library's own repository looks
//! like (so a wrong folder is refused with a precise message instead of a
//! confusing build failure), which crates it provides and where they live,
//! which submodules the build needs, what must be generated before cargo can
//! build it, and which harnesses its code reaches. Adding a library is adding
//! an entry here (and a generation step if it has one).

use crate::error::SourceError;

/// A TLS library whose repository `regress` can build the harnesses from.
#[derive(Debug, PartialEq, Eq)]
pub struct Library {
    /// The name users give on the command line (`--library s2n-tls=PATH`).
    pub name: &'static str,
    /// Paths, relative to the repository root, that a checkout of this
    /// library must have (a trailing `/` means a folder).
    pub layout: &'static [&'static str],
    /// The crates it provides, to be patched into this workspace.
    pub crates: &'static [CrateSpec],
    /// What of the repository a build reads, relative to its root (files
    /// or folders): the crates' folders, the workspace manifest they
    /// inherit from, what generation copies. Only these are exported (see
    /// [`crate::export`] for why).
    pub export: &'static [&'static str],
    /// Submodules (paths relative to the repository root) whose content the
    /// build needs; other submodules are left empty, as an uninitialised
    /// checkout would have them.
    pub submodules: &'static [&'static str],
    /// What has to be produced before cargo can build the crates.
    pub generation: Generation,
    /// Prefixes of the harness names whose measured code this library's
    /// source reaches (checked against `cargo metadata` in the tests).
    pub affects: &'static [&'static str],
}

/// One crate a library provides.
#[derive(Debug, PartialEq, Eq)]
pub struct CrateSpec {
    /// The package name, as in `Cargo.toml` and `Cargo.lock`.
    pub name: &'static str,
    /// Its folder, relative to the repository root.
    pub dir: &'static str,
    /// Whether a revision may lack it (rustls's aws-lc-rs provider became
    /// a crate of its own in 0.24; the 0.23 line has none). A crate that is
    /// there is always patched.
    pub optional: bool,
}

/// What must be done in an export before cargo can build it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// The repository builds as it is.
    None,
    /// s2n-tls: `bindings/rust/extended/generate.sh`'s work (copy the C tree
    /// into `s2n-tls-sys/lib/`, generate the bindings with bindgen); see
    /// [`crate::generate`].
    S2nTlsBindings,
    /// OpenSSL: the tree becomes the `openssl/` folder of an `openssl-src`
    /// shell with the pinned build logic ([`crate::openssl_src`]).
    OpenSslShell,
}

/// The folder of s2n-tls's Rust bindings inside its repository.
pub const S2N_BINDINGS: &str = "bindings/rust/extended";

pub static S2N_TLS: Library = Library {
    name: "s2n-tls",
    layout: &[
        "api/",
        "crypto/",
        "error/",
        "stuffer/",
        "tls/",
        "utils/",
        "bindings/rust/extended/s2n-tls/Cargo.toml",
        "bindings/rust/extended/s2n-tls-sys/build.rs",
    ],
    crates: &[
        CrateSpec {
            name: "s2n-tls",
            dir: "bindings/rust/extended/s2n-tls",
            optional: false,
        },
        CrateSpec {
            name: "s2n-tls-sys",
            dir: "bindings/rust/extended/s2n-tls-sys",
            optional: false,
        },
    ],
    // The C tree `generate.sh` copies into `s2n-tls-sys/lib/` (see
    // `crate::generate`), and the bindings' workspace.
    export: &[
        "api",
        "crypto",
        "error",
        "stuffer",
        "tls",
        "utils",
        "tests/features",
        "CMakeLists.txt",
        "cmake",
        S2N_BINDINGS,
    ],
    submodules: &[],
    generation: Generation::S2nTlsBindings,
    affects: &["s2n_tls::"],
};

pub static RUSTLS: Library = Library {
    name: "rustls",
    layout: &["Cargo.toml", "rustls/Cargo.toml", "rustls/src/"],
    crates: &[
        CrateSpec {
            name: "rustls",
            dir: "rustls",
            optional: false,
        },
        // rustls 0.24's aws-lc-rs provider, the crate the harnesses' 0.24
        // generation uses (it depends on `rustls` by path).
        CrateSpec {
            name: "rustls-aws-lc-rs",
            dir: "rustls-aws-lc-rs",
            optional: true,
        },
    ],
    export: &["Cargo.toml", "rustls", "rustls-aws-lc-rs"],
    submodules: &[],
    generation: Generation::None,
    affects: &["rustls::"],
};

/// aws-lc-rs's repository: the C library is the `aws-lc-sys/aws-lc`
/// submodule; the symbol-prefix headers (`aws-lc-sys/generated-include/`),
/// the per-target source lists (`aws-lc-sys/builder/cc_builder/`) and the
/// pregenerated bindings (`aws-lc-sys/src/*_crypto.rs`) are committed, so
/// nothing needs generating (see the crate documentation).
pub static AWS_LC_RS: Library = Library {
    name: "aws-lc-rs",
    layout: &[
        "Cargo.toml",
        "aws-lc-rs/Cargo.toml",
        "aws-lc-sys/Cargo.toml",
        "aws-lc-sys/aws-lc/",
    ],
    crates: &[
        CrateSpec {
            name: "aws-lc-rs",
            dir: "aws-lc-rs",
            optional: false,
        },
        CrateSpec {
            name: "aws-lc-sys",
            dir: "aws-lc-sys",
            optional: false,
        },
    ],
    // The C library is the submodule inside `aws-lc-sys/`.
    export: &["Cargo.toml", "aws-lc-rs", "aws-lc-sys"],
    submodules: &["aws-lc-sys/aws-lc"],
    generation: Generation::None,
    // rustls's crypto provider is aws-lc-rs, and s2n-tls-sys links aws-lc
    // through aws-lc-rs.
    affects: &["aws_lc_rs::", "rustls::", "s2n_tls::"],
};

/// OpenSSL's repository (or a release tree): built through an
/// `openssl-src` shell made around it ([`crate::openssl_src`]), which is
/// the crate patched in. What `Configure` reads is exported (paths a
/// release line lacks, such as 3.0's top-level `e_os.h`, are left out
/// where absent); `test/` is not (the build logic configures `no-tests`).
pub static OPENSSL: Library = Library {
    name: "openssl",
    layout: &["Configure", "crypto/", "ssl/", "include/openssl/"],
    crates: &[CrateSpec {
        name: "openssl-src",
        dir: OPENSSL_SHELL,
        optional: false,
    }],
    export: &[
        "Configure",
        "Configurations",
        "VERSION.dat",
        "LICENSE.txt",
        "build.info",
        "config",
        "configdata.pm.in",
        "e_os.h",
        "apps",
        "crypto",
        "doc",
        "engines",
        "exporters",
        "external",
        "fuzz",
        "include",
        "ms",
        "os-dep",
        "providers",
        "ssl",
        "tools",
        "util",
    ],
    submodules: &[],
    generation: Generation::OpenSslShell,
    affects: &["openssl::"],
};

/// Where the OpenSSL shell is made in an export (a generated folder).
pub const OPENSSL_SHELL: &str = "openssl-src";

/// Every library, in the order they are listed to users.
pub static LIBRARIES: [&Library; 4] = [&S2N_TLS, &RUSTLS, &AWS_LC_RS, &OPENSSL];

impl Library {
    /// The library called `name`, or an error listing the known ones.
    pub fn named(name: &str) -> Result<&'static Library, SourceError> {
        LIBRARIES
            .iter()
            .copied()
            .find(|library| library.name == name)
            .ok_or_else(|| SourceError::UnknownLibrary {
                name: name.to_owned(),
                known: known_names(),
            })
    }

    /// Whether the harness called `harness` (`s2n_tls::handshake_rsa4096`)
    /// measures code of this library.
    pub fn affects_harness(&self, harness: &str) -> bool {
        self.affects
            .iter()
            .any(|prefix| harness.starts_with(prefix))
    }

    /// The crate of this library called `name`, if it provides one.
    pub fn crate_named(&self, name: &str) -> Option<&'static CrateSpec> {
        self.crates.iter().find(|spec| spec.name == name)
    }
}

/// The known library names, for messages.
pub fn known_names() -> String {
    LIBRARIES
        .iter()
        .map(|library| library.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl std::fmt::Display for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_and_unknown_ones_list_the_known() {
        assert_eq!(Library::named("s2n-tls").expect("known").name, "s2n-tls");
        assert_eq!(Library::named("openssl").expect("known").name, "openssl");
        let error = Library::named("boringssl").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("\"boringssl\""), "{message}");
        assert!(
            message.contains("s2n-tls, rustls, aws-lc-rs, openssl"),
            "{message}"
        );
    }

    #[test]
    fn harness_names_map_to_libraries() {
        assert!(S2N_TLS.affects_harness("s2n_tls::handshake_rsa4096"));
        assert!(!S2N_TLS.affects_harness("rustls::handshake_rsa4096"));
        assert!(AWS_LC_RS.affects_harness("rustls::record_aes128gcm_16k"));
        assert!(!AWS_LC_RS.affects_harness("openssl::handshake_rsa4096"));
        assert!(!RUSTLS.affects_harness("calibration::spin_1m"));
    }

    #[test]
    fn the_data_is_well_formed() {
        for library in LIBRARIES {
            assert!(!library.crates.is_empty(), "{library}");
            for spec in library.crates {
                assert!(crate::manifest::is_crate_name(spec.name), "{}", spec.name);
                assert!(crate::paths::RelativePath::new(spec.dir).is_ok());
            }
            for path in library.layout.iter().chain(library.submodules) {
                assert!(
                    crate::paths::RelativePath::new(path.trim_end_matches('/')).is_ok(),
                    "{path}"
                );
            }
            // Whatever an export is checked for or built from is exported.
            let exported = |path: &str| {
                library
                    .export
                    .iter()
                    .any(|top| path == *top || path.starts_with(&format!("{top}/")))
            };
            for path in library.layout.iter().chain(library.submodules) {
                assert!(exported(path.trim_end_matches('/')), "{library}: {path}");
            }
            for spec in library.crates {
                let generated = library.generation == Generation::OpenSslShell;
                assert!(generated || exported(spec.dir), "{library}: {}", spec.dir);
            }
            for path in library.export {
                assert!(crate::paths::RelativePath::new(path).is_ok(), "{path}");
            }
        }
    }
}
