//! The history's planning and walking, tested without building anything.

use super::*;
use crate::program::line::Revision;

#[test]
fn revs_are_every_nth_or_the_tagged_ones_and_always_the_last() {
    let line: Vec<Revision> = (0..7)
        .map(|n| Revision {
            commit: format!("{n:040}"),
            title: format!("commit {n}"),
        })
        .collect();
    let picked = |every, tagged: Option<&[String]>| -> Vec<String> {
        every_nth_or_tagged(line.clone(), every, tagged)
            .into_iter()
            .map(|revision| revision.title)
            .collect()
    };
    assert_eq!(picked(None, None).len(), 7);
    assert_eq!(picked(Some(3), None), ["commit 0", "commit 3", "commit 6"]);
    assert_eq!(picked(Some(4), None), ["commit 0", "commit 4", "commit 6"]);
    let tagged = vec![format!("{:040}", 2)];
    assert_eq!(picked(None, Some(&tagged)), ["commit 2", "commit 6"]);
}

#[test]
fn a_skipped_revision_says_what_the_compiler_said() {
    let reason = "the harnesses do not compile against openssl at x: harnesses says\n\
                  error[E0599]: no associated item named `X25519`\n  \
                  That revision's API differs";
    assert_eq!(
        skip_headline(reason),
        "the harnesses do not compile against openssl at x: harnesses says \
         error[E0599]: no associated item named `X25519`"
    );
    assert_eq!(skip_headline("\nnot covered\n  more"), "not covered");
    assert_eq!(skip_headline(""), "");
}

/// A plan takes the request's typed values as they are: the range
/// parsed at the edge is the one measured, and a request that names
/// two libraries (or both forms of range) is refused before anything
/// is opened.
#[test]
fn a_plan_takes_the_typed_request() {
    let workspace = Workspace::new("/nonexistent/workspace");
    let rustls = Library::named("rustls").expect("rustls");
    let request = HistoryRequest {
        library: rustls,
        versions: Some(VersionRange::parse("0.23.40..=0.23.47").expect("range")),
        newest_patch: false,
        revs: None,
        every: None,
        tags: false,
        filters: Vec::new(),
        dir: None,
        target_dir: None,
    };
    let plan = Plan::resolve(&workspace, &request).expect("plan");
    assert_eq!(plan.library().name, "rustls");
    assert!(plan.measures() && plan.kind() == Kind::Published);
    assert!(matches!(&plan.source, Source::Published(range, false)
        if range.to_string() == "0.23.40..=0.23.47"));
    let stored = HistoryRequest {
        versions: None,
        ..request.clone()
    };
    assert!(!Plan::resolve(&workspace, &stored).expect("plan").measures());

    let revs = Revs {
        checkout: LibraryCheckout {
            library: Library::named("s2n-tls").expect("s2n-tls"),
            path: PathBuf::from("/nonexistent/s2n-tls"),
            spec: "s2n-tls=/nonexistent/s2n-tls".to_owned(),
        },
        from: "v1".to_owned(),
        to: "v2".to_owned(),
    };
    let both = HistoryRequest {
        revs: Some(revs.clone()),
        ..request.clone()
    };
    let error = Plan::resolve(&workspace, &both).err().expect("refused");
    assert!(error.to_string().contains("not both"), "{error}");
    let two_libraries = HistoryRequest {
        versions: None,
        revs: Some(revs),
        ..request
    };
    let error = Plan::resolve(&workspace, &two_libraries)
        .err()
        .expect("refused");
    assert!(
        error.to_string().contains("checkout of s2n-tls")
            && error.to_string().contains("history of rustls"),
        "{error}"
    );
}
