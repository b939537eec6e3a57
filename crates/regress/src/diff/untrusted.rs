//! A `report.json` read back as hostile input.
//!
//! `regress diff-merge` and `regress diff-comment` read reports that, in
//! CI, are artifacts of a pull request's run: whoever wrote the pull
//! request could have written them. Parsing already refuses unknown fields,
//! names that are not harness names ([`crate::HarnessName`]) and shards out
//! of range ([`super::shard::Shard`]); [`check`] refuses everything else a
//! forged report could use: counts at or beyond 2^63, a verdict the judge
//! would not give those counts, a threshold that disables the judge,
//! strings long enough to flood a comment, commit ids that are not hashes,
//! a Valgrind version that is not one. What passes can still be wrong
//! numbers, which the renderer shows as numbers and nothing else.

use std::collections::BTreeSet;

use super::error::Refusal;
use super::report::DiffReport;
use crate::compare::{FigureDiff, MAX_FRAMES, MAX_SITES};
use crate::compare::{HarnessDiff, Verdict};
use crate::judge::judge;
use crate::judge::Threshold;
use crate::limits::{self, MAX_COUNT};
use crate::measure::metrics::Metric;
use crate::measure::valgrind::Version;
use crate::program::Commit;

/// The largest report read (a real one of 69 harnesses is about 1 MiB).
pub const MAX_REPORT_BYTES: u64 = 8 << 20;
/// Bounds on the parts of a report.
const MAX_HARNESSES: usize = 10_000;
const MAX_FUNCTIONS: usize = 100_000;
const MAX_PROBLEMS: usize = 100;
const MAX_REF: usize = 256;
const MAX_NAME: usize = 4_096;
const MAX_MESSAGE: usize = 16_384;

/// Checks every part of `report` that parsing does not.
pub fn check(report: &DiffReport) -> Result<(), Refusal> {
    let from_source = report.sources.is_some();
    revision("base", &report.base, from_source)?;
    revision("head", &report.head, from_source)?;
    if let Some(sources) = &report.sources {
        super::sources::check(sources).map_err(|problem| Refusal::new(problem.to_string()))?;
    }
    if let Some(blind_spots) = &report.blind_spots {
        blind_spots
            .check()
            .map_err(|why| Refusal::new(why.to_string()).within("blind spots"))?;
    }
    if let Some(fingerprints) = &report.fingerprints {
        for (side, fingerprint) in [("base", &fingerprints.base), ("head", &fingerprints.head)] {
            fingerprint
                .validate()
                .map_err(|problem| Refusal::new(format!("the {side} side's {problem}")))?;
        }
    }
    if report.valgrind.len() > 32
        || !report
            .valgrind
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        || Version::parse(&report.valgrind).is_none()
    {
        return Err(Refusal::new("\"valgrind\" is not a Valgrind version"));
    }
    if report.problems.len() > MAX_PROBLEMS {
        return Err(Refusal::new(format!("more than {MAX_PROBLEMS} problems")));
    }
    for problem in &report.problems {
        text("a problem", problem, MAX_MESSAGE)?;
    }
    if report.harnesses.len() > MAX_HARNESSES {
        return Err(Refusal::new(format!("more than {MAX_HARNESSES} harnesses")));
    }
    let mut seen = BTreeSet::new();
    for harness in &report.harnesses {
        if !seen.insert(harness.harness.as_str()) {
            return Err(Refusal::new(format!("{} appears twice", harness.harness)));
        }
        self::harness(harness).map_err(|why| why.within(harness.harness.to_string()))?;
    }
    Ok(())
}

/// A commit is a full hash; a from-source diff's side may also be a
/// working tree's content hash (`wt-` and 40 hex digits) or the locked
/// release (`released`).
fn revision(side: &str, revision: &Commit, from_source: bool) -> Result<(), Refusal> {
    let hash = &revision.commit;
    let hex = |text: &str, lengths: &[usize]| {
        lengths.contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
    };
    let source_key = from_source
        && (hash == "released" || hash.strip_prefix("wt-").is_some_and(|h| hex(h, &[40])));
    if !(hex(hash, &[40, 64]) || source_key) {
        return Err(Refusal::new(format!(
            "the {side} commit is not a full commit hash"
        )));
    }
    text(&format!("the {side} ref"), &revision.reference, MAX_REF)
}

fn text(what: &str, value: &str, max: usize) -> Result<(), Refusal> {
    if value.len() > max {
        return Err(Refusal::new(format!("{what} is longer than {max} bytes")));
    }
    Ok(())
}

fn count(what: &str, value: Option<u64>) -> Result<(), Refusal> {
    match value {
        Some(value) if value > MAX_COUNT => {
            Err(Refusal::new(format!("{what} is {value}, not below 2^63")))
        }
        _ => Ok(()),
    }
}

fn signed(what: &str, value: i64) -> Result<(), Refusal> {
    if value == i64::MIN {
        return Err(Refusal::new(format!("{what} is out of range")));
    }
    Ok(())
}

/// The figures: each at most once, counts in range, every verdict the
/// judge's; the sites bounded.
fn figures(harness: &HarnessDiff) -> Result<(), Refusal> {
    harness
        .heap_threshold
        .validate()
        .map_err(|problem| Refusal::new(problem.to_string()).within("heap threshold"))?;
    if harness.figures.len() > Metric::ALL.len() {
        return Err(Refusal::new("more figures than there are"));
    }
    let mut seen = BTreeSet::new();
    for figure in &harness.figures {
        if !seen.insert(figure.metric) {
            return Err(Refusal::new(format!(
                "the figure {} appears twice",
                figure.metric.key()
            )));
        }
        let threshold = figure
            .metric
            .threshold(harness.threshold, harness.heap_threshold);
        self::figure(figure, threshold).map_err(|why| why.within(figure.metric.key()))?;
    }
    if harness.heap_sites.len() > MAX_SITES {
        return Err(Refusal::new(format!(
            "more than {MAX_SITES} allocation sites"
        )));
    }
    for site in &harness.heap_sites {
        if site.stack.len() > MAX_FRAMES {
            return Err(Refusal::new(format!(
                "an allocation site with more than {MAX_FRAMES} frames"
            )));
        }
        for frame in &site.stack {
            text("a frame", frame, MAX_NAME)?;
        }
        for (what, value) in [
            ("a site's base bytes", site.base_bytes),
            ("a site's head bytes", site.head_bytes),
            ("a site's base blocks", site.base_blocks),
            ("a site's head blocks", site.head_blocks),
        ] {
            if !(0..=MAX_COUNT as i64).contains(&value) {
                return Err(Refusal::new(format!("{what} is {value}, not a count")));
            }
        }
    }
    Ok(())
}

fn figure(figure: &FigureDiff, threshold: Threshold) -> Result<(), Refusal> {
    count("base", figure.base)?;
    count("head", figure.head)?;
    count("allowance", figure.allowance)?;
    let allowance = match (figure.verdict, figure.base, figure.head) {
        (Verdict::Judged(change), Some(base), Some(head)) => {
            let judgement = judge(base, head, threshold);
            if judgement.change != change {
                return Err(Refusal::new(format!(
                    "the verdict {:?} is not what {base} -> {head} gives",
                    figure.verdict.label()
                )));
            }
            Some(judgement.allowance)
        }
        (Verdict::Added, None, Some(_)) | (Verdict::Removed, Some(_), None) => None,
        (verdict, _, _) => {
            return Err(Refusal::new(format!(
                "{:?} does not go with the figures",
                verdict.label()
            )))
        }
    };
    if figure.allowance != allowance {
        return Err(Refusal::new("the allowance disagrees with the threshold"));
    }
    Ok(())
}

fn harness(harness: &HarnessDiff) -> Result<(), Refusal> {
    count("base", harness.base)?;
    count("head", harness.head)?;
    count("allowance", harness.allowance)?;
    harness
        .threshold
        .validate()
        .map_err(|problem| Refusal::new(problem.to_string()))?;
    let expected = match (harness.verdict, harness.base, harness.head) {
        (Verdict::Judged(change), Some(base), Some(head)) => {
            let judgement = judge(base, head, harness.threshold);
            if judgement.change != change {
                return Err(Refusal::new(format!(
                    "the verdict {:?} is not what {base} -> {head} gives ({})",
                    harness.verdict.label(),
                    judgement.change.label()
                )));
            }
            // Both are below 2^63, so the difference fits an i64.
            (
                i64::try_from(judgement.delta()).ok(),
                Some(judgement.allowance),
                change.is_significant(),
            )
        }
        (Verdict::Judged(_), _, _) => return Err(Refusal::new("a judged harness lacks a count")),
        (Verdict::Added, None, Some(_))
        | (Verdict::Removed, Some(_), None)
        | (Verdict::Failed, _, _) => (None, None, false),
        (verdict, _, _) => {
            return Err(Refusal::new(format!(
                "{:?} does not go with the counts",
                verdict.label()
            )))
        }
    };
    if (harness.delta, harness.allowance, harness.significant) != expected {
        return Err(Refusal::new(
            "delta, allowance or significance disagree with the counts",
        ));
    }
    if harness.verdict == Verdict::Failed && harness.error.is_none() {
        return Err(Refusal::new("a failed harness has no error"));
    }
    if let Some(error) = &harness.error {
        text("the error", error, MAX_MESSAGE)?;
    }
    if let Some(path) = &harness.annotated_diff {
        text("the annotated diff's path", path, 512)?;
        if !limits::is_contained(std::path::Path::new(path)) {
            return Err(Refusal::new("the annotated diff's path leaves the project"));
        }
    }
    if let Some(path) = &harness.flame_graph {
        text("the flame graph's path", path, 512)?;
        if !limits::is_contained(std::path::Path::new(path)) {
            return Err(Refusal::new("the flame graph's path leaves the project"));
        }
    }
    if harness.functions.len() > MAX_FUNCTIONS {
        return Err(Refusal::new(format!("more than {MAX_FUNCTIONS} functions")));
    }
    for function in &harness.functions {
        text("a function name", &function.function, MAX_NAME)?;
        text("a file name", &function.file, MAX_NAME)?;
        for (what, value) in [
            ("a function's base", function.base),
            ("a function's head", function.head),
            ("a function's delta", function.delta),
        ] {
            signed(what, value)?;
        }
        if function.head.checked_sub(function.base) != Some(function.delta) {
            return Err(Refusal::new(format!(
                "{}: the delta is not head minus base",
                function.function.chars().take(80).collect::<String>()
            )));
        }
    }
    figures(harness)?;
    if harness.origins.len() > 16 {
        return Err(Refusal::new("more origins than there are"));
    }
    for origin in &harness.origins {
        signed("an origin's delta", origin.delta)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::report::tests::report;
    use crate::fixtures::name;
    use crate::judge::Threshold;

    fn compared(base: u64, head: u64) -> HarnessDiff {
        HarnessDiff::compared(&name("a::b"), base, head, Threshold::default(), Vec::new())
    }

    #[test]
    fn a_forged_fingerprint_is_refused() {
        let mut forged = report(vec![compared(100, 200)], vec![]);
        let base = crate::fixtures::fingerprint("3.24.0");
        let mut head = base.clone();
        forged.fingerprints = Some(crate::diff::report::SideFingerprints {
            base: base.clone(),
            head: head.clone(),
        });
        assert_eq!(check(&forged), Ok(()));
        head.rustc = format!("rustc\u{202e}{}", "9".repeat(10_000));
        forged.fingerprints = Some(crate::diff::report::SideFingerprints { base, head });
        let refusal = check(&forged).expect_err("a flood of a compiler name");
        assert!(
            refusal
                .to_string()
                .starts_with("the head side's fingerprint field `rustc`"),
            "{refusal}"
        );
    }

    #[test]
    fn a_refusal_says_where_outermost_first() {
        let refusal = Refusal::new("the verdict is not what 1 -> 2 gives")
            .within("instructions")
            .within("a::b");
        assert_eq!(
            refusal.to_string(),
            "a::b: instructions: the verdict is not what 1 -> 2 gives"
        );
        let mut forged = report(vec![compared(100, 200)], vec![]);
        forged.harnesses[0].delta = Some(0);
        let refusal = check(&forged).expect_err("a forged delta");
        assert_eq!(refusal.at, ["a::b"]);
        assert!(refusal.why.contains("disagree"), "{refusal}");
    }

    #[test]
    fn a_report_the_runner_wrote_passes() {
        assert_eq!(check(&report(vec![compared(100, 200)], vec![])), Ok(()));
    }

    /// Each forgery is refused with its reason.
    #[test]
    fn forged_reports_are_refused() {
        let forge = |change: &dyn Fn(&mut DiffReport), expected: &str| {
            let mut forged = report(vec![compared(1_000_000, 1_100_000)], vec![]);
            change(&mut forged);
            let refusal = check(&forged).expect_err(expected).to_string();
            assert!(refusal.contains(expected), "{expected:?} in {refusal:?}");
        };
        forge(
            &|r| r.harnesses[0].verdict = Verdict::Judged(crate::judge::Change::Unchanged),
            "is not what",
        );
        forge(&|r| r.harnesses[0].head = Some(u64::MAX), "not below 2^63");
        forge(&|r| r.harnesses[0].delta = Some(0), "disagree");
        forge(
            &|r| r.harnesses[0].threshold.relative_percent = 1e300,
            "relative_percent",
        );
        forge(&|r| r.head.commit = "é".repeat(20), "full commit hash");
        forge(&|r| r.valgrind = "<b>3</b>".into(), "Valgrind version");
        forge(&|r| r.base.reference = "x".repeat(1000), "longer than");
        forge(
            &|r| r.problems = vec![String::new(); MAX_PROBLEMS + 1],
            "problems",
        );
        forge(
            &|r| {
                let twice = r.harnesses[0].clone();
                r.harnesses.push(twice);
            },
            "appears twice",
        );
        forge(
            &|r| r.harnesses[0].annotated_diff = Some("/etc/passwd".into()),
            "leaves the project",
        );
        forge(
            &|r| r.harnesses[0].verdict = Verdict::Added,
            "does not go with",
        );
    }
}
