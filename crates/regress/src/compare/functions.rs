//! The comparison itself: per-function deltas of two region profiles, and
//! each harness's verdict, from the one judge ([`crate::judge::judge`]) for
//! a harness measured on both sides.
//!
//! The per-function diff is computed here from the raw profiles rather than
//! parsed from `cg_annotate`'s text: the raw profiles hold every function
//! (the text hides those under its 0.1 % display threshold), their numbers
//! are exact, and this does not depend on which Valgrind printed them. The
//! text is kept beside the result for people ([`super::annotated_diff`]); both
//! line functions up with the same [`Normalizer`].

use std::cmp::Reverse;
use std::collections::BTreeMap;

use regress_profile::cachegrind_out::Profile;
use serde::{Deserialize, Serialize};

use super::attribution::{attribute, Origin};
use super::figure_deltas::{FigureDiff, SiteDelta};
use super::normalize::Normalizer;
use crate::harness_name::HarnessName;
use crate::judge::{judge, Change, Threshold};

/// How one function's cost changed from base to head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionDelta {
    /// The source file, normalised (see [`super::normalize`]).
    pub file: String,
    /// The function, normalised.
    pub function: String,
    pub origin: Origin,
    /// Instructions in the base's region (0 when the function did not run).
    pub base: i64,
    /// Instructions in the head's region.
    pub head: i64,
    /// `head - base`.
    pub delta: i64,
}

/// The change of all functions of one origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OriginDelta {
    pub origin: Origin,
    pub delta: i64,
}

/// Every function whose cost changed, largest change first (regressions
/// and improvements alike), then by name.
///
/// Costs of names that normalise to the same (file, function) are added up:
/// that is what lining them up means. Who owns a function is decided from
/// its raw names (the first seen), which still say where it was built: the
/// normalised `crypto/mem.c` could be aws-lc's or s2n-tls's, the raw
/// `/aws-lc/crypto/mem.c` cannot.
pub fn function_deltas(
    base: &Profile,
    head: &Profile,
    normalizer: &Normalizer,
) -> Vec<FunctionDelta> {
    let mut costs: BTreeMap<(String, String), (i64, i64, Origin)> = BTreeMap::new();
    for (profile, is_head) in [(base, false), (head, true)] {
        for cost in &profile.functions {
            let key = (
                normalizer.file(&cost.file).into_owned(),
                normalizer.function(&cost.function).into_owned(),
            );
            let entry = costs
                .entry(key)
                .or_insert_with(|| (0, 0, attribute(&cost.file, &cost.function)));
            if is_head {
                entry.1 += cost.instructions;
            } else {
                entry.0 += cost.instructions;
            }
        }
    }
    let mut deltas: Vec<FunctionDelta> = costs
        .into_iter()
        .filter(|(_, (base, head, _))| base != head)
        .map(|((file, function), (base, head, origin))| FunctionDelta {
            origin,
            file,
            function,
            base,
            head,
            delta: head - base,
        })
        .collect();
    deltas.sort_by(|a, b| {
        b.delta
            .unsigned_abs()
            .cmp(&a.delta.unsigned_abs())
            .then_with(|| b.delta.cmp(&a.delta))
            .then_with(|| a.function.cmp(&b.function))
            .then_with(|| a.file.cmp(&b.file))
    });
    deltas
}

/// The change per origin, largest first; origins whose functions cancel
/// out exactly are left out.
pub fn origin_deltas(functions: &[FunctionDelta]) -> Vec<OriginDelta> {
    let mut totals: BTreeMap<Origin, i64> = BTreeMap::new();
    for function in functions {
        *totals.entry(function.origin).or_default() += function.delta;
    }
    let mut origins: Vec<OriginDelta> = totals
        .into_iter()
        .filter(|(_, delta)| *delta != 0)
        .map(|(origin, delta)| OriginDelta { origin, delta })
        .collect();
    origins.sort_by_key(|o| (Reverse(o.delta.unsigned_abs()), o.origin));
    origins
}

/// A harness whose count drops by more than this share of its base count
/// needs a maintainer's acknowledgement ([`HarnessDiff::attention`]): real
/// optimisations of a whole API path rarely halve it, while a harness that
/// stopped doing its work (an early return, a skipped handshake) drops by
/// nearly 100 %.
pub const IMPLAUSIBLE_DROP_PERCENT: u8 = 50;

/// A harness's verdict: the judge's, for a harness measured on both
/// sides, or one of the cases only a diff has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Verdict {
    /// Measured on both sides and judged ([`crate::judge::judge`]).
    Judged(Change),
    /// The harness exists only in head.
    Added,
    /// The harness exists only in base.
    Removed,
    /// A side could not be measured; see the harness's `error`.
    Failed,
}

impl Verdict {
    pub const REGRESSED: Verdict = Verdict::Judged(Change::Regressed);

    /// Whether the change is beyond the threshold.
    pub fn is_significant(self) -> bool {
        matches!(self, Verdict::Judged(change) if change.is_significant())
    }

    pub fn label(self) -> &'static str {
        match self {
            Verdict::Judged(change) => change.label(),
            Verdict::Added => "added",
            Verdict::Removed => "removed",
            Verdict::Failed => "FAILED",
        }
    }

    /// The name in `report.json`: `regressed`, `within-threshold`, `added`.
    fn key(self) -> &'static str {
        match self {
            Verdict::Judged(Change::Regressed) => "regressed",
            Verdict::Judged(Change::Improved) => "improved",
            Verdict::Judged(Change::WithinThreshold) => "within-threshold",
            Verdict::Judged(Change::Unchanged) => "unchanged",
            Verdict::Added => "added",
            Verdict::Removed => "removed",
            Verdict::Failed => "failed",
        }
    }
}

impl From<Verdict> for String {
    fn from(verdict: Verdict) -> String {
        verdict.key().to_owned()
    }
}

/// A verdict's key that names no verdict (in a report read back).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown verdict {0:?}")]
pub struct UnknownVerdict(pub String);

impl TryFrom<String> for Verdict {
    type Error = UnknownVerdict;

    fn try_from(key: String) -> Result<Verdict, UnknownVerdict> {
        [
            Verdict::REGRESSED,
            Verdict::Judged(Change::Improved),
            Verdict::Judged(Change::WithinThreshold),
            Verdict::Judged(Change::Unchanged),
            Verdict::Added,
            Verdict::Removed,
            Verdict::Failed,
        ]
        .into_iter()
        .find(|verdict| verdict.key() == key)
        .ok_or(UnknownVerdict(key))
    }
}

/// One harness compared across the two commits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessDiff {
    /// Checked when a report is read: a name that is not a harness name
    /// does not load.
    pub harness: HarnessName,
    pub verdict: Verdict,
    /// The region count of base; absent when the harness is not in base or
    /// could not be measured there.
    pub base: Option<u64>,
    pub head: Option<u64>,
    /// `head - base`, when both were measured.
    pub delta: Option<i64>,
    /// The threshold the change was judged by: the harness's committed one
    /// (from base's `baselines/`, else head's), else the default.
    pub threshold: Threshold,
    /// The largest change the threshold allows for this base count.
    pub allowance: Option<u64>,
    /// Whether the change is beyond the threshold (`regressed`/`improved`).
    pub significant: bool,
    /// The change per origin, largest first.
    pub origins: Vec<OriginDelta>,
    /// Every function whose cost changed, largest change first.
    pub functions: Vec<FunctionDelta>,
    /// `cg_annotate`'s per-function diff, relative to the workspace root.
    pub annotated_diff: Option<String>,
    /// The differential flame graph (head coloured by its change against
    /// base), relative to the workspace root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flame_graph: Option<String>,
    /// What went wrong, when something did.
    pub error: Option<String>,
    /// The threshold of the heap figures (the harness's committed one,
    /// else the default).
    #[serde(default = "Threshold::heap_default")]
    pub heap_threshold: Threshold,
    /// The figures besides the count, base against head: each side's and
    /// stage's instructions, the heap figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<FigureDiff>,
    /// When a heap figure moved: the allocation sites that changed, with
    /// their call stacks, largest change first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heap_sites: Vec<SiteDelta>,
}

impl HarnessDiff {
    /// A harness measured on both sides.
    pub fn compared(
        harness: &HarnessName,
        base: u64,
        head: u64,
        threshold: Threshold,
        functions: Vec<FunctionDelta>,
    ) -> HarnessDiff {
        let judgement = judge(base, head, threshold);
        // Both counts come from this run's measurements, which are `i64`
        // profile totals, so the difference fits; saturate rather than wrap
        // should that ever change.
        let delta = i64::try_from(judgement.delta()).unwrap_or(if judgement.delta() < 0 {
            i64::MIN
        } else {
            i64::MAX
        });
        HarnessDiff {
            harness: harness.clone(),
            verdict: Verdict::Judged(judgement.change),
            base: Some(base),
            head: Some(head),
            delta: Some(delta),
            threshold,
            allowance: Some(judgement.allowance),
            significant: judgement.change.is_significant(),
            origins: origin_deltas(&functions),
            functions,
            annotated_diff: None,
            flame_graph: None,
            error: None,
            heap_threshold: Threshold::heap_default(),
            figures: Vec::new(),
            heap_sites: Vec::new(),
        }
    }

    /// A harness that exists on one side only.
    pub fn one_sided(
        harness: &HarnessName,
        base: Option<u64>,
        head: Option<u64>,
        threshold: Threshold,
    ) -> HarnessDiff {
        HarnessDiff {
            harness: harness.clone(),
            verdict: if base.is_some() {
                Verdict::Removed
            } else {
                Verdict::Added
            },
            base,
            head,
            delta: None,
            threshold,
            allowance: None,
            significant: false,
            origins: Vec::new(),
            functions: Vec::new(),
            annotated_diff: None,
            flame_graph: None,
            error: None,
            heap_threshold: Threshold::heap_default(),
            figures: Vec::new(),
            heap_sites: Vec::new(),
        }
    }

    /// A harness that could not be compared.
    pub fn failed(
        harness: &HarnessName,
        base: Option<u64>,
        head: Option<u64>,
        threshold: Threshold,
        error: String,
    ) -> HarnessDiff {
        HarnessDiff {
            verdict: Verdict::Failed,
            error: Some(error),
            ..HarnessDiff::one_sided(harness, base, head, threshold)
        }
    }

    /// Whether the count or a figure regressed beyond its threshold.
    pub fn regressed(&self) -> bool {
        self.verdict == Verdict::REGRESSED
            || super::figure_deltas::regressed(&self.figures)
                .next()
                .is_some()
    }

    /// Why a maintainer must look at this harness before the gate passes,
    /// if they must: a harness on one side only (a rename, or a harness a
    /// pull request dropped, walks around its own threshold), or a drop
    /// beyond [`IMPLAUSIBLE_DROP_PERCENT`] (a harness made to measure
    /// nothing passes as "improved"). A plain comparison cannot tell these
    /// from real changes, so the diff asks, and `--accept NAME` answers.
    pub fn attention(&self) -> Option<String> {
        match (self.verdict, self.base, self.head) {
            (Verdict::Removed, _, _) => Some(
                "removed: the head no longer has this harness (renamed or deleted), so nothing \
                 gates its path any more"
                    .to_owned(),
            ),
            (Verdict::Added, _, _) => Some(
                "added: the base has no such harness, so its count is judged against nothing"
                    .to_owned(),
            ),
            (Verdict::Judged(Change::Improved), Some(base), Some(head))
                if u128::from(head) * 100
                    < u128::from(base) * (100 - u128::from(IMPLAUSIBLE_DROP_PERCENT)) =>
            {
                Some(format!(
                    "dropped by {} (more than {IMPLAUSIBLE_DROP_PERCENT} %): check the head \
                     still runs the whole path before taking it as an improvement",
                    self.percent()
                        .map_or_else(|| "-".to_owned(), |p| format!("{p:.1} %"))
                ))
            }
            _ => None,
        }
    }

    /// The relative change in percent, when there is one.
    pub fn percent(&self) -> Option<f64> {
        let base = self.base.filter(|base| *base > 0)?;
        Some(self.delta? as f64 / base as f64 * 100.0)
    }
}

/// Orders harnesses for reading: failures first (they need attention and
/// have no size), then by the size of the change, regressions and
/// improvements alike, then added and removed harnesses, each group by name.
pub fn sort(harnesses: &mut [HarnessDiff]) {
    harnesses.sort_by(|a, b| {
        group(a)
            .cmp(&group(b))
            .then_with(|| {
                let size = |h: &HarnessDiff| h.delta.map_or(0, i64::unsigned_abs);
                size(b).cmp(&size(a))
            })
            .then_with(|| a.harness.cmp(&b.harness))
    });
}

fn group(harness: &HarnessDiff) -> u8 {
    match harness.verdict {
        Verdict::Failed => 0,
        Verdict::Added | Verdict::Removed => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::name;
    use regress_profile::FunctionCost;

    fn profile(functions: &[(&str, &str, i64)]) -> Profile {
        Profile {
            command: None,
            events: vec!["Ir".into()],
            summary: vec![functions.iter().map(|f| f.2).sum()],
            functions: functions
                .iter()
                .map(|(file, function, instructions)| FunctionCost {
                    file: (*file).into(),
                    function: (*function).into(),
                    instructions: *instructions,
                })
                .collect(),
        }
    }

    #[test]
    fn lines_functions_up_across_worktrees_and_sorts_by_size() {
        let base = profile(&[
            (
                "/w/target/regress-diff/base-aaaa/harnesses/src/calibration.rs",
                "harnesses::calibration::spin::h0123456789abcdef",
                6_000_000,
            ),
            ("???", "aws_lc_0_47_0_bn_mul_mont_nohw", 500),
            ("./malloc/./malloc/malloc.c", "malloc", 100),
            ("???", "only_in_base", 7),
        ]);
        let head = profile(&[
            (
                "/w/target/regress-diff/head-bbbb/harnesses/src/calibration.rs",
                "harnesses::calibration::spin::hfedcba9876543210",
                6_300_000,
            ),
            ("???", "aws_lc_0_47_0_bn_mul_mont_nohw", 200),
            ("./malloc/./malloc/malloc.c", "malloc", 100),
            ("???", "only_in_head", 9),
        ]);
        let deltas = function_deltas(&base, &head, &Normalizer::default());
        let summary: Vec<(&str, i64, Origin)> = deltas
            .iter()
            .map(|d| (d.function.as_str(), d.delta, d.origin))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("harnesses::calibration::spin", 300_000, Origin::Harness),
                ("bn_mul_mont_nohw", -300, Origin::AwsLc),
                ("only_in_head", 9, Origin::Unknown),
                ("only_in_base", -7, Origin::Unknown),
            ]
        );
        assert_eq!(deltas[0].file, "harnesses/src/calibration.rs");
        assert_eq!((deltas[0].base, deltas[0].head), (6_000_000, 6_300_000));
        let total: i64 = deltas.iter().map(|d| d.delta).sum();
        assert_eq!(total, head.summary[0] - base.summary[0]);

        let origins = origin_deltas(&deltas);
        assert_eq!(
            origins,
            vec![
                OriginDelta {
                    origin: Origin::Harness,
                    delta: 300_000
                },
                OriginDelta {
                    origin: Origin::AwsLc,
                    delta: -300
                },
                OriginDelta {
                    origin: Origin::Unknown,
                    delta: 2
                },
            ]
        );
    }

    #[test]
    fn names_that_normalise_alike_are_summed() {
        let base = profile(&[
            ("a.rs", "f::h0000000000000001", 10),
            ("a.rs", "f::h0000000000000002", 5),
        ]);
        let head = profile(&[("a.rs", "f::h0000000000000003", 15)]);
        assert!(function_deltas(&base, &head, &Normalizer::default()).is_empty());
    }

    #[test]
    fn a_compared_harness_is_judged_by_the_one_judge() {
        // The calibration change of the end-to-end test: 0.05 % of 6 M is
        // 3,000, so +300,000 is far beyond it.
        let diff = HarnessDiff::compared(
            &name("calibration::spin_2m"),
            6_000_027,
            6_300_027,
            Threshold::default(),
            Vec::new(),
        );
        let judgement = judge(6_000_027, 6_300_027, Threshold::default());
        assert_eq!(diff.verdict, Verdict::Judged(judgement.change));
        assert_eq!(diff.verdict, Verdict::REGRESSED);
        assert_eq!(diff.allowance, Some(judgement.allowance));
        assert_eq!(diff.allowance, Some(3_000));
        assert_eq!(diff.delta, Some(300_000));
        assert!(diff.significant);
        assert!((diff.percent().expect("percent") - 4.99997).abs() < 1e-3);
    }

    /// `report.json` keeps the names it always had, and refuses others.
    #[test]
    fn verdicts_keep_their_report_names() {
        for (verdict, key) in [
            (Verdict::REGRESSED, "\"regressed\""),
            (
                Verdict::Judged(Change::WithinThreshold),
                "\"within-threshold\"",
            ),
            (Verdict::Added, "\"added\""),
            (Verdict::Failed, "\"failed\""),
        ] {
            assert_eq!(serde_json::to_string(&verdict).expect("json"), key);
            assert_eq!(serde_json::from_str::<Verdict>(key).expect("back"), verdict);
        }
        assert!(serde_json::from_str::<Verdict>("\"exploded\"").is_err());
    }

    #[test]
    fn sorting_puts_failures_first_then_size_then_one_sided() {
        let t = Threshold::default();
        let mut list = vec![
            HarnessDiff::one_sided(&name("z::added"), None, Some(5), t),
            HarnessDiff::compared(&name("a::small"), 1_000_000, 1_000_010, t, Vec::new()),
            HarnessDiff::compared(&name("b::improved"), 1_000_000, 900_000, t, Vec::new()),
            HarnessDiff::compared(&name("c::regressed"), 1_000_000, 1_050_000, t, Vec::new()),
            HarnessDiff::failed(&name("y::broken"), Some(1), None, t, "boom".into()),
            HarnessDiff::one_sided(&name("a::removed"), Some(5), None, t),
            HarnessDiff::compared(&name("d::same"), 1_000_000, 1_000_000, t, Vec::new()),
        ];
        sort(&mut list);
        let order: Vec<&str> = list.iter().map(|h| h.harness.as_str()).collect();
        assert_eq!(
            order,
            vec![
                "y::broken",
                "b::improved",
                "c::regressed",
                "a::small",
                "d::same",
                "a::removed",
                "z::added"
            ]
        );
    }
}
