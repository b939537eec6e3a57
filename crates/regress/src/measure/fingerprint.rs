//! What an instruction count depends on.
//!
//! The same source can execute a different number of instructions when the
//! Valgrind version or counting method, the compiler, the target, the CPU
//! features crypto code dispatches on, or a TLS library's version changes.
//! A baseline is only comparable to a count with the same fingerprint;
//! comparing across fingerprints would report changes nobody made.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::measure::valgrind::{Method, Valgrind};

/// Crates whose versions change what the harnesses execute.
pub const TRACKED_CRATES: &[&str] = &[
    "s2n-tls",
    "s2n-tls-sys",
    "aws-lc-rs",
    "aws-lc-sys",
    "rustls",
    "openssl",
    "openssl-sys",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fingerprint {
    /// Valgrind's version, e.g. `3.19.0`.
    pub valgrind: String,
    /// How the region was separated from the process.
    pub method: Method,
    /// `rustc --version` of the build.
    pub rustc: String,
    /// The target triple of the build.
    pub target: String,
    /// CPU features as the measured process saw them under Valgrind.
    pub cpu_features: Vec<String>,
    /// Versions of the TLS and crypto crates, from `Cargo.lock`.
    pub libraries: BTreeMap<String, String>,
}

impl Fingerprint {
    pub fn new(
        valgrind: &Valgrind,
        cpu_features: Vec<String>,
        libraries: BTreeMap<String, String>,
    ) -> Fingerprint {
        Fingerprint {
            valgrind: valgrind.version.to_string(),
            method: valgrind.method,
            rustc: env!("REGRESS_RUSTC_VERSION").to_owned(),
            target: env!("REGRESS_TARGET").to_owned(),
            cpu_features,
            libraries,
        }
    }

    /// Human-readable differences from `other`, empty when they match.
    pub fn differences(&self, other: &Fingerprint) -> Vec<String> {
        let mut out = Vec::new();
        let mut field = |name: &str, ours: String, theirs: String| {
            if ours != theirs {
                out.push(format!("{name}: {theirs} here, {ours} in the baseline"));
            }
        };
        field("valgrind", self.valgrind.clone(), other.valgrind.clone());
        field("method", self.method.to_string(), other.method.to_string());
        field("rustc", self.rustc.clone(), other.rustc.clone());
        field("target", self.target.clone(), other.target.clone());
        if self.cpu_features != other.cpu_features {
            let missing: Vec<_> = self
                .cpu_features
                .iter()
                .filter(|f| !other.cpu_features.contains(f))
                .cloned()
                .collect();
            let extra: Vec<_> = other
                .cpu_features
                .iter()
                .filter(|f| !self.cpu_features.contains(f))
                .cloned()
                .collect();
            out.push(format!(
                "cpu features: here lacks [{}] and adds [{}]",
                missing.join(" "),
                extra.join(" ")
            ));
        }
        let names: std::collections::BTreeSet<_> = self
            .libraries
            .keys()
            .chain(other.libraries.keys())
            .collect();
        for name in names {
            let ours = self.libraries.get(name).map_or("none", String::as_str);
            let theirs = other.libraries.get(name).map_or("none", String::as_str);
            if ours != theirs {
                out.push(format!("{name}: {theirs} here, {ours} in the baseline"));
            }
        }
        out
    }
}

/// Reads the versions of [`TRACKED_CRATES`] from a `Cargo.lock`.
pub fn library_versions(cargo_lock: &Path) -> Result<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(cargo_lock)
        .map_err(|source| Error::io("read", cargo_lock, source))?;
    library_versions_from(&text).map_err(|source| Error::Toml {
        what: "Cargo.lock",
        path: cargo_lock.to_path_buf(),
        source: Box::new(source),
    })
}

fn library_versions_from(
    text: &str,
) -> std::result::Result<BTreeMap<String, String>, toml::de::Error> {
    #[derive(Deserialize)]
    struct Lock {
        #[serde(default)]
        package: Vec<Package>,
    }
    #[derive(Deserialize)]
    struct Package {
        name: String,
        version: String,
    }
    let lock: Lock = toml::from_str(text)?;
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in lock.package {
        if TRACKED_CRATES.contains(&package.name.as_str()) {
            versions
                .entry(package.name)
                .or_default()
                .push(package.version);
        }
    }
    Ok(versions
        .into_iter()
        .map(|(name, mut list)| {
            list.sort();
            (name, list.join(", "))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Fingerprint {
        crate::fixtures::fingerprint("3.19.0")
    }

    #[test]
    fn reads_tracked_versions_only() {
        let lock = r#"
version = 4
[[package]]
name = "s2n-tls"
version = "0.3.47"
[[package]]
name = "serde"
version = "1.0.0"
[[package]]
name = "aws-lc-sys"
version = "0.47.0"
[[package]]
name = "aws-lc-sys"
version = "0.30.0"
"#;
        let versions = library_versions_from(lock).expect("parse");
        assert_eq!(versions.len(), 2);
        assert_eq!(versions["s2n-tls"], "0.3.47");
        assert_eq!(versions["aws-lc-sys"], "0.30.0, 0.47.0");
        assert!(library_versions_from("not [ toml").is_err());
    }

    #[test]
    fn differences_name_each_field() {
        let base = sample();
        assert!(base.differences(&base).is_empty());
        let mut other = sample();
        other.valgrind = "3.24.0".into();
        other.method = Method::Markers;
        other.cpu_features = vec!["aes".into(), "avx512f".into()];
        other.libraries.insert("s2n-tls".into(), "0.3.48".into());
        let diffs = base.differences(&other).join("\n");
        assert!(
            diffs.contains("valgrind: 3.24.0 here, 3.19.0 in the baseline"),
            "{diffs}"
        );
        assert!(diffs.contains("method: markers here"), "{diffs}");
        assert!(diffs.contains("lacks [avx2] and adds [avx512f]"), "{diffs}");
        assert!(diffs.contains("s2n-tls: 0.3.48 here"), "{diffs}");
    }
}
