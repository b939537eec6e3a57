//! END-TO-END BUILD (the slow test of this crate: a few minutes on 2 cores,
//! it compiles s2n-tls's C library and the harnesses' dependencies once).
//!
//! The harnesses really built against an s2n-tls repository in its real
//! layout, then, in the same target folder (so nothing but the changed
//! crates is rebuilt), against a rustls working tree whose API lacks a
//! method the harnesses call: the error names the revision and the
//! compiler's first error. Phase B's diff tests reuse this scheme.

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
    let target = dirs.build_target();
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
    let built =
        build_harnesses(&scratch, &dirs, &target, &[], &options()).expect("the harnesses build");
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
    let error = build_harnesses(&scratch, &dirs, &target, &[], &options())
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
