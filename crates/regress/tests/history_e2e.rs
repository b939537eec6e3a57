//! `regress history` end to end over two published versions of rustls,
//! which cargo downloads from crates.io like any dependency (the only test
//! that needs the registry; 0.23.46 is the one this workspace locks).
//!
//! It runs in a copy of this project, building into this workspace's own
//! cargo target folder, and checks that each version gets its file under
//! `baselines/history/rustls/` with a count of the measured path and its fingerprint,
//! that the project's `Cargo.lock` is untouched, that a second run measures
//! nothing, that `--markdown` prints the table from the files alone, and
//! that a range with no published version is refused with a clear message.

mod support;

use support::{project_without, regress, target_dir, valgrind_or_skip};

/// The committed histories, left out of the project copy: the test
/// measures into an empty store.
const STORED: &str = "baselines/history";

const HARNESS: &str = "rustls::x509_parse_chain";

#[test]
fn two_published_versions_of_rustls() {
    if !valgrind_or_skip("two_published_versions_of_rustls") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let project = project_without(dir.path(), &[STORED]);
    let lock = std::fs::read(project.join("Cargo.lock")).expect("lock");
    let target = target_dir();
    let args = [
        "history",
        "--library",
        "rustls",
        "--versions",
        "0.23.45..=0.23.46",
        "--harness",
        HARNESS,
        "--target-dir",
        target.to_str().expect("utf-8"),
    ];
    let output = regress(&project, &args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        std::fs::read(project.join("Cargo.lock")).expect("lock"),
        lock,
        "the project's lock is untouched"
    );
    for version in ["0.23.45", "0.23.46"] {
        let path = project.join(format!("{STORED}/rustls/{version}.json"));
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("a file per version"))
                .expect("JSON");
        let entry = &record["entries"][0];
        assert_eq!(
            entry["fingerprint"]["libraries"]["rustls"], version,
            "{record}"
        );
        let count = entry["paths"][HARNESS]["instructions"]
            .as_u64()
            .expect("a count");
        assert!(count > 1_000, "{record}");
        assert_eq!(
            entry["paths"].as_object().expect("paths").len(),
            1,
            "only the selected harness: {record}"
        );
    }
    let second: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(format!("{STORED}/rustls/0.23.46.json")))
            .expect("read"),
    )
    .expect("JSON");
    assert_eq!(second["entries"][0]["step"]["from"], "0.23.45");
    assert!(stdout.contains("| x509_parse_chain |"), "{stdout}");

    // Nothing is measured again.
    let again = regress(&project, &args);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("0 measured now") && stderr.contains("0 builds, 0 measurements"),
        "{stderr}"
    );

    // Versions the harnesses do not cover are reported and skipped, and
    // nothing is built for them (nor counted as a build).
    let uncovered = regress(
        &project,
        &[
            "history",
            "--library",
            "rustls",
            "--versions",
            "0.22.0..=0.22.1",
            "--target-dir",
            target.to_str().expect("utf-8"),
        ],
    );
    let stderr = String::from_utf8_lossy(&uncovered.stderr);
    assert_eq!(uncovered.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("0.22.0: skipped, rustls 0.22.0 is not covered")
            && stderr.contains("2 skipped; 0 builds, 0 measurements")
            && !stderr.contains("building"),
        "{stderr}"
    );
    assert!(!project.join(STORED).join("rustls/0.22.0.json").exists());

    // OpenSSL's versions are the openssl-src releases; 1.1.0 is refused
    // before anything is built, and --newest-patch keeps one of the line.
    let old = regress(
        &project,
        &[
            "history",
            "--library",
            "openssl",
            "--versions",
            "110.0.0..=110.0.7",
            "--newest-patch",
            "--target-dir",
            target.to_str().expect("utf-8"),
        ],
    );
    let stderr = String::from_utf8_lossy(&old.stderr);
    assert_eq!(old.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("published: 110.0.7+1.1.0i\n")
            && stderr.contains(
                "110.0.7+1.1.0i: skipped, openssl 110.0.7+1.1.0i is not covered; \
                 the harnesses cover 1.1.1, 3.x and 4.0"
            )
            && stderr.contains("1 skipped; 0 builds, 0 measurements")
            && !stderr.contains("building"),
        "{stderr}"
    );

    // The table from the files alone.
    let table = regress(&project, &["history", "--library", "rustls", "--markdown"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert_eq!(table.status.code(), Some(0));
    assert!(text.contains("| path | 0.23.45 | 0.23.46 |"), "{text}");

    // No version of the range was ever published.
    let none = regress(
        &project,
        &[
            "history",
            "--library",
            "rustls",
            "--versions",
            "0.23.900..=0.23.901",
        ],
    );
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert_eq!(none.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("crates.io has no version of rustls in 0.23.900..=0.23.901"),
        "{stderr}"
    );
}

#[test]
fn bad_history_input_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = project_without(dir.path(), &[STORED]);
    // A bad --library or --versions is refused as the arguments are parsed
    // (tests/cli.rs); here, what only a workspace can say.
    let output = regress(&project, &["history", "--library", "rustls"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("name what to measure"), "{stderr}");
    assert!(!project.join(STORED).exists() && !project.join("target").exists());
}
