//! A [`DiffReport`] for its three readers: a terminal, a pull request
//! comment (GitHub Markdown) and Bencher (Bencher Metric Format JSON).
//!
//! All three render the same report, so what the comment says is what the
//! terminal said. Every string that is not the program's own (refs,
//! function and file names, Valgrind's version, error messages, problems)
//! is untrusted text from the pull request's point of view: the Markdown
//! shows it only inside code spans and code blocks
//! ([`crate::report::markdown`]), so a crafted one can neither break the
//! table nor become markup, a mention or a link. Harness names are checked
//! names ([`crate::HarnessName`]) and are shown as code too.
//!
//! The pieces: `terminal.rs` ([`text`]), `comment.rs` ([`markdown`] and
//! the pull request [`comment`] made from it, within GitHub's limit), and
//! Bencher's JSON ([`bmf`], in `diff/bmf.rs`). What both the terminal and
//! the comment say (the tally, the hostile-peer note, the blind-spot note,
//! the build differences) is here, so they say it alike.

mod comment;
mod terminal;
#[cfg(test)]
mod tests;

pub use super::bmf::bmf;
pub use comment::{comment, markdown, COMMENT_MARKER, MAX_COMMENT_CHARS};
pub use terminal::text;

use super::report::DiffReport;
use crate::compare::HarnessDiff;
use crate::coverage::BlindSpots;
use crate::format::{count, signed, signed_percent};

/// The relative change, `+5.00%`, or `0.00%`, or `-` when there is none.
fn percent(harness: &HarnessDiff) -> String {
    match (harness.delta, harness.base, harness.head) {
        (Some(0), _, _) => "0.00%".to_owned(),
        (Some(_), Some(base), Some(head)) => signed_percent(base, head),
        _ => "-".to_owned(),
    }
}

fn optional(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), count)
}

fn change(harness: &HarnessDiff) -> String {
    match harness.delta {
        Some(0) => "0".to_owned(),
        Some(delta) => signed(delta),
        None => "-".to_owned(),
    }
}

/// `harness +300,000, aws-lc -1,200`: the largest parts of a change.
fn origins(harness: &HarnessDiff, limit: usize) -> String {
    harness
        .origins
        .iter()
        .take(limit)
        .map(|o| format!("{} {}", o.origin, signed(o.delta)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1 regressed, 2 unchanged`.
fn tally(report: &DiffReport) -> String {
    let parts: Vec<String> = report
        .tally()
        .into_iter()
        .map(|(verdict, n)| format!("{n} {}", verdict.label().to_lowercase()))
        .collect();
    if parts.is_empty() {
        "no harnesses".to_owned()
    } else {
        parts.join(", ")
    }
}

/// The path-name prefix of the hostile-peer paths (`Path::Hostile` in the
/// harnesses): each counts what one flight of a hostile client costs a
/// server.
const HOSTILE_PREFIX: &str = "hostile_";

/// The most hostile-peer harnesses a note names; the rest are counted.
const HOSTILE_NAMED: usize = 10;

/// The regressed hostile-peer harnesses, as `name (+1.2%)`, the first
/// [`HOSTILE_NAMED`] of them named with `name`, and how many more there are.
fn hostile_regressions(report: &DiffReport, name: impl Fn(&str) -> String) -> Option<String> {
    let regressed: Vec<&HarnessDiff> = report
        .harnesses
        .iter()
        .filter(|harness| {
            harness.regressed()
                && harness
                    .harness
                    .as_str()
                    .split_once("::")
                    .is_some_and(|(_, path)| path.starts_with(HOSTILE_PREFIX))
        })
        .collect();
    if regressed.is_empty() {
        return None;
    }
    let mut named: Vec<String> = regressed
        .iter()
        .take(HOSTILE_NAMED)
        .map(|harness| match (harness.base, harness.head) {
            (Some(base), Some(head)) => {
                format!(
                    "{} ({})",
                    name(harness.harness.as_str()),
                    signed_percent(base, head)
                )
            }
            _ => name(harness.harness.as_str()),
        })
        .collect();
    if regressed.len() > HOSTILE_NAMED {
        named.push(format!("{} more", regressed.len() - HOSTILE_NAMED));
    }
    Some(named.join(", "))
}

/// What the terminal and the comment say when a hostile-peer path
/// regressed: the change raises what a peer can make a server pay.
const HOSTILE_WORDS: &str = "this change raises what a hostile peer can make a server pay";

/// What the report says before the differences of the two sides' builds.
const BUILT_DIFFERENTLY: &str =
    "The two sides were measured with different builds or machines, which move counts \
     besides the change under review";
/// The most build differences a comment lists (a fingerprint has a few
/// dozen fields at most; this bounds a forged one).
const MAX_BUILT_LINES: usize = 20;

/// How HEAD's fingerprint differs from BASE's; `None` when they match or
/// are unknown.
fn built_differently(report: &DiffReport) -> Option<Vec<String>> {
    let differences = report.fingerprints.as_ref()?.differences();
    (!differences.is_empty()).then_some(differences)
}

/// What a clean verdict must add: that it covers only what the harnesses
/// run.
fn blind_note(report: &DiffReport) -> String {
    let spots = blind_spots_of(report);
    if spots.unknown.is_some() {
        return " (blind spots unknown)".to_owned();
    }
    match spots.functions().len() {
        0 => String::new(),
        n if spots.run() == 0 => format!(
            ", but no harness runs the changed code ({n} changed function{})",
            if n == 1 { "" } else { "s" }
        ),
        n => format!(
            " in what the harnesses run; {n} changed function{} not run by any harness",
            if n == 1 { " is" } else { "s are" }
        ),
    }
}

/// The report's blind spots; a report without them has unknown ones.
fn blind_spots_of(report: &DiffReport) -> BlindSpots {
    report
        .blind_spots
        .clone()
        .unwrap_or_else(|| BlindSpots::unknown("this diff did not look for them"))
}

/// `, CPU profile no-avx` for a diff under a profile other than the
/// default; nothing for the default.
fn cpu_profile(report: &DiffReport) -> String {
    if report.cpu_profile.is_default() {
        String::new()
    } else {
        format!(", CPU profile {}", report.cpu_profile)
    }
}
