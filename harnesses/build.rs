//! Tells the measured program which crate versions it is built from.
//!
//! A count depends on the versions of the TLS and crypto crates, so the
//! measurement fingerprint records them. Reading them from `Cargo.lock`
//! alone is wrong once the lock holds two versions of a crate: with the
//! rustls 0.24 generation an optional dependency, the lock lists rustls
//! 0.23.46 *and* 0.24.0-dev.1 for every build, so a 0.24 build looked like
//! a 0.23 one and the default build named a rustls it never links. The
//! build knows better: this script walks the lock's graph from `harnesses`
//! through the dependencies this build enables (its own optional ones only
//! when a feature of this build turns them on; dev- and build-dependencies
//! never, they are not in the program) and writes the packages it reaches
//! into `$OUT_DIR/library-versions.s`, an assembler snippet that
//! `embed_library_versions!` (`src/lib.rs`) puts into the program as the
//! section `.regress.libraries`. The runner reads that section from the
//! program it measures (`regress::toolchain`), one mechanism for every
//! crate and every way the program is built (`cargo test`, `regress run`,
//! a from-source build of a library's branch, whose scratch lock names the
//! revision's versions).
//!
//! The section is not loaded into memory (no `a` flag), so it moves no code
//! or data of the measured process.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The package whose graph is walked.
const ROOT: &str = "harnesses";

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let manifest_dir = Path::new(&manifest_dir);
    let lock_path = manifest_dir.join("..").join("Cargo.lock");
    let manifest_path = manifest_dir.join("Cargo.toml");
    println!("cargo:rerun-if-changed={}", lock_path.display());
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    println!("cargo:rerun-if-changed=build.rs");
    let lock = read_toml(&lock_path);
    let manifest = read_toml(&manifest_path);
    let enabled = |feature: &str| {
        let variable = format!("CARGO_FEATURE_{}", feature.to_uppercase().replace('-', "_"));
        std::env::var_os(variable).is_some()
    };
    let packages = linked_packages(&lock, &manifest, &enabled);
    // How `openssl-sys` found OpenSSL: its build script says `vendored=1`
    // when it built OpenSSL from source (`openssl-src`), which cargo passes
    // to dependents as DEP_OPENSSL_VENDORED (openssl-sys `links` "openssl").
    // With the `vendored` feature on, OPENSSL_NO_VENDOR still selects the
    // system's, so the feature alone cannot say.
    println!("cargo:rerun-if-env-changed=DEP_OPENSSL_VENDORED");
    let openssl = match std::env::var_os("DEP_OPENSSL_VENDORED") {
        Some(_) => "vendored",
        None => "system",
    };
    println!("cargo:rustc-env=REGRESS_OPENSSL_BUILD={openssl}");
    openssl_generation();
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let snippet = assembler(&packages);
    std::fs::write(Path::new(&out_dir).join("library-versions.s"), snippet)
        .expect("write library-versions.s");
}

/// The OpenSSL generation the harnesses are compiled for: `openssl_1_1`
/// when the OpenSSL that `openssl-sys` found or built is 1.1.1, which lacks
/// a few calls of 3.0 that the OpenSSL harnesses make
/// (`SSL_get_negotiated_group`, `SSL_group_to_name`, `OPENSSL_info`;
/// `src/openssl/ffi.rs` has 1.1.1's way to each). `openssl-sys` tells its
/// dependents the version it built against as DEP_OPENSSL_VERSION_NUMBER
/// (`OPENSSL_VERSION_NUMBER` in hexadecimal, `1010117f` for 1.1.1w).
fn openssl_generation() {
    println!("cargo:rustc-check-cfg=cfg(openssl_1_1)");
    println!("cargo:rerun-if-env-changed=DEP_OPENSSL_VERSION_NUMBER");
    let Some(number) = std::env::var_os("DEP_OPENSSL_VERSION_NUMBER") else {
        return;
    };
    let number = number.to_string_lossy();
    let number = u64::from_str_radix(number.trim(), 16).unwrap_or_else(|error| {
        panic!("DEP_OPENSSL_VERSION_NUMBER {number:?} is not hexadecimal: {error}")
    });
    if number < 0x3000_0000 {
        println!("cargo:rustc-cfg=openssl_1_1");
    }
}

fn read_toml(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    text.parse()
        .unwrap_or_else(|error| panic!("{} is not valid TOML: {error}", path.display()))
}

/// A `[[package]]` of the lock: its name, version and dependencies (as the
/// lock writes them: `name`, or `name version` where the name is ambiguous).
struct Locked<'a> {
    name: &'a str,
    version: &'a str,
    dependencies: Vec<&'a str>,
}

/// `(name, version)` of every package the program links, sorted.
fn linked_packages(
    lock: &toml::Table,
    manifest: &toml::Table,
    enabled: &dyn Fn(&str) -> bool,
) -> BTreeSet<(String, String)> {
    let packages: Vec<Locked> = lock
        .get("package")
        .and_then(toml::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|package| {
            Some(Locked {
                name: package.get("name")?.as_str()?,
                version: package.get("version")?.as_str()?,
                dependencies: package
                    .get("dependencies")
                    .and_then(toml::Value::as_array)
                    .map(|list| list.iter().filter_map(toml::Value::as_str).collect())
                    .unwrap_or_default(),
            })
        })
        .collect();
    let find = |reference: &str| -> Option<usize> {
        let mut words = reference.split(' ');
        let name = words.next()?;
        let version = words.next();
        packages
            .iter()
            .position(|p| p.name == name && version.is_none_or(|v| p.version == v))
    };
    let root = packages
        .iter()
        .position(|p| p.name == ROOT)
        .expect("Cargo.lock has the harnesses package");
    let direct = DirectDependencies::of(manifest, enabled);
    let mut seen = BTreeSet::new();
    let mut queue: Vec<usize> = packages[root]
        .dependencies
        .iter()
        .filter_map(|reference| find(reference))
        .filter(|&index| direct.links(packages[index].name, packages[index].version))
        .collect();
    while let Some(index) = queue.pop() {
        if !seen.insert(index) {
            continue;
        }
        queue.extend(
            packages[index]
                .dependencies
                .iter()
                .filter_map(|reference| find(reference)),
        );
    }
    seen.into_iter()
        .map(|index| {
            (
                packages[index].name.to_owned(),
                packages[index].version.to_owned(),
            )
        })
        .collect()
}

/// The normal dependencies of `harnesses`' manifest, and which of them this
/// build enables.
struct DirectDependencies {
    /// `(package name, requirement, enabled)`.
    entries: Vec<(String, semver::VersionReq, bool)>,
}

impl DirectDependencies {
    fn of(manifest: &toml::Table, enabled: &dyn Fn(&str) -> bool) -> DirectDependencies {
        let features = manifest
            .get("features")
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default();
        // Optional dependencies turned on by an enabled feature: `dep:key`,
        // `key/feature`, or the implicit feature `key`.
        let turned_on: BTreeSet<String> = features
            .iter()
            .filter(|(feature, _)| enabled(feature))
            .flat_map(|(feature, list)| {
                let mut keys = vec![feature.clone()];
                for entry in list.as_array().into_iter().flatten() {
                    let entry = entry.as_str().unwrap_or_default();
                    if let Some(key) = entry.strip_prefix("dep:") {
                        keys.push(key.to_owned());
                    } else if let Some((key, _)) = entry.split_once('/') {
                        if !key.ends_with('?') {
                            keys.push(key.to_owned());
                        }
                    } else {
                        keys.push(entry.to_owned());
                    }
                }
                keys
            })
            .collect();
        let mut tables: Vec<&toml::Table> = manifest
            .get("dependencies")
            .and_then(toml::Value::as_table)
            .into_iter()
            .collect();
        for target in manifest
            .get("target")
            .and_then(toml::Value::as_table)
            .into_iter()
            .flat_map(|targets| targets.values())
        {
            tables.extend(target.get("dependencies").and_then(toml::Value::as_table));
        }
        let mut entries = Vec::new();
        for (key, spec) in tables.into_iter().flatten() {
            let (package, requirement, optional) = match spec {
                toml::Value::String(requirement) => (key.as_str(), requirement.as_str(), false),
                toml::Value::Table(table) => (
                    table
                        .get("package")
                        .and_then(toml::Value::as_str)
                        .unwrap_or(key),
                    table
                        .get("version")
                        .and_then(toml::Value::as_str)
                        .unwrap_or("*"),
                    table.get("optional").and_then(toml::Value::as_bool) == Some(true),
                ),
                _ => continue,
            };
            // `workspace = true` and path dependencies without a version
            // accept whatever the lock has.
            let requirement =
                semver::VersionReq::parse(requirement).unwrap_or(semver::VersionReq::STAR);
            entries.push((
                package.to_owned(),
                requirement,
                !optional || turned_on.contains(key),
            ));
        }
        DirectDependencies { entries }
    }

    /// Whether the locked `name` `version`, a dependency of `harnesses` in
    /// the lock, is one this build links: a normal dependency that matches
    /// it and is not an optional one left off.
    fn links(&self, name: &str, version: &str) -> bool {
        let Ok(version) = semver::Version::parse(version) else {
            return false;
        };
        self.entries.iter().any(|(package, requirement, enabled)| {
            package == name && *enabled && matches(requirement, &version)
        })
    }
}

/// `requirement` matches `version`, pre-releases included (semver's own
/// rule leaves `*` unmatched by 0.24.0-dev.1).
fn matches(requirement: &semver::VersionReq, version: &semver::Version) -> bool {
    requirement.matches(version) || *requirement == semver::VersionReq::STAR
}

/// The assembler that puts one `name version` line per package into the
/// non-loaded section `.regress.libraries`. Names and versions are checked
/// to hold only the characters cargo allows in them, so nothing can end
/// the string early.
fn assembler(packages: &BTreeSet<(String, String)>) -> String {
    let safe = |text: &str| {
        !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'))
    };
    let mut lines = BTreeMap::new();
    for (name, version) in packages {
        assert!(safe(name) && safe(version), "{name:?} {version:?}");
        lines.insert(format!("{name} {version}"), ());
    }
    let mut text = String::from(".pushsection .regress.libraries,\"\",@progbits\n");
    for line in lines.keys() {
        text.push_str(&format!(".ascii \"{line}\\n\"\n"));
    }
    text.push_str(".popsection\n");
    text
}
