//! Which versions of a library crates.io has in a range, asked of cargo.
//!
//! No cargo command lists a crate's versions, but cargo's resolver picks
//! the newest version a requirement allows. So a probe manifest (a crate
//! of ours under `target/regress-revisions/probe/`, depending on the
//! library's crate alone) is resolved with `cargo generate-lockfile` for
//! `>=A, <=B`, then for `>=A, <V` below each version `V` found, until
//! nothing is left: one resolution per published version, through cargo
//! and its registry index as any build would, yanked versions left out as
//! cargo leaves them out. This workspace's manifests and lock are not
//! involved (its requirement would hide versions the harnesses do not
//! cover, which the history reports rather than omits).

use std::path::Path;

use regress_source::cargo::Cargo;
use regress_source::features::Coverage;
use regress_source::process::{self, RunOptions};
use regress_source::Options;

use super::HistoryError;

/// The newest patch release of each minor release in `versions` (oldest
/// first, as [`published`] returns them), in the same order: for a crate,
/// of each `major.minor`; for OpenSSL's `openssl-src`, of each OpenSSL
/// release line its build metadata names (300.0.13+3.0.8 is 3.0's).
pub fn newest_patch(versions: Vec<semver::Version>, coverage: &Coverage) -> Vec<semver::Version> {
    let line = |version: &semver::Version| coverage.release_line(version);
    let mut kept: Vec<semver::Version> = Vec::new();
    for version in versions {
        match kept.last_mut() {
            Some(last) if line(last) == line(&version) => *last = version,
            _ => kept.push(version),
        }
    }
    kept
}

/// The most versions one range may hold.
pub const MAX_VERSIONS: usize = 64;

/// A range of versions as the user wrote it: `A..=B` or `A..B`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    pub from: semver::Version,
    pub to: semver::Version,
    pub inclusive: bool,
}

impl VersionRange {
    pub fn parse(text: &str) -> Result<VersionRange, HistoryError> {
        let bad = |reason: &str| HistoryError::BadRange {
            range: text.chars().take(80).collect(),
            reason: reason.to_owned(),
        };
        let (from, to, inclusive) = if let Some((from, to)) = text.split_once("..=") {
            (from, to, true)
        } else if let Some((from, to)) = text.split_once("..") {
            (from, to, false)
        } else {
            return Err(bad("it has no `..=` or `..` between two versions"));
        };
        let version = |part: &str| {
            semver::Version::parse(part.trim())
                .map_err(|error| bad(&format!("{part:?} is not a version ({error})")))
        };
        let range = VersionRange {
            from: version(from)?,
            to: version(to)?,
            inclusive,
        };
        if range.from > range.to || (range.from == range.to && !inclusive) {
            return Err(bad(
                "it is empty: the first version must come before the second",
            ));
        }
        Ok(range)
    }

    /// The cargo requirement of the range below `below` (its end when
    /// `None`).
    fn requirement(&self, below: Option<&semver::Version>) -> String {
        match below {
            Some(version) => format!(">={}, <{version}", self.from),
            None if self.inclusive => format!(">={}, <={}", self.from, self.to),
            None => format!(">={}, <{}", self.from, self.to),
        }
    }
}

/// `--versions A..=B` is read with [`VersionRange::parse`] where the
/// command line is parsed (a bad range is refused, in its words, before
/// anything runs).
impl std::str::FromStr for VersionRange {
    type Err = HistoryError;

    fn from_str(text: &str) -> Result<VersionRange, HistoryError> {
        VersionRange::parse(text)
    }
}

impl std::fmt::Display for VersionRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dots = if self.inclusive { "..=" } else { ".." };
        write!(f, "{}{dots}{}", self.from, self.to)
    }
}

/// The published versions of `krate` in `range`, oldest first; the probe
/// lives in `probe` (created, ours alone).
pub fn published(
    workspace: &Path,
    probe: &Path,
    krate: &str,
    range: &VersionRange,
    options: &Options,
) -> Result<Vec<semver::Version>, HistoryError> {
    std::fs::create_dir_all(probe.join("src")).map_err(|source| {
        crate::MeasureError::io("create the folder", probe.to_path_buf(), source)
    })?;
    let lib = probe.join("src/lib.rs");
    std::fs::write(&lib, "").map_err(|source| crate::MeasureError::io("write", lib, source))?;
    let cargo = Cargo::detect(workspace, options)?;
    let mut found: Vec<semver::Version> = Vec::new();
    loop {
        crate::process::check()?;
        let requirement = range.requirement(found.last());
        let manifest = format!(
            "[package]\nname = \"regress-version-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             publish = false\n\n[dependencies]\n{krate} = {}\n\n[workspace]\n",
            regress_source::patch::toml_string(&requirement)
        );
        let path = probe.join("Cargo.toml");
        std::fs::write(&path, manifest)
            .map_err(|source| crate::MeasureError::io("write", path.clone(), source))?;
        let _ = std::fs::remove_file(probe.join("Cargo.lock"));
        let finished = process::run(
            &cargo.program(probe, ["generate-lockfile", "--quiet"]),
            &options.limits(options.timeouts.cargo),
            RunOptions::default(),
        )
        .map_err(regress_source::SourceError::from)?;
        if !finished.success() {
            let tail = finished.tail(8);
            let nothing_left = tail.contains("failed to select a version")
                || tail.contains("no matching package")
                || tail.contains("candidate versions found which didn't match");
            if nothing_left {
                break;
            }
            return Err(HistoryError::Registry {
                krate: krate.to_owned(),
                requirement,
                detail: tail,
            });
        }
        let text = std::fs::read_to_string(probe.join("Cargo.lock")).unwrap_or_default();
        let version = locked_version(&text, krate).ok_or_else(|| HistoryError::Registry {
            krate: krate.to_owned(),
            requirement: requirement.clone(),
            detail: format!("cargo resolved it without locking {krate}"),
        })?;
        if found.contains(&version) || found.len() >= MAX_VERSIONS {
            return Err(HistoryError::BadRange {
                range: range.to_string(),
                reason: format!("it holds more than {MAX_VERSIONS} versions; narrow it"),
            });
        }
        found.push(version);
    }
    found.reverse();
    Ok(found)
}

/// The version of `krate` in a lock file's text (the probe locks one).
fn locked_version(lock: &str, krate: &str) -> Option<semver::Version> {
    let table: toml::Table = lock.parse().ok()?;
    regress_source::manifest::locked_versions(&table, krate)
        .into_iter()
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_become_requirements() {
        let range = VersionRange::parse("0.3.40..=0.3.47").expect("range");
        assert_eq!(range.requirement(None), ">=0.3.40, <=0.3.47");
        let found = semver::Version::new(0, 3, 45);
        assert_eq!(range.requirement(Some(&found)), ">=0.3.40, <0.3.45");
        let open = VersionRange::parse("0.23.40..0.24.0-dev.1").expect("range");
        assert_eq!(open.requirement(None), ">=0.23.40, <0.24.0-dev.1");
        assert_eq!(open.to_string(), "0.23.40..0.24.0-dev.1");
        for bad in [
            "0.3.47",
            "0.3.47..=0.3.40",
            "0.3.4..0.3.4",
            "x..=0.3.4",
            "0.3..=0.4",
        ] {
            assert!(VersionRange::parse(bad).is_err(), "{bad}");
        }
    }

    fn versions(texts: &[&str]) -> Vec<semver::Version> {
        texts
            .iter()
            .map(|text| semver::Version::parse(text).expect("version"))
            .collect()
    }

    #[test]
    fn newest_patches_of_openssl_follow_its_own_release_lines() {
        let openssl = Coverage::of("openssl").expect("openssl");
        let found = versions(&[
            "110.0.6+1.1.0h",
            "110.0.7+1.1.0i",
            "111.28.1+1.1.1w",
            "111.28.2+1.1.1w",
            "300.0.12+3.0.8",
            "300.0.13+3.0.8",
            "300.1.5+3.1.3",
            "300.1.6+3.1.4",
            "300.5.5+3.5.5",
            "300.6.1+3.6.3",
            "400.0.2+4.0.3",
        ]);
        assert_eq!(
            newest_patch(found, openssl),
            versions(&[
                "110.0.7+1.1.0i",
                "111.28.2+1.1.1w",
                "300.0.13+3.0.8",
                "300.1.6+3.1.4",
                "300.5.5+3.5.5",
                "300.6.1+3.6.3",
                "400.0.2+4.0.3"
            ])
        );
        let aws_lc_rs = Coverage::of("aws-lc-rs").expect("aws-lc-rs");
        let found = versions(&["1.13.0", "1.13.3", "1.14.0", "1.14.1"]);
        assert_eq!(
            newest_patch(found, aws_lc_rs),
            versions(&["1.13.3", "1.14.1"])
        );
        let s2n = Coverage::of("s2n-tls").expect("s2n-tls");
        let found = versions(&["0.3.42", "0.3.47"]);
        assert_eq!(newest_patch(found, s2n), versions(&["0.3.47"]));
    }

    #[test]
    fn a_range_below_a_release_with_build_metadata_is_a_requirement() {
        let range = VersionRange::parse("300.0.0..=400.0.2").expect("range");
        let found = semver::Version::parse("300.0.13+3.0.8").expect("version");
        let requirement = range.requirement(Some(&found));
        semver::VersionReq::parse(&requirement).expect(&requirement);
    }

    #[test]
    fn the_locked_version_is_read() {
        let lock = "version = 4\n[[package]]\nname = \"s2n-tls\"\nversion = \"0.3.45\"\n";
        assert_eq!(
            locked_version(lock, "s2n-tls"),
            Some(semver::Version::new(0, 3, 45))
        );
        assert_eq!(locked_version(lock, "rustls"), None);
    }
}
