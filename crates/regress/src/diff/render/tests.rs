use super::*;
use crate::compare::FunctionDelta;
use crate::compare::Origin;
use crate::diff::report::tests::report;
use crate::diff::report::SideFingerprints;
use crate::diff::shard::Shard;
use crate::fixtures::name;
use crate::judge::Threshold;

fn spin_report() -> DiffReport {
    let functions = vec![FunctionDelta {
        file: "harnesses/src/calibration.rs".into(),
        function: "harnesses::calibration::spin".into(),
        origin: Origin::Harness,
        base: 6_000_000,
        head: 6_300_000,
        delta: 300_000,
    }];
    let mut regressed = HarnessDiff::compared(
        &name("calibration::spin_2m"),
        6_000_027,
        6_300_027,
        Threshold::default(),
        functions,
    );
    regressed.annotated_diff = Some("perf_outputs/diff/calibration.spin_2m.diff.txt".into());
    let same = HarnessDiff::compared(
        &name("calibration::spin_1m"),
        3_000_027,
        3_000_027,
        Threshold::default(),
        Vec::new(),
    );
    let added = HarnessDiff::one_sided(
        &name("rustls::handshake"),
        None,
        Some(76_533_873),
        Threshold::default(),
    );
    report(vec![regressed, same, added], Vec::new())
}

/// A regressed hostile-peer path is named in those words in the
/// terminal and the comment; a regressed well-behaved path, or a
/// hostile one that did not regress, is not.
#[test]
fn a_hostile_path_that_regressed_says_what_a_peer_can_make_a_server_pay() {
    let harness = |name_: &str, base: u64, head: u64| {
        HarnessDiff::compared(&name(name_), base, head, Threshold::default(), Vec::new())
    };
    let calm = report(
        vec![
            harness("s2n_tls::handshake_rsa4096", 1_000_000, 2_000_000),
            harness("openssl::hostile_hello_retry", 80_000, 80_000),
        ],
        Vec::new(),
    );
    assert!(!text(&calm).contains(HOSTILE_WORDS));
    assert!(!markdown(&calm).contains("hostile peer"));
    let raised = report(
        vec![
            harness("s2n_tls::handshake_rsa4096", 1_000_000, 1_000_000),
            harness("openssl::hostile_hello_retry", 80_000, 160_000),
        ],
        Vec::new(),
    );
    assert!(
        text(&raised).contains(
            "this change raises what a hostile peer can make a server pay: \
             openssl::hostile_hello_retry (+100.00%)"
        ),
        "{}",
        text(&raised)
    );
    let md = markdown(&raised);
    assert!(
        md.contains(
            "> [!CAUTION]\n> This change raises what a hostile peer can make a server pay: \
             `openssl::hostile_hello_retry` (+100.00%)."
        ),
        "{md}"
    );
    // Many at once: ten named, the rest counted.
    let many = report(
        (0..12)
            .map(|n| harness(&format!("rustls::hostile_p{n:02}"), 1_000_000, 2_000_000))
            .collect(),
        Vec::new(),
    );
    assert!(
        text(&many).contains("rustls::hostile_p09 (+100.00%), 2 more"),
        "{}",
        text(&many)
    );
}

#[test]
fn text_has_the_table_and_the_functions() {
    let text = text(&spin_report());
    let row = |name: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name} in\n{text}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(
        row("calibration::spin_2m"),
        [
            "calibration::spin_2m",
            "6,000,027",
            "6,300,027",
            "+300,000",
            "+5.00%",
            "±3,000",
            "REGRESSED",
            "-"
        ]
    );
    assert_eq!(
        row("calibration::spin_1m"),
        [
            "calibration::spin_1m",
            "3,000,027",
            "3,000,027",
            "0",
            "0.00%",
            "±1,500",
            "unchanged",
            "-"
        ]
    );
    assert_eq!(
        row("rustls::handshake"),
        [
            "rustls::handshake",
            "-",
            "76,533,873",
            "-",
            "-",
            "-",
            "added",
            "-"
        ]
    );
    assert!(text.contains("by origin: harness +300,000"), "{text}");
    assert!(
        text.contains(
            "    +300,000  harness          harnesses::calibration::spin  \
             (harnesses/src/calibration.rs)"
        ),
        "{text}"
    );
    assert!(
        text.contains("a harness regressed beyond its threshold"),
        "{text}"
    );
}

/// A report at the limits `diff-comment` accepts (10,000 harnesses,
/// each with functions, 100 problems of 16 KiB, every harness
/// removed or added) renders a comment within GitHub's limit.
#[test]
fn the_comment_fits_at_the_validators_limits() {
    let functions: Vec<FunctionDelta> = (0..10)
        .map(|i| FunctionDelta {
            file: "f".repeat(4_000),
            function: format!("{}{i}", "g".repeat(4_000)),
            origin: Origin::Harness,
            base: 1,
            head: 100_000_001,
            delta: 100_000_000,
        })
        .collect();
    let mut harnesses = Vec::new();
    for i in 0..10_000 {
        let name = name(&format!("a{i}::very_long_harness_name_{i}"));
        harnesses.push(match i % 3 {
            0 => HarnessDiff::compared(
                &name,
                1_000_000_000,
                1_100_000_000,
                Threshold::default(),
                functions.clone(),
            ),
            1 => HarnessDiff::one_sided(&name, Some(5), None, Threshold::default()),
            _ => HarnessDiff::one_sided(&name, None, Some(5), Threshold::default()),
        });
    }
    let mut report = report(harnesses, Vec::new());
    report.problems = (0..100)
        .map(|i| format!("{i}{}", "é".repeat(8_000)))
        .collect();
    crate::diff::untrusted::check(&report).expect("within the validator's limits");
    let body = comment(&report).expect("one marker");
    assert!(
        body.chars().count() <= MAX_COMMENT_CHARS,
        "{} characters",
        body.chars().count()
    );
    assert!(body.contains("do not fit in a comment"), "{body}");
    assert!(body.contains("need a maintainer's acknowledgement"));
}

#[test]
fn markdown_is_a_comment_with_a_table_and_details() {
    let md = markdown(&spin_report());
    assert!(
        md.starts_with("### 🔴 Instruction counts: 1 regression beyond the threshold\n"),
        "{md}"
    );
    assert!(
        md.contains(
            "| `calibration::spin_2m` | 6,000,027 | 6,300,027 | **+300,000** | **+5.00%** | 🔴 regressed | harness +300,000 |"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| `calibration::spin_1m` | 3,000,027 | 3,000,027 | 0 | 0.00% | ⚪ unchanged |  |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| `rustls::handshake` | - | 76,533,873 | - | - | ➕ added |  |"),
        "{md}"
    );
    assert!(md.contains("| +300,000 | harness | `harnesses::calibration::spin` | `harnesses/src/calibration.rs` |"), "{md}");
    assert!(md.contains("<details>") && md.contains("</details>"));
}

/// A harness with a differential flame graph links it from its details,
/// relative to the report; a path that could not be a file name of ours
/// is shown as code, not linked.
#[test]
fn markdown_links_the_flame_graph() {
    let mut report = spin_report();
    report.harnesses[0].flame_graph =
        Some("perf_outputs/diff/calibration.spin_2m.flame.diff.svg".into());
    let md = markdown(&report);
    assert!(
        md.contains("[Flame graph](calibration.spin_2m.flame.diff.svg) of head"),
        "{md}"
    );
    assert!(text(&report).contains(
        "flame graph (red grew, blue shrank): perf_outputs/diff/calibration.spin_2m.flame.diff.svg"
    ));
    report.harnesses[0].flame_graph = Some("perf_outputs/diff/x](javascript:y).svg".into());
    let md = markdown(&report);
    assert!(!md.contains("[Flame graph]("), "{md}");
    assert!(
        md.contains("Flame graph: `perf_outputs/diff/x](javascript:y).svg`"),
        "{md}"
    );
}

#[test]
fn markdown_shows_untrusted_strings_only_as_code() {
    let mut report = spin_report();
    let hostile = "@octocat <img src=x> [x](https://evil.example) <!-- regress-diff --> |";
    report.base.reference = hostile.into();
    report.problems.push(format!("{hostile}\n### fake heading"));
    report.harnesses[0].functions[0].function = hostile.into();
    report.harnesses[0].functions[0].file = "`` <b>bold</b>".into();
    report.harnesses[0].error = Some(format!("```\n{hostile}\n```"));
    report.valgrind = "3.22.0".into();
    let md = markdown(&report);
    assert!(!md.contains("<!--"), "{md}");
    assert!(!md.contains("\n### fake"), "{md}");
    let outside = crate::report::markdown::outside_code(&md);
    for bad in ["@octocat", "<img", "](https", "<b>"] {
        assert!(!outside.contains(bad), "{bad:?} outside code in {outside}");
    }
    assert!(md.contains("> [!WARNING]\n> `"), "{md}");
}

#[test]
fn blind_spots_are_named_everywhere_and_unknown_is_never_none() {
    use crate::coverage::{BlindSpot, BlindSpots};
    let mut report = spin_report();
    // A report that did not look for them: unknown, not none.
    assert!(text(&report).contains("Blind spots unknown"));
    assert!(markdown(&report).contains("Blind spots unknown"));

    let hostile = "s2n_psk <img src=x> @octocat |";
    report.blind_spots = Some(BlindSpots {
        unknown: None,
        considered: vec![
            "tls/s2n_psk.c".into(),
            "harnesses/src/calibration.rs".into(),
        ],
        other_files: 3,
        changed: 3,
        base: Vec::new(),
        head: vec![
            BlindSpot {
                file: "tls/s2n_psk.c".into(),
                function: "s2n_offered_psk_list_choose_psk".into(),
                lines: vec![120, 121, 122, 130],
            },
            BlindSpot {
                file: "tls/s2n_psk.c".into(),
                function: hostile.into(),
                lines: vec![7],
            },
        ],
    });
    let terminal = text(&report);
    assert!(
        terminal.contains("2 changed functions are not run by any harness"),
        "{terminal}"
    );
    assert!(
        terminal
            .contains("head  s2n_offered_psk_list_choose_psk  tls/s2n_psk.c  (lines 120-122, 130)"),
        "{terminal}"
    );
    assert!(
        terminal.contains("files considered: tls/s2n_psk.c, harnesses/src/calibration.rs (3 other"),
        "{terminal}"
    );
    let md = comment(&report).expect("one marker");
    assert!(
        md.contains("`s2n_offered_psk_list_choose_psk` (`tls/s2n_psk.c`)"),
        "{md}"
    );
    let outside = crate::report::markdown::outside_code(&md);
    for bad in ["@octocat", "<img"] {
        assert!(!outside.contains(bad), "{bad:?} outside code in {outside}");
    }

    // Every changed function unrun: the verdict says so.
    let mut all = report.clone();
    if let Some(spots) = all.blind_spots.as_mut() {
        spots.changed = 2;
    }
    // A clean diff: nothing regressed and nothing for a maintainer to
    // acknowledge (a harness on one side only would be).
    all.harnesses
        .retain(|h| !h.regressed() && h.attention().is_none());
    let terminal = text(&all);
    assert!(
        terminal.contains("no harness runs the changed code"),
        "{terminal}"
    );
    assert!(
        markdown(&all).contains("but no harness runs the changed code"),
        "{}",
        markdown(&all)
    );
}

#[test]
fn sides_built_differently_are_named_everywhere_and_alike_sides_are_not() {
    let mut report = spin_report();
    let base = crate::fixtures::fingerprint("3.24.0");
    report.fingerprints = Some(SideFingerprints {
        base: base.clone(),
        head: base.clone(),
    });
    assert!(!text(&report).contains("different builds"));
    assert!(!markdown(&report).contains("different builds"));

    let mut head = base.clone();
    head.rustc = "rustc 1.96.0 `</details>`".into();
    head.libraries.insert("s2n-tls".into(), "0.3.48".into());
    report.fingerprints = Some(SideFingerprints { base, head });
    let terminal = text(&report);
    assert!(
        terminal.contains("measured with different builds"),
        "{terminal}"
    );
    assert!(
        terminal.contains("rustc: rustc 1.96.0 `</details>` in HEAD, rustc 1.95.0 in BASE"),
        "{terminal}"
    );
    assert!(
        terminal.contains("s2n-tls: 0.3.48 in HEAD, 0.3.47 in BASE"),
        "{terminal}"
    );
    let md = markdown(&report);
    assert!(md.contains("> [!IMPORTANT]"), "{md}");
    assert!(
        md.contains("> - `s2n-tls: 0.3.48 in HEAD, 0.3.47 in BASE`"),
        "{md}"
    );
    // The hostile rustc string is inside a code span, never markup.
    assert!(!md.contains("\n> - rustc"), "{md}");
    assert!(!md.contains("> - rustc: rustc 1.96.0 `</details>`"), "{md}");
}

#[test]
fn markdown_warns_about_problems_and_errors() {
    let mut report = spin_report();
    report.problems.push("shard 2/2 did not report".into());
    report.harnesses.push(HarnessDiff::failed(
        &name("s2n_tls::handshake_rsa4096"),
        Some(1),
        None,
        Threshold::default(),
        "head: s2n_tls::handshake_rsa4096 failed under Valgrind".into(),
    ));
    report.shards = vec![Shard::new(1, 2).expect("shard")];
    let md = markdown(&report);
    assert!(
        md.starts_with("### ⚠️ Instruction counts: the diff is incomplete"),
        "{md}"
    );
    assert!(
        md.contains("> [!WARNING]\n> `shard 2/2 did not report`"),
        "{md}"
    );
    assert!(md.contains("failed under Valgrind"), "{md}");
}
