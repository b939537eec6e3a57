//! What a diff says of the figures besides the count: each side's and
//! stage's instructions and the heap figures, base against head, judged by
//! the one judge; and when the heap figures moved, which allocation sites
//! changed, with their call stacks (DHAT, [`regress_profile::dhat`]).

use serde::{Deserialize, Serialize};

use super::functions::Verdict;
use super::normalize::Normalizer;
use crate::format::{count, signed, signed_percent};
use crate::judge::{judge, Change, Threshold};
use crate::measure::metrics::{Kind, Metric, Metrics};
use regress_profile::dhat::{Allocated, Sites};

/// Allocation sites listed per harness.
pub const MAX_SITES: usize = 12;
/// Frames shown per site.
pub const MAX_FRAMES: usize = 24;

/// One figure of a harness, base against head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureDiff {
    pub metric: Metric,
    pub base: Option<u64>,
    pub head: Option<u64>,
    /// `judged` when both sides have it; `added`/`removed` otherwise.
    pub verdict: Verdict,
    /// The largest change its threshold allows for the base figure.
    pub allowance: Option<u64>,
}

impl FigureDiff {
    /// Whether the figure changed at all.
    pub fn changed(&self) -> bool {
        self.base != self.head
    }

    /// `72,838,414 -> 72,900,000 (+61,586, +0.08%)`.
    pub fn describe(&self) -> String {
        match (self.base, self.head) {
            (Some(base), Some(head)) if base == head => count(head),
            (Some(base), Some(head)) => format!(
                "{} -> {} ({}, {})",
                count(base),
                count(head),
                signed(i128::from(head) - i128::from(base)),
                signed_percent(base, head)
            ),
            (None, Some(head)) => format!("new: {}", count(head)),
            (Some(base), None) => format!("gone (was {})", count(base)),
            (None, None) => "-".to_owned(),
        }
    }
}

/// Every figure either side has, judged with `threshold` (instructions) or
/// `heap_threshold` (allocations, bytes).
pub fn figure_diffs(
    base: &Metrics,
    head: &Metrics,
    threshold: Threshold,
    heap_threshold: Threshold,
) -> Vec<FigureDiff> {
    Metric::ALL
        .into_iter()
        .filter_map(|metric| {
            let (base, head) = (base.get(&metric).copied(), head.get(&metric).copied());
            let threshold = metric.threshold(threshold, heap_threshold);
            let (verdict, allowance) = match (base, head) {
                (Some(base), Some(head)) => {
                    let judgement = judge(base, head, threshold);
                    (Verdict::Judged(judgement.change), Some(judgement.allowance))
                }
                (None, Some(_)) => (Verdict::Added, None),
                (Some(_), None) => (Verdict::Removed, None),
                (None, None) => return None,
            };
            Some(FigureDiff {
                metric,
                base,
                head,
                verdict,
                allowance,
            })
        })
        .collect()
}

/// Whether any heap figure moved: the diff then looks for the sites.
pub fn heap_moved(figures: &[FigureDiff]) -> bool {
    figures
        .iter()
        .any(|figure| figure.metric.kind() == Kind::Heap && figure.changed())
}

/// The figures that regressed.
pub fn regressed(figures: &[FigureDiff]) -> impl Iterator<Item = &FigureDiff> {
    figures
        .iter()
        .filter(|figure| figure.verdict == Verdict::Judged(Change::Regressed))
}

/// How one allocation site changed from base to head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteDelta {
    /// The call stack, innermost first (`function (file)`), normalised.
    pub stack: Vec<String>,
    pub base_bytes: i64,
    pub head_bytes: i64,
    pub base_blocks: i64,
    pub head_blocks: i64,
}

impl SiteDelta {
    pub fn bytes_delta(&self) -> i64 {
        self.head_bytes - self.base_bytes
    }

    pub fn blocks_delta(&self) -> i64 {
        self.head_blocks - self.base_blocks
    }
}

/// The sites whose bytes or blocks changed, largest change of bytes first
/// (then of blocks), at most [`MAX_SITES`], each stack cut to
/// [`MAX_FRAMES`] frames below the allocator. Function names are lined up
/// across the two builds as the per-function diff does.
pub fn site_deltas(base: &Sites, head: &Sites, normalizer: &Normalizer) -> Vec<SiteDelta> {
    let normalise = |sites: &Sites| -> Sites {
        let mut out = Sites::new();
        for (stack, allocated) in sites {
            let stack: Vec<String> = stack
                .iter()
                .skip_while(|frame| is_allocator(frame))
                .take(MAX_FRAMES)
                .map(|frame| match frame.split_once(" (") {
                    Some((function, rest)) => {
                        format!("{} ({rest}", normalizer.function(function))
                    }
                    None => normalizer.function(frame).into_owned(),
                })
                .collect();
            let site = out.entry(stack).or_default();
            site.bytes += allocated.bytes;
            site.blocks += allocated.blocks;
        }
        out
    };
    let (base, head) = (normalise(base), normalise(head));
    let mut deltas: Vec<SiteDelta> = base
        .keys()
        .chain(head.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|stack| {
            let b = base.get(stack).copied().unwrap_or_default();
            let h = head.get(stack).copied().unwrap_or(Allocated::default());
            SiteDelta {
                stack: stack.clone(),
                base_bytes: b.bytes,
                head_bytes: h.bytes,
                base_blocks: b.blocks,
                head_blocks: h.blocks,
            }
        })
        .filter(|delta| delta.bytes_delta() != 0 || delta.blocks_delta() != 0)
        .collect();
    deltas.sort_by(|a, b| {
        b.bytes_delta()
            .unsigned_abs()
            .cmp(&a.bytes_delta().unsigned_abs())
            .then_with(|| {
                b.blocks_delta()
                    .unsigned_abs()
                    .cmp(&a.blocks_delta().unsigned_abs())
            })
            .then_with(|| a.stack.cmp(&b.stack))
    });
    deltas.truncate(MAX_SITES);
    deltas
}

/// The allocator's own frames, at the top of every stack.
fn is_allocator(frame: &str) -> bool {
    frame.contains("(in vgpreload_")
        || frame.starts_with("__rust_alloc")
        || frame.starts_with("__rdl_")
}

/// A site as lines: its change, then its frames.
pub fn site_text(site: &SiteDelta) -> String {
    let mut out = format!(
        "{} bytes ({} -> {}), {} blocks ({} -> {})\n",
        signed(site.bytes_delta()),
        count(site.base_bytes.max(0) as u64),
        count(site.head_bytes.max(0) as u64),
        signed(site.blocks_delta()),
        count(site.base_blocks.max(0) as u64),
        count(site.head_blocks.max(0) as u64),
    );
    for frame in &site.stack {
        out.push_str("    ");
        out.push_str(frame);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_judged_by_kind_and_one_sided_ones_are_said_so() {
        let base = Metrics::from([(Metric::Server, 1_000_000), (Metric::ServerHeld, 10_000)]);
        let head = Metrics::from([
            (Metric::Server, 1_000_400),
            (Metric::ServerHeld, 10_011),
            (Metric::ClientHeld, 5),
        ]);
        let figures = figure_diffs(
            &base,
            &head,
            Threshold::default(),
            Threshold::heap_default(),
        );
        let verdict = |metric| {
            figures
                .iter()
                .find(|f| f.metric == metric)
                .map(|f| f.verdict)
        };
        // 400 instructions are within 1,000; 11 bytes on 10,000 are over 0.1 %.
        assert_eq!(
            verdict(Metric::Server),
            Some(Verdict::Judged(Change::WithinThreshold))
        );
        assert_eq!(verdict(Metric::ServerHeld), Some(Verdict::REGRESSED));
        assert_eq!(verdict(Metric::ClientHeld), Some(Verdict::Added));
        assert!(heap_moved(&figures));
        assert_eq!(regressed(&figures).count(), 1);
        assert_eq!(
            figures[0].describe(),
            "1,000,000 -> 1,000,400 (+400, +0.04%)"
        );
    }

    #[test]
    fn sites_line_up_below_the_allocator_and_largest_changes_come_first() {
        let stack = |frames: &[&str]| -> Vec<String> {
            let mut stack = vec!["malloc (in vgpreload_dhat-amd64-linux.so)".to_owned()];
            stack.extend(frames.iter().map(|f| (*f).to_owned()));
            stack
        };
        let base = Sites::from([
            (
                stack(&["s2n_alloc (s2n_mem.c)"]),
                Allocated {
                    bytes: 100,
                    blocks: 1,
                },
            ),
            (
                stack(&["same (x.c)"]),
                Allocated {
                    bytes: 7,
                    blocks: 1,
                },
            ),
        ]);
        let head = Sites::from([
            (
                stack(&["s2n_alloc (s2n_mem.c)"]),
                Allocated {
                    bytes: 164,
                    blocks: 2,
                },
            ),
            (
                stack(&["same (x.c)"]),
                Allocated {
                    bytes: 7,
                    blocks: 1,
                },
            ),
            (
                stack(&["new_one (y.c)"]),
                Allocated {
                    bytes: 8,
                    blocks: 1,
                },
            ),
        ]);
        let deltas = site_deltas(&base, &head, &Normalizer::default());
        assert_eq!(deltas.len(), 2);
        assert_eq!(deltas[0].stack, ["s2n_alloc (s2n_mem.c)"]);
        assert_eq!((deltas[0].bytes_delta(), deltas[0].blocks_delta()), (64, 1));
        assert_eq!(deltas[1].base_bytes, 0);
        assert!(site_text(&deltas[0])
            .starts_with("+64 bytes (100 -> 164), +1 blocks (1 -> 2)\n    s2n_alloc"));
    }
}
