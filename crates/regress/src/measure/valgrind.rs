//! Finds Valgrind and its annotation tools, and picks the counting method
//! from its version.
//!
//! Cachegrind learnt to count a region (`--instr-at-start=no` plus start/stop
//! client requests) in Valgrind 3.22. Older versions, such as the 3.19 of
//! Debian 12 and the 3.18 of Ubuntu 22.04, always count the whole process, so
//! there the region is the difference of two whole-process counts (see
//! `regress_measure::child`). Both methods are recorded in every output and
//! baseline fingerprint, because their counts agree closely but not exactly.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::{MeasureError, Result};
use crate::process::{self, Role};

const INSTALL_HINT: &str = "Install Valgrind (Debian/Ubuntu: `sudo apt-get install valgrind`), \
or point REGRESS_VALGRIND at a valgrind program (scripts/fetch-valgrind.sh fetches 3.22+).";

/// How the counted region is separated from the rest of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Valgrind 3.22+: Cachegrind counts only between start/stop requests.
    Markers,
    /// Older Valgrind: whole-process count of 3 runs minus that of 2 runs.
    Subtraction,
    /// Any Valgrind: Callgrind collects from the run's first boundary and
    /// dumps every segment of it; the count is their sum, the profile
    /// their lines ([`regress_profile::callgrind_out`]). One child gives the count,
    /// its split by part and its profile; it counts exactly what the two
    /// Cachegrind methods count.
    Callgrind,
}

impl Method {
    /// The Cachegrind method a Valgrind version supports.
    pub fn for_version(version: Version) -> Method {
        if version >= Version::new(3, 22, 0) {
            Method::Markers
        } else {
            Method::Subtraction
        }
    }

    /// The method `choice` ([`crate::env::METHOD`]) names for `version`:
    /// `callgrind` (also when unset) or `cachegrind` (markers or
    /// subtraction, by version).
    pub fn chosen(version: Version, choice: Option<&str>) -> Result<Method> {
        super::setting::one_of(
            crate::env::METHOD,
            choice,
            &[
                ("callgrind", Method::Callgrind),
                ("cachegrind", Method::for_version(version)),
            ],
        )
    }

    /// Whether Cachegrind counts (and Callgrind only splits).
    pub fn is_cachegrind(self) -> bool {
        matches!(self, Method::Markers | Method::Subtraction)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Markers => "markers",
            Method::Subtraction => "subtraction",
            Method::Callgrind => "callgrind",
        })
    }
}

/// A Valgrind version, as `valgrind --version` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Parses `valgrind-3.19.0` (also `valgrind-3.22.0.GIT` and `3.24.0`).
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let text = text.strip_prefix("valgrind-").unwrap_or(text);
        let mut parts = text.split(['.', '-']).map(|part| part.parse::<u32>().ok());
        let major = parts.next()??;
        let minor = parts.next()??;
        let patch = parts.next().flatten().unwrap_or(0);
        Some(Version::new(major, minor, patch))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A usable Valgrind installation.
#[derive(Debug, Clone)]
pub struct Valgrind {
    pub program: PathBuf,
    pub cg_annotate: PathBuf,
    pub cg_diff: PathBuf,
    pub version: Version,
    pub method: Method,
}

impl Valgrind {
    /// Finds Valgrind as the user configured it: `REGRESS_VALGRIND`, else
    /// `valgrind` on `PATH`.
    pub fn from_env() -> Result<Valgrind> {
        match std::env::var_os(crate::env::VALGRIND) {
            Some(program) if !program.is_empty() => Valgrind::at(Path::new(&program)),
            _ => Valgrind::on_path(),
        }
    }

    /// Finds `valgrind` on `PATH`.
    pub fn on_path() -> Result<Valgrind> {
        let program = find_on_path("valgrind").ok_or(MeasureError::ToolMissing {
            tool: "valgrind",
            searched: " on PATH".to_owned(),
            hint: INSTALL_HINT,
        })?;
        Valgrind::at(&program)
    }

    /// Uses the Valgrind at `program`, with the annotation tools beside it
    /// or, failing that, on `PATH`.
    pub fn at(program: &Path) -> Result<Valgrind> {
        if !program.is_file() {
            return Err(MeasureError::ToolMissing {
                tool: "valgrind",
                searched: format!(" at {}", program.display()),
                hint: INSTALL_HINT,
            });
        }
        // Children run in a scratch folder, so a relative path would no
        // longer name this program there.
        let program = std::fs::canonicalize(program)
            .map_err(|source| MeasureError::io("resolve", program, source))?;
        let version = query_version(&program)?;
        let cg_annotate = companion(&program, "cg_annotate")?;
        let cg_diff = companion(&program, "cg_diff")?;
        Ok(Valgrind {
            method: Method::chosen(version, std::env::var(crate::env::METHOD).ok().as_deref())?,
            program,
            cg_annotate,
            cg_diff,
            version,
        })
    }
}

fn query_version(program: &Path) -> Result<Version> {
    let mut command = Command::new(program);
    command.arg("--version");
    let output = process::output(
        command,
        program,
        crate::measure::cachegrind::quick_timeout(),
        64 * 1024,
        Role::Work,
    )?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    Version::parse(&text)
        .filter(|_| output.status.success())
        .ok_or_else(|| MeasureError::ToolVersion {
            program: program.to_path_buf(),
            output: format!("{text}{}", process::stderr_text(&output))
                .chars()
                .take(400)
                .collect(),
        })
}

/// A tool that ships with Valgrind: beside `program` first, so a local
/// Valgrind brings its own matching `cg_annotate`, then on `PATH`.
fn companion(program: &Path, name: &'static str) -> Result<PathBuf> {
    companion_in(program, name, std::env::var_os("PATH").as_deref())
}

fn companion_in(
    program: &Path,
    name: &'static str,
    path: Option<&std::ffi::OsStr>,
) -> Result<PathBuf> {
    let beside = program.parent().map(|dir| dir.join(name));
    if let Some(beside) = beside.filter(|path| path.is_file()) {
        return Ok(beside);
    }
    path.and_then(|path| find_in(path, name))
        .ok_or(MeasureError::ToolMissing {
            tool: name,
            searched: format!(" beside {} or on PATH", program.display()),
            hint: "cg_annotate and cg_diff ship with Valgrind; reinstall Valgrind.",
        })
}

/// Looks a program up on `PATH` the way a shell would, without a shell.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    find_in(&std::env::var_os("PATH")?, name)
}

fn find_in(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions_as_valgrind_prints_them() {
        assert_eq!(
            Version::parse("valgrind-3.19.0\n"),
            Some(Version::new(3, 19, 0))
        );
        assert_eq!(
            Version::parse("valgrind-3.22.0.GIT"),
            Some(Version::new(3, 22, 0))
        );
        assert_eq!(
            Version::parse("valgrind-3.24.0"),
            Some(Version::new(3, 24, 0))
        );
        assert_eq!(Version::parse("3.18"), Some(Version::new(3, 18, 0)));
        assert_eq!(Version::parse("valgrind"), None);
        assert_eq!(Version::parse(""), None);
    }

    #[test]
    fn picks_markers_from_3_22() {
        assert_eq!(
            Method::for_version(Version::new(3, 19, 0)),
            Method::Subtraction
        );
        assert_eq!(
            Method::for_version(Version::new(3, 21, 9)),
            Method::Subtraction
        );
        assert_eq!(Method::for_version(Version::new(3, 22, 0)), Method::Markers);
        assert_eq!(Method::for_version(Version::new(4, 0, 0)), Method::Markers);
    }

    #[test]
    fn callgrind_counts_unless_cachegrind_is_asked_for() {
        let old = Version::new(3, 19, 0);
        let new = Version::new(3, 24, 0);
        assert_eq!(Method::chosen(old, None).ok(), Some(Method::Callgrind));
        assert_eq!(
            Method::chosen(new, Some("callgrind")).ok(),
            Some(Method::Callgrind)
        );
        assert_eq!(
            Method::chosen(old, Some("cachegrind")).ok(),
            Some(Method::Subtraction)
        );
        assert_eq!(
            Method::chosen(new, Some("cachegrind")).ok(),
            Some(Method::Markers)
        );
        let error = Method::chosen(new, Some("massif")).unwrap_err().to_string();
        assert!(error.contains("`callgrind` or `cachegrind`"), "{error}");
    }

    #[test]
    fn a_missing_program_says_how_to_install() {
        let err = Valgrind::at(Path::new("/nonexistent/valgrind")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("/nonexistent/valgrind"), "{message}");
        assert!(message.contains("apt-get install valgrind"), "{message}");
    }

    #[test]
    fn annotation_tools_come_from_beside_valgrind_then_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let program = dir.path().join("valgrind");
        std::fs::write(&program, "").expect("write");
        // Nothing beside it and an empty PATH: a clear error naming the tool.
        let error =
            companion_in(&program, "cg_annotate", Some(std::ffi::OsStr::new(""))).unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("cg_annotate was not found beside"),
            "{message}"
        );
        assert!(message.contains("reinstall Valgrind"), "{message}");
        // A tool beside the program wins.
        std::fs::write(dir.path().join("cg_annotate"), "").expect("write");
        let found = companion_in(&program, "cg_annotate", None).expect("beside");
        assert_eq!(found, dir.path().join("cg_annotate"));
    }

    #[test]
    fn a_program_that_is_not_valgrind_is_refused() {
        // `true` prints no version: the runner must not guess one.
        let Some(program) = find_on_path("true") else {
            return;
        };
        let err = Valgrind::at(&program).unwrap_err();
        assert!(matches!(err, MeasureError::ToolVersion { .. }), "{err}");
    }
}
