//! Exports of commits and of dirty working trees: their content, their
//! keys, the generation step, submodules, and a user repository left byte
//! for byte as it was.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{dirs, git, options, repos, snapshot::Snapshot};
use regress_source::{export, Checkout, Library, Revision, Side, SourceError};

fn s2n_checkout(root: &Path) -> Checkout {
    Checkout::open(Library::named("s2n-tls").expect("known"), root, &options()).expect("open")
}

#[test]
fn a_commit_is_exported_generated_and_reused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    let dirs = dirs("export-commit");
    let checkout = s2n_checkout(&root);
    let before = Snapshot::take(&root);
    let head = checkout.resolve(Side::Head, "HEAD").expect("HEAD");
    let first = export(&checkout, &head, &dirs, &options()).expect("export");
    assert_eq!(Some(first.key.as_str()), head.commit());
    assert!(first.tree.starts_with(dirs.state()));
    // Every file of the commit under the library's export list, byte for
    // byte; nothing outside it (the export reads only what builds).
    let mut args = vec!["ls-files", "--"];
    args.extend(checkout.library().export);
    let tracked = git(&root, &args);
    assert!(tracked.lines().count() > 400);
    for path in git(&root, &["ls-files"]).lines() {
        let exported = checkout
            .library()
            .export
            .iter()
            .any(|top| path == *top || path.starts_with(&format!("{top}/")));
        assert_eq!(first.tree.join(path).exists(), exported, "{path}");
    }
    for path in tracked.lines() {
        assert_eq!(
            std::fs::read(first.tree.join(path)).expect("exported"),
            std::fs::read(root.join(path)).expect("original"),
            "{path}"
        );
    }
    // generate.sh's copy: the C tree in s2n-tls-sys/lib/, bindings kept.
    let sys = first.tree.join("bindings/rust/extended/s2n-tls-sys");
    for path in [
        "lib/tls/s2n_handshake_io.c",
        "lib/api/s2n.h",
        "lib/tests/features/GLOBAL.flags",
        "lib/CMakeLists.txt",
        "src/api.rs",
        "files.rs",
    ] {
        assert!(sys.join(path).is_file(), "{path}");
    }
    let again = export(&checkout, &head, &dirs, &options()).expect("export again");
    assert!(first.created || !again.created);
    assert!(!again.created, "an unchanged commit is reused");
    assert_eq!(again.tree, first.tree);
    before.assert_same(&Snapshot::take(&root));
}

#[test]
fn a_dirty_working_tree_is_exported_as_it_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    let dirs = dirs("export-worktree");
    let checkout = s2n_checkout(&root);
    let clean = export(&checkout, &Revision::WorkingTree, &dirs, &options()).expect("clean");
    assert_eq!(
        clean.key,
        git(&root, &["rev-parse", "HEAD"]),
        "a clean tree is its HEAD commit"
    );

    // An uncommitted edit, a staged new file, an untracked file, an
    // executable, a symlink, a deleted file and ignored files.
    std::fs::write(
        root.join("tls/s2n_handshake_io.c"),
        "/* edited, not committed */\n",
    )
    .expect("edit");
    std::fs::write(root.join("tls/staged.c"), "int staged;\n").expect("write");
    git(&root, &["add", "tls/staged.c"]);
    std::fs::write(root.join("utils/untracked.c"), "int untracked;\n").expect("write");
    std::fs::write(root.join("tls/run.sh"), "#!/bin/sh\n").expect("write");
    std::fs::set_permissions(root.join("tls/run.sh"), PermissionsExt::from_mode(0o755))
        .expect("chmod");
    std::os::unix::fs::symlink("staged.c", root.join("tls/link.c")).expect("symlink");
    std::fs::remove_file(root.join("crypto/s2n_hash.c")).expect("delete");
    std::fs::write(root.join("tls/ignored.o"), "object").expect("write");
    std::fs::create_dir_all(root.join("build")).expect("mkdir");
    std::fs::write(root.join("build/ignored.txt"), "ignored").expect("write");
    let before = Snapshot::take(&root);

    let dirty = export(&checkout, &Revision::WorkingTree, &dirs, &options()).expect("dirty");
    assert!(dirty.key.starts_with("wt-"), "{}", dirty.key);
    let tree = &dirty.tree;
    assert_eq!(
        std::fs::read_to_string(tree.join("tls/s2n_handshake_io.c")).expect("edited"),
        "/* edited, not committed */\n"
    );
    assert!(tree.join("tls/staged.c").is_file());
    assert!(tree.join("utils/untracked.c").is_file());
    let mode = std::fs::metadata(tree.join("tls/run.sh"))
        .expect("run.sh")
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "the executable bit is kept");
    assert_eq!(
        std::fs::read_link(tree.join("tls/link.c")).expect("link"),
        Path::new("staged.c")
    );
    assert!(
        !tree.join("crypto/s2n_hash.c").exists(),
        "deleted files stay deleted"
    );
    assert!(
        !tree.join("tls/ignored.o").exists() && !tree.join("build").exists(),
        "ignored files"
    );
    // The untracked C file reached the generated copy too.
    assert!(tree
        .join("bindings/rust/extended/s2n-tls-sys/lib/utils/untracked.c")
        .is_file());

    let same = export(&checkout, &Revision::WorkingTree, &dirs, &options()).expect("same");
    assert_eq!(
        same.key, dirty.key,
        "an unchanged working tree keeps its key"
    );
    assert!(!same.created);
    std::fs::write(root.join("utils/untracked.c"), "int changed;\n").expect("edit");
    let edited = export(&checkout, &Revision::WorkingTree, &dirs, &options()).expect("edited");
    assert_ne!(edited.key, dirty.key, "an edit changes the key");
    std::fs::write(root.join("utils/untracked.c"), "int untracked;\n").expect("restore");

    before.assert_same(&Snapshot::take(&root));
    assert!(!before.has_worktrees());
}

#[test]
fn a_revision_without_the_layout_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    let full = git(&root, &["rev-parse", "HEAD"]);
    git(&root, &["rm", "-r", "--quiet", "bindings"]);
    git(&root, &["commit", "--quiet", "-m", "no bindings"]);
    git(&root, &["tag", "no-bindings"]);
    git(&root, &["reset", "--quiet", "--hard", &full]);
    let checkout = s2n_checkout(&root);
    let revision = checkout.resolve(Side::Base, "no-bindings").expect("tag");
    let error = export(&checkout, &revision, &dirs("export-layout"), &options()).unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, SourceError::Layout { .. }), "{message}");
    assert!(message.contains("at no-bindings ("), "{message}");
    assert!(
        message.contains("bindings/rust/extended/s2n-tls/Cargo.toml"),
        "{message}"
    );
}

#[test]
fn a_submodule_is_exported_from_the_checkouts_own_modules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::aws_lc_rs(dir.path());
    let library = Library::named("aws-lc-rs").expect("known");
    let checkout = Checkout::open(library, &root, &options()).expect("open");
    let dirs = dirs("export-submodule");
    let before = Snapshot::take(&root);
    let head = checkout.resolve(Side::Head, "HEAD").expect("HEAD");
    let exported = export(&checkout, &head, &dirs, &options()).expect("export");
    let header = "aws-lc-sys/aws-lc/include/openssl/aead.h";
    assert_eq!(
        std::fs::read(exported.tree.join(header)).expect("exported"),
        std::fs::read(root.join(header)).expect("original")
    );
    assert!(exported
        .tree
        .join("aws-lc-sys/generated-include/openssl")
        .is_dir());
    before.assert_same(&Snapshot::take(&root));

    // An edit inside the submodule's working tree is part of the working tree.
    std::fs::write(
        root.join("aws-lc-sys/aws-lc/crypto/edited.c"),
        "int edited;\n",
    )
    .expect("edit");
    let dirty = export(&checkout, &Revision::WorkingTree, &dirs, &options()).expect("dirty");
    assert!(dirty.key.starts_with("wt-"));
    assert!(dirty
        .tree
        .join("aws-lc-sys/aws-lc/crypto/edited.c")
        .is_file());
    assert!(dirty.tree.join(header).is_file());

    // A clone that never initialised the submodule cannot provide it.
    let dirs = common::dirs("export-submodule-clone");
    let clone = dir.path().join("clone");
    git(
        dir.path(),
        &["clone", "--quiet", root.to_str().expect("utf-8"), "clone"],
    );
    let checkout = Checkout::open(library, &clone, &options()).expect("open the clone");
    let head = checkout.resolve(Side::Head, "HEAD").expect("HEAD");
    let error = export(&checkout, &head, &dirs, &options()).expect_err("no submodule");
    let message = error.to_string();
    assert!(
        matches!(error, SourceError::SubmoduleMissing { .. }),
        "{message}"
    );
    assert!(
        message.contains("submodule update --init aws-lc-sys/aws-lc"),
        "{message}"
    );
}

#[test]
fn a_missing_object_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    // Remove the first exported blob git will be asked for: everything
    // after it (megabytes) is still being written by `git cat-file` when
    // the export stops reading.
    let mut args = vec!["ls-tree", "-r", "--full-tree", "HEAD", "--"];
    args.extend(Library::named("s2n-tls").expect("known").export);
    let listing = git(&root, &args);
    let first = listing.lines().next().expect("an entry");
    let oid = first.split_whitespace().nth(2).expect("object name");
    std::fs::remove_file(root.join(".git/objects").join(&oid[..2]).join(&oid[2..]))
        .expect("remove a loose object");
    let checkout = s2n_checkout(&root);
    let head = checkout.resolve(Side::Head, "HEAD").expect("HEAD");
    let mut options = options();
    options.timeouts.export = std::time::Duration::from_secs(60);
    let started = std::time::Instant::now();
    let error = export(&checkout, &head, &dirs("export-missing"), &options).unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let message = error.to_string();
    assert!(matches!(error, SourceError::Git { .. }), "{message}");
    assert!(
        message.contains(oid) && message.contains("partial or shallow"),
        "{message}"
    );
}

#[test]
fn a_failing_generation_step_shows_its_output_and_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    // A stand-in for a `generate/` crate that fails the way bindgen does
    // without libclang (the real generator is not published, see repos.rs).
    let generator = root.join("bindings/rust/extended/generate");
    common::write(
        &generator.join("Cargo.toml"),
        "[package]\nname = \"generate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    common::write(
        &generator.join("src/main.rs"),
        "fn main() {\n    eprintln!(\"thread 'main' panicked: Unable to find libclang\");\n    \
         std::process::exit(101);\n}\n",
    );
    repos::commit_all(&root, "a generator");
    let checkout = s2n_checkout(&root);
    let head = checkout.resolve(Side::Head, "HEAD").expect("HEAD");
    let dirs = dirs("export-generation");
    let error = export(&checkout, &head, &dirs, &options()).unwrap_err();
    let message = error.to_string();
    let SourceError::Generation { log, .. } = &error else {
        panic!("{message}");
    };
    assert!(message.contains("Unable to find libclang"), "{message}");
    assert!(message.contains("libclang-dev"), "{message}");
    assert!(message.contains("for HEAD ("), "{message}");
    let logged = std::fs::read_to_string(log).expect("the log file");
    assert!(logged.contains("Unable to find libclang"), "{logged}");
    // Nothing half-made is left where the export would be.
    let exports = dirs.exports("s2n-tls");
    let left: Vec<_> = std::fs::read_dir(&exports).expect("exports").collect();
    assert!(left.is_empty(), "{left:?}");
}
