//! Every bad input is refused with a typed error that says what to do:
//! unknown library, not a git checkout, the wrong library's layout,
//! revisions that do not exist or look like options, the working tree as
//! the base, histories without a merge base.

mod common;

use common::{git, options, repos, snapshot::Snapshot};
use regress_source::{Checkout, Library, Revision, RevisionRequest, Side, SourceError};

#[test]
fn an_unknown_library_lists_the_known_ones() {
    let error = Library::named("boringssl").unwrap_err();
    assert!(
        matches!(error, SourceError::UnknownLibrary { .. }),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("s2n-tls, rustls, aws-lc-rs, openssl"),
        "{error}"
    );
}

#[test]
fn a_folder_that_is_not_a_git_checkout_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s2n = Library::named("s2n-tls").expect("known");
    for path in [dir.path().to_path_buf(), dir.path().join("missing")] {
        let error = Checkout::open(s2n, &path, &options()).unwrap_err();
        assert!(
            matches!(error, SourceError::NotAGitRepository { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("clone"), "{error}");
    }
}

#[test]
fn the_layout_is_checked_and_the_missing_paths_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rustls = repos::rustls(dir.path(), "0.23.46");
    let error = Checkout::open(
        Library::named("s2n-tls").expect("known"),
        &rustls,
        &options(),
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, SourceError::Layout { .. }), "{message}");
    assert!(message.contains("checkout of s2n-tls"), "{message}");
    assert!(message.contains("api/"), "{message}");
    assert!(
        message.contains("bindings/rust/extended/s2n-tls/Cargo.toml"),
        "{message}"
    );
    // The right library is accepted, also from a folder inside the checkout.
    let checkout = Checkout::open(
        Library::named("rustls").expect("known"),
        &rustls.join("rustls/src"),
        &options(),
    )
    .expect("a rustls checkout");
    assert_eq!(checkout.root(), rustls.canonicalize().expect("canonical"));
}

#[test]
fn bad_revisions_are_refused_and_nothing_is_touched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    let checkout =
        Checkout::open(Library::named("s2n-tls").expect("known"), &root, &options()).expect("open");
    // A dirty working tree: an edit and an untracked file.
    std::fs::write(root.join("tls/s2n_handshake.c"), "/* edited */\n").expect("edit");
    std::fs::write(root.join("notes.txt"), "untracked\n").expect("untracked");
    let before = Snapshot::take(&root);

    let error = checkout.resolve(Side::Base, "-rf").unwrap_err();
    assert!(
        matches!(error, SourceError::RevisionLooksLikeOption { .. }),
        "{error}"
    );
    let error = checkout.resolve(Side::Base, "--output=/tmp/x").unwrap_err();
    assert!(
        matches!(error, SourceError::RevisionLooksLikeOption { .. }),
        "{error}"
    );
    let error = checkout.resolve(Side::Head, "no-such-branch").unwrap_err();
    assert!(
        matches!(error, SourceError::RevisionNotFound { .. }),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("\"no-such-branch\" does not name a commit"),
        "{error}"
    );
    let error = checkout.resolve(Side::Head, "HEAD^{tree}").unwrap_err();
    assert!(
        matches!(error, SourceError::RevisionNotFound { .. }),
        "{error}"
    );
    let error = checkout.resolve(Side::Base, "  ").unwrap_err();
    assert!(
        matches!(error, SourceError::EmptyRevision { .. }),
        "{error}"
    );

    let error = checkout
        .sides(
            RevisionRequest::WorkingTree,
            RevisionRequest::Reference("HEAD"),
            false,
        )
        .unwrap_err();
    assert!(
        matches!(error, SourceError::BaseNotCommitted { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("uncommitted changes"), "{error}");

    let sides = checkout
        .sides(
            RevisionRequest::Reference("main"),
            RevisionRequest::WorkingTree,
            false,
        )
        .expect("main against the working tree");
    assert_eq!(sides.head, Revision::WorkingTree);
    assert_eq!(
        sides.base.commit(),
        Some(git(&root, &["rev-parse", "HEAD"]).as_str())
    );
    assert!(!checkout.is_clean().expect("status"));

    before.assert_same(&Snapshot::take(&root));
    assert!(!before.has_worktrees());
}

#[test]
fn the_merge_base_is_what_a_pull_request_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repos::s2n_tls(dir.path(), "0.3.47");
    let fork = git(&root, &["rev-parse", "HEAD"]);
    git(&root, &["switch", "--quiet", "-c", "feature"]);
    std::fs::write(root.join("tls/extra.c"), "int extra;\n").expect("write");
    repos::commit_all(&root, "feature work");
    git(&root, &["switch", "--quiet", "main"]);
    std::fs::write(root.join("utils/extra.c"), "int other;\n").expect("write");
    repos::commit_all(&root, "main moves on");
    let checkout =
        Checkout::open(Library::named("s2n-tls").expect("known"), &root, &options()).expect("open");
    let sides = checkout
        .sides(
            RevisionRequest::Reference("main"),
            RevisionRequest::Reference("feature"),
            true,
        )
        .expect("sides");
    assert_eq!(sides.base.commit(), Some(fork.as_str()));

    git(&root, &["switch", "--quiet", "--orphan", "unrelated"]);
    std::fs::write(root.join("orphan.txt"), "no shared history\n").expect("write");
    repos::commit_all(&root, "unrelated history");
    let error = checkout
        .sides(
            RevisionRequest::Reference("main"),
            RevisionRequest::Reference("unrelated"),
            true,
        )
        .unwrap_err();
    assert!(matches!(error, SourceError::NoMergeBase { .. }), "{error}");
}
