//! The HTML page's charts and tables of who pays per handshake (server,
//! client, stages) and what a connection holds (heap).

use std::fmt::Write;

use super::svg::{self, escape, Axis, Series};
use super::{style, table_html, Chart};
use crate::measure::metrics::Metric;
use crate::report::compare::Comparison;
use crate::report::sides;

/// Who pays per handshake (server, client) and what an idle connection
/// holds, one bar per library: drawn only when the records have them.
pub(super) fn charts(comparison: &Comparison, tls: &[(&str, &str)]) -> Vec<Chart> {
    let handshakes: Vec<String> = comparison
        .paths
        .iter()
        .filter(|row| row.libraries.values().any(|cell| cell.sides))
        .map(|row| row.path.clone())
        .collect();
    let mut charts = Vec::new();
    for (file, title, axis, metric, unit) in [
        (
            "server-instructions.svg",
            "Server instructions per handshake by library",
            Axis::Log,
            Metric::Server,
            "instructions (one run)",
        ),
        (
            "client-instructions.svg",
            "Client instructions per handshake by library",
            Axis::Log,
            Metric::Client,
            "instructions (one run)",
        ),
        (
            "server-held.svg",
            "Bytes the server holds per idle connection by library",
            Axis::Linear,
            Metric::ServerHeld,
            "bytes after the handshake",
        ),
    ] {
        let series: Vec<Series> = tls
            .iter()
            .map(|(name, display)| Series {
                name: (*display).to_owned(),
                values: handshakes
                    .iter()
                    .map(|path| {
                        comparison
                            .cell(path, name)
                            .and_then(|cell| cell.figures.get(&metric))
                            .map(|value| *value as f64)
                    })
                    .collect(),
                style: style(name, 0),
            })
            .filter(|s| s.values.iter().any(Option::is_some))
            .collect();
        if !series.is_empty() {
            charts.push(Chart {
                file: file.into(),
                svg: svg::bar_chart(title, unit, axis, &handshakes, &series),
                title: title.to_owned(),
            });
        }
    }
    charts
}

/// The tables of who pays, the stages, what each side holds and the heap.
pub(super) fn tables(out: &mut String, comparison: &Comparison) {
    let any = comparison
        .paths
        .iter()
        .flat_map(|row| row.libraries.values())
        .any(|cell| !cell.figures.is_empty());
    if !any {
        return;
    }
    out.push_str(
        "<h2>Who pays: server and client instructions per handshake</h2>\n<p>Paths without \
         a handshake cannot be split by side and are not listed.</p>\n",
    );
    out.push_str(&table_html(&sides::payers_table(comparison)));
    out.push_str(
        "<h2>Stages</h2>\n<p>The server's answer to the ClientHello (<code>server_flight</code>) \
         is what any client can make a server spend. Stages and glue add up to the count.</p>\n",
    );
    out.push_str(&table_html(&sides::stages_table(comparison)));
    out.push_str("<h2>Bytes each side holds after the handshake</h2>\n");
    out.push_str(&table_html(&sides::held_table(comparison, false)));
    out.push_str("<h2>Bytes each side holds after the first record</h2>\n");
    out.push_str(&table_html(&sides::held_table(comparison, true)));
    out.push_str(
        "<h2>Heap of each run</h2>\n<p>Allocations / bytes allocated / peak live bytes of \
         the run's own blocks; record paths also bytes allocated per MiB sent.</p>\n",
    );
    out.push_str(&table_html(&sides::heap_table(comparison)));
    if let Some(note) = sides::aead_heap_note(comparison) {
        let _ = writeln!(out, "<p>{}</p>", escape(&note));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::metrics::Metrics;
    use crate::report::compare::Count;

    /// Handshakes with figures get the server, client and held charts and
    /// the side tables; a comparison without figures gets neither.
    #[test]
    fn figures_make_charts_and_tables_and_their_absence_none() {
        let mut count = Count::from(&crate::fixtures::measurement(
            "rustls::handshake_rsa4096",
            110,
            None,
        ));
        count.sides = true;
        count.metrics = Metrics::from([
            (Metric::Client, 40),
            (Metric::Server, 60),
            (Metric::Glue, 10),
            (Metric::ClientHello, 1),
            (Metric::ClientFinish, 39),
            (Metric::ServerFlight, 60),
            (Metric::ServerFinish, 0),
            (Metric::ServerHeld, 6_345),
            (Metric::ClientHeld, 7_688),
        ]);
        let comparison = Comparison::new(&[count.clone()]);
        let tls = [("rustls", "rustls")];
        let files: Vec<String> = charts(&comparison, &tls)
            .into_iter()
            .map(|c| c.file)
            .collect();
        assert_eq!(
            files,
            [
                "server-instructions.svg",
                "client-instructions.svg",
                "server-held.svg"
            ]
        );
        let mut html = String::new();
        tables(&mut html, &comparison);
        assert!(html.contains("<h2>Who pays"), "{html}");
        assert!(html.contains("<td>6,345</td><td>7,688</td>"), "{html}");
        count.metrics.clear();
        count.sides = false;
        let bare = Comparison::new(&[count]);
        assert!(charts(&bare, &tls).is_empty());
        let mut html = String::new();
        tables(&mut html, &bare);
        assert!(html.is_empty());
    }
}
