//! What an instruction count depends on.
//!
//! The same source can execute a different number of instructions when the
//! Valgrind version or counting method, the compiler, the target, the CPU
//! features crypto code dispatches on, or a TLS library's version changes.
//! A baseline is only comparable to a count with the same fingerprint;
//! comparing across fingerprints would report changes nobody made.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Result;
use crate::measure::cpu_profile::CpuProfile;
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
    /// The CPU features hidden from the TLS libraries. Absent in entries
    /// of the default profile (and in every entry blessed before profiles
    /// existed, which were all measured under it).
    #[serde(default, skip_serializing_if = "CpuProfile::is_default")]
    pub cpu_profile: CpuProfile,
    /// `rustc --version` of the build.
    pub rustc: String,
    /// The target triple of the build.
    pub target: String,
    /// CPU features as the measured process saw them under Valgrind.
    pub cpu_features: Vec<String>,
    /// Versions of the TLS and crypto crates the measured program links, as
    /// its build recorded them in the program ([`crate::toolchain`]), and
    /// of the libraries it links that report themselves at run time
    /// (OpenSSL: `libssl`, its version, and `libssl-build`, how it was
    /// built).
    pub libraries: BTreeMap<String, String>,
    /// The C compilers that built parts of the measured program, from its
    /// `.comment` section ([`crate::toolchain`]). `None` in entries blessed
    /// before compilers were recorded: such an entry matches no fingerprint
    /// measured now (which always has the list), so the gate asks for a
    /// bless instead of comparing counts of possibly other compilers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_compilers: Option<Vec<String>>,
    /// The linker that linked the measured program, when it left its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linker: Option<String>,
}

/// The compilers and linker that built a measured program.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Toolchain {
    pub c_compilers: Vec<String>,
    pub linker: Option<String>,
}

/// Bounds on what a fingerprint read from a file may hold.
pub const MAX_FIELD_CHARS: usize = 200;
const MAX_LIST: usize = 128;
/// A library's version may be longer: OpenSSL's `libssl-build` is its
/// compiler command line (about 230 characters built from source, 400 for
/// Debian's libssl).
pub const MAX_LIBRARY_CHARS: usize = 1000;

/// What is wrong with a fingerprint read from a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fingerprint field `{field}`: {problem}")]
pub struct FingerprintProblem {
    pub field: &'static str,
    pub problem: String,
}

impl Fingerprint {
    pub fn new(
        valgrind: &Valgrind,
        cpu_features: Vec<String>,
        libraries: BTreeMap<String, String>,
        toolchain: Toolchain,
    ) -> Fingerprint {
        Fingerprint {
            valgrind: valgrind.version.to_string(),
            method: valgrind.method,
            cpu_profile: CpuProfile::Default,
            rustc: env!("REGRESS_RUSTC_VERSION").to_owned(),
            target: env!("REGRESS_TARGET").to_owned(),
            cpu_features,
            libraries,
            c_compilers: Some(toolchain.c_compilers),
            linker: toolchain.linker,
        }
    }

    /// Checks a fingerprint read from a file: a Valgrind version as
    /// Valgrind prints it, and every other text short, printable and
    /// bounded in number, so that no message or report it reaches can be
    /// flooded or forged.
    pub fn validate(&self) -> Result<(), FingerprintProblem> {
        let problem = |field: &'static str, problem: String| FingerprintProblem { field, problem };
        if self.valgrind.len() > 32
            || !self
                .valgrind
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            || crate::measure::valgrind::Version::parse(&self.valgrind).is_none()
        {
            return Err(problem(
                "valgrind",
                format!("{:?} is not a Valgrind version", short(&self.valgrind)),
            ));
        }
        text("rustc", &self.rustc)?;
        text("target", &self.target)?;
        list("cpu_features", self.cpu_features.iter(), MAX_FIELD_CHARS)?;
        list(
            "libraries",
            self.libraries
                .iter()
                .flat_map(|(name, version)| [name, version]),
            MAX_LIBRARY_CHARS,
        )?;
        if let Some(compilers) = &self.c_compilers {
            list("c_compilers", compilers.iter(), MAX_FIELD_CHARS)?;
        }
        if let Some(linker) = &self.linker {
            text("linker", linker)?;
        }
        Ok(())
    }

    /// Human-readable differences from `other`, empty when they match:
    /// `self` is a baseline entry's, `other` this measurement's.
    pub fn differences(&self, other: &Fingerprint) -> Vec<String> {
        self.differences_as(other, Owners::BASELINE)
    }

    /// Human-readable differences from `other`, empty when they match, each
    /// saying whose is which value (`owners` names `self`'s and `other`'s).
    pub fn differences_as(&self, other: &Fingerprint, owners: Owners) -> Vec<String> {
        let Owners {
            ours: we,
            theirs: they,
        } = owners;
        let mut out = Vec::new();
        let mut field = |name: &str, ours: String, theirs: String| {
            if ours != theirs {
                out.push(format!("{name}: {theirs} {they}, {ours} {we}"));
            }
        };
        field("valgrind", self.valgrind.clone(), other.valgrind.clone());
        field("method", self.method.to_string(), other.method.to_string());
        field(
            "cpu profile",
            self.cpu_profile.to_string(),
            other.cpu_profile.to_string(),
        );
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
                "cpu features: {they} lacks [{}] and adds [{}]",
                missing.join(" "),
                extra.join(" ")
            ));
        }
        match (&self.c_compilers, &other.c_compilers) {
            (ours, theirs) if ours == theirs => {}
            (None, Some(theirs)) => out.push(format!(
                "c compilers: [{}] {they}, not recorded {we} (blessed before the \
                 compilers were part of the fingerprint)",
                theirs.join("; ")
            )),
            (ours, theirs) => out.push(format!(
                "c compilers: [{}] {they}, [{}] {we}",
                theirs.as_deref().unwrap_or_default().join("; "),
                ours.as_deref().unwrap_or_default().join("; ")
            )),
        }
        // An entry from before compilers were recorded has said so above.
        if self.linker != other.linker && self.c_compilers.is_some() {
            let name = |linker: &Option<String>| linker.clone().unwrap_or_else(|| "none".into());
            out.push(format!(
                "linker: {} {they}, {} {we}",
                name(&other.linker),
                name(&self.linker)
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
                out.push(format!("{name}: {theirs} {they}, {ours} {we}"));
            }
        }
        out
    }
}

/// How [`Fingerprint::differences_as`] names the two fingerprints' owners
/// (not "sides": that word is a handshake's client and server here, and a
/// comparison's two revisions in `regress-source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owners {
    /// The words after `self`'s value ("in the baseline", "in BASE").
    pub ours: &'static str,
    /// The words after `other`'s value ("here", "in HEAD").
    pub theirs: &'static str,
}

impl Owners {
    /// A baseline entry's fingerprint against this measurement's.
    pub const BASELINE: Owners = Owners {
        ours: "in the baseline",
        theirs: "here",
    };
    /// A diff's BASE side against its HEAD side.
    pub const DIFF: Owners = Owners {
        ours: "in BASE",
        theirs: "in HEAD",
    };
}

fn short(text: &str) -> String {
    text.chars().take(40).collect()
}

fn text(field: &'static str, value: &str) -> Result<(), FingerprintProblem> {
    bounded_text(field, value, MAX_FIELD_CHARS)
}

fn bounded_text(
    field: &'static str,
    value: &str,
    max_chars: usize,
) -> Result<(), FingerprintProblem> {
    if value.chars().count() > max_chars || value.chars().any(|c| c.is_control()) {
        return Err(FingerprintProblem {
            field,
            problem: format!(
                "{:?}… is longer than {max_chars} characters or holds control characters",
                short(value)
            ),
        });
    }
    Ok(())
}

fn list<'a>(
    field: &'static str,
    values: impl Iterator<Item = &'a String>,
    max_chars: usize,
) -> Result<(), FingerprintProblem> {
    let mut count = 0;
    for value in values {
        count += 1;
        if count > MAX_LIST {
            return Err(FingerprintProblem {
                field,
                problem: format!("more than {MAX_LIST} entries"),
            });
        }
        bounded_text(field, value, max_chars)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Fingerprint {
        crate::fixtures::fingerprint("3.19.0")
    }

    /// An entry blessed before compilers were recorded still loads, but
    /// matches no fingerprint measured now, and the difference says why.
    #[test]
    fn entries_without_compilers_load_but_do_not_match() {
        let now = sample();
        let mut old: serde_json::Value = serde_json::to_value(&now).expect("json");
        let object = old.as_object_mut().expect("object");
        object.remove("c_compilers");
        object.remove("linker");
        let old: Fingerprint = serde_json::from_value(old).expect("an old entry loads");
        assert_eq!(old.c_compilers, None);
        assert_ne!(old, now);
        let differences = old.differences(&now).join("\n");
        assert!(
            differences.contains("not recorded in the baseline"),
            "{differences}"
        );
        assert!(!differences.contains("linker"), "{differences}");
        // A written fingerprint carries the compilers.
        let written = serde_json::to_string(&now).expect("json");
        assert!(written.contains("\"c_compilers\""), "{written}");
        let mut clang = sample();
        clang.c_compilers = Some(vec!["clang version 14.0.6".into()]);
        clang.linker = Some("LLD 22.1.2".into());
        let differences = sample().differences(&clang).join("\n");
        assert!(differences.contains("c compilers: [clang"), "{differences}");
        assert!(
            differences.contains("linker: LLD 22.1.2 here"),
            "{differences}"
        );
    }

    #[test]
    fn hostile_fingerprints_are_refused() {
        assert_eq!(sample().validate(), Ok(()));
        let mut bad = sample();
        bad.valgrind = "3.19.0\n## fake".into();
        assert!(bad.validate().is_err());
        let mut bad = sample();
        bad.rustc = "x".repeat(1000);
        assert!(bad.validate().is_err());
        let mut bad = sample();
        bad.cpu_features = vec!["a".into(); 1000];
        assert!(bad.validate().is_err());
    }

    /// A count of the system's libssl never matches a baseline of the
    /// OpenSSL built from source, and the difference names both builds.
    #[test]
    fn openssl_builds_are_told_apart() {
        let mut vendored = sample();
        vendored.libraries.insert(
            "libssl-build".into(),
            format!("vendored, linux-x86_64, gcc {}-O3 -g", "-fPIC ".repeat(40)),
        );
        assert_eq!(vendored.validate(), Ok(()));
        let mut system = vendored.clone();
        system.libraries.insert(
            "libssl-build".into(),
            "system, debian-amd64, gcc -O2".into(),
        );
        assert_ne!(vendored, system);
        let differences = vendored.differences(&system).join("\n");
        assert!(
            differences.contains("libssl-build: system, debian-amd64, gcc -O2 here, vendored,"),
            "{differences}"
        );
        let mut flood = vendored.clone();
        flood
            .libraries
            .insert("libssl-build".into(), "x".repeat(MAX_LIBRARY_CHARS + 1));
        assert!(flood.validate().is_err());
    }

    #[test]
    fn differences_name_each_field() {
        let base = sample();
        assert!(base.differences(&base).is_empty());
        let mut other = sample();
        other.valgrind = "3.24.0".into();
        other.method = Method::Markers;
        other.cpu_profile = CpuProfile::NoAesni;
        other.cpu_features = vec!["aes".into(), "avx512f".into()];
        other.libraries.insert("s2n-tls".into(), "0.3.48".into());
        let diffs = base.differences(&other).join("\n");
        assert!(
            diffs.contains("valgrind: 3.24.0 here, 3.19.0 in the baseline"),
            "{diffs}"
        );
        assert!(diffs.contains("method: markers here"), "{diffs}");
        assert!(
            diffs.contains("cpu profile: no-aesni here, default in the baseline"),
            "{diffs}"
        );
        assert!(diffs.contains("lacks [avx2] and adds [avx512f]"), "{diffs}");
        assert!(diffs.contains("s2n-tls: 0.3.48 here"), "{diffs}");
    }
}
