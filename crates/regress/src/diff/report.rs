//! The result of a diff, as versioned JSON (`perf_outputs/diff/report.json`).
//!
//! Everything the terminal table, the Markdown comment and the Bencher
//! export show is rendered from this one value, and CI shards exchange it:
//! each shard writes its report, and `regress diff-merge` reads them back
//! and renders one ([`DiffReport::merge`]). `schema` is bumped whenever a
//! field changes meaning, and a reader refuses a schema it does not know
//! rather than guess.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::DiffError;
use super::shard::Shard;
use super::sources::Sources;
use super::untrusted;
use super::Outcome;
use crate::compare::{self, HarnessDiff, Verdict};
use crate::coverage::BlindSpots;
use crate::limits;
use crate::measure::cpu_profile::CpuProfile;
use crate::measure::fingerprint::{Fingerprint, Owners};
use crate::measure::valgrind::Method;
use crate::program::Commit;

/// The report format's version (2: each harness's `figures`,
/// `heap_threshold` and `heap_sites`; a figure's regression is a
/// regression; 3: `blind_spots`; 4: `fingerprints`).
pub const DIFF_SCHEMA: u32 = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffReport {
    pub schema: u32,
    pub base: Commit,
    pub head: Commit,
    /// The Valgrind version both sides were measured with.
    pub valgrind: String,
    pub method: Method,
    /// The CPU features hidden from the TLS libraries on both sides
    /// (absent: the default profile).
    #[serde(default, skip_serializing_if = "CpuProfile::is_default")]
    pub cpu_profile: CpuProfile,
    /// The shards this report covers; empty when it covers every harness.
    pub shards: Vec<Shard>,
    /// The harnesses, in reading order (see [`compare::sort`]).
    pub harnesses: Vec<HarnessDiff>,
    /// What makes the report incomplete (a missing shard); any makes the
    /// outcome [`Outcome::Incomplete`].
    pub problems: Vec<String>,
    /// The libraries of a from-source diff (`--library`); absent for a diff
    /// of two commits of this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Sources>,
    /// The changed functions no measured harness ran
    /// ([`crate::coverage::blind`]); absent when they were not looked for,
    /// which reads as unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blind_spots: Option<BlindSpots>,
    /// What each side's counts depend on besides the source, from its
    /// measurements; absent when a side measured nothing, or when merged
    /// shards disagree (unknown, never "the same").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprints: Option<SideFingerprints>,
}

/// The fingerprints of a diff's two sides. Any difference between them (a
/// compiler, a crate version, a CPU feature) moves counts besides the
/// change under review, so every rendering of the report names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideFingerprints {
    pub base: Fingerprint,
    pub head: Fingerprint,
}

impl SideFingerprints {
    /// How HEAD's fingerprint differs from BASE's, one line per field
    /// (`rustc: ... in HEAD, ... in BASE`); empty when they match.
    pub fn differences(&self) -> Vec<String> {
        self.base.differences_as(&self.head, Owners::DIFF)
    }
}

impl DiffReport {
    /// How the diff ended: an error outranks a regression.
    /// A harness that needs a maintainer's acknowledgement
    /// ([`HarnessDiff::attention`]) counts as a regression until it is
    /// accepted ([`DiffReport::outcome_accepting`]): the gate never passes
    /// silently over a harness that vanished, appeared, or stopped working.
    pub fn outcome(&self) -> Outcome {
        self.outcome_accepting(&[])
    }

    /// [`DiffReport::outcome`], with the harnesses a maintainer accepted
    /// (`--accept NAME`) no longer held against the gate.
    pub fn outcome_accepting(&self, accepted: &[String]) -> Outcome {
        if !self.problems.is_empty() || self.harnesses.iter().any(|h| h.error.is_some()) {
            Outcome::Incomplete
        } else if self.harnesses.iter().any(HarnessDiff::regressed)
            || self
                .attention()
                .iter()
                .any(|(harness, _)| !accepted.iter().any(|name| name == harness.as_str()))
        {
            Outcome::Regressed
        } else {
            Outcome::Clean
        }
    }

    /// Every harness that needs a maintainer's acknowledgement, and why.
    pub fn attention(&self) -> Vec<(&crate::HarnessName, String)> {
        self.harnesses
            .iter()
            .filter_map(|harness| Some((&harness.harness, harness.attention()?)))
            .collect()
    }

    /// How many harnesses have each verdict.
    pub fn tally(&self) -> BTreeMap<Verdict, usize> {
        let mut tally = BTreeMap::new();
        for harness in &self.harnesses {
            *tally.entry(harness.verdict).or_default() += 1;
        }
        tally
    }

    pub fn to_json(&self) -> Result<String, DiffError> {
        let mut text = serde_json::to_string_pretty(self).map_err(DiffError::Serialize)?;
        text.push('\n');
        Ok(text)
    }

    /// Reads a report as hostile input (in CI it is an artifact of a pull
    /// request's run): at most [`untrusted::MAX_REPORT_BYTES`], this
    /// schema and shape only, and every value bounded and consistent
    /// ([`untrusted::check`]).
    pub fn read(path: &Path) -> Result<DiffReport, DiffError> {
        let text = limits::read_capped(path, untrusted::MAX_REPORT_BYTES)
            .map_err(|source| DiffError::io("read", path, source))?;
        let bad = |reason: String| DiffError::BadReport {
            path: path.to_path_buf(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|error| bad(format!("not JSON ({error})")))?;
        limits::refuse_duplicate_keys(&text).map_err(|source| DiffError::RepeatedKey {
            path: path.to_path_buf(),
            source,
        })?;
        match value.get("schema").and_then(serde_json::Value::as_u64) {
            Some(schema) if schema == u64::from(DIFF_SCHEMA) => {}
            Some(schema) => {
                return Err(bad(format!(
                    "schema {schema}, and this regress reads schema {DIFF_SCHEMA}; \
                     use the regress that wrote it"
                )))
            }
            None => return Err(bad("it has no \"schema\" number".to_owned())),
        }
        let report: DiffReport =
            serde_json::from_value(value).map_err(|error| bad(error.to_string()))?;
        untrusted::check(&report).map_err(|source| DiffError::Refused {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(report)
    }

    /// Puts the reports of the shards of one diff back together.
    ///
    /// The shards must be of the same two commits, measured with the same
    /// Valgrind, and no harness may appear twice. A shard that is missing
    /// (its runner failed before writing a report) does not stop the merge,
    /// so the pull request still gets a comment; it is listed in
    /// [`DiffReport::problems`], which makes the outcome an error.
    pub fn merge(reports: Vec<DiffReport>) -> Result<DiffReport, DiffError> {
        let mut reports = reports.into_iter();
        let Some(mut merged) = reports.next() else {
            return Err(DiffError::Merge("no reports to merge".to_owned()));
        };
        let mut counts: BTreeSet<usize> = merged.shards.iter().map(|s| s.count()).collect();
        let mut whole = merged.shards.is_empty();
        for report in reports {
            let same = |what: &str, a: &str, b: &str| {
                if a == b {
                    Ok(())
                } else {
                    Err(DiffError::Merge(format!(
                        "the shards disagree on the {what}: {a} and {b}; merge only the shards of one run"
                    )))
                }
            };
            same("base commit", &merged.base.commit, &report.base.commit)?;
            same("head commit", &merged.head.commit, &report.head.commit)?;
            if merged.sources != report.sources {
                return Err(DiffError::Merge(
                    "the shards disagree on the libraries built from source; merge only the \
                     shards of one run"
                        .to_owned(),
                ));
            }
            same("Valgrind version", &merged.valgrind, &report.valgrind)?;
            same(
                "counting method",
                &merged.method.to_string(),
                &report.method.to_string(),
            )?;
            same(
                "CPU profile",
                &merged.cpu_profile.to_string(),
                &report.cpu_profile.to_string(),
            )?;
            whole |= report.shards.is_empty();
            counts.extend(report.shards.iter().map(|s| s.count()));
            for shard in &report.shards {
                if merged.shards.contains(shard) {
                    return Err(DiffError::Merge(format!(
                        "shard {shard} is given twice; pass each shard's report once"
                    )));
                }
            }
            for harness in &report.harnesses {
                if merged
                    .harnesses
                    .iter()
                    .any(|h| h.harness == harness.harness)
                {
                    return Err(DiffError::Merge(format!(
                        "{} is in more than one report; were the shards made with the same --shard N \
                         and --harness filters?",
                        harness.harness
                    )));
                }
            }
            merged.blind_spots = match (merged.blind_spots.take(), report.blind_spots) {
                (Some(a), Some(b)) => Some(a.merge(b)),
                _ => None,
            };
            // Shards measured on machines that differ leave it unknown.
            merged.fingerprints = match (merged.fingerprints.take(), report.fingerprints) {
                (Some(a), Some(b)) if a == b => Some(a),
                _ => None,
            };
            merged.shards.extend(report.shards);
            merged.harnesses.extend(report.harnesses);
            merged.problems.extend(report.problems);
        }
        if whole && !merged.shards.is_empty() {
            return Err(DiffError::Merge(
                "a report of every harness cannot be merged with shards".to_owned(),
            ));
        }
        if counts.len() > 1 {
            return Err(DiffError::Merge(format!(
                "the shards split the harnesses in different numbers of parts ({counts:?})"
            )));
        }
        if let Some(count) = counts.into_iter().next() {
            // `count` is at most `shard::MAX_SHARDS` (a report with more does
            // not parse), so this loop is short.
            let present: BTreeSet<usize> = merged.shards.iter().map(|s| s.index()).collect();
            let missing: Vec<String> = (1..=count)
                .filter(|index| !present.contains(index))
                .map(|index| format!("{index}/{count}"))
                .collect();
            if !missing.is_empty() {
                merged.problems.push(format!(
                    "shard {} did not report: its harnesses are missing from this report \
                     (see that job's log)",
                    missing.join(", ")
                ));
            }
        }
        merged.shards.sort();
        compare::sort(&mut merged.harnesses);
        Ok(merged)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fixtures::name;
    use crate::judge::Threshold;

    pub(crate) fn report(harnesses: Vec<HarnessDiff>, shards: Vec<Shard>) -> DiffReport {
        DiffReport {
            schema: DIFF_SCHEMA,
            base: Commit {
                reference: "main".into(),
                commit: "a".repeat(40),
            },
            head: Commit {
                reference: "HEAD".into(),
                commit: "b".repeat(40),
            },
            valgrind: "3.22.0".into(),
            method: Method::Markers,
            cpu_profile: CpuProfile::Default,
            shards,
            harnesses,
            problems: Vec::new(),
            sources: None,
            blind_spots: None,
            fingerprints: None,
        }
    }

    fn compared(harness: &str, base: u64, head: u64) -> HarnessDiff {
        HarnessDiff::compared(
            &crate::fixtures::name(harness),
            base,
            head,
            Threshold::default(),
            Vec::new(),
        )
    }

    #[test]
    fn outcome_ranks_errors_over_regressions() {
        let clean = report(vec![compared("a::b", 100, 100)], vec![]);
        assert_eq!(clean.outcome(), Outcome::Clean);
        let regressed = report(
            vec![
                compared("a::b", 1_000_000, 1_100_000),
                compared("a::c", 5, 5),
            ],
            vec![],
        );
        assert_eq!(regressed.outcome(), Outcome::Regressed);
        let mut failed = regressed.clone();
        failed.harnesses.push(HarnessDiff::failed(
            &name("a::d"),
            None,
            None,
            Threshold::default(),
            "boom".into(),
        ));
        assert_eq!(failed.outcome(), Outcome::Incomplete);
        // Added and removed harnesses fail the gate until accepted.
        let one_sided = report(
            vec![HarnessDiff::one_sided(
                &name("a::new"),
                None,
                Some(9),
                Threshold::default(),
            )],
            vec![],
        );
        assert_eq!(one_sided.outcome(), Outcome::Regressed);
        assert_eq!(
            one_sided.outcome_accepting(&["a::new".to_owned()]),
            Outcome::Clean
        );
        // A drop of more than half passes only when accepted; one of half
        // is an improvement like any other.
        let gone = report(vec![compared("a::b", 3_000_081, 84)], vec![]);
        assert_eq!(gone.outcome(), Outcome::Regressed);
        let (name, why) = &gone.attention()[0];
        assert_eq!(name.as_str(), "a::b");
        assert!(why.contains("-100.0 %") && why.contains("50 %"), "{why}");
        assert_eq!(gone.outcome_accepting(&["a::b".to_owned()]), Outcome::Clean);
        let halved = report(vec![compared("a::b", 3_000_000, 1_500_000)], vec![]);
        assert_eq!(halved.outcome(), Outcome::Clean);
        let more = report(vec![compared("a::b", 3_000_000, 1_499_999)], vec![]);
        assert_eq!(more.outcome(), Outcome::Regressed);
    }

    #[test]
    fn json_round_trips_and_is_versioned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("report.json");
        let original = report(vec![compared("a::b", 1_000_000, 1_100_000)], vec![]);
        std::fs::write(&path, original.to_json().expect("json")).expect("write");
        assert_eq!(DiffReport::read(&path).expect("read"), original);

        let value: serde_json::Value =
            serde_json::from_str(&original.to_json().expect("json")).expect("json");
        assert_eq!(value["schema"], DIFF_SCHEMA);
        assert_eq!(value["base"]["ref"], "main");
        assert_eq!(value["harnesses"][0]["verdict"], "regressed");
        assert_eq!(value["harnesses"][0]["delta"], 100_000);
        assert_eq!(value["harnesses"][0]["threshold"]["absolute"], 1_000);

        std::fs::write(
            &path,
            original
                .to_json()
                .expect("json")
                .replace(&format!("\"schema\": {DIFF_SCHEMA}"), "\"schema\": 1"),
        )
        .expect("write");
        let error = DiffReport::read(&path).unwrap_err().to_string();
        assert!(error.contains("schema 1"), "{error}");
        std::fs::write(&path, "{").expect("write");
        assert!(DiffReport::read(&path)
            .unwrap_err()
            .to_string()
            .contains("not JSON"));
    }

    #[test]
    fn merges_shards_in_reading_order() {
        let one = report(
            vec![compared("a::small", 1_000_000, 1_000_001)],
            vec![Shard::new(1, 2).expect("shard")],
        );
        let two = report(
            vec![compared("b::big", 1_000_000, 1_200_000)],
            vec![Shard::new(2, 2).expect("shard")],
        );
        let merged = DiffReport::merge(vec![two, one]).expect("merge");
        let names: Vec<&str> = merged
            .harnesses
            .iter()
            .map(|h| h.harness.as_str())
            .collect();
        assert_eq!(names, vec!["b::big", "a::small"]);
        assert_eq!(merged.shards.len(), 2);
        assert!(merged.problems.is_empty());
        assert_eq!(merged.outcome(), Outcome::Regressed);
    }

    #[test]
    fn a_missing_shard_is_a_problem_not_a_crash() {
        let one = report(
            vec![compared("a::x", 10, 10)],
            vec![Shard::new(1, 3).expect("shard")],
        );
        let merged = DiffReport::merge(vec![one]).expect("merge");
        assert_eq!(merged.problems.len(), 1);
        assert!(
            merged.problems[0].contains("2/3, 3/3"),
            "{:?}",
            merged.problems
        );
        assert_eq!(merged.outcome(), Outcome::Incomplete);
    }

    #[test]
    fn refuses_shards_of_different_runs_and_duplicates() {
        let shard = |index| vec![Shard::new(index, 2).expect("shard")];
        let one = report(vec![compared("a::x", 10, 10)], shard(1));
        let mut other_head = report(vec![compared("a::y", 10, 10)], shard(2));
        other_head.head.commit = "c".repeat(40);
        let error = DiffReport::merge(vec![one.clone(), other_head])
            .unwrap_err()
            .to_string();
        assert!(error.contains("head commit"), "{error}");

        let again = DiffReport::merge(vec![one.clone(), one.clone()])
            .unwrap_err()
            .to_string();
        assert!(again.contains("given twice"), "{again}");

        let duplicate = report(vec![compared("a::x", 10, 10)], shard(2));
        let error = DiffReport::merge(vec![one, duplicate])
            .unwrap_err()
            .to_string();
        assert!(error.contains("a::x is in more than one report"), "{error}");

        assert!(DiffReport::merge(Vec::new()).is_err());
    }
}
