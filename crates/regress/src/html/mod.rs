//! `regress report`: one self-contained HTML page (with its charts also
//! written as SVG files) from the latest measurements and scaling runs.
//!
//! Everything is inline markup: no script, no stylesheet or font from a
//! network, so the page opens the same on an air-gapped laptop and as a CI
//! artifact.

pub mod svg;

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::compare::Comparison;
use crate::scale::Scaling;
use crate::workspace::Workspace;
use svg::{escape, Series};

/// Library columns in display order.
const LIBRARIES: &[(&str, &str)] = &[
    ("s2n_tls", "s2n-tls"),
    ("rustls", "rustls"),
    ("openssl", "OpenSSL"),
];

/// The record sizes and ciphers of the record paths, as named in harnesses.
const RECORD_SIZES: &[(&str, &str)] = &[("1k", "1 KiB records"), ("16k", "16 KiB records")];
const RECORD_CIPHERS: &[(&str, &str)] = &[
    ("aes128gcm", "AES-128-GCM"),
    ("aes256gcm", "AES-256-GCM"),
    ("chacha20poly1305", "ChaCha20-Poly1305"),
];
const AEAD_SIZES: &[&str] = &["16", "64", "256", "1024", "8192", "16384"];

/// A chart: its file name and markup.
pub struct Chart {
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// Builds every chart the data allows.
pub fn charts(comparison: &Comparison, scalings: &[Scaling]) -> Vec<Chart> {
    let mut charts = Vec::new();
    let cell = |path: &str, library: &str| {
        comparison
            .paths
            .iter()
            .find(|row| row.path == path)
            .and_then(|row| row.libraries.get(library))
    };

    // Instruction counts of the non-throughput paths, in two families so a
    // 50 K-instruction X.509 check is not a flat line beside a 96 M config.
    type Member = fn(&str) -> bool;
    let families: [(&str, Member); 2] = [
        ("handshakes", |p| {
            p.starts_with("handshake")
                || p.starts_with("mtls")
                || p == "session_resumption"
                || p == "config_build"
        }),
        ("x509", |p| p.starts_with("x509")),
    ];
    for (family, member) in families {
        let paths: Vec<String> = comparison
            .paths
            .iter()
            .map(|row| row.path.clone())
            .filter(|p| member(p))
            .collect();
        if paths.is_empty() {
            continue;
        }
        let series: Vec<Series> = LIBRARIES
            .iter()
            .map(|(name, display)| Series {
                name: (*display).to_owned(),
                values: paths
                    .iter()
                    .map(|p| cell(p, name).map(|c| c.instructions as f64))
                    .collect(),
            })
            .filter(|s| s.values.iter().any(Option::is_some))
            .collect();
        let title = format!("Instructions per path by library ({family})");
        charts.push(Chart {
            file: format!("instructions-{family}.svg"),
            svg: svg::bar_chart(&title, "instructions (one run)", &paths, &series),
            title,
        });
    }

    // Instructions per byte of the record paths by record size and cipher.
    let mut series = Vec::new();
    for (name, display) in LIBRARIES {
        for (cipher, cipher_display) in RECORD_CIPHERS {
            let values: Vec<Option<f64>> = RECORD_SIZES
                .iter()
                .map(|(size, _)| {
                    cell(&format!("record_{cipher}_{size}"), name)
                        .and_then(|c| c.instructions_per_byte)
                })
                .collect();
            if values.iter().any(Option::is_some) {
                series.push(Series {
                    name: format!("{display} {cipher_display}"),
                    values,
                });
            }
        }
    }
    if !series.is_empty() {
        let title =
            "Instructions per byte of application data, by record size and cipher".to_owned();
        let labels: Vec<String> = RECORD_SIZES
            .iter()
            .map(|(_, label)| (*label).to_owned())
            .collect();
        charts.push(Chart {
            file: "records-per-byte.svg".into(),
            svg: svg::line_chart(&title, "instructions per byte", &labels, &series),
            title,
        });
    }

    // Raw AEAD (aws-lc-rs) per byte by message size.
    let mut series = Vec::new();
    for cipher in ["aes128gcm", "aes256gcm"] {
        for direction in ["seal", "open"] {
            let values: Vec<Option<f64>> = AEAD_SIZES
                .iter()
                .map(|size| {
                    cell(&format!("aead_{cipher}_{direction}_{size}"), "aws_lc_rs")
                        .and_then(|c| c.instructions_per_byte)
                })
                .collect();
            if values.iter().any(Option::is_some) {
                series.push(Series {
                    name: format!("{cipher} {direction}"),
                    values,
                });
            }
        }
    }
    if !series.is_empty() {
        let title = "aws-lc-rs AEAD: instructions per byte by message size".to_owned();
        let labels: Vec<String> = AEAD_SIZES.iter().map(|s| format!("{s} B")).collect();
        charts.push(Chart {
            file: "aead-per-byte.svg".into(),
            svg: svg::line_chart(&title, "instructions per byte", &labels, &series),
            title,
        });
    }

    // Thread scaling: one line per harness, ops/s against threads.
    if !scalings.is_empty() {
        let max_threads = scalings
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.threads))
            .max()
            .unwrap_or(1);
        let labels: Vec<String> = (1..=max_threads)
            .map(|t| format!("{t} thread{}", if t == 1 { "" } else { "s" }))
            .collect();
        let series: Vec<Series> = scalings
            .iter()
            .map(|scaling| Series {
                name: scaling.harness.clone(),
                values: (1..=max_threads)
                    .map(|t| {
                        scaling
                            .points
                            .iter()
                            .find(|p| p.threads == t)
                            .map(|p| p.operations_per_second())
                    })
                    .collect(),
            })
            .collect();
        let title = "Thread scaling: operations per second (wall clock, native)".to_owned();
        charts.push(Chart {
            file: "scaling.svg".into(),
            svg: svg::line_chart(&title, "operations per second", &labels, &series),
            title,
        });
    }
    charts
}

/// The whole page.
pub fn page(comparison: &Comparison, scalings: &[Scaling], charts: &[Chart]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>TLS instruction counts</title>\
<style>body{font-family:sans-serif;max-width:920px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px}\
td{text-align:right}td:first-child{text-align:left}figure{margin:1.5em 0}</style></head><body>\n",
    );
    out.push_str("<h1>TLS instruction counts</h1>\n");
    let _ = writeln!(
        out,
        "<p>One warm run of each API path, counted by Valgrind Cachegrind; measured with {}.</p>",
        escape(&comparison.measured_with.join(", "))
    );
    for chart in charts {
        let _ = writeln!(
            out,
            "<h3>{}</h3>\n<figure>{}</figure>",
            escape(&chart.title),
            chart.svg
        );
    }
    out.push_str("<h2>Table</h2>\n");
    out.push_str(&markdown_table_to_html(&comparison.to_markdown()));
    for scaling in scalings {
        let _ = writeln!(out, "<h2>Scaling: {}</h2>", escape(&scaling.harness));
        out.push_str(&markdown_table_to_html(&scaling.table().to_markdown()));
    }
    out.push_str("</body></html>\n");
    out
}

/// Renders the Markdown tables this crate produces as HTML tables (and
/// other lines as paragraphs), escaping every cell.
fn markdown_table_to_html(markdown: &str) -> String {
    let mut out = String::new();
    let mut in_table = false;
    for line in markdown.lines() {
        if let Some(inner) = line.strip_prefix('|').and_then(|l| l.strip_suffix('|')) {
            let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
            if cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
            {
                continue;
            }
            let tag = if in_table { "td" } else { "th" };
            if !in_table {
                out.push_str("<table>");
                in_table = true;
            }
            out.push_str("<tr>");
            for cell in cells {
                let _ = write!(out, "<{tag}>{}</{tag}>", escape(cell));
            }
            out.push_str("</tr>\n");
        } else {
            if in_table {
                out.push_str("</table>\n");
                in_table = false;
            }
            if !line.trim().is_empty() {
                let _ = writeln!(out, "<p>{}</p>", escape(line));
            }
        }
    }
    if in_table {
        out.push_str("</table>\n");
    }
    out
}

/// Reads the scaling results `regress scale` left in `perf_outputs/scale/`.
pub fn read_scalings(workspace: &Workspace) -> crate::Result<Vec<Scaling>> {
    let dir = workspace.perf_outputs_dir().join("scale");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(crate::Error::io("list", dir, source)),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    let mut scalings = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|source| crate::Error::io("read", &path, source))?;
        let scaling: Scaling =
            serde_json::from_str(&text).map_err(|source| crate::Error::Json {
                what: "scaling result",
                path: path.clone(),
                source,
            })?;
        scalings.push(scaling);
    }
    Ok(scalings)
}

/// Writes `index.html` and one SVG per chart into `dir`; returns the page.
pub fn write(dir: &Path, comparison: &Comparison, scalings: &[Scaling]) -> crate::Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|source| crate::Error::io("create", dir, source))?;
    let charts = charts(comparison, scalings);
    for chart in &charts {
        crate::atomic_file::write(&dir.join(&chart.file), chart.svg.as_bytes())?;
    }
    let index = dir.join("index.html");
    crate::atomic_file::write(&index, page(comparison, scalings, &charts).as_bytes())?;
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::example as record;

    #[test]
    fn page_has_charts_tables_and_no_external_resources() {
        let records = vec![
            record("s2n_tls::handshake_rsa4096", 77_000_000, None),
            record("rustls::handshake_rsa4096", 76_000_000, None),
            record("rustls::x509_verify_chain", 50_000, None),
            record("s2n_tls::record_aes128gcm_16k", 11_000_000, Some(1 << 20)),
            record("s2n_tls::record_aes128gcm_1k", 15_000_000, Some(1 << 20)),
            record("aws_lc_rs::aead_aes128gcm_seal_16", 800, Some(16)),
        ];
        let comparison = Comparison::new(&records, None);
        let charts = charts(&comparison, &[]);
        let files: Vec<&str> = charts.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(
            files,
            vec![
                "instructions-handshakes.svg",
                "instructions-x509.svg",
                "records-per-byte.svg",
                "aead-per-byte.svg"
            ]
        );
        let html = page(&comparison, &[], &charts);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.contains("<th>path</th>"));
        assert!(
            !html.contains("http://")
                || html.matches("http://").count()
                    == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count(),
            "no external resources besides the SVG namespace"
        );
        assert!(!html.contains("<script"));
    }
}
