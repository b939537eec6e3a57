//! `regress diff --library` end to end, on git repositories in s2n-tls's
//! and rustls's real layouts (built by `regress-source`'s test fixtures
//! from the crates in the cargo registry; no upstream checkout is used).
//!
//! Commit 1 is the release this workspace locks; commit 2 adds a known
//! loop that only application-data sending runs (s2n-tls: a `noinline` C
//! function called from `s2n_sendv_with_offset`; rustls: an
//! `#[inline(never)]` Rust function called from `send_appdata_encrypt`).
//! The diff measures the library's paths [`MEASURED`] names (every record
//! path, KeyUpdate, a handshake family, the resumptions; the others'
//! libraries left out as not reached). It must name that function on every
//! record harness with exactly its cost, show no changed function outside
//! glibc (and, for rustls, the rustls crate itself) on the other harnesses
//! once names are normalised (a few instructions of layout noise at most),
//! exit with the regression code, and leave the library's repository byte
//! for byte as it was (work tree, index, stash, untracked files).
//!
//! The diff runs in a copy of this project (its `perf_outputs/` and
//! `target/regress-source/` are the copy's) and builds into this
//! workspace's own cargo target folder, so the dependencies that do not
//! change (aws-lc, OpenSSL's bindings) are already compiled.

#[path = "../../source/tests/common/mod.rs"]
mod common;
#[path = "library/spin.rs"]
mod spin;
mod support;

use std::path::Path;

use common::snapshot::Snapshot;

/// The exit code of a regression beyond its threshold.
const EXIT_REGRESSED: i32 = 1;
/// The exit code of an error.
const EXIT_ERROR: i32 = 2;

use serde_json::json;
use spin::{rustls_with_a_spin, s2n_tls_with_a_spin, RUSTLS_SPIN_FUNCTION, SPIN, SPIN_FUNCTION};
use support::workflow::{pull_request, workflow, workflow_run, workflow_runner, Conclusion};
use support::{assert_kept_and_the_same, project, regress, target_dir, valgrind_or_skip};

fn report(project: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(project.join("perf_outputs/diff/report.json"))
        .expect("report.json");
    serde_json::from_str(&text).expect("report JSON")
}

/// Runs `regress diff --library SPEC HEAD~1 HEAD` in `project`, checks that
/// the library's repository at `library` is still as `before` recorded it
/// and that the diff exited with the regression code, and returns its
/// standard output and `report.json`.
fn diff_head_against_its_parent(
    project: &Path,
    spec: &str,
    library: &Path,
    before: &Snapshot,
) -> (String, String, serde_json::Value) {
    let target = target_dir();
    let mut args = vec![
        "diff",
        "--library",
        spec,
        "HEAD~1",
        "HEAD",
        "--target-dir",
        target.to_str().expect("utf-8"),
    ];
    for filter in MEASURED {
        args.extend(["--harness", filter]);
    }
    let output = regress(project, &args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    Snapshot::take(library).assert_same(before);
    assert_eq!(
        output.status.code(),
        Some(EXIT_REGRESSED),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout.into_owned(), stderr.into_owned(), report(project))
}

/// Paths other than the record paths whose counted run writes a few
/// application records (a KeyUpdate's record each way; the attacker's
/// client writing its 32 one-byte records of the key-update flood): the
/// spin is on every write, so they must show it too, a whole number of
/// calls of its cost.
const WRITE_RECORDS_IN_RUN: &[&str] = &["::key_update", "::hostile_key_update_flood_attacker"];

/// For a path of [`WRITE_RECORDS_IN_RUN`]: a problem unless `spin_function`
/// is named once with a delta of a positive whole number of `per_call`.
fn spin_in_a_few_writes(
    harness: &serde_json::Value,
    spin_function: &str,
    per_call: u64,
) -> Option<String> {
    let name = harness["harness"].as_str().unwrap_or("?");
    let functions = harness["functions"].as_array()?;
    let spin: Vec<&serde_json::Value> = functions
        .iter()
        .filter(|f| f["function"] == spin_function)
        .collect();
    let [spin] = spin.as_slice() else {
        return Some(format!("{name}: the spin is not named once"));
    };
    let delta = spin["delta"].as_u64().unwrap_or(0);
    (delta == 0 || delta % per_call != 0)
        .then(|| format!("{name}: {delta} is not a whole number of calls of {per_call}"))
}

/// The paths the diffs of these tests measure (`--harness`, each a part of
/// a name): every record path, where the spin runs on every write; the
/// KeyUpdate paths, which write a few records; and, for the check that
/// nothing else moved beyond layout noise, a handshake family and the
/// resumptions. Every library has paths of these names, so the diff still
/// has other libraries' harnesses to leave out as not reached (the report's
/// not-measured groups). Measuring every path of the library on both sides
/// made this test grow with each path added (38 s2n-tls paths: 76
/// measurements of 1.76 billion counted instructions, where these take 30
/// of 0.37 billion), while the gate measures them all anyway.
const MEASURED: &[&str] = &[
    "record_",
    "key_update",
    "handshake_ecdsa_p256",
    "session_resumption",
];

/// How many harnesses of a library the workspace has whose name
/// [`MEASURED`] selects: its committed baselines, one file per harness
/// (`baselines/<library>.<path>.json`), so the count follows the registry
/// instead of a number copied here.
fn committed_harnesses(file_prefix: &str) -> usize {
    let baselines = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../baselines");
    std::fs::read_dir(&baselines)
        .expect("the committed baselines")
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix(file_prefix)
                .and_then(|path| path.strip_suffix(".json"))
                .is_some_and(|path| MEASURED.iter().any(|filter| path.contains(filter)))
        })
        .count()
}

/// The measured harnesses of `report`: exactly `count`, all named
/// `prefix…`, with every group of `skipped` reported as not measured.
fn only_measured<'a>(
    report: &'a serde_json::Value,
    prefix: &str,
    count: usize,
    skipped: &[&str],
) -> &'a [serde_json::Value] {
    let harnesses = report["harnesses"].as_array().expect("harnesses");
    let names: Vec<&str> = harnesses
        .iter()
        .map(|h| h["harness"].as_str().expect("name"))
        .collect();
    assert!(
        names.iter().all(|name| name.starts_with(prefix)),
        "only the harnesses the library reaches are measured: {names:?}"
    );
    assert_eq!(names.len(), count, "{names:?}");
    let not_measured = &report["sources"]["not_measured"];
    for group in skipped {
        assert!(
            not_measured
                .as_array()
                .expect("list")
                .iter()
                .any(|g| g == group),
            "{group} not measured: {not_measured}"
        );
    }
    harnesses
}

/// Records write 1 MiB in 16 KiB or 1 KiB writes: the calls of a function
/// that runs once per write.
fn writes(harness: &str) -> u64 {
    if harness.ends_with("_16k") {
        64
    } else {
        1024
    }
}

/// The most a harness the spin does not run on may move, summed over its
/// functions: the gate's smallest threshold (±1,000), and a thirtieth of
/// one call of the s2n-tls spin (3 * 10,000 + 5), so one call hiding
/// anywhere is still a finding, whatever the machine's layout noise.
const LAYOUT_NOISE: u64 = 1_000;

/// A harness the spin does not run on, checked for anything beyond layout
/// noise. The spin moves the library's code and data by a few bytes, and
/// glibc's string functions count a few instructions more or less on the
/// moved strings. Measured on s2n-tls: config_build +41 in
/// `__strncmp_avx2` and `__memcmp_avx2_movbe` here; on the CI runner every
/// handshake +18 to +31 in `__strcmp_avx2` and `__memcmp_avx2_movbe`,
/// config_build -26. A Rust library is compiled anew with the spin in it,
/// and rustc may then split its code generation units and inline a little
/// differently elsewhere in the same crate: `also` names that crate's
/// origin, where the same small noise is allowed (measured on rustls:
/// session_resumption -31 in `check_binder`'s inlined `subtle` compare).
/// How much depends on where the strings land, so on the machine: the CI
/// runner once gave config_build -58 net, 124 in all (`__memcmp_avx2_movbe`
/// -55, `__strncmp_avx2` -36, `__strcasecmp_avx2` +33). Anything in another
/// origin, or more than [`LAYOUT_NOISE`] instructions, is a finding.
fn beyond_layout_noise(harness: &serde_json::Value, also: Option<&str>) -> Option<String> {
    let name = harness["harness"].as_str().expect("name");
    let functions = harness["functions"].as_array().expect("functions");
    let noise: i64 = functions
        .iter()
        .map(|f| f["delta"].as_i64().expect("delta").abs())
        .sum();
    let allowed = functions.iter().all(|f| {
        let in_glibc = f["origin"] == "runtime"
            && f["file"]
                .as_str()
                .is_some_and(|file| file.starts_with("./"));
        in_glibc || also.is_some_and(|origin| f["origin"] == origin)
    });
    let beyond = |d: i64| d.unsigned_abs() > LAYOUT_NOISE;
    (!allowed || beyond(noise) || harness["delta"].as_i64().is_none_or(beyond)).then(|| {
        format!(
            "{name}: more than layout noise (delta {}): {:?}",
            harness["delta"],
            &functions[..functions.len().min(5)]
        )
    })
}

#[test]
fn s2n_tls_from_its_repository_finds_exactly_the_spin() {
    if !valgrind_or_skip("s2n_tls_from_its_repository_finds_exactly_the_spin") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let project = project(dir.path());
    let s2n = s2n_tls_with_a_spin(dir.path(), "");
    // The same commit also changes a function no harness runs (none
    // renegotiates): the diff must name it as a blind spot, and not the
    // spin's functions, which the record harnesses run.
    common::replace_in(
        &s2n.join("tls/s2n_renegotiate.c"),
        "    POSIX_GUARD_RESULT(s2n_renegotiate_validate(conn));\n",
        "    POSIX_GUARD_RESULT(s2n_renegotiate_validate(conn));\n    POSIX_ENSURE_REF(conn);\n",
    );
    common::git(&s2n, &["commit", "-q", "-a", "--amend", "--no-edit"]);
    // What a library maintainer has lying around: an edit, an untracked
    // file, a stash. HEAD is named, so none of it is measured.
    std::fs::write(s2n.join("notes.txt"), "untracked\n").expect("write");
    common::write(&s2n.join("api/s2n.h.orig"), "scratch\n");
    std::fs::write(s2n.join("CMakeLists.txt"), "# stashed\n").expect("write");
    common::git(&s2n, &["stash", "push", "-q", "--", "CMakeLists.txt"]);
    common::replace_in(&s2n.join("tls/s2n_send.c"), "regress test", "edited");
    let before = Snapshot::take(&s2n);

    let spec = format!("s2n-tls={}", s2n.display());
    let (stdout, _, report) = diff_head_against_its_parent(&project, &spec, &s2n, &before);
    let harnesses = only_measured(
        &report,
        "s2n_tls::",
        committed_harnesses("s2n_tls."),
        &["openssl::", "rustls::", "aws_lc_rs::", "calibration::"],
    );

    // Every finding is collected first, so a failure shows them all with
    // the diff's own table.
    let mut problems = Vec::new();
    let mut per_call = None;
    for harness in harnesses {
        let name = harness["harness"].as_str().expect("name");
        let functions = harness["functions"].as_array().expect("functions");
        if name.contains("::record_") {
            let spin: Vec<&serde_json::Value> = functions
                .iter()
                .filter(|f| f["function"] == SPIN_FUNCTION)
                .collect();
            let [spin] = spin.as_slice() else {
                problems.push(format!("{name}: the spin is not named once: {functions:?}"));
                continue;
            };
            if spin["file"] != "tls/s2n_send.c"
                || spin["origin"] != "tls-library"
                || spin["base"] != 0
            {
                problems.push(format!("{name}: {spin}"));
            }
            // One call per record, one record per write.
            let calls = writes(name);
            let delta = spin["delta"].as_u64().expect("delta");
            let cost = delta / calls;
            // `mov`, 3 instructions per iteration, `ret`, and the frame
            // pointer's push, move and pop (s2n-tls keeps frame pointers).
            if delta % calls != 0 || cost != 3 * SPIN + 5 {
                problems.push(format!(
                    "{name}: {delta} is not {calls} calls of 3 * {SPIN} + 5"
                ));
            }
            if *per_call.get_or_insert(cost) != cost {
                problems.push(format!("{name}: {cost} per call, others {per_call:?}"));
            }
            if harness["verdict"] != "regressed" {
                problems.push(format!("{name}: {}", harness["verdict"]));
            }
        } else if WRITE_RECORDS_IN_RUN.iter().any(|path| name.ends_with(path)) {
            problems.extend(spin_in_a_few_writes(harness, SPIN_FUNCTION, 3 * SPIN + 5));
        } else if let Some(problem) = beyond_layout_noise(harness, None) {
            problems.push(problem);
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n\nstdout:\n{stdout}",
        problems.join("\n")
    );
    assert!(stdout.contains("s2n-tls: base HEAD~1"), "{stdout}");
    assert_blind_spot(
        &report,
        &stdout,
        &["tls/s2n_renegotiate.c", "tls/s2n_send.c"],
        ("tls/s2n_renegotiate.c", "s2n_renegotiate"),
    );

    // The same diff again: both sides' programs are kept builds (same
    // sources, compilers and settings), so nothing is built, and the
    // deltas are the same.
    let (_, progress, report_again) = diff_head_against_its_parent(&project, &spec, &s2n, &before);
    assert_kept_and_the_same(&progress, &report, &report_again);
}

/// The diff's blind spots are known, consider exactly `files`, and name
/// exactly `spot` (file, function) on HEAD and nothing on BASE.
fn assert_blind_spot(report: &serde_json::Value, stdout: &str, files: &[&str], spot: (&str, &str)) {
    let blind = &report["blind_spots"];
    assert!(blind["unknown"].is_null(), "{blind:#}");
    assert_eq!(blind["considered"], serde_json::json!(files), "{blind:#}");
    assert_eq!(blind["base"], serde_json::json!([]), "{blind:#}");
    let named: Vec<(&str, &str)> = blind["head"]
        .as_array()
        .expect("head's blind spots")
        .iter()
        .map(|s| {
            (
                s["file"].as_str().unwrap_or_default(),
                s["function"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(named, [spot], "{blind:#}");
    assert!(
        blind["changed"].as_u64().is_some_and(|n| n >= 2),
        "the spin's functions are changed and run: {blind:#}"
    );
    assert!(
        stdout.contains("1 changed function is not run by any harness"),
        "{stdout}"
    );
}

#[test]
fn rustls_from_its_repository_finds_exactly_the_spin() {
    if !valgrind_or_skip("rustls_from_its_repository_finds_exactly_the_spin") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let project = project(dir.path());
    let rustls = rustls_with_a_spin(dir.path());
    // The same commit also changes a QUIC function, which no harness runs.
    common::replace_in(
        &rustls.join("rustls/src/quic.rs"),
        "        pub fn reject_early_data(&mut self) {\n",
        "        pub fn reject_early_data(&mut self) {\n            // regress test: no harness runs this\n",
    );
    common::git(&rustls, &["commit", "-q", "-a", "--amend", "--no-edit"]);
    // The pull request's head, where GitHub keeps it.
    let head = common::git(&rustls, &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let base = common::git(&rustls, &["rev-parse", "HEAD~1"])
        .trim()
        .to_owned();
    common::git(&rustls, &["update-ref", "refs/pull/12/head", &head]);
    // An untracked file and an uncommitted edit in the repository the
    // workflow clones: neither is measured, and neither is touched.
    std::fs::write(rustls.join("notes.txt"), "untracked\n").expect("write");
    common::replace_in(
        &rustls.join("rustls/src/common_state.rs"),
        "regress test",
        "edited",
    );
    let before = Snapshot::take(&rustls);

    // The pull request runs rustls's workflow, which calls this project's
    // library-diff.yml at a pinned commit (docs/ci-adoption.md), then the
    // comment workflow on `workflow_run`.
    let pinned = common::git(&project, &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let mut runner = workflow_runner(dir.path());
    runner
        .repository("owner/rustls", &rustls)
        .repository("owner/tls-regress", &project);
    let inputs = json!({
        "library": "rustls",
        "regress-repository": "owner/tls-regress",
        "regress-ref": pinned,
        "harness": MEASURED.join(" "),
    });
    let diff = runner.run(
        &workflow("library-diff.yml"),
        json!({
            "github": pull_request("owner/rustls", 12, &base, &head),
            "inputs": inputs,
        }),
    );
    Snapshot::take(&rustls).assert_same(&before);
    let describe = diff.describe();
    let job = diff.job("diff");
    // A regression: reported and uploaded, then the check fails.
    assert_eq!(job.conclusion, Conclusion::Failure, "{describe}");
    let step = job.step("Diff the merge base and the head of the library");
    assert_eq!(step.conclusion, Conclusion::Success, "{describe}");
    assert_eq!(
        job.step("Verdict").conclusion,
        Conclusion::Failure,
        "{describe}"
    );
    assert!(job.summary.contains("`rustls::record_"), "{describe}");
    let stdout = step.log.clone();
    let report = report(&runner.workspace().join("regress"));

    let comment = runner.run(
        &workflow("library-diff-comment.yml"),
        json!({
            "github": workflow_run("owner/rustls", diff.id, "failure", &head, &base),
            "inputs": {
                "regress-repository": "owner/tls-regress",
                "regress-ref": pinned,
            },
        }),
    );
    let describe = comment.describe();
    assert_eq!(
        comment.job("comment").conclusion,
        Conclusion::Success,
        "{describe}"
    );
    let data = runner.temp().join("comment");
    assert_eq!(
        std::fs::read_to_string(data.join("pr-number")).expect("pr-number"),
        "12\n"
    );
    let body = std::fs::read_to_string(data.join("body.md")).expect("the rendered comment");
    assert!(body.contains("rustls::record_"), "{body}");
    assert!(body.contains(RUSTLS_SPIN_FUNCTION), "{body}");

    let harnesses = only_measured(
        &report,
        "rustls::",
        committed_harnesses("rustls."),
        &["openssl::", "s2n_tls::", "aws_lc_rs::", "calibration::"],
    );

    let mut problems = Vec::new();
    let mut records = 0;
    for harness in harnesses {
        let name = harness["harness"].as_str().expect("name");
        let functions = harness["functions"].as_array().expect("functions");
        if WRITE_RECORDS_IN_RUN.iter().any(|path| name.ends_with(path)) {
            problems.extend(spin_in_a_few_writes(
                harness,
                RUSTLS_SPIN_FUNCTION,
                3 * SPIN + 2,
            ));
            continue;
        }
        if !name.contains("::record_") {
            problems.extend(beyond_layout_noise(harness, Some("rust-tls-crate")));
            continue;
        }
        records += 1;
        let spin: Vec<&serde_json::Value> = functions
            .iter()
            .filter(|f| f["function"] == RUSTLS_SPIN_FUNCTION)
            .collect();
        let [spin] = spin.as_slice() else {
            problems.push(format!("{name}: the spin is not named once: {functions:?}"));
            continue;
        };
        if spin["file"] != "rustls/src/common_state.rs"
            || spin["origin"] != "rust-tls-crate"
            || spin["base"] != 0
        {
            problems.push(format!("{name}: {spin}"));
        }
        // One call per write: `mov`, 3 instructions per iteration and
        // `ret` (no frame pointer in a release build of Rust).
        let calls = writes(name);
        let delta = spin["delta"].as_u64().expect("delta");
        if delta != calls * (3 * SPIN + 2) {
            problems.push(format!(
                "{name}: {delta} is not {calls} calls of 3 * {SPIN} + 2"
            ));
        }
        if harness["verdict"] != "regressed" {
            problems.push(format!("{name}: {}", harness["verdict"]));
        }
    }
    assert_eq!(records, 6, "the six record paths are measured");
    assert!(
        problems.is_empty(),
        "{}\n\nstdout:\n{stdout}",
        problems.join("\n")
    );
    assert!(
        stdout.contains("rustls: base ") && stdout.contains(&base[..12]),
        "{stdout}"
    );
    assert_blind_spot(
        &report,
        &stdout,
        &[
            "rustls/src/common_state.rs",
            "rustls/src/lib.rs",
            "rustls/src/quic.rs",
        ],
        ("rustls/src/quic.rs", "reject_early_data"),
    );
}

#[test]
fn bad_library_input_is_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = project(dir.path());
    let s2n = common::repos::s2n_tls(dir.path(), "0.3.47");
    std::fs::write(s2n.join("dirty.txt"), "untracked\n").expect("write");
    let before = Snapshot::take(&s2n);
    let spec = format!("s2n-tls={}", s2n.display());
    let not_a_repo = dir.path().join("plain");
    std::fs::create_dir(&not_a_repo).expect("mkdir");
    let plain = format!("s2n-tls={}", not_a_repo.display());
    let wrong_library = format!("rustls={}", s2n.display());
    for (args, expected) in [
        (
            vec!["diff", "--library", &plain, "HEAD"],
            "is not a git checkout",
        ),
        (
            vec!["diff", "--library", &wrong_library, "HEAD"],
            "does not look like a checkout of rustls",
        ),
        (
            vec!["diff", "--library", "boringssl=/x", "HEAD"],
            "not one regress knows",
        ),
        (
            vec!["diff", "--library", &spec, "no-such-revision"],
            "\"no-such-revision\" does not name a commit",
        ),
        (
            vec!["diff", "--library", &spec, "--", "--output=/tmp/x"],
            "starts with `-`",
        ),
        (
            vec!["diff", "--library", &spec, "--library", &spec, "HEAD"],
            "given twice",
        ),
        (vec!["diff", "--library", &spec], "name the BASE revision"),
    ] {
        let output = regress(&project, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(EXIT_ERROR), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    Snapshot::take(&s2n).assert_same(&before);
    assert!(
        !project.join("target").exists() && !project.join("perf_outputs/diff").exists(),
        "nothing is created for a refused diff"
    );
}
