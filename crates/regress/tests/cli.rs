//! The `regress` binary's handling of bad input, without Valgrind: every
//! failure exits 2 with a message that says what to do, and loses nothing.

use std::path::Path;
use std::process::{Command, Output};

use regress::fixtures;

/// A workspace in a temporary folder: `Cargo.lock`, `baselines/`,
/// `perf_outputs/`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("Cargo.lock"), "version = 4\n").expect("lock");
    std::fs::create_dir(dir.path().join("baselines")).expect("baselines");
    std::fs::create_dir(dir.path().join("perf_outputs")).expect("perf_outputs");
    dir
}

fn regress(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_regress"))
        .args(args)
        .env("REGRESS_ROOT", root)
        .env_remove("REGRESS_VALGRIND")
        .output()
        .expect("run regress")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write_record(root: &Path, harness: &str, instructions: u64) {
    let record = fixtures::measurement(harness, instructions, None);
    let path = root
        .join("perf_outputs")
        .join(format!("{}.json", harness.replace("::", ".")));
    std::fs::write(path, serde_json::to_string(&record).expect("json")).expect("write");
}

#[test]
fn bless_without_measurements_says_how_to_measure() {
    let root = workspace();
    let output = regress(root.path(), &["bless"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("no measurements to bless"), "{message}");
    assert!(
        message.contains("ENABLE_VALGRIND=true cargo test"),
        "{message}"
    );
}

#[test]
fn bless_writes_once_then_reports_it_already_holds() {
    let root = workspace();
    write_record(root.path(), "demo::path", 1_234_567);
    let first = regress(root.path(), &["bless"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(String::from_utf8_lossy(&first.stdout)
        .contains("created baselines/demo.path.json with 1,234,567"));
    let baseline =
        std::fs::read_to_string(root.path().join("baselines/demo.path.json")).expect("baseline");
    assert!(baseline.contains("\"instructions\": 1234567"), "{baseline}");

    let second = regress(root.path(), &["bless", "--harness", "demo"]);
    assert!(second.status.success());
    assert!(String::from_utf8_lossy(&second.stdout).contains("already holds 1,234,567"));
}

#[test]
fn bless_refuses_to_overwrite_a_corrupt_baseline() {
    let root = workspace();
    write_record(root.path(), "demo::path", 42_000);
    let path = root.path().join("baselines/demo.path.json");
    std::fs::write(&path, "{ \"schema\": 1, \"harness\": ").expect("write");
    let output = regress(root.path(), &["bless"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("not valid JSON"), "{message}");
    assert!(message.contains("git checkout --"), "{message}");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "{ \"schema\": 1, \"harness\": ",
        "the corrupt file is left for the user to inspect"
    );
}

#[test]
fn a_corrupt_measurement_record_is_named() {
    let root = workspace();
    std::fs::write(root.path().join("perf_outputs/demo.path.json"), "[]").expect("write");
    let output = regress(root.path(), &["bless"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("demo.path.json is not a valid measurement record"),
        "{message}"
    );
}

#[test]
fn a_missing_valgrind_gives_the_install_hint() {
    let root = workspace();
    let output = regress(root.path(), &["--valgrind", "/nonexistent/valgrind", "run"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("valgrind was not found at /nonexistent/valgrind"),
        "{message}"
    );
    assert!(message.contains("apt-get install valgrind"), "{message}");
}

#[test]
fn noise_needs_at_least_two_runs() {
    let root = workspace();
    let output = regress(root.path(), &["noise", "--runs", "1"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("--runs") && message.contains("2.."),
        "{message}"
    );
}

#[test]
fn outside_a_workspace_the_error_says_where_it_looked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_regress"))
        .arg("bless")
        .current_dir(dir.path())
        .env_remove("REGRESS_ROOT")
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("run regress");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no workspace root"),
        "{}",
        stderr(&output)
    );
}

/// `regress readme` rewrites only the marked sections of every results page
/// from `baselines/`, and `--check` says (exit 1) when one is out of date.
#[test]
fn generated_tables_follow_the_baselines() {
    let root = workspace();
    // Valgrind 3.24 entries are markers entries, the ones the tables show.
    let file = fixtures::baseline("s2n_tls::handshake_rsa4096", &[("3.24.0", 76_880_673)]);
    std::fs::write(
        root.path().join("baselines/s2n_tls.handshake_rsa4096.json"),
        file.to_json().expect("json"),
    )
    .expect("write baseline");
    std::fs::create_dir_all(root.path().join("docs/results")).expect("docs/results");
    let stale = |sections: &[&str]| {
        sections
            .iter()
            .map(|s| {
                format!(
                    "<!-- regress readme: {s} -->\nstale 1,234\n<!-- /regress readme: {s} -->\n"
                )
            })
            .collect::<Vec<_>>()
            .join("prose\n")
    };
    // Every page with every section the runner generates, all stale.
    let pages: Vec<(&str, String)> = regress::report::readme::PAGES
        .iter()
        .map(|page| (page.path, stale(page.sections)))
        .collect();
    for (page, sections) in &pages {
        std::fs::write(root.path().join(page), format!("# title\n{sections}end\n"))
            .expect("write page");
    }

    let check = regress(root.path(), &["readme", "--check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert!(stderr(&check).contains("cargo run -p regress -- readme"));
    assert!(
        stderr(&check).contains("docs/results/cpu-profiles.md: the tables disagree"),
        "{}",
        stderr(&check)
    );

    let write = regress(root.path(), &["readme"]);
    assert!(write.status.success(), "{}", stderr(&write));
    let read = |page: &str| std::fs::read_to_string(root.path().join(page)).expect("read page");
    let libraries = read("docs/results/libraries.md");
    assert!(
        libraries.contains("| handshake_rsa4096 | 76,880,673 |"),
        "{libraries}"
    );
    // One profile's entries only: the profile table says so instead of
    // printing a table of one column.
    assert!(
        read("docs/results/cpu-profiles.md")
            .contains("No baseline has entries of a CPU profile other than the default."),
        "{}",
        read("docs/results/cpu-profiles.md")
    );
    assert!(
        read("docs/results/history.md")
            .contains("No published version of s2n-tls is measured yet."),
        "{}",
        read("docs/results/history.md")
    );
    for (page, _) in &pages {
        let text = read(page);
        assert!(!text.contains("stale"), "{page}: {text}");
        assert!(
            text.starts_with("# title\n") && text.ends_with("end\n"),
            "{page}: {text}"
        );
    }
    assert_eq!(
        regress(root.path(), &["readme", "--check"]).status.code(),
        Some(0)
    );

    // A page that lost a section's markers is an error that names them,
    // not a section silently unchecked.
    std::fs::write(
        root.path().join("docs/results/cpu-profiles.md"),
        "# title\n",
    )
    .expect("write page");
    let broken = regress(root.path(), &["readme", "--check"]);
    assert_eq!(broken.status.code(), Some(2), "{}", stderr(&broken));
    assert!(
        stderr(&broken).contains("<!-- regress readme: cpu-profiles -->"),
        "{}",
        stderr(&broken)
    );
}

/// `regress constant-flow` refuses a hostile allowlist before it measures
/// anything, and bad arguments before it reads anything.
#[test]
fn constant_flow_refuses_a_hostile_allowlist_and_bad_arguments() {
    let root = workspace();
    let allowlist = root.path().join("baselines/constant-flow-allowlist.toml");
    std::fs::write(
        &allowlist,
        "[[allow]]\noperation = \"a::b\"\nbetween = [\"ok\", \"ok\"]\nfunctions = [\"*\"]\nreason = \"anything at all, please\"\n",
    )
    .expect("write");
    let output = regress(root.path(), &["constant-flow"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("would allow everything within a group"),
        "{}",
        stderr(&output)
    );
    for args in [
        &["constant-flow", "--runs", "0"][..],
        &["constant-flow", "--runs", "101"],
        &["constant-flow", "--operation", ""],
    ] {
        let output = regress(root.path(), args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn coverage_says_what_to_run_first_and_refuses_an_unknown_library() {
    let root = workspace();
    let output = regress(root.path(), &["coverage"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("no line data"), "{message}");
    assert!(message.contains("`regress run`"), "{message}");

    let output = regress(root.path(), &["coverage", "--library", "boringssl"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("s2n-tls, aws-lc, rustls, openssl"),
        "{message}"
    );
}

#[test]
fn coverage_reads_the_lines_files_of_perf_outputs() {
    let root = workspace();
    // A library file on disk, one of whose two functions a harness ran.
    let source = root.path().join("src/s2n-tls-sys-0.3.47/lib/tls/s2n_psk.c");
    std::fs::create_dir_all(source.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &source,
        "int s2n_ran(void)\n{\n    return 1;\n}\nint s2n_idle(void)\n{\n    return 2;\n}\n",
    )
    .expect("write");
    let lines = serde_json::json!({
        "schema": 1,
        "harness": "s2n_tls::demo",
        "files": { source.to_str().expect("utf-8"): { "s2n_ran": [3] } }
    });
    std::fs::write(
        root.path().join("perf_outputs/s2n_tls.demo.lines.json"),
        lines.to_string(),
    )
    .expect("write");
    let output = regress(
        root.path(),
        &["coverage", "--library", "s2n-tls", "--format", "json"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let file = &report["libraries"][0]["files"][0];
    assert_eq!(file["file"], "tls/s2n_psk.c");
    assert_eq!(file["functions_run"][0]["name"], "s2n_ran");
    assert_eq!(file["functions_not_run"][0]["name"], "s2n_idle");

    let output = regress(root.path(), &["coverage", "--format", "markdown"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let markdown = String::from_utf8_lossy(&output.stdout);
    assert!(markdown.contains("1: `s2n_idle`"), "{markdown}");
}

/// `--watch` watches a library checkout's working tree: it needs
/// `--library`, and a HEAD revision (which would never change) is refused,
/// before anything is built.
#[test]
fn watch_needs_a_library_and_the_working_tree() {
    let root = workspace();
    for args in [
        &["diff", "--watch", "main"][..],
        &[
            "diff",
            "--library",
            "s2n-tls=/nonexistent",
            "--watch",
            "main",
            "HEAD",
        ],
        &[
            "diff",
            "--library",
            "s2n-tls=/nonexistent",
            "--watch",
            "--shard",
            "1/2",
            "main",
        ],
    ] {
        let output = regress(root.path(), args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("--watch"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// `regress history` reads `--library` and `--versions` as its arguments
/// are parsed: run where no workspace is (which any command past parsing
/// would refuse first), a library regress does not know and a bad range
/// are still refused in their own words. A `--library` whose form does not
/// go with the range is refused before anything is created.
#[test]
fn history_refuses_a_bad_library_or_range_as_it_parses() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (args, expected) in [
        (
            &[
                "history",
                "--library",
                "boringssl",
                "--versions",
                "1.0.0..=1.0.1",
            ][..],
            "not a library regress knows (s2n-tls, rustls, aws-lc-rs, openssl)",
        ),
        (
            &["history", "--library", "boringssl=/x", "--revs", "a..b"],
            "that library is not one regress knows",
        ),
        (
            &["history", "--library", "rustls", "--versions", "0.23"],
            "no `..=` or `..` between two versions",
        ),
        (
            &[
                "history",
                "--library",
                "rustls",
                "--versions",
                "0.23.46..=0.23.40",
            ],
            "it is empty",
        ),
        (
            &["history", "--library", "rustls=/x", "--revs", "main"],
            "has no `..` between two revisions",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_regress"))
            .args(args)
            .current_dir(dir.path())
            .env_remove("REGRESS_ROOT")
            .env_remove("CARGO_MANIFEST_DIR")
            .output()
            .expect("run regress");
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(expected), "{args:?}: {message}");
        assert!(
            !message.contains("no workspace root"),
            "{args:?}: {message}"
        );
    }

    let root = workspace();
    for (args, expected) in [
        (
            &[
                "history",
                "--library",
                "rustls=/x",
                "--versions",
                "0.23.40..=0.23.47",
            ][..],
            "give the library's name alone (--library rustls)",
        ),
        (
            &["history", "--library", "rustls", "--revs", "a..b"],
            "no `=` between the library's name and its checkout",
        ),
    ] {
        let output = regress(root.path(), args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(expected), "{args:?}: {message}");
    }
    assert!(!root.path().join("baselines/history").exists());
    assert!(!root.path().join("target").exists());
}
