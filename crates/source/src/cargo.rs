//! Running cargo (and finding the toolchain) for exports and scratch copies.
//!
//! Why the toolchain is pinned explicitly: s2n-tls's
//! `bindings/rust/extended/rust-toolchain.toml` names a toolchain that may
//! not be installed (and cannot be downloaded offline). rustup would honour
//! it for every cargo or rustc started in that folder, including the
//! `rustc -vV` s2n-tls-sys's build script runs there, and fail. Setting
//! `RUSTUP_TOOLCHAIN` to the toolchain this workspace builds with overrides
//! it everywhere, without a single `rustup` call.

use std::ffi::OsString;
use std::path::Path;

use crate::error::SourceError;
use crate::options::Options;
use crate::process::{self, Program, RunOptions};

/// Variables of a surrounding cargo run that must not leak into ours.
const CARGO_RUN_VARIABLES: &[&str] = &[
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_PRIMARY_PACKAGE",
];

/// The cargo to run and the toolchain to run it with.
#[derive(Debug, Clone)]
pub struct Cargo {
    program: OsString,
    toolchain: Option<String>,
    host: String,
}

impl Cargo {
    /// The cargo running us (`$CARGO`) or the one on PATH, the rustup
    /// toolchain `workspace` builds with (none without rustup), and the host
    /// target.
    pub fn detect(workspace: &Path, options: &Options) -> Result<Cargo, SourceError> {
        let program = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
        let toolchain = match std::env::var("RUSTUP_TOOLCHAIN") {
            Ok(toolchain) if !toolchain.is_empty() => Some(toolchain),
            _ => toolchain_of(workspace, options)?,
        };
        let mut rustc = Program::new("rustc").arg("-vV").current_dir(workspace);
        if let Some(toolchain) = &toolchain {
            rustc = rustc.env("RUSTUP_TOOLCHAIN", toolchain);
        }
        let finished = process::run(
            &rustc,
            &options.git_limits(),
            RunOptions {
                capture_stdout: true,
                ..RunOptions::default()
            },
        )?;
        let output = finished.stdout_text();
        let host = output
            .lines()
            .find_map(|line| line.strip_prefix("host: "))
            .filter(|host| crate::manifest::is_crate_name(&host.replace('.', "_")))
            .ok_or_else(|| SourceError::Unexpected {
                command: finished.command.clone(),
                reason: "no `host:` line".to_owned(),
            })?
            .to_owned();
        Ok(Cargo {
            program,
            toolchain,
            host,
        })
    }

    /// The toolchain name given to every cargo run, if rustup is in use.
    pub fn toolchain(&self) -> Option<&str> {
        self.toolchain.as_deref()
    }

    /// The host target triple (`x86_64-unknown-linux-gnu`).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// `cargo <args>` in `dir`, with the pinned toolchain and without the
    /// variables of any cargo run around us.
    pub fn program<I, S>(&self, dir: &Path, args: I) -> Program
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut program = Program::new(&self.program).args(args).current_dir(dir);
        for variable in CARGO_RUN_VARIABLES {
            program = program.env_remove(*variable);
        }
        if let Some(toolchain) = &self.toolchain {
            program = program.env("RUSTUP_TOOLCHAIN", toolchain);
        }
        program
    }
}

/// The rustup toolchain whose rustc runs in `workspace`, from its sysroot
/// (`~/.rustup/toolchains/<name>`); `None` when rustc is not rustup's.
fn toolchain_of(workspace: &Path, options: &Options) -> Result<Option<String>, SourceError> {
    let finished = process::run(
        &Program::new("rustc")
            .args(["--print", "sysroot"])
            .current_dir(workspace),
        &options.git_limits(),
        RunOptions {
            capture_stdout: true,
            ..RunOptions::default()
        },
    )?;
    let sysroot = std::path::PathBuf::from(finished.stdout_text());
    let under_rustup = sysroot
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|name| name == "toolchains");
    Ok(under_rustup
        .then(|| sysroot.file_name()?.to_str().map(str::to_owned))
        .flatten())
}
