//! Patch sets in a scratch copy of this workspace: resolved from the
//! export, lock moved for version skew (in the copy only), a version the
//! workspace's requirements reject refused by name, cargo's "patch not
//! used" warning turned into an error, and the affected harnesses checked
//! against the resolve graph.

mod common;

use std::path::{Path, PathBuf};

use common::{dirs, options, repos, workspace};
use regress_source::affected::affected_by_resolve;
use regress_source::cargo::Cargo;
use regress_source::resolve::{metadata, verify_used};
use regress_source::{
    export, Checkout, Library, PatchSet, ScratchWorkspace, Side, SourceError, LIBRARIES,
};

fn patch_set(library: &str, root: &Path, dirs: &regress_source::SourceDirs) -> PatchSet {
    let checkout =
        Checkout::open(Library::named(library).expect("known"), root, &options()).expect("open");
    let head = checkout.resolve(Side::Head, "HEAD").expect("HEAD");
    let exported = export(&checkout, &head, dirs, &options()).expect("export");
    PatchSet::from_export(&exported).expect("patch set")
}

fn real_lock() -> Vec<u8> {
    std::fs::read(workspace().join("Cargo.lock")).expect("Cargo.lock")
}

#[test]
fn s2n_tls_resolves_from_the_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    let dirs = dirs("patch-s2n");
    let lock = real_lock();
    let set = patch_set("s2n-tls", &root, &dirs);
    let names: Vec<(&str, String)> = set
        .crates
        .iter()
        .map(|krate| (krate.name.as_str(), krate.version.to_string()))
        .collect();
    assert_eq!(
        names,
        [
            ("s2n-tls", "0.3.47".to_owned()),
            ("s2n-tls-sys", "0.3.47".to_owned())
        ]
    );
    let scratch =
        ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&set), &options()).expect("prepare");
    assert!(
        scratch.lock_updates.is_empty(),
        "{:?}",
        scratch.lock_updates
    );
    assert!(scratch.root().starts_with(dirs.state()));

    // cargo metadata in the copy, with the patch: s2n-tls-sys is the export's.
    let cargo = Cargo::detect(&workspace(), &options()).expect("cargo");
    let (resolved, _) =
        metadata(&cargo, scratch.root(), scratch.cargo_args(), &options()).expect("metadata");
    let sys = resolved
        .packages
        .iter()
        .find(|package| package.name.as_str() == "s2n-tls-sys")
        .expect("s2n-tls-sys in the graph");
    assert!(
        sys.manifest_path
            .starts_with(set.crates[1].path.to_str().expect("utf-8")),
        "{}",
        sys.manifest_path
    );
    assert!(sys.source.is_none(), "a path package, not crates.io's");
    assert_eq!(real_lock(), lock, "the workspace's Cargo.lock is untouched");

    // Preparing again reuses the copy and keeps its files' times.
    let perf = scratch.root().join("harnesses/tests/perf.rs");
    let modified = std::fs::metadata(&perf)
        .and_then(|m| m.modified())
        .expect("mtime");
    drop(scratch);
    let again = ScratchWorkspace::prepare(&dirs, &[set], &options()).expect("again");
    assert_eq!(
        std::fs::metadata(again.root().join("harnesses/tests/perf.rs"))
            .and_then(|m| m.modified())
            .expect("mtime"),
        modified
    );
}

/// An OpenSSL checkout is built through a shell around its export: the
/// pinned `openssl-src`'s manifest and build logic, the tree as its
/// `openssl/`, the tree's release as build metadata; cargo then takes
/// `openssl-src` from the shell. A 1.1.1 tree is refused before cargo.
#[test]
fn openssl_is_patched_in_as_a_shell_around_the_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::openssl(dir.path(), None);
    let dirs = dirs("patch-openssl");
    let lock = real_lock();
    let set = patch_set("openssl", &root, &dirs);
    let locked = semver::Version::parse(&common::locked_version("openssl-src")).expect("locked");
    let [krate] = set.crates.as_slice() else {
        panic!("one crate: {:?}", set.crates);
    };
    assert_eq!(krate.name, "openssl-src");
    assert_eq!(krate.version, locked, "the pinned release's own tree");
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        "openssl/Configure",
        "openssl/ssl/s3_lib.c",
    ] {
        assert!(krate.path.join(file).is_file(), "{file}");
    }
    assert!(
        !krate.path.join("openssl/test").exists(),
        "test/ is not exported"
    );
    // Everything else of the release tree's top level that a Unix build
    // reads is (Configure fails on a missing configdata.pm.in, for one).
    let release = common::registry_source("openssl-src", &locked.to_string()).join("openssl");
    let not_read = ["test", "demos", "VMS", "config.com"];
    for entry in std::fs::read_dir(&release).expect("release tree") {
        let name = entry.expect("entry").file_name();
        let name = name.to_str().expect("utf-8");
        if !name.starts_with('.') && !not_read.contains(&name) {
            assert!(krate.path.join("openssl").join(name).exists(), "{name}");
        }
    }
    let scratch =
        ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&set), &options()).expect("prepare");
    let cargo = Cargo::detect(&workspace(), &options()).expect("cargo");
    let (resolved, _) =
        metadata(&cargo, scratch.root(), scratch.cargo_args(), &options()).expect("metadata");
    let used = resolved
        .packages
        .iter()
        .find(|package| package.name.as_str() == "openssl-src")
        .expect("openssl-src in the graph");
    assert!(used.source.is_none(), "a path package, not crates.io's");
    assert!(
        used.manifest_path
            .starts_with(krate.path.to_str().expect("utf-8")),
        "{}",
        used.manifest_path
    );
    drop(scratch);

    // Another release line's tree: its release is the build metadata, and
    // the lock of the copy moves to it.
    let other = tempfile::tempdir().expect("tempdir");
    let root = repos::openssl(other.path(), Some((3, 0, 8)));
    let set = patch_set("openssl", &root, &dirs);
    let expected = format!("{}.{}.{}+3.0.8", locked.major, locked.minor, locked.patch);
    assert_eq!(set.crates[0].version.to_string(), expected);
    let scratch =
        ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&set), &options()).expect("prepare");
    let moved: Vec<String> = scratch
        .lock_updates
        .iter()
        .map(|update| format!("{} -> {}", update.from, update.to))
        .collect();
    assert_eq!(moved, [format!("{locked} -> {expected}")]);
    drop(scratch);

    // 1.1.0 is not covered, and says so before cargo is asked.
    let old = tempfile::tempdir().expect("tempdir");
    let root = repos::openssl(old.path(), None);
    std::fs::remove_file(root.join("VERSION.dat")).expect("rm");
    common::write(
        &root.join("include/openssl/opensslv.h"),
        "# define OPENSSL_VERSION_TEXT    \"OpenSSL 1.1.0l  10 Sep 2019\"\n",
    );
    repos::commit_all(&root, "1.1.0l");
    let set = patch_set("openssl", &root, &dirs);
    let error = ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&set), &options())
        .expect_err("1.1.0 is not covered");
    let message = error.to_string();
    assert!(matches!(error, SourceError::NotCovered(_)), "{message}");
    assert!(
        message.contains("openssl 1.1.0 is not covered"),
        "{message}"
    );
    assert!(
        message.contains("the harnesses cover 1.1.1, 3.x and 4.0"),
        "{message}"
    );
    assert_eq!(real_lock(), lock, "the workspace's Cargo.lock is untouched");
}

#[test]
fn version_skew_moves_the_lock_of_the_copy_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::rustls(dir.path(), "0.23.47");
    let dirs = dirs("patch-skew");
    let lock = real_lock();
    let set = patch_set("rustls", &root, &dirs);
    assert_eq!(set.crates[0].version.to_string(), "0.23.47");
    let scratch =
        ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&set), &options()).expect("prepare");
    let moved: Vec<String> = scratch
        .lock_updates
        .iter()
        .map(|update| format!("{} {} -> {}", update.krate, update.from, update.to))
        .collect();
    assert_eq!(moved, ["rustls 0.23.46 -> 0.23.47"]);
    let copy_lock = std::fs::read_to_string(scratch.root().join("Cargo.lock")).expect("lock");
    assert!(
        copy_lock.contains("name = \"rustls\"\nversion = \"0.23.47\""),
        "the copy's lock moved"
    );
    assert_eq!(real_lock(), lock, "the workspace's Cargo.lock is untouched");
}

#[test]
fn a_version_the_workspace_rejects_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.4.0");
    let dirs = dirs("patch-rejected");
    let lock = real_lock();
    let set = patch_set("s2n-tls", &root, &dirs);
    // The harnesses' coverage table refuses it before cargo is asked.
    let error = ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&set), &options())
        .expect_err("0.4.0 is not covered");
    let message = error.to_string();
    assert!(matches!(error, SourceError::NotCovered(_)), "{message}");
    for expected in [
        "s2n-tls 0.4.0 is not covered",
        "the harnesses cover 0.3.42 and later 0.3.x",
        "harnesses/src/",
    ] {
        assert!(message.contains(expected), "{expected:?} not in: {message}");
    }

    // What cargo itself makes of that patch: only a warning, and the
    // crates.io crate in the graph. The check turns both into an error.
    let copy_dir = tempfile::tempdir().expect("tempdir");
    let copy = workspace_copy(copy_dir.path());
    let cargo = Cargo::detect(&workspace(), &options()).expect("cargo");
    let (resolved, warnings) =
        metadata(&cargo, &copy, &set.cargo_args().expect("args"), &options()).expect("metadata");
    assert!(
        warnings.contains("was not used in the crate graph"),
        "{warnings}"
    );
    let error = verify_used(&resolved, &warnings, &[set]).expect_err("unused");
    let message = error.to_string();
    assert!(
        matches!(error, SourceError::PatchUnused { .. }),
        "{message}"
    );
    assert!(message.contains("s2n-tls 0.4.0"), "{message}");
    assert_eq!(real_lock(), lock);
}

#[test]
fn the_affected_harnesses_match_the_resolve_graph() {
    let cargo = Cargo::detect(&workspace(), &options()).expect("cargo");
    let dir = tempfile::tempdir().expect("tempdir");
    // cargo metadata writes nothing here, but run it on a copy anyway: the
    // real workspace is only ever read.
    let copy = workspace_copy(dir.path());
    let (resolved, _) = metadata(&cargo, &copy, &[], &options()).expect("metadata");
    for library in LIBRARIES {
        let derived = affected_by_resolve(&resolved, library);
        let declared: std::collections::BTreeSet<&str> = library.affects.iter().copied().collect();
        assert_eq!(derived, declared, "{}", library.name);
    }
}

/// A copy of this workspace's manifests and members (every folder of
/// `crates/`, and `harnesses/`) in `dir`, for cargo metadata to read.
fn workspace_copy(dir: &Path) -> PathBuf {
    let copy = dir.join("workspace");
    for file in ["Cargo.toml", "Cargo.lock", "rust-toolchain.toml"] {
        common::copy(&workspace().join(file), &copy.join(file));
    }
    let crates = workspace().join("crates");
    for entry in std::fs::read_dir(&crates).expect("crates/") {
        let name = entry.expect("entry").file_name();
        common::copy(&crates.join(&name), &copy.join("crates").join(&name));
    }
    common::copy(&workspace().join("harnesses"), &copy.join("harnesses"));
    copy
}
