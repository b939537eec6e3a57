//! How a diff shows the figures besides the count (sides, stages, heap) and
//! the allocation sites that changed, on a terminal and in the Markdown.
//! Frames are text from the measured program: shown as code only.

use std::fmt::Write as _;

use crate::compare::site_text;
use crate::compare::{HarnessDiff, Verdict};
use crate::judge::Change;
use crate::report::html::svg::escape as html;
use crate::report::markdown::block;

/// Sites shown in the Markdown per harness.
const MARKDOWN_SITES: usize = 5;

/// The figures beyond their threshold, `server +0.20%, bytes_allocated
/// +5.00%`, or `-`.
pub fn summary(harness: &HarnessDiff) -> String {
    let notable: Vec<String> = harness
        .figures
        .iter()
        .filter(|figure| figure.verdict.is_significant())
        .map(|figure| {
            let change = match (figure.base, figure.head) {
                (Some(base), Some(head)) => crate::format::signed_percent(base, head),
                _ => figure.verdict.label().to_owned(),
            };
            format!("{} {change}", figure.metric.key())
        })
        .collect();
    if notable.is_empty() {
        "-".to_owned()
    } else {
        notable.join(", ")
    }
}

/// The changed figures and sites of `harness`, for the terminal; empty
/// when nothing changed.
pub fn text(harness: &HarnessDiff) -> String {
    let mut out = String::new();
    let changed: Vec<_> = harness.figures.iter().filter(|f| f.changed()).collect();
    if !changed.is_empty() {
        let _ = writeln!(out, "  figures that changed:");
        for figure in changed {
            let _ = writeln!(
                out,
                "    {:<26} {}  {}",
                figure.metric.key(),
                figure.describe(),
                figure.verdict.label()
            );
        }
    }
    if !harness.heap_sites.is_empty() {
        let _ = writeln!(
            out,
            "  allocation sites that changed (DHAT, innermost frame first):"
        );
        for site in &harness.heap_sites {
            for line in site_text(site).lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    out
}

fn emoji(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Judged(Change::Regressed) => "🔴",
        Verdict::Judged(Change::Improved) => "🟢",
        _ => "🟡",
    }
}

/// The collapsible section of `harness`'s changed figures and sites, for
/// the Markdown; empty when nothing changed.
pub fn markdown(harness: &HarnessDiff) -> String {
    let changed: Vec<_> = harness.figures.iter().filter(|f| f.changed()).collect();
    if changed.is_empty() && harness.heap_sites.is_empty() {
        return String::new();
    }
    let worst = changed
        .iter()
        .map(|f| f.verdict)
        .find(|v| *v == Verdict::REGRESSED)
        .or_else(|| {
            changed
                .iter()
                .map(|f| f.verdict)
                .find(|v| v.is_significant())
        })
        .unwrap_or(Verdict::Judged(Change::WithinThreshold));
    let mut out = format!(
        "<details><summary>{} <code>{}</code>: sides, stages and heap that changed</summary>\n\n",
        emoji(worst),
        html(&harness.harness)
    );
    if !changed.is_empty() {
        out.push_str("| figure | base → head | verdict |\n|:---|---:|:---|\n");
        for figure in changed {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                figure.metric.label(),
                figure.describe(),
                figure.verdict.label().to_lowercase()
            );
        }
    }
    if !harness.heap_sites.is_empty() {
        out.push_str("\nAllocation sites that changed (DHAT, innermost frame first):\n\n");
        let shown = &harness.heap_sites[..harness.heap_sites.len().min(MARKDOWN_SITES)];
        let text: String = shown.iter().map(site_text).collect();
        out.push_str(&block(&text));
        out.push('\n');
    }
    out.push_str("\n</details>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{figure_diffs, SiteDelta};
    use crate::judge::Threshold;
    use crate::measure::metrics::{Metric, Metrics};

    fn harness() -> HarnessDiff {
        let name = crate::fixtures::name("s2n_tls::handshake_rsa4096");
        let mut diff = HarnessDiff::compared(&name, 100, 100, Threshold::default(), Vec::new());
        diff.figures = figure_diffs(
            &Metrics::from([(Metric::ServerHeld, 10_000), (Metric::Server, 60)]),
            &Metrics::from([(Metric::ServerHeld, 10_064), (Metric::Server, 60)]),
            Threshold::default(),
            Threshold::heap_default(),
        );
        diff.heap_sites = vec![SiteDelta {
            stack: vec!["s2n_alloc (s2n_mem.c)".into(), "<img src=x> (`x`)".into()],
            base_bytes: 100,
            head_bytes: 164,
            base_blocks: 1,
            head_blocks: 2,
        }];
        diff
    }

    #[test]
    fn changed_figures_and_sites_are_shown_and_frames_stay_code() {
        let diff = harness();
        assert!(
            diff.regressed(),
            "a heap figure's regression is the harness's"
        );
        assert_eq!(summary(&diff), "server_held +0.64%");
        let text = text(&diff);
        assert!(text.contains("server_held"), "{text}");
        assert!(
            !text.contains("    server "),
            "unchanged figures are not listed: {text}"
        );
        assert!(text.contains("+64 bytes (100 -> 164)"), "{text}");
        let markdown = markdown(&diff);
        assert!(markdown.contains("| bytes the server holds after the handshake | 10,000 -> 10,064 (+64, +0.64%) | regressed |"), "{markdown}");
        // Frames from the program are inside a fenced block, never markup.
        let fenced = markdown.split("```").nth(1).expect("a code block");
        assert!(fenced.contains("<img src=x>"), "{markdown}");
        assert_eq!(markdown.matches("<img").count(), 1, "{markdown}");
    }
}
