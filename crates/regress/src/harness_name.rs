//! The name of a harness, `<library>::<path>`, checked once.
//!
//! A harness name becomes a file name in many places: records and
//! annotated profiles in `perf_outputs/`, baselines in `baselines/`, a
//! diff's per-harness outputs, scaling reports. Names arrive from files
//! (records, baselines, a diff's `report.json`, which in CI is an artifact
//! of a pull request's run) and from the measured program of any commit, so
//! each is hostile until checked. [`HarnessName`] can only be made from a
//! name that passed the check, and every function that turns a name into a
//! path takes one: a record naming `../../../tmp/x` never reaches a path.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The longest name accepted, in bytes: the rule's
/// ([`regress_measure::name`], the one definition the measured program's
/// registry checks its list with too).
pub const MAX_LEN: usize = regress_measure::MAX_NAME_LEN;

/// A checked harness name: two or more `::`-separated parts of lower-case
/// ASCII letters, digits and underscores, at most [`MAX_LEN`] bytes. Such a
/// name, with `::` replaced by `.`, is a plain file name in any folder.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HarnessName(String);

/// A name that is not a harness name; shows at most 80 characters of it,
/// quoted, so that a hostile name cannot forge the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{shown} is not a harness name: expected <library>::<path> (at most {MAX_LEN} lower-case \
     letters, digits and underscores, parts separated by `::`); `cargo run -p regress -- list` \
     shows the names"
)]
pub struct InvalidHarnessName {
    shown: String,
}

impl HarnessName {
    /// Checks `name`.
    pub fn new(name: &str) -> Result<HarnessName, InvalidHarnessName> {
        if regress_measure::is_harness_name(name) {
            Ok(HarnessName(name.to_owned()))
        } else {
            let mut shown: String = name.chars().take(80).collect();
            if shown.len() < name.len() {
                shown.push('…');
            }
            Err(InvalidHarnessName {
                shown: format!("{shown:?}"),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The file-name form: `s2n_tls::handshake` becomes `s2n_tls.handshake`
    /// (colons are not portable in file names).
    pub fn file_stem(&self) -> String {
        self.0.replace("::", ".")
    }

    /// `dir/<stem><suffix>`, e.g. `suffix` = `.json`: the one way a name
    /// becomes a path.
    pub fn file_in(&self, dir: &Path, suffix: &str) -> PathBuf {
        dir.join(format!("{}{suffix}", self.file_stem()))
    }

    /// The library part, `s2n_tls` of `s2n_tls::handshake`.
    pub fn library(&self) -> &str {
        self.0.split("::").next().unwrap_or_default()
    }
}

impl TryFrom<String> for HarnessName {
    type Error = InvalidHarnessName;

    fn try_from(name: String) -> Result<HarnessName, InvalidHarnessName> {
        HarnessName::new(&name)
    }
}

impl From<HarnessName> for String {
    fn from(name: HarnessName) -> String {
        name.0
    }
}

impl std::str::FromStr for HarnessName {
    type Err = InvalidHarnessName;

    fn from_str(name: &str) -> Result<HarnessName, InvalidHarnessName> {
        HarnessName::new(name)
    }
}

impl std::ops::Deref for HarnessName {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for HarnessName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for HarnessName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for HarnessName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for HarnessName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for HarnessName {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl fmt::Display for HarnessName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The first part of every constant-flow entry's name: the measured program
/// hosts these beside the perf harnesses (`crate::constant_flow` checks
/// them).
pub const CONSTANT_FLOW_PREFIX: &str = "constant_flow";

/// Whether `name` is a constant-flow entry (not a perf harness).
pub fn is_constant_flow(name: &str) -> bool {
    name.starts_with(CONSTANT_FLOW_PREFIX) && name[CONSTANT_FLOW_PREFIX.len()..].starts_with("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_harness_names_and_makes_plain_file_names() {
        let name = HarnessName::new("s2n_tls::handshake_rsa4096").expect("valid");
        assert_eq!(name.file_stem(), "s2n_tls.handshake_rsa4096");
        assert_eq!(
            name.file_in(Path::new("/b"), ".json"),
            Path::new("/b/s2n_tls.handshake_rsa4096.json")
        );
        assert_eq!(name.library(), "s2n_tls");
        assert!(HarnessName::new("calibration::spin_1m").is_ok());
        assert!(HarnessName::new("a::b::c").is_ok());
    }

    #[test]
    fn refuses_anything_that_could_leave_its_folder_or_forge_text() {
        for bad in [
            "",
            "handshake",
            "s2n_tls::",
            "::x",
            "../../../tmp/x",
            "../etc::passwd",
            "a::b/../c",
            "a::b.c",
            "A::b",
            "a::b ",
            "a:b",
            "a::b\n",
            "a::é",
            "a::\u{202e}b",
            "a:::b",
        ] {
            assert!(HarnessName::new(bad).is_err(), "{bad:?} must be refused");
        }
        let long = format!("a::{}", "b".repeat(MAX_LEN));
        let error = HarnessName::new(&long).unwrap_err().to_string();
        assert!(error.contains('…') && error.len() < 400, "{error}");
        let error = HarnessName::new("x\n\"y").unwrap_err().to_string();
        assert!(
            error.starts_with("\"x\\n\\\"y\" is not a harness name"),
            "{error}"
        );
    }

    #[test]
    fn deserialising_checks_the_name() {
        let ok: HarnessName = serde_json::from_str("\"a::b\"").expect("valid");
        assert_eq!(ok, "a::b");
        let error = serde_json::from_str::<HarnessName>("\"../../../tmp/x\"").unwrap_err();
        assert!(
            error.to_string().contains("is not a harness name"),
            "{error}"
        );
        assert_eq!(serde_json::to_string(&ok).expect("json"), "\"a::b\"");
    }
}
