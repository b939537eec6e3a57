//! The crates an export provides, as cargo `[patch.crates-io]` entries
//! given on the command line.
//!
//! `--config 'patch.crates-io.<crate>.path="…"'` makes a build use the
//! export's crate instead of crates.io's without editing any manifest, of
//! this workspace or of the library. Each `--config` value is one argv
//! element, the path a TOML basic string (escaped here), the crate name
//! checked to be a plain crate name, so nothing in a path or manifest can
//! change what the argument means.

use std::path::PathBuf;

use crate::error::SourceError;
use crate::export::Export;
use crate::library::Library;
use crate::manifest::read_package;

/// One crate of an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchedCrate {
    pub name: String,
    /// The version its manifest carries at that revision.
    pub version: semver::Version,
    /// Its folder in the export.
    pub path: PathBuf,
}

/// Everything one library revision provides, ready for cargo.
#[derive(Debug, Clone)]
pub struct PatchSet {
    pub library: &'static Library,
    /// The revision, for messages (`v1.2 (0123456789ab)`).
    pub revision: String,
    /// The export's key (commit or working-tree hash).
    pub key: String,
    pub crates: Vec<PatchedCrate>,
}

impl PatchSet {
    /// Reads the name and version of each crate the library provides from
    /// the export's manifests; an optional crate the revision does not have
    /// is left out.
    pub fn from_export(export: &Export) -> Result<PatchSet, SourceError> {
        let mut crates = Vec::new();
        for spec in export.library.crates {
            let path = export.tree.join(spec.dir);
            if spec.optional && !path.join("Cargo.toml").exists() {
                continue;
            }
            let package = read_package(&path, &export.tree).map_err(|(manifest, reason)| {
                SourceError::Manifest {
                    library: export.library.name,
                    revision: export.label.clone(),
                    path: manifest,
                    reason,
                }
            })?;
            if package.name != spec.name {
                return Err(SourceError::Manifest {
                    library: export.library.name,
                    revision: export.label.clone(),
                    path: path.join("Cargo.toml"),
                    reason: format!("it is package {:?}, not {:?}", package.name, spec.name),
                });
            }
            crates.push(PatchedCrate {
                name: package.name,
                version: package.version,
                path,
            });
        }
        Ok(PatchSet {
            library: export.library,
            revision: export.label.clone(),
            key: export.key.clone(),
            crates,
        })
    }

    /// `--config`, `patch.crates-io.<crate>.path="<path>"` for each crate.
    pub fn cargo_args(&self) -> Result<Vec<String>, SourceError> {
        let mut args = Vec::new();
        for krate in &self.crates {
            let path = krate
                .path
                .to_str()
                .ok_or_else(|| SourceError::NonUtf8Path {
                    path: krate.path.clone(),
                })?;
            args.push("--config".to_owned());
            args.push(format!(
                "patch.crates-io.{}.path={}",
                krate.name,
                toml_string(path)
            ));
        }
        Ok(args)
    }

    /// `s2n-tls at v1.2 (0123456789ab)`.
    pub fn describe(&self) -> String {
        format!("{} at {}", self.library.name, self.revision)
    }
}

/// The `--config` arguments of several patch sets.
pub fn cargo_args(sets: &[PatchSet]) -> Result<Vec<String>, SourceError> {
    let mut args = Vec::new();
    for set in sets {
        args.extend(set.cargo_args()?);
    }
    Ok(args)
}

/// `s2n-tls at v1.2 (…) and aws-lc-rs at …`, for messages.
pub fn describe(sets: &[PatchSet]) -> String {
    sets.iter()
        .map(PatchSet::describe)
        .collect::<Vec<_>>()
        .join(" and ")
}

/// `text` as a TOML basic string: quotes, backslashes and control
/// characters escaped.
pub fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_strings_round_trip() {
        for text in [
            "/plain/path",
            "/with \"quotes\"/and\\backslash",
            "/new\nline/tab\t/bell\u{7}",
            "/ünïcode/",
        ] {
            let value: toml::Table = format!("key = {}", toml_string(text))
                .parse()
                .expect("valid TOML");
            assert_eq!(value["key"].as_str(), Some(text));
        }
    }

    #[test]
    fn arguments_are_one_element_each() {
        let set = PatchSet {
            library: &crate::library::RUSTLS,
            revision: "main".to_owned(),
            key: "k".to_owned(),
            crates: vec![PatchedCrate {
                name: "rustls".to_owned(),
                version: semver::Version::new(0, 23, 46),
                path: PathBuf::from("/x/a \"b\"/rustls"),
            }],
        };
        assert_eq!(
            set.cargo_args().expect("utf-8"),
            vec![
                "--config".to_owned(),
                r#"patch.crates-io.rustls.path="/x/a \"b\"/rustls""#.to_owned()
            ]
        );
    }
}
