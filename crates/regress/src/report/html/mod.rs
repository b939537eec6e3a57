//! `regress report`: one self-contained HTML page (with its charts also
//! written as SVG files) from the latest measurements and scaling runs.
//!
//! Everything is inline markup: no script, no stylesheet or font from a
//! network, so the page opens the same on an air-gapped laptop and as a CI
//! artifact. The page is built from the data ([`Comparison`], [`Scaling`])
//! and the same [`Table`]s the terminal prints, never from Markdown text.
//!
//! How it reads at a glance: each library has one colour on every chart
//! ([`libraries::colour`]); series of one library (ciphers, directions, paths)
//! differ by marker and dash; counts that span magnitudes are drawn on a
//! log axis, and a second chart gives each library's ratio to s2n-tls, so a
//! 7.7 K path is as readable as a 150 M one.

mod sides;
pub mod svg;

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::compare::Comparison;
use super::libraries;
use super::Table;
use crate::measure::scale::{Scaling, DEFAULT_PATHS};
use crate::workspace::Workspace;
use svg::{escape, Axis, Marker, Series, Style};

/// Dashes that tell apart series of one colour, in step with
/// [`Marker::ALL`].
const DASHES: [Option<&str>; 4] = [None, Some("7 4"), Some("2 3"), Some("9 3 2 3")];

/// The record sizes and ciphers of the record paths, as named in harnesses.
const RECORD_SIZES: &[(&str, &str)] = &[("1k", "1 KiB records"), ("16k", "16 KiB records")];
const RECORD_CIPHERS: &[(&str, &str)] = &[
    ("aes128gcm", "AES-128-GCM"),
    ("aes256gcm", "AES-256-GCM"),
    ("chacha20poly1305", "ChaCha20-Poly1305"),
];
const AEAD_CIPHERS: &[(&str, &str)] = &[("aes128gcm", "AES-128-GCM"), ("aes256gcm", "AES-256-GCM")];
const AEAD_SIZES: &[&str] = &["16", "64", "256", "1024", "8192", "16384"];

/// The `index`-th look of a library's series: its colour, then marker and
/// dash in turn.
fn style(library: &str, index: usize) -> Style {
    Style {
        colour: libraries::colour(library),
        marker: Marker::ALL[index % Marker::ALL.len()],
        dash: DASHES[index % DASHES.len()],
    }
}

/// A chart: its file name and markup.
pub struct Chart {
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// Whether a path is a throughput path (records, AEAD), charted per byte.
fn per_byte_path(path: &str) -> bool {
    path.starts_with("record_") || path.starts_with("aead_")
}

/// Builds every chart the data allows.
pub fn charts(comparison: &Comparison, scalings: &[Scaling]) -> Vec<Chart> {
    let mut charts = Vec::new();
    let tls: Vec<(&str, &str)> = libraries::tls()
        .map(|library| (library.id, library.name))
        .collect();

    // Counts of the one-shot paths, from a 7.7 K parse to a 150 M mTLS
    // handshake: a log axis keeps all of them readable.
    let paths: Vec<String> = comparison
        .paths
        .iter()
        .map(|row| row.path.clone())
        .filter(|path| !per_byte_path(path))
        .collect();
    let series = |value: &dyn Fn(&str, &str) -> Option<f64>, paths: &[String]| -> Vec<Series> {
        tls.iter()
            .map(|(name, display)| Series {
                name: (*display).to_owned(),
                values: paths.iter().map(|p| value(p, name)).collect(),
                style: style(name, 0),
            })
            .filter(|s| s.values.iter().any(Option::is_some))
            .collect()
    };
    let counts = series(
        &|path, library| {
            comparison
                .cell(path, library)
                .map(|c| c.instructions as f64)
        },
        &paths,
    );
    if !counts.is_empty() {
        let title = "Instructions per path by library".to_owned();
        charts.push(Chart {
            file: "instructions.svg".into(),
            svg: svg::bar_chart(&title, "instructions (one run)", Axis::Log, &paths, &counts),
            title,
        });
    }

    // The same paths and the record paths as ratios to s2n-tls: 1 is parity.
    let ratio_paths: Vec<String> = comparison
        .paths
        .iter()
        .filter(|row| row.libraries.contains_key("s2n_tls") && row.libraries.len() > 1)
        .map(|row| row.path.clone())
        .collect();
    let ratios: Vec<Series> = series(
        &|path, library| {
            comparison
                .cell(path, library)
                .and_then(|c| c.ratio_to_s2n_tls)
        },
        &ratio_paths,
    )
    .into_iter()
    .filter(|s| s.name != "s2n-tls")
    .collect();
    if !ratios.is_empty() {
        let title = "Instructions relative to s2n-tls (1 = the same count)".to_owned();
        charts.push(Chart {
            file: "ratio-to-s2n-tls.svg".into(),
            svg: svg::bar_chart(
                &title,
                "ratio to s2n-tls",
                Axis::Linear,
                &ratio_paths,
                &ratios,
            ),
            title,
        });
    }

    // Instructions per byte of the record paths by record size: colour is
    // the library, marker and dash the cipher.
    let mut series = Vec::new();
    for (name, display) in &tls {
        for (index, (cipher, cipher_display)) in RECORD_CIPHERS.iter().enumerate() {
            // s2n-tls's ChaCha20 paths are TLS 1.2 (see the harnesses); they
            // are drawn, and named so.
            let mut tls12 = false;
            let values: Vec<Option<f64>> = RECORD_SIZES
                .iter()
                .map(|(size, _)| {
                    let cell = comparison.cell(&format!("record_{cipher}_{size}"), name);
                    let cell = cell.or_else(|| {
                        let older = comparison.cell(&format!("record_tls12_{cipher}_{size}"), name);
                        tls12 |= older.is_some();
                        older
                    });
                    cell.and_then(|c| c.instructions_per_byte)
                })
                .collect();
            if values.iter().any(Option::is_some) {
                let version = if tls12 { " (TLS 1.2)" } else { "" };
                series.push(Series {
                    name: format!("{display} {cipher_display}{version}"),
                    values,
                    style: style(name, index),
                });
            }
        }
    }
    if !series.is_empty() {
        let title =
            "Instructions per byte of application data, by record size and cipher".to_owned();
        let labels: Vec<String> = RECORD_SIZES.iter().map(|(_, l)| (*l).to_owned()).collect();
        charts.push(Chart {
            file: "records-per-byte.svg".into(),
            svg: svg::line_chart(
                &title,
                "instructions per byte",
                Axis::Linear,
                &labels,
                &series,
            ),
            title,
        });
    }

    // Raw AEAD (aws-lc-rs) per byte by message size: one library, so one
    // colour; marker for the cipher, dash for the direction.
    let mut series = Vec::new();
    for (c, (cipher, cipher_display)) in AEAD_CIPHERS.iter().enumerate() {
        for (d, direction) in ["seal", "open"].into_iter().enumerate() {
            let values: Vec<Option<f64>> = AEAD_SIZES
                .iter()
                .map(|size| {
                    comparison
                        .cell(&format!("aead_{cipher}_{direction}_{size}"), "aws_lc_rs")
                        .and_then(|c| c.instructions_per_byte)
                })
                .collect();
            if values.iter().any(Option::is_some) {
                series.push(Series {
                    name: format!("{cipher_display} {direction}"),
                    values,
                    style: Style {
                        colour: libraries::colour("aws_lc_rs"),
                        marker: Marker::ALL[c],
                        dash: DASHES[d],
                    },
                });
            }
        }
    }
    if !series.is_empty() {
        let title = "aws-lc-rs AEAD: instructions per byte by message size".to_owned();
        let labels: Vec<String> = AEAD_SIZES.iter().map(|s| format!("{s} B")).collect();
        charts.push(Chart {
            file: "aead-per-byte.svg".into(),
            svg: svg::line_chart(&title, "instructions per byte", Axis::Log, &labels, &series),
            title,
        });
    }

    charts.extend(sides::charts(comparison, &tls));

    if let Some(chart) = scaling_chart(scalings) {
        charts.push(chart);
    }
    charts
}

/// Operations per second against threads: colour is the library, marker
/// and dash the path.
fn scaling_chart(scalings: &[Scaling]) -> Option<Chart> {
    let max_threads = scalings
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.threads))
        .max()?;
    let labels: Vec<String> = (1..=max_threads)
        .map(|t| format!("{t} thread{}", if t == 1 { "" } else { "s" }))
        .collect();
    let series: Vec<Series> = scalings
        .iter()
        .map(|scaling| {
            let (library, path) = scaling
                .harness
                .split_once("::")
                .unwrap_or((scaling.harness.as_str(), ""));
            let index = DEFAULT_PATHS
                .iter()
                .position(|p| p.trim_start_matches(':') == path)
                .unwrap_or(0);
            Series {
                name: scaling.harness.to_string(),
                values: (1..=max_threads)
                    .map(|t| {
                        scaling
                            .points
                            .iter()
                            .find(|p| p.threads == t)
                            .map(|p| p.operations_per_second())
                    })
                    .collect(),
                style: style(library, index),
            }
        })
        .collect();
    let title = "Thread scaling: operations per second (wall clock, native)".to_owned();
    Some(Chart {
        file: "scaling.svg".into(),
        svg: svg::line_chart(&title, "operations per second", Axis::Log, &labels, &series),
        title,
    })
}

/// A table as HTML, every cell escaped, in a box that scrolls sideways
/// when the table is wider than the page (the per-path table has a column
/// per library and per ratio), so the page itself never does.
fn table_html(table: &Table) -> String {
    let mut out = String::from("<div class=\"wide\"><table><tr>");
    for cell in table.header() {
        let _ = write!(out, "<th>{}</th>", escape(cell));
    }
    out.push_str("</tr>\n");
    for row in table.rows() {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

/// The whole page.
pub fn page(comparison: &Comparison, scalings: &[Scaling], charts: &[Chart]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>TLS instruction counts</title>\
<style>body{font-family:sans-serif;max-width:920px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px}\
td{text-align:right}td:first-child{text-align:left}figure{margin:1.5em 0}.wide{overflow-x:auto}</style></head><body>\n",
    );
    out.push_str("<h1>TLS instruction counts</h1>\n");
    let _ = writeln!(
        out,
        "<p>One warm run of each API path, counted by Valgrind; measured with {}.</p>",
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
    if !comparison.paths.is_empty() {
        out.push_str("<h2>Instructions per path</h2>\n<p><code>n/a</code>: the library has no such path.</p>\n");
        out.push_str(&table_html(&comparison.path_table()));
        if !comparison.mtls_ratios.is_empty() {
            out.push_str(&table_html(&comparison.mtls_table()));
        }
        sides::tables(&mut out, comparison);
        if let Some(table) = super::real_world::amplification_table(comparison) {
            let _ = writeln!(
                out,
                "<h2>What a hostile peer can make a server pay</h2>\n<p>{}</p>",
                escape(super::real_world::AMPLIFICATION)
            );
            out.push_str(&table_html(&table));
        }
    }
    for scaling in scalings {
        let _ = writeln!(out, "<h2>Scaling: {}</h2>", escape(&scaling.harness));
        out.push_str(&table_html(&super::scaling_table(scaling)));
    }
    out.push_str("</body></html>\n");
    out
}

/// Reads the scaling results `regress scale` left in `perf_outputs/scale/`.
pub fn read_scalings(workspace: &Workspace) -> crate::Result<Vec<Scaling>> {
    let dir = workspace.perf_outputs_dir().join("scale");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(crate::MeasureError::io("list", dir, source)),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    let mut scalings = Vec::new();
    for path in paths {
        let text = crate::limits::read_capped(&path, 4 << 20)
            .map_err(|source| crate::MeasureError::io("read", &path, source))?;
        let scaling: Scaling =
            serde_json::from_str(&text).map_err(|source| crate::MeasureError::Json {
                what: "scaling result",
                path: path.clone(),
                source,
            })?;
        scalings.push(scaling);
    }
    Ok(scalings)
}

/// Writes `index.html` and one SVG per chart into `dir`; returns the page.
/// The page links the flame graphs the runner drew into `outputs` (the
/// records' folder).
pub fn write(
    dir: &Path,
    outputs: &Path,
    comparison: &Comparison,
    scalings: &[Scaling],
) -> crate::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(|source| crate::MeasureError::io("create", dir, source))?;
    let charts = charts(comparison, scalings);
    for chart in &charts {
        crate::atomic_file::write(&dir.join(&chart.file), chart.svg.as_bytes())?;
    }
    let index = dir.join("index.html");
    let mut html = page(comparison, scalings, &charts);
    let flames = flame_section(dir, outputs)?;
    if let Some(end) = html.rfind("</body>") {
        html.insert_str(end, &flames);
    }
    crate::atomic_file::write(&index, html.as_bytes())?;
    Ok(index)
}

/// A list of links to the flame graphs in `outputs` (`<harness>.flame.svg`),
/// relative to `dir` when it is a folder of `outputs`; empty when there are
/// none.
fn flame_section(dir: &Path, outputs: &Path) -> crate::Result<String> {
    let entries = match std::fs::read_dir(outputs) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(source) => return Err(crate::MeasureError::io("list", outputs, source)),
    };
    let mut files: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| {
            name.ends_with(crate::measure::flame::PLAIN)
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        })
        .collect();
    if files.is_empty() {
        return Ok(String::new());
    }
    files.sort();
    files.truncate(4096);
    let prefix = if dir.parent() == Some(outputs) {
        "../".to_owned()
    } else {
        format!("{}/", outputs.display())
    };
    let mut out = String::from(
        "<h2>Flame graphs</h2>\n<p>Where each path's instructions went, by call path \
         (rebuilt from Callgrind's call graph; see the README for where that is approximate).</p>\n<ul>\n",
    );
    for file in files {
        let harness = file.trim_end_matches(crate::measure::flame::PLAIN);
        let _ = writeln!(
            out,
            "<li><a href=\"{}{}\">{}</a></li>",
            escape(&prefix),
            escape(&file),
            escape(harness)
        );
    }
    out.push_str("</ul>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::metrics::Metric;
    use crate::report::compare::Count;

    fn comparison() -> Comparison {
        let records = [
            ("s2n_tls::handshake_rsa4096", 77_000_000, None),
            ("rustls::handshake_rsa4096", 76_000_000, None),
            ("rustls::x509_parse_chain", 7_715, None),
            ("openssl::x509_parse_chain", 2_331_022, None),
            ("s2n_tls::record_aes128gcm_16k", 11_000_000, Some(1 << 20)),
            ("s2n_tls::record_aes128gcm_1k", 15_000_000, Some(1 << 20)),
            (
                "openssl::record_chacha20poly1305_1k",
                37_000_000,
                Some(1 << 20),
            ),
            ("aws_lc_rs::aead_aes128gcm_seal_16", 800, Some(16)),
        ];
        let counts: Vec<Count> = records
            .iter()
            .map(|(harness, n, bytes)| {
                Count::from(&crate::fixtures::measurement(harness, *n, *bytes))
            })
            .collect();
        Comparison::new(&counts)
    }

    #[test]
    fn page_has_charts_tables_and_no_external_resources() {
        let comparison = comparison();
        let charts = charts(&comparison, &[]);
        let files: Vec<&str> = charts.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(
            files,
            vec![
                "instructions.svg",
                "ratio-to-s2n-tls.svg",
                "records-per-byte.svg",
                "aead-per-byte.svg"
            ]
        );
        let html = page(&comparison, &[], &charts);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.contains("<th>path</th>"));
        assert!(html.contains("<td>x509_parse_chain</td><td>n/a</td><td>7,715</td>"));
        assert!(
            html.matches("http://").count()
                == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count(),
            "no external resources besides the SVG namespace"
        );
        assert!(!html.contains("<script"));
    }

    /// A hostile path that reported its flight gets the amplification
    /// table; without one, the page has no such section.
    #[test]
    fn the_page_shows_what_a_hostile_flight_costs_per_byte() {
        let plain = page(&comparison(), &[], &[]);
        assert!(!plain.contains("What a hostile peer can make a server pay"));
        let mut flight = Count::from(&crate::fixtures::measurement(
            "rustls::hostile_hello_retry",
            330_000,
            None,
        ));
        for (metric, value) in [
            (Metric::ReceivedBytes, 165),
            (Metric::ReceivedRecords, 1),
            (Metric::ReceivedMessages, 1),
        ] {
            flight.metrics.insert(metric, value);
        }
        let html = page(&Comparison::new(&[flight]), &[], &[]);
        assert!(html.contains("<h2>What a hostile peer can make a server pay</h2>"));
        assert!(
            html.contains("<td>rustls</td><td>hostile_hello_retry</td><td>330,000</td><td>165</td><td>2,000</td>"),
            "{html}"
        );
    }

    /// rustls is orange wherever it appears, and OpenSSL's ChaCha20 line
    /// is never drawn in s2n-tls's blue.
    /// The page links the flame graphs beside the records, relative to
    /// the report's folder; a file name that is not one of ours is left out.
    #[test]
    fn the_page_links_the_flame_graphs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outputs = dir.path().join("perf_outputs");
        std::fs::create_dir_all(&outputs).expect("mkdir");
        std::fs::write(outputs.join("s2n_tls.handshake.flame.svg"), "<svg/>").expect("write");
        std::fs::write(outputs.join("x\"onload=y.flame.svg"), "<svg/>").expect("write");
        let index = write(&outputs.join("report"), &outputs, &comparison(), &[]).expect("write");
        let page = std::fs::read_to_string(index).expect("read");
        assert!(
            page.contains(
                "<li><a href=\"../s2n_tls.handshake.flame.svg\">s2n_tls.handshake</a></li>"
            ),
            "{page}"
        );
        assert!(!page.contains("onload"), "{page}");
    }

    #[test]
    fn each_library_keeps_its_colour_on_every_chart() {
        let charts = charts(&comparison(), &[]);
        let orange = libraries::colour("rustls");
        for chart in &charts[..2] {
            assert!(chart.svg.contains(orange), "{}", chart.file);
        }
        let records = &charts[2].svg;
        let openssl = records
            .split("<polyline")
            .filter_map(|part| part.split("</polyline>").next())
            .find(|line| line.contains("<title>OpenSSL ChaCha20-Poly1305</title>"))
            .expect("the OpenSSL line");
        assert!(openssl.contains(libraries::colour("openssl")), "{openssl}");
        assert!(!openssl.contains(libraries::colour("s2n_tls")), "{openssl}");
    }

    /// A scaling result is read from a file: its harness must be a
    /// harness name, or the file is refused as it is read.
    #[test]
    fn scaling_results_read_back_and_a_bad_harness_name_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Workspace::new(dir.path());
        let folder = workspace.perf_outputs_dir().join("scale");
        std::fs::create_dir_all(&folder).expect("mkdir");
        let path = folder.join("a.b.json");
        let scaling = |named: &str| {
            format!(
                r#"{{"schema":{},"harness":"{named}","seconds_per_point":1.0,"points":[]}}"#,
                crate::measure::scale::SCALE_SCHEMA
            )
        };
        std::fs::write(&path, scaling("a::b")).expect("write");
        let read = read_scalings(&workspace).expect("a sound result");
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].harness, "a::b");
        std::fs::write(&path, scaling("../x")).expect("write");
        let error = read_scalings(&workspace).unwrap_err().to_string();
        assert!(error.contains("is not a harness name"), "{error}");
    }
}
