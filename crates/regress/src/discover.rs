//! Finds the harness test binary and the harnesses in it.
//!
//! The `regress` binary measures the very binary `cargo test` runs: it asks
//! cargo to build the harness tests (same profile, same flags) and lists
//! their names with libtest's own `--list`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// The package and test target that hold the harnesses.
pub const HARNESS_PACKAGE: &str = "harnesses";
pub const HARNESS_TEST: &str = "perf";

/// Builds the harness tests with `cargo test --no-run` and returns the test
/// binary's path.
pub fn build(workspace: &Workspace) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .args(["--package", HARNESS_PACKAGE, "--test", HARNESS_TEST])
        .current_dir(workspace.root())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|source| Error::Spawn {
            program: PathBuf::from(&cargo),
            source,
        })?;
    if !output.status.success() {
        return Err(Error::HarnessBuild {
            status: output.status.to_string(),
        });
    }
    executable_from_messages(&String::from_utf8_lossy(&output.stdout)).ok_or(
        Error::NoHarnessBinary {
            package: HARNESS_PACKAGE,
            test: HARNESS_TEST,
        },
    )
}

/// Picks the harness test executable out of cargo's JSON messages (of
/// `cargo test --no-run --message-format json`); shared with `regress diff`,
/// which builds the same test in another work tree.
pub(crate) fn executable_from_messages(messages: &str) -> Option<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Message {
        reason: String,
        #[serde(default)]
        target: Option<Target>,
        #[serde(default)]
        executable: Option<PathBuf>,
    }
    #[derive(serde::Deserialize)]
    struct Target {
        name: String,
        kind: Vec<String>,
    }
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<Message>(line).ok())
        .filter(|message| message.reason == "compiler-artifact")
        .filter(|message| {
            message.target.as_ref().is_some_and(|target| {
                target.name == HARNESS_TEST && target.kind.iter().any(|kind| kind == "test")
            })
        })
        .find_map(|message| message.executable)
}

/// Copies the freshly built test binary to a folder of this process's own,
/// so that a later `cargo build` (by the user, an editor, another run) that
/// replaces the file cannot pull it from under a suite of measurements.
pub fn stage(binary: &Path, outputs: &Path) -> Result<PathBuf> {
    let dir = outputs
        .join(".scratch")
        .join(format!("binary.{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| Error::io("create", &dir, source))?;
    let staged = dir.join(binary.file_name().unwrap_or_else(|| "harness".as_ref()));
    std::fs::copy(binary, &staged)
        .map_err(|source| Error::io("copy the test binary to", &staged, source))?;
    Ok(staged)
}

/// The harness names in a test binary, as libtest lists them.
pub fn list(binary: &Path) -> Result<Vec<String>> {
    let output = Command::new(binary)
        .args(["--list", "--format", "terse"])
        .stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Spawn {
            program: binary.to_path_buf(),
            source,
        })?;
    if !output.status.success() {
        return Err(Error::HarnessList {
            binary: binary.to_path_buf(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(parse_list(&String::from_utf8_lossy(&output.stdout)))
}

fn parse_list(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

/// Keeps the names that any of `filters` selects (all when none are
/// given). A filter that is exactly a harness name selects that harness
/// only, so `aead_aes128gcm_seal_16` does not also pick `..._16384`; any
/// other filter selects the names that contain it.
pub fn select(names: Vec<String>, filters: &[String]) -> Vec<String> {
    if filters.is_empty() {
        return names;
    }
    let exact: Vec<&String> = filters.iter().filter(|f| names.contains(f)).collect();
    names
        .iter()
        .filter(|name| {
            filters.iter().any(|filter| {
                if exact.contains(&filter) {
                    *name == filter
                } else {
                    name.contains(filter.as_str())
                }
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_test_executable_in_cargo_messages() {
        let messages = r#"{"reason":"compiler-artifact","target":{"name":"harnesses","kind":["lib"]},"executable":null}
{"reason":"compiler-artifact","target":{"name":"pipeline","kind":["test"]},"executable":"/t/pipeline-1"}
{"reason":"compiler-artifact","target":{"name":"perf","kind":["test"]},"executable":"/t/perf-abc"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            executable_from_messages(messages),
            Some(PathBuf::from("/t/perf-abc"))
        );
        assert_eq!(executable_from_messages("{}\nnot json"), None);
    }

    #[test]
    fn lists_and_selects_tests() {
        let names = parse_list("s2n_tls::handshake: test\ncalibration::spin_1m: test\nx: bench\n");
        assert_eq!(names, vec!["calibration::spin_1m", "s2n_tls::handshake"]);
        assert_eq!(
            select(names.clone(), &["s2n".into()]),
            vec!["s2n_tls::handshake"]
        );
        assert_eq!(select(names.clone(), &[]).len(), 2);
        let sizes = vec!["a::seal_16".to_owned(), "a::seal_16384".to_owned()];
        assert_eq!(
            select(sizes.clone(), &["a::seal_16".into()]),
            vec!["a::seal_16"]
        );
        assert_eq!(select(sizes.clone(), &["seal_16".into()]).len(), 2);
    }
}
