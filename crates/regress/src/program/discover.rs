//! Builds the measured program and lists the harnesses in it.
//!
//! The measured program is the `harnesses` package's binary of the same
//! name: the harnesses plus the in-process side of measurement, and nothing
//! of the runner (so an edit to the runner cannot move a count). `regress
//! run` and `regress diff` build it the same way, with this module, and
//! `cargo test` builds the very same artifact for the harness tests
//! (`CARGO_BIN_EXE_harnesses`).

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::Message;

use crate::harness_name::HarnessName;
use crate::measure::{MeasureError, Result};
use crate::process::{self, Ended, Role, Supervised};
use crate::workspace::Workspace;

/// The package and binary target of the measured program.
pub const PROGRAM_PACKAGE: &str = "harnesses";
pub const PROGRAM: &str = "harnesses";
/// The test target whose build is asked for: cargo builds the program for
/// it, exactly as `cargo test` does.
const PROGRAM_TEST: &str = "perf";

/// A failed build of the measured program.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(
        "building the measured program in {dir} failed ({status}); cargo's messages are above.\n  \
         To reproduce: `cargo test --no-run -p {PROGRAM_PACKAGE} --test {PROGRAM_TEST}` there."
    )]
    Failed { dir: PathBuf, status: String },
    #[error(transparent)]
    Process(#[from] crate::process::ProcessError),
    #[error(
        "cargo built no binary `{PROGRAM}` of package `{PROGRAM_PACKAGE}` in {dir}; a workspace \
         from before the measured program had its own binary (harnesses/src/main.rs) cannot be \
         measured by this runner"
    )]
    NoProgram { dir: PathBuf },
}

/// How to build: where, into which target folder, with which extra cargo
/// arguments (`--config` values a diff uses to keep two checkouts' artifacts
/// apart, or to build against a library's own source).
#[derive(Debug, Clone, Copy)]
pub struct BuildRequest<'a> {
    pub dir: &'a Path,
    pub target_dir: Option<&'a Path>,
    pub cargo_args: &'a [String],
    /// Build with cargo's default for incremental compilation, whatever
    /// `CARGO_INCREMENTAL` says in the runner's environment.
    pub default_incremental: bool,
}

/// The cargo program: the one running us when started by `cargo run`.
pub fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

/// A `cargo` command without the variables `cargo run` set for this
/// process.
///
/// Build scripts may watch any variable (`cargo:rerun-if-env-changed`), and
/// cargo compares the value in its own environment: s2n-tls-sys watches
/// `OUT_DIR`, which `cargo run -p regress` sets for the runner. Passed on,
/// it made every build from the runner rebuild s2n-tls's C code, and the
/// next plain `cargo test` rebuild it again.
pub fn cargo_command() -> Command {
    let mut command = Command::new(cargo());
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if set_by_cargo_run(name) {
            command.env_remove(name);
        }
    }
    command
}

/// Whether `name` is one of the variables `cargo run` or `cargo test` sets
/// for the program it runs (`OUT_DIR`, `CARGO_PKG_*`, ...): never passed to
/// a build ([`cargo_command`]), so never part of what a build depends on.
pub fn set_by_cargo_run(name: &str) -> bool {
    name == "OUT_DIR"
        || name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_MANIFEST_")
        || matches!(
            name,
            "CARGO_CRATE_NAME" | "CARGO_BIN_NAME" | "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR"
        )
}

/// Builds the measured program as `request` says and returns its path.
/// Cargo's progress and diagnostics go to the terminal.
///
/// It asks for the harness tests (`cargo test --no-run`), not for the
/// binary alone (`cargo build --bin`): the two build different binaries.
/// Features of the test's dev-dependencies are unified into the shared
/// dependencies only when tests are built, which changes the harnesses
/// library's artifact and the program's code (measured: a different file,
/// and different counts). Built for the tests, the program is byte for byte
/// the one `ENABLE_VALGRIND=true cargo test` measures.
pub fn build_program(request: &BuildRequest<'_>) -> Result<PathBuf, BuildError> {
    let cargo = cargo();
    let mut command = cargo_command();
    command
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .args(["--package", PROGRAM_PACKAGE, "--test", PROGRAM_TEST])
        .args(request.cargo_args)
        .current_dir(request.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if request.default_incremental {
        command.env_remove("CARGO_INCREMENTAL");
    }
    if let Some(target_dir) = request.target_dir {
        command.env("CARGO_TARGET_DIR", target_dir);
    }
    // In a process group of its own, killed with its compilers on an
    // interrupt (see `crate::process`); a build has no time limit.
    let mut child = Supervised::spawn(&mut command, &cargo, Role::Work)?;
    let mut program = None;
    if let Some(stdout) = child.child_mut().stdout.take() {
        program = program_from_messages(BufReader::new(stdout));
    }
    let failed = match child.wait(None)? {
        Ended::Exited(status) if status.success() => None,
        Ended::Exited(status) => Some(status.to_string()),
        Ended::TimedOut => Some("timed out".to_owned()),
    };
    if let Some(status) = failed {
        return Err(BuildError::Failed {
            dir: request.dir.to_path_buf(),
            status,
        });
    }
    program.ok_or_else(|| BuildError::NoProgram {
        dir: request.dir.to_path_buf(),
    })
}

/// Picks the measured program out of cargo's JSON messages.
fn program_from_messages(messages: impl std::io::BufRead) -> Option<PathBuf> {
    let mut found = None;
    // Read to the end, so cargo never blocks on a full pipe.
    for message in Message::parse_stream(messages).map_while(std::result::Result::ok) {
        if let Message::CompilerArtifact(artifact) = message {
            let is_program = artifact.target.name == PROGRAM
                && artifact.target.is_bin()
                && !artifact.profile.test;
            if is_program {
                found = artifact.executable.map(PathBuf::from);
            }
        }
    }
    found
}

/// Builds this workspace's measured program (`regress run`, `list`, `scale`).
pub fn build(workspace: &Workspace) -> Result<PathBuf, BuildError> {
    build_program(&BuildRequest {
        dir: workspace.root(),
        target_dir: None,
        cargo_args: &[],
        default_incremental: false,
    })
}

/// The harness names the measured program hosts (`harnesses list`).
/// Every name is checked ([`HarnessName`]): the program of any commit
/// may list anything, and the names become file names.
pub fn list(binary: &Path) -> Result<Vec<HarnessName>> {
    let mut names = list_all(binary)?;
    names.retain(|name| !crate::harness_name::is_constant_flow(name));
    Ok(names)
}

/// Every entry of the program, the constant-flow operations
/// (`constant_flow::...`, which are not perf harnesses) included.
pub fn list_all(binary: &Path) -> Result<Vec<HarnessName>> {
    let mut command = Command::new(binary);
    command.arg("list").env_clear();
    let output = process::output(
        command,
        binary,
        crate::measure::cachegrind::quick_timeout(),
        1 << 20,
        Role::Work,
    )?;
    if !output.status.success() {
        return Err(MeasureError::HarnessList {
            binary: binary.to_path_buf(),
            status: output.status.to_string(),
            stderr: process::stderr_text(&output),
        });
    }
    parse_list(&String::from_utf8_lossy(&output.stdout))
}

fn parse_list(text: &str) -> Result<Vec<HarnessName>> {
    let mut names = Vec::new();
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
        names.push(HarnessName::new(line)?);
    }
    names.sort();
    Ok(names)
}

/// Keeps the names that any of `filters` selects (all when none are
/// given). A filter that is exactly a harness name selects that harness
/// only, so `aead_aes128gcm_seal_16` does not also pick `..._16384`; any
/// other filter selects the names that contain it.
pub fn select(names: Vec<HarnessName>, filters: &[String]) -> Vec<HarnessName> {
    if filters.is_empty() {
        return names;
    }
    let exact: Vec<&String> = filters
        .iter()
        .filter(|filter| names.iter().any(|name| name == *filter))
        .collect();
    names
        .into_iter()
        .filter(|name| {
            filters.iter().any(|filter| {
                if exact.contains(&filter) {
                    name == filter
                } else {
                    name.contains(filter.as_str())
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(name: &str, kind: &str, test: bool, executable: Option<&str>) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "package_id": "path+file:///w/harnesses#0.1.0",
            "manifest_path": "/w/harnesses/Cargo.toml",
            "target": {
                "name": name, "kind": [kind], "crate_types": [kind], "required-features": [],
                "src_path": "/w/harnesses/src/main.rs", "edition": "2021", "doctest": false,
                "test": true, "doc": true
            },
            "profile": {
                "opt_level": "3", "debuginfo": 1, "debug_assertions": false,
                "overflow_checks": false, "test": test
            },
            "features": [],
            "filenames": [],
            "executable": executable,
            "fresh": true
        })
        .to_string()
    }

    #[test]
    fn finds_the_program_in_cargo_messages() {
        let messages = [
            artifact("harnesses", "lib", false, None),
            artifact("harnesses", "bin", true, Some("/t/deps/harnesses-test")),
            artifact("perf", "test", true, Some("/t/deps/perf-1")),
            artifact("harnesses", "bin", false, Some("/t/harnesses")),
            r#"{"reason":"build-finished","success":true}"#.to_owned(),
            "not json".to_owned(),
        ]
        .join("\n");
        assert_eq!(
            program_from_messages(messages.as_bytes()),
            Some(PathBuf::from("/t/harnesses"))
        );
        assert_eq!(program_from_messages("{}\nnot json".as_bytes()), None);
    }

    #[test]
    fn lists_and_selects_harnesses() {
        let names = parse_list("s2n_tls::handshake\ncalibration::spin_1m\n\n").expect("names");
        assert!(parse_list("a::b\n../../x\n").is_err());
        assert_eq!(names, vec!["calibration::spin_1m", "s2n_tls::handshake"]);
        assert_eq!(
            select(names.clone(), &["s2n".into()]),
            vec!["s2n_tls::handshake"]
        );
        assert_eq!(select(names.clone(), &[]).len(), 2);
        let sizes = vec![
            crate::fixtures::name("a::seal_16"),
            crate::fixtures::name("a::seal_16384"),
        ];
        assert_eq!(
            select(sizes.clone(), &["a::seal_16".into()]),
            vec!["a::seal_16"]
        );
        assert_eq!(select(sizes.clone(), &["seal_16".into()]).len(), 2);
    }
}
