//! Bencher Metric Format: a diff's head counts and figures for Bencher.

use std::collections::BTreeMap;

use super::report::DiffReport;

/// Bencher Metric Format: `{ "<harness>": { "instructions": { "value": N },
/// "server": { "value": N }, ... } }`, the head's count and figures of
/// every harness head has.
pub fn bmf(report: &DiffReport) -> serde_json::Value {
    let metrics: BTreeMap<&str, serde_json::Value> = report
        .harnesses
        .iter()
        .filter_map(|harness| {
            let value = harness.head?;
            let mut measures = serde_json::Map::new();
            measures.insert(
                "instructions".to_owned(),
                serde_json::json!({ "value": value }),
            );
            for figure in &harness.figures {
                if let Some(head) = figure.head {
                    measures.insert(
                        figure.metric.key().to_owned(),
                        serde_json::json!({ "value": head }),
                    );
                }
            }
            Some((
                harness.harness.as_str(),
                serde_json::Value::Object(measures),
            ))
        })
        .collect();
    serde_json::json!(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::figure_diffs;
    use crate::compare::HarnessDiff;
    use crate::diff::report::tests::report;
    use crate::fixtures::name;
    use crate::judge::Threshold;
    use crate::measure::metrics::{Metric, Metrics};

    #[test]
    fn bmf_has_the_head_counts_and_figures() {
        let mut handshake = HarnessDiff::compared(
            &name("rustls::handshake"),
            76_533_000,
            76_533_873,
            Threshold::default(),
            Vec::new(),
        );
        handshake.figures = figure_diffs(
            &Metrics::from([(Metric::Server, 70_000_000)]),
            &Metrics::from([(Metric::Server, 70_000_100), (Metric::ServerHeld, 6_345)]),
            Threshold::default(),
            Threshold::heap_default(),
        );
        let removed = HarnessDiff::one_sided(&name("a::gone"), Some(5), None, Threshold::default());
        let value = bmf(&report(vec![handshake, removed], Vec::new()));
        assert_eq!(
            value,
            serde_json::json!({
                "rustls::handshake": {
                    "instructions": { "value": 76_533_873 },
                    "server": { "value": 70_000_100 },
                    "server_held": { "value": 6_345 },
                },
            })
        );
    }
}
