//! Building this workspace's harnesses against patch sets.
//!
//! The build runs in the [`ScratchWorkspace`] (whose lock matches the
//! patches) with `--locked`, so cargo cannot quietly re-resolve to other
//! versions, and with cargo's JSON messages, from which the executables are
//! read and, when the harnesses do not compile against a revision, the
//! first compiler error is taken for the message. Both sides of a
//! comparison should pass the same `target_dir`: the unpatched dependencies
//! (aws-lc-sys takes minutes) then build once. The patched crates and
//! everything that depends on them get artifacts of their own, because
//! cargo's artifact names hash the package's source path.

use std::path::{Path, PathBuf};

use cargo_metadata::diagnostic::DiagnosticLevel;
use cargo_metadata::Message;

use crate::compiler_cache::CompilerCache;
use crate::dirs::SourceDirs;
use crate::error::SourceError;
use crate::options::Options;
use crate::process::{self, RunOptions};
use crate::scratch::ScratchWorkspace;

/// How many lines of cargo's output an error shows when no compiler error
/// explains a failure (a build script that failed, for example).
const TAIL_LINES: usize = 40;

/// What is built for measuring. Kept to this one function on purpose: the
/// measured program's build target is changing (phase B adapts it here).
pub fn harness_build_args() -> Vec<String> {
    [
        "test",
        "--no-run",
        "--package",
        "harnesses",
        "--test",
        "perf",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

/// The package and binary target of the measured program.
pub const PROGRAM: &str = "harnesses";

/// The result of a build: the executables cargo produced.
#[derive(Debug, Clone)]
pub struct BuiltHarnesses {
    pub executables: Vec<PathBuf>,
    /// The measured program: the `harnesses` binary, built for the tests
    /// (whose dev-dependency features it shares, as `cargo test` builds it).
    pub program: PathBuf,
    /// cargo's full output.
    pub log: PathBuf,
}

/// Builds [`harness_build_args`] in `scratch` into `target_dir`, with the
/// scratch copy's patches and harness features (the build must see the
/// graph the patches were verified in), and `extra` cargo arguments
/// (`--config` values that keep the scratch copy's artifacts apart from
/// the workspace's own).
pub fn build_harnesses(
    scratch: &ScratchWorkspace,
    dirs: &SourceDirs,
    target_dir: &Path,
    extra: &[String],
    options: &Options,
) -> Result<BuiltHarnesses, SourceError> {
    let sources = crate::patch::describe(scratch.patches());
    let log = crate::generate::log_path(dirs, "build")?;
    let mut args = harness_build_args();
    args.extend([
        "--locked".to_owned(),
        "--message-format=json".to_owned(),
        "--target-dir".to_owned(),
        target_dir.to_string_lossy().into_owned(),
    ]);
    args.extend(scratch.cargo_args().iter().cloned());
    args.extend(scratch.feature_args());
    args.extend(extra.iter().cloned());
    // A patched crate is a path dependency, and cargo compiles path
    // dependencies incrementally in the dev and test profiles, unlike the
    // same crate from the registry: incremental code generation partitions
    // and inlines differently, so rustls 0.23.46 from its repository counted
    // 1 to 1.7 % more on the record paths than the identical published
    // source. Without incremental compilation a patched crate is built as
    // the registry's is (both sides of a diff alike).
    let mut program = scratch
        .cargo()
        .program(scratch.root(), &args)
        .env("CARGO_INCREMENTAL", "0");
    // Unchanged C files of the library come out of the compiler cache,
    // byte for byte what compiling them gives (see `compiler_cache`).
    if let Some(cache) = CompilerCache::prepare(dirs)? {
        program = cache.apply(program);
    }
    let finished = process::run(
        &program,
        &options.limits(options.timeouts.build),
        RunOptions {
            capture_stdout: true,
            log: Some(&log),
            echo: options.echo,
        },
    )?;
    let outcome = read_messages(&finished.stdout);
    if options.echo {
        for rendered in &outcome.diagnostics {
            eprint!("{rendered}");
        }
    }
    if !finished.success() || !outcome.success {
        if let Some((krate, first_error)) = outcome.first_error {
            return Err(SourceError::HarnessesDoNotCompile {
                sources,
                krate,
                first_error,
            });
        }
        return Err(SourceError::Build {
            sources,
            status: finished.status.to_string(),
            tail: finished.tail(TAIL_LINES),
            log,
        });
    }
    let Some(program) = outcome.program else {
        return Err(SourceError::NoExecutable {
            what: format!("binary `{PROGRAM}` from {}", harness_build_args().join(" ")),
            sources,
        });
    };
    Ok(BuiltHarnesses {
        executables: outcome.executables,
        program,
        log,
    })
}

/// What cargo's JSON messages say about a build.
#[derive(Debug, Default)]
struct Outcome {
    executables: Vec<PathBuf>,
    program: Option<PathBuf>,
    /// The crate and rendered text of the first error.
    first_error: Option<(String, String)>,
    /// Every rendered diagnostic, to show when echoing.
    diagnostics: Vec<String>,
    success: bool,
}

fn read_messages(stdout: &[u8]) -> Outcome {
    let mut outcome = Outcome::default();
    for message in Message::parse_stream(stdout).flatten() {
        match message {
            Message::CompilerArtifact(artifact) => {
                if let Some(executable) = artifact.executable {
                    let executable = executable.into_std_path_buf();
                    if artifact.target.name == PROGRAM
                        && artifact.target.is_bin()
                        && !artifact.profile.test
                    {
                        outcome.program = Some(executable.clone());
                    }
                    outcome.executables.push(executable);
                }
            }
            Message::CompilerMessage(compiler) => {
                let diagnostic = compiler.message;
                let rendered = diagnostic
                    .rendered
                    .clone()
                    .unwrap_or_else(|| format!("{}\n", diagnostic.message));
                if outcome.first_error.is_none()
                    && matches!(
                        diagnostic.level,
                        DiagnosticLevel::Error | DiagnosticLevel::Ice
                    )
                {
                    outcome.first_error =
                        Some((compiler.target.name.clone(), rendered.trim_end().to_owned()));
                }
                outcome.diagnostics.push(rendered);
            }
            Message::BuildFinished(finished) => outcome.success = finished.success,
            _ => {}
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_and_the_executables_are_read() {
        let messages = concat!(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/harnesses#0.1.0","manifest_path":"/w/harnesses/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"perf","src_path":"/w/harnesses/tests/perf.rs","edition":"2021","doc":false,"doctest":false,"test":true},"profile":{"opt_level":"3","debuginfo":1,"debug_assertions":false,"overflow_checks":false,"test":true},"features":[],"filenames":["/t/perf-1"],"executable":"/t/perf-1","fresh":false}"#,
            "\n",
            r#"{"reason":"compiler-message","package_id":"path+file:///w/harnesses#0.1.0","manifest_path":"/w/harnesses/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"harnesses","src_path":"/w/harnesses/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"message":{"rendered":"error[E0599]: no method named `handshake_complete` found\n","$message_type":"diagnostic","children":[],"code":{"code":"E0599","explanation":null},"level":"error","message":"no method named `handshake_complete` found","spans":[]}}"#,
            "\n",
            r#"{"reason":"compiler-message","package_id":"path+file:///w/harnesses#0.1.0","manifest_path":"/w/harnesses/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"harnesses","src_path":"/w/harnesses/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"message":{"rendered":"error: second\n","$message_type":"diagnostic","children":[],"code":null,"level":"error","message":"second","spans":[]}}"#,
            "\n",
            r#"{"reason":"build-finished","success":false}"#,
            "\n"
        );
        let outcome = read_messages(messages.as_bytes());
        assert_eq!(outcome.executables, vec![PathBuf::from("/t/perf-1")]);
        let (krate, error) = outcome.first_error.expect("an error");
        assert_eq!(krate, "harnesses");
        assert!(error.contains("handshake_complete"), "{error}");
        assert!(!outcome.success);
        assert_eq!(outcome.diagnostics.len(), 2);
    }
}
