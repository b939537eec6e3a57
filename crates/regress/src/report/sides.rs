//! Who pays and what a connection holds, library by library: the tables of
//! a [`Comparison`]'s other figures.
//!
//! - [`payers_table`]: server and client instructions per handshake path;
//! - [`stages_table`]: each handshake split into its four stages and the
//!   harness's glue, with the check that they add up;
//! - [`held_table`]: the bytes each side's connection holds after the
//!   handshake (and after the first record);
//! - [`heap_table`]: allocations, bytes and peak of every path's run.
//!
//! A path without a handshake cannot be split by side; it has no row in the
//! side tables, and a cell of a library whose record has no split (a
//! program from before it) says `not split` rather than showing zeros.

use super::compare::{Cell, Comparison};
use super::libraries;
use super::Table;
use crate::format::count;
use crate::measure::metrics::Metric;

/// The TLS libraries, in column order.
fn tls_libraries(comparison: &Comparison) -> Vec<(&'static str, &'static str)> {
    libraries::tls()
        .map(|library| (library.id, library.name))
        .filter(|(name, _)| {
            comparison
                .paths
                .iter()
                .any(|row| row.libraries.contains_key(*name))
        })
        .collect()
}

/// The paths whose runs some library splits by side: the handshakes.
fn handshake_paths(comparison: &Comparison) -> Vec<&str> {
    comparison
        .paths
        .iter()
        .filter(|row| row.libraries.values().any(|cell| cell.sides))
        .map(|row| row.path.as_str())
        .collect()
}

/// A cell's figure, or why there is none: `n/a` (no such path), `not
/// split` (a handshake whose record has no split), `-` (no such figure).
fn figure(cell: Option<&Cell>, metric: Metric, show: impl Fn(u64) -> String) -> String {
    match cell {
        None => "n/a".to_owned(),
        Some(cell) => match cell.figures.get(&metric) {
            Some(value) => show(*value),
            None if cell.sides && metric.kind() == crate::measure::metrics::Kind::Instructions => {
                "not split".to_owned()
            }
            None => "-".to_owned(),
        },
    }
}

/// A table with one column per library and per `(label, metric)`, over the
/// handshake paths.
fn by_library(
    comparison: &Comparison,
    columns: &[(&str, Metric)],
    show: &dyn Fn(u64) -> String,
) -> Table {
    let libraries = tls_libraries(comparison);
    let mut header = vec!["path".to_owned()];
    for (_, display) in &libraries {
        for (label, _) in columns {
            header.push(format!("{display} {label}"));
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for path in handshake_paths(comparison) {
        let mut row = vec![path.to_owned()];
        for (library, _) in &libraries {
            for (_, metric) in columns {
                row.push(figure(comparison.cell(path, library), *metric, show));
            }
        }
        table.row(row);
    }
    table
}

/// Server and client instructions per handshake, by library.
pub fn payers_table(comparison: &Comparison) -> Table {
    by_library(
        comparison,
        &[("server", Metric::Server), ("client", Metric::Client)],
        &count,
    )
}

/// The bytes each side's connection holds after the handshake, by
/// library; `after_record` for after the first application record.
pub fn held_table(comparison: &Comparison, after_record: bool) -> Table {
    let columns = if after_record {
        [
            ("server", Metric::ServerHeldAfterRecord),
            ("client", Metric::ClientHeldAfterRecord),
        ]
    } else {
        [
            ("server", Metric::ServerHeld),
            ("client", Metric::ClientHeld),
        ]
    };
    by_library(comparison, &columns, &count)
}

/// Every handshake of every library split into its stages and the glue,
/// and their sum (which is the path's count: the runner checks it).
pub fn stages_table(comparison: &Comparison) -> Table {
    let mut table = Table::new(&[
        "path",
        "library",
        "client_hello",
        "server_flight",
        "client_finish",
        "server_finish",
        "glue",
        "sum = count",
    ]);
    for path in handshake_paths(comparison) {
        for (library, display) in tls_libraries(comparison) {
            let Some(cell) = comparison.cell(path, library) else {
                continue;
            };
            let mut row = vec![path.to_owned(), display.to_owned()];
            for metric in [
                Metric::ClientHello,
                Metric::ServerFlight,
                Metric::ClientFinish,
                Metric::ServerFinish,
                Metric::Glue,
            ] {
                row.push(figure(Some(cell), metric, count));
            }
            row.push(count(cell.instructions));
            table.row(row);
        }
    }
    table
}

/// Allocations, bytes allocated and peak live bytes of every TLS path's
/// run, by library; record paths also per MiB sent. (The aws-lc-rs AEAD
/// paths are summed up by [`aead_heap_note`].)
pub fn heap_table(comparison: &Comparison) -> Table {
    let libraries = tls_libraries(comparison);
    let mut header = vec!["path".to_owned()];
    for (_, display) in &libraries {
        header.push(format!("{display} allocations / bytes / peak"));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for row in &comparison.paths {
        if !libraries
            .iter()
            .any(|(name, _)| row.libraries.contains_key(*name))
        {
            continue;
        }
        let mut cells = vec![row.path.clone()];
        for (library, _) in &libraries {
            cells.push(match row.libraries.get(*library) {
                None => "n/a".to_owned(),
                Some(cell) => heap_cell(&row.path, cell),
            });
        }
        table.row(cells);
    }
    table
}

/// One line on the aws-lc-rs AEAD paths' heap figures: `None` when there
/// are none.
pub fn aead_heap_note(comparison: &Comparison) -> Option<String> {
    let cells: Vec<&Cell> = comparison
        .paths
        .iter()
        .filter_map(|row| row.libraries.get("aws_lc_rs"))
        .filter(|cell| cell.figures.contains_key(&Metric::Allocations))
        .collect();
    let most = cells
        .iter()
        .filter_map(|cell| cell.figures.get(&Metric::Allocations))
        .max()?;
    Some(format!(
        "aws-lc-rs AEAD paths: at most {} allocations in a run, over {} paths.",
        count(*most),
        cells.len()
    ))
}

/// `744 / 116,187 / 77,261`, with `(2,119,776 B/MiB)` for a record path.
fn heap_cell(path: &str, cell: &Cell) -> String {
    let get = |metric| cell.figures.get(&metric).copied();
    let (Some(allocations), Some(bytes), Some(peak)) = (
        get(Metric::Allocations),
        get(Metric::BytesAllocated),
        get(Metric::PeakLiveBytes),
    ) else {
        return "-".to_owned();
    };
    let per_mib = cell
        .instructions_per_byte
        .and_then(|per_byte| {
            // bytes per run = instructions / per byte; per MiB from there.
            let moved = cell.instructions as f64 / per_byte;
            (moved >= 1.0).then(|| bytes as f64 * f64::from(1 << 20) / moved)
        })
        .filter(|_| path.starts_with("record_"))
        .map_or_else(String::new, |per_mib| {
            format!(" ({} B/MiB)", count(per_mib.round() as u64))
        });
    format!(
        "{} / {} / {}{per_mib}",
        count(allocations),
        count(bytes),
        count(peak)
    )
}

/// Every table of this module as text, for `regress compare`; empty when
/// no record has the figures.
pub fn to_text(comparison: &Comparison) -> String {
    let any = comparison
        .paths
        .iter()
        .flat_map(|row| row.libraries.values())
        .any(|cell| !cell.figures.is_empty());
    if !any {
        return String::new();
    }
    let mut out = String::new();
    if !handshake_paths(comparison).is_empty() {
        out.push_str(
            "\nWho pays: instructions of the server's and the client's calls per handshake \
             (paths without a handshake cannot be split and are not listed)\n\n",
        );
        out.push_str(&payers_table(comparison).to_text());
        out.push_str("\nStages (the runner checks that they and the glue add up to the count)\n\n");
        out.push_str(&stages_table(comparison).to_text());
        out.push_str("\nBytes each side holds after the handshake (an idle connection)\n\n");
        out.push_str(&held_table(comparison, false).to_text());
        out.push_str("\nBytes each side holds after the first application record (1 KiB)\n\n");
        out.push_str(&held_table(comparison, true).to_text());
    }
    out.push_str(
        "\nHeap of each run: allocations / bytes allocated / peak live bytes of the run's \
         own blocks (record paths: bytes allocated per MiB sent)\n\n",
    );
    out.push_str(&heap_table(comparison).to_text());
    if let Some(note) = aead_heap_note(comparison) {
        out.push('\n');
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// The README's table of who pays and what an idle connection holds, by
/// library (generated from the baselines by `regress readme`).
pub fn to_markdown(comparison: &Comparison) -> String {
    let mut out = String::from(
        "Instructions of the server's and of the client's calls per handshake (one warm \
         run; the glue, a few hundred instructions of the harness, is the rest of the \
         count):\n\n",
    );
    out.push_str(&payers_table(comparison).to_markdown());
    out.push_str(
        "\nBytes each side's connection holds right after the handshake: the resident cost \
         of an idle connection (what its creation and its handshake allocated and did not \
         free; requested sizes, as `malloc` was asked):\n\n",
    );
    out.push_str(&held_table(comparison, false).to_markdown());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::metrics::Metrics;
    use crate::report::compare::Count;

    fn count_of(harness: &str, instructions: u64, metrics: Metrics, sides: bool) -> Count {
        let mut count = Count::from(&crate::fixtures::measurement(harness, instructions, None));
        count.metrics = metrics;
        count.sides = sides;
        count
    }

    fn split(client: u64, server: u64, held: u64) -> Metrics {
        Metrics::from([
            (Metric::Client, client),
            (Metric::Server, server),
            (Metric::Glue, 10),
            (Metric::ClientHello, 1),
            (Metric::ClientFinish, client - 1),
            (Metric::ServerFlight, server),
            (Metric::ServerFinish, 0),
            (Metric::ServerHeld, held),
            (Metric::ClientHeld, held / 2),
            (Metric::Allocations, 3),
            (Metric::BytesAllocated, 300),
            (Metric::PeakLiveBytes, 200),
        ])
    }

    #[test]
    fn handshakes_are_split_by_library_and_the_rest_is_not() {
        let comparison = Comparison::new(&[
            count_of(
                "s2n_tls::handshake_rsa4096",
                110,
                split(40, 60, 5_000),
                true,
            ),
            count_of("rustls::handshake_rsa4096", 110, split(30, 70, 8_000), true),
            // A record from before the split: said so, not zeros.
            count_of("openssl::handshake_rsa4096", 120, Metrics::new(), true),
            count_of(
                "rustls::config_build",
                9,
                Metrics::from([
                    (Metric::Allocations, 1),
                    (Metric::BytesAllocated, 2),
                    (Metric::PeakLiveBytes, 2),
                ]),
                false,
            ),
        ]);
        let payers = payers_table(&comparison).to_markdown();
        assert!(
            payers.contains("| handshake_rsa4096 | 60 | 40 | 70 | 30 | not split | not split |"),
            "{payers}"
        );
        assert!(!payers.contains("config_build"), "{payers}");
        let held = held_table(&comparison, false).to_markdown();
        assert!(
            held.contains("| 5,000 | 2,500 | 8,000 | 4,000 | - | - |"),
            "{held}"
        );
        let stages = stages_table(&comparison).to_markdown();
        assert!(
            stages.contains("| handshake_rsa4096 | rustls | 1 | 70 | 29 | 0 | 10 | 110 |"),
            "{stages}"
        );
        let heap = heap_table(&comparison).to_markdown();
        assert!(
            heap.contains("| config_build | n/a | 1 / 2 / 2 | n/a |"),
            "{heap}"
        );
        let text = to_text(&comparison);
        assert!(text.contains("cannot be split"), "{text}");
    }

    #[test]
    fn record_paths_give_bytes_per_mib() {
        let mut record = Count::from(&crate::fixtures::measurement(
            "rustls::record_aes128gcm_1k",
            2 << 20,
            Some(1 << 20),
        ));
        record.metrics = Metrics::from([
            (Metric::Allocations, 2_049),
            (Metric::BytesAllocated, 2_119_776),
            (Metric::PeakLiveBytes, 1_142),
        ]);
        let heap = heap_table(&Comparison::new(&[record])).to_markdown();
        assert!(
            heap.contains("2,049 / 2,119,776 / 1,142 (2,119,776 B/MiB)"),
            "{heap}"
        );
    }
}
