//! The lines the runner puts above a tool's text in an annotated file:
//! what was measured and how, the split by side and the heap figures, so
//! the file explains itself.

use crate::format::count;
use crate::measure::measurement::Measurement;
use crate::measure::metrics::Metric;
use crate::measure::valgrind::Method;

/// Lines the runner adds at the top of an annotated file start with this, so
/// readers can tell them from `cg_annotate`'s own output.
pub const HEADER_PREFIX: &str = "regress: ";

/// The lines the runner puts above `cg_annotate`'s output: what was
/// measured and how, so the file explains itself.
pub fn header(measurement: &Measurement) -> String {
    let fingerprint = &measurement.fingerprint;
    let mut lines = vec![
        format!("harness {}", measurement.harness),
        format!(
            "region instructions {} (the third run of the path, after two warm-up runs)",
            crate::format::count(measurement.instructions)
        ),
        format!(
            "method {} (Valgrind {}); {}",
            fingerprint.method,
            fingerprint.valgrind,
            match fingerprint.method {
                Method::Markers => "Cachegrind counted only between start/stop requests",
                Method::Callgrind =>
                    "Callgrind collected from the run's first boundary and dumped each part",
                Method::Subtraction =>
                    "whole-process profile of 3 runs minus that of 2 runs (cg_diff)",
            }
        ),
        format!("{}; target {}", fingerprint.rustc, fingerprint.target),
        format!(
            "C compilers {}; linker {}",
            match &fingerprint.c_compilers {
                Some(compilers) if !compilers.is_empty() => compilers.join("; "),
                Some(_) => "none".to_owned(),
                None => "not recorded".to_owned(),
            },
            fingerprint.linker.as_deref().unwrap_or("not recorded")
        ),
        format!(
            "libraries {}",
            fingerprint
                .libraries
                .iter()
                // One line each, whatever a library reported.
                .map(|(name, version)| format!("{name} {version}")
                    .replace(|c: char| c.is_control(), " "))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    ];
    if let Some(per_byte) = measurement.instructions_per_byte() {
        lines.push(format!("instructions per byte {per_byte:.3}"));
    }
    if let Some(per_operation) = measurement.instructions_per_operation() {
        lines.push(format!(
            "instructions per operation {per_operation:.1} ({} operations per run)",
            measurement.operations_per_run
        ));
    }
    lines.extend(metric_lines(measurement));
    header_lines(&lines)
}

/// The header's lines on the run's split and heap figures.
fn metric_lines(measurement: &Measurement) -> Vec<String> {
    let metrics = &measurement.metrics;
    let get = |metric: Metric| metrics.get(&metric).copied();
    let mut lines = Vec::new();
    if let (Some(client), Some(server), Some(glue)) =
        (get(Metric::Client), get(Metric::Server), get(Metric::Glue))
    {
        let stage = |metric: Metric| count(get(metric).unwrap_or(0));
        lines.push(format!(
            "client instructions {} (client_hello {} + client_finish {})",
            count(client),
            stage(Metric::ClientHello),
            stage(Metric::ClientFinish)
        ));
        lines.push(format!(
            "server instructions {} (server_flight {} + server_finish {})",
            count(server),
            stage(Metric::ServerFlight),
            stage(Metric::ServerFinish)
        ));
        lines.push(format!(
            "glue instructions {} (the harness between the calls); client + server + glue = {} \
             = the region count (Callgrind's dumps of the same run)",
            count(glue),
            count(client + server + glue)
        ));
    } else if !measurement.sides {
        lines.push("not split by side: the path has no handshake".to_owned());
    }
    if let (Some(allocations), Some(bytes), Some(peak)) = (
        get(Metric::Allocations),
        get(Metric::BytesAllocated),
        get(Metric::PeakLiveBytes),
    ) {
        lines.push(format!(
            "heap {} allocations, {} bytes allocated, peak {} live bytes (the run's own blocks)",
            count(allocations),
            count(bytes),
            count(peak)
        ));
    }
    for (what, client, server) in [
        (
            "after the handshake",
            Metric::ClientHeld,
            Metric::ServerHeld,
        ),
        (
            "after the first record",
            Metric::ClientHeldAfterRecord,
            Metric::ServerHeldAfterRecord,
        ),
    ] {
        if let (Some(client), Some(server)) = (get(client), get(server)) {
            lines.push(format!(
                "held {what}: client {} bytes, server {} bytes",
                count(client),
                count(server)
            ));
        }
    }
    lines
}

/// `lines` as the runner's header above a tool's text: each marked with
/// [`HEADER_PREFIX`], then a blank line ([`strip_header`] undoes it).
pub fn header_lines(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(HEADER_PREFIX);
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The `cg_annotate` text of an annotated file, without the runner's header.
pub fn strip_header(text: &str) -> &str {
    let mut rest = text;
    while let Some(line_end) = rest.find('\n') {
        let line = &rest[..line_end];
        if line.starts_with(HEADER_PREFIX) || (line.is_empty() && rest.len() != text.len()) {
            rest = &rest[line_end + 1..];
            if line.is_empty() {
                break;
            }
        } else {
            break;
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let text = "regress: harness a::b\nregress: method markers\n\n----\nbody\n";
        assert_eq!(strip_header(text), "----\nbody\n");
        assert_eq!(strip_header("----\nbody\n"), "----\nbody\n");
        assert_eq!(strip_header("\n\nbody"), "\n\nbody");
    }

    #[test]
    fn header_gives_per_byte_and_per_operation_figures_where_they_apply() {
        let mut measurement = crate::fixtures::measurement("aws_lc_rs::a", 1_000, Some(64));
        measurement.operations_per_run = 4;
        let text = header(&measurement);
        assert!(
            text.contains("regress: instructions per byte 15.625\n"),
            "{text}"
        );
        assert!(
            text.contains("regress: instructions per operation 250.0 (4 operations per run)\n"),
            "{text}"
        );
        let single = header(&crate::fixtures::measurement("s2n_tls::b", 1_000, None));
        assert!(!single.contains("per operation"), "{single}");
        assert!(!single.contains("per byte"), "{single}");
    }
}
