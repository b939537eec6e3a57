//! END-TO-END BUILD (the slow test of this crate: it compiles s2n-tls's C
//! library from a repository and the harnesses above it).
//!
//! The harnesses really built against an s2n-tls repository in its real
//! layout, then, in the same target folder (so nothing but the changed
//! crates is rebuilt), against a rustls working tree whose API lacks a
//! method the harnesses call: the error names the revision and the
//! compiler's first error. Phase B's diff tests reuse this scheme.
//!
//! It builds into this workspace's own cargo target folder, as `regress`'s
//! end-to-end tests do, so the dependencies that do not change (aws-lc,
//! OpenSSL, the Rust crates) are the ones `cargo test` already compiled: in
//! a folder of its own, a fresh machine (CI) compiled them all again, 473 s
//! of this test's time. The scratch copy's workspace crates get artifact
//! names of their own ([`renamed`]), as `regress` gives them.

mod common;

use std::process::Command;

use common::{dirs, options, repos, workspace};
use regress_source::{
    build_harnesses, export, Checkout, Library, PatchSet, Revision, ScratchWorkspace, Side,
    SourceError,
};

#[test]
fn end_to_end_build_of_the_harnesses_against_library_repositories() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dirs = dirs("end-to-end");
    let target = shared_target();
    let renamed = renamed();
    let lock = std::fs::read(workspace().join("Cargo.lock")).expect("lock");

    // 1. s2n-tls at a commit of its repository: builds, and runs.
    let s2n_root = repos::s2n_tls(dir.path(), "0.3.47");
    let s2n = Checkout::open(
        Library::named("s2n-tls").expect("known"),
        &s2n_root,
        &options(),
    )
    .expect("open");
    let head = s2n.resolve(Side::Head, "HEAD").expect("HEAD");
    let s2n_set = PatchSet::from_export(&export(&s2n, &head, &dirs, &options()).expect("export"))
        .expect("set");
    let scratch = ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&s2n_set), &options())
        .expect("prepare");
    let built = build_harnesses(&scratch, &dirs, &target, &renamed, &options())
        .expect("the harnesses build");
    let perf = built
        .executables
        .iter()
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("perf-"))
        })
        .expect("the perf test executable");
    assert!(perf.starts_with(&target), "{}", perf.display());
    let log = std::fs::read_to_string(&built.log).expect("build log");
    let sys_dir = s2n_set.crates[1].path.to_str().expect("utf-8");
    assert!(
        log.contains(&format!("s2n-tls-sys v0.3.47 ({sys_dir})")),
        "s2n-tls-sys was not compiled from the export:\n{log}"
    );
    let listed = Command::new(perf)
        .arg("--list")
        .output()
        .expect("run perf --list");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("s2n_tls::handshake_rsa4096"), "{listed}");
    drop(scratch);

    // 2. Plus a rustls working tree without `ClientConfig::builder_with_details`.
    let rustls_root = repos::rustls(dir.path(), "0.23.46");
    common::replace_in(
        &rustls_root.join("rustls/src/client/client_conn.rs"),
        "pub fn builder_with_details(",
        "pub fn builder_with_details_renamed(",
    );
    let rustls = Checkout::open(
        Library::named("rustls").expect("known"),
        &rustls_root,
        &options(),
    )
    .expect("open");
    let broken = export(&rustls, &Revision::WorkingTree, &dirs, &options()).expect("export");
    let sets = [s2n_set, PatchSet::from_export(&broken).expect("set")];
    let scratch = ScratchWorkspace::prepare(&dirs, &sets, &options()).expect("prepare");
    let error = build_harnesses(&scratch, &dirs, &target, &renamed, &options())
        .expect_err("no `builder_with_details`");
    let message = error.to_string();
    assert!(
        matches!(error, SourceError::HarnessesDoNotCompile { .. }),
        "{message}"
    );
    for expected in [
        "rustls at the working tree (wt-",
        "harnesses",
        "builder_with_details",
    ] {
        assert!(message.contains(expected), "{expected:?} not in: {message}");
    }
    assert_eq!(
        std::fs::read(workspace().join("Cargo.lock")).expect("lock"),
        lock
    );
}

/// This workspace's cargo target folder: `CARGO_TARGET_DIR`, or `target/`.
fn shared_target() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|dir| !dir.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

/// `--config` arguments that give every workspace crate of a scratch copy
/// artifact names of its own in a shared target folder without changing
/// its code (the codegen-units an incremental dev build uses anyway), so
/// the copy's builds and this workspace's never take each other's
/// artifacts for their own (see `regress::program::isolation`).
fn renamed() -> Vec<String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace())
        .output()
        .expect("run cargo metadata");
    assert!(output.status.success(), "{output:?}");
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    assert!(packages.len() >= 2, "{packages:?}");
    packages
        .iter()
        .flat_map(|package| {
            let name = package["name"].as_str().expect("a package name");
            [
                "--config".to_owned(),
                format!("profile.dev.package.\"{name}\".codegen-units=256"),
            ]
        })
        .collect()
}
