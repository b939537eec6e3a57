//! The gate a pull request could walk around (`diff-merge`) and forged or
//! oversized reports (`diff-comment`).

use regress::compare::HarnessDiff;
use regress::judge::Threshold;

use super::{compared, name, stderr_has};
use crate::cases::{case, Case};

pub(super) fn gate_cases() -> Vec<Case> {
    vec![
        case(
            "gate: a harness drops from 3,000,081 to 84 (diff-merge)",
            1,
            "base",
            |w, t| {
                let path = w.report_file("r.json", vec![compared("a::b", 3_000_081, 84)]);
                let mut played = w.play_args(t, &["diff-merge", &path.display().to_string()]);
                stderr_has(&mut played, "needs a maintainer: a::b dropped by -100.0 %");
                played
            },
        ),
        case(
            "gate: a renamed harness, removed + added (diff-merge)",
            1,
            "base",
            |w, t| {
                let harnesses = vec![
                    HarnessDiff::one_sided(
                        &name("a::old"),
                        Some(3_000_000),
                        None,
                        Threshold::default(),
                    ),
                    HarnessDiff::one_sided(
                        &name("a::new"),
                        None,
                        Some(6_000_000),
                        Threshold::default(),
                    ),
                ];
                let path = w.report_file("r.json", harnesses);
                let mut played = w.play_args(t, &["diff-merge", &path.display().to_string()]);
                stderr_has(&mut played, "needs a maintainer: a::old removed");
                stderr_has(&mut played, "needs a maintainer: a::new added");
                played
            },
        ),
        case(
            "gate: the rename accepted with --accept (diff-merge)",
            0,
            "base",
            |w, t| {
                let harnesses = vec![
                    HarnessDiff::one_sided(
                        &name("a::old"),
                        Some(3_000_000),
                        None,
                        Threshold::default(),
                    ),
                    HarnessDiff::one_sided(
                        &name("a::new"),
                        None,
                        Some(6_000_000),
                        Threshold::default(),
                    ),
                ];
                let path = w.report_file("r.json", harnesses);
                let path = path.display().to_string();
                let args = [
                    "diff-merge",
                    &path,
                    "--accept",
                    "a::old",
                    "--accept",
                    "a::new",
                ];
                let mut played = w.play_args(t, &args);
                stderr_has(&mut played, "accepted: a::old removed");
                played
            },
        ),
        case(
            "gate: --accept a harness that needs nothing (diff-merge)",
            2,
            "needs no acknowledgement",
            |w, t| {
                let path = w.report_file("r.json", vec![compared("a::b", 3_000_000, 3_000_000)]);
                w.play_args(
                    t,
                    &[
                        "diff-merge",
                        &path.display().to_string(),
                        "--accept",
                        "a::b",
                    ],
                )
            },
        ),
    ]
}

pub(super) fn report_cases() -> Vec<Case> {
    vec![
        case(
            "report.json: two head objects (diff-comment)",
            2,
            "appears twice",
            |w, t| {
                let path = w.report_file("r.json", vec![compared("a::b", 100, 100)]);
                let text = std::fs::read_to_string(&path).expect("read");
                let forged = text.replacen(
                    "\"head\": {",
                    "\"head\": {\"ref\": \"x\", \"commit\": \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"},\n  \"head\": {",
                    1,
                );
                assert_ne!(forged, text, "the report has a head object");
                std::fs::write(&path, forged).expect("write");
                w.play_args(t, &["diff-comment", &path.display().to_string()])
            },
        ),
        case(
            "report.json: 10,000 harnesses, the comment fits (diff-comment)",
            0,
            "<!-- regress-diff -->",
            |w, t| {
                let harnesses = (0..10_000)
                    .map(|i| compared(&format!("a{i}::harness_{i}"), 3_000_000, 3_500_000))
                    .collect();
                let path = w.report_file("r.json", harnesses);
                let mut played = w.play_args(t, &["diff-comment", &path.display().to_string()]);
                let chars = played.ended.stdout.chars().count();
                if chars > 65_536 {
                    played
                        .problems
                        .push(format!("the comment has {chars} characters"));
                }
                if !played.ended.stdout.contains("do not fit in a comment") {
                    played.problems.push("no note of what was left out".into());
                }
                played.command = format!("{} ({chars} characters)", played.command);
                played
            },
        ),
    ]
}
