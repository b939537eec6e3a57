//! The cross-library comparison: the same API path, side by side.
//!
//! Harness names are `<library>::<path>`, so every library's harness for a
//! path lines up by the part after `::`. The comparison is built from
//! [`Count`]s: the latest measurement records (`regress compare`, the HTML
//! report) or committed baseline entries (the README's tables, see
//! [`super::readme`]); it never re-runs anything. Ratios are to s2n-tls, the
//! library this project serves first.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::format::count;
use crate::harness_name::HarnessName;
use crate::measure::measurement::{self, Measurement};
use crate::measure::metrics::Metrics;
use crate::measure::overhead;
use crate::report::{libraries, Table};
use crate::workspace::Workspace;

/// Bumped whenever the JSON's meaning changes (2: each cell's `figures`
/// and `sides`).
pub const COMPARISON_SCHEMA: u32 = 2;

/// The library every ratio is relative to.
const REFERENCE: &str = "s2n_tls";

/// mTLS paths and the server-auth-only paths they are compared with.
const MTLS_PAIRS: &[(&str, &str)] = &[
    ("mtls_rsa4096", "handshake_rsa4096"),
    ("mtls_ecdsa_p256", "handshake_ecdsa_p256"),
];

/// One count to line up: what a record or a baseline entry says of a
/// harness.
#[derive(Debug, Clone, PartialEq)]
pub struct Count {
    pub harness: HarnessName,
    pub instructions: u64,
    pub bytes_per_run: Option<u64>,
    pub operations_per_run: u64,
    /// `Valgrind 3.24.0 (markers)`.
    pub measured_with: String,
    /// Percent of the region in the harness's own code, when its profile
    /// could be read.
    pub harness_share_percent: Option<f64>,
    /// Whether the path marks its sides (a handshake).
    pub sides: bool,
    /// Its other figures: sides, stages, heap.
    pub metrics: Metrics,
}

impl From<&Measurement> for Count {
    fn from(record: &Measurement) -> Count {
        Count {
            harness: record.harness.clone(),
            instructions: record.instructions,
            bytes_per_run: record.bytes_per_run,
            operations_per_run: record.operations_per_run,
            measured_with: format!(
                "Valgrind {} ({})",
                record.fingerprint.valgrind, record.fingerprint.method
            ),
            harness_share_percent: None,
            sides: record.sides,
            metrics: record.metrics.clone(),
        }
    }
}

impl Count {
    /// Instructions per application byte, for throughput paths.
    pub fn per_byte(&self) -> Option<f64> {
        measurement::per_byte(self.instructions, self.bytes_per_run)
    }

    /// Instructions per call, for paths that make more than one per run.
    pub fn per_operation(&self) -> Option<f64> {
        measurement::per_operation(self.instructions, self.operations_per_run)
    }
}

/// One library's figures for one path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub instructions: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions_per_byte: Option<f64>,
    /// Calls of the measured API one run makes, when more than one (the
    /// AEAD paths), and the count divided by them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operations_per_run: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions_per_operation: Option<f64>,
    /// Ratio to s2n-tls on the same path, when s2n-tls has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_s2n_tls: Option<f64>,
    /// Percent of the region spent in the harness's own code (transport,
    /// buffers), from the region profile; `None` when it cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness_share_percent: Option<f64>,
    /// Whether the path's run can be split by side (it has a handshake).
    pub sides: bool,
    /// Instructions by side and stage (when `sides`) and heap figures
    /// (`client`, `server_flight`, `bytes_allocated`, `server_held`...).
    #[serde(skip_serializing_if = "Metrics::is_empty")]
    pub figures: Metrics,
}

impl Cell {
    /// The count, then per call and per byte where they apply:
    /// `913,498 (892/op, 55.76/B)`, `38,796 (19,398/op, 2.37/B)`.
    fn describe(&self) -> String {
        let mut per = Vec::new();
        if let Some(per_operation) = self.instructions_per_operation {
            per.push(format!("{}/op", count(per_operation.round() as u64)));
        }
        if let Some(per_byte) = self.instructions_per_byte {
            per.push(format!("{per_byte:.2}/B"));
        }
        if per.is_empty() {
            count(self.instructions)
        } else {
            format!("{} ({})", count(self.instructions), per.join(", "))
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathRow {
    pub path: String,
    /// Keyed by library (`s2n_tls`, `rustls`, ...).
    pub libraries: BTreeMap<String, Cell>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MtlsRatio {
    pub library: String,
    pub mtls_path: String,
    pub server_auth_path: String,
    pub ratio: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub schema: u32,
    /// Valgrind versions and methods the records were measured with; more
    /// than one means the table mixes methods and says so.
    pub measured_with: Vec<String>,
    pub paths: Vec<PathRow>,
    pub mtls_ratios: Vec<MtlsRatio>,
}

impl Comparison {
    /// The latest measurement records in `perf_outputs/`, with the harness
    /// share read from each region profile.
    pub fn from_records(workspace: &Workspace) -> crate::Result<Comparison> {
        let counts: Vec<Count> = Measurement::read_all(workspace)?
            .iter()
            .map(|record| Count {
                harness_share_percent: overhead::harness_share_percent(
                    // Found by the checked name, not by the path the
                    // record says: a record is read from a file.
                    &record
                        .harness
                        .file_in(&workspace.perf_outputs_dir(), ".cachegrind.out"),
                )
                .ok(),
                ..Count::from(record)
            })
            .collect();
        Ok(Comparison::new(&counts))
    }

    /// Lines `counts` up path by path.
    pub fn new(counts: &[Count]) -> Comparison {
        let mut paths: BTreeMap<String, BTreeMap<String, Cell>> = BTreeMap::new();
        let mut measured_with: Vec<String> = Vec::new();
        for record in counts {
            let Some((library, path)) = record.harness.split_once("::") else {
                continue;
            };
            if libraries::named(library).is_none() {
                continue;
            }
            if !measured_with.contains(&record.measured_with) {
                measured_with.push(record.measured_with.clone());
            }
            paths.entry(path.to_owned()).or_default().insert(
                library.to_owned(),
                Cell {
                    instructions: record.instructions,
                    instructions_per_byte: record.per_byte(),
                    operations_per_run: (record.operations_per_run > 1)
                        .then_some(record.operations_per_run),
                    instructions_per_operation: record.per_operation(),
                    ratio_to_s2n_tls: None,
                    harness_share_percent: record.harness_share_percent,
                    sides: record.sides,
                    figures: record.metrics.clone(),
                },
            );
        }
        for cells in paths.values_mut() {
            if let Some(reference) = cells.get(REFERENCE).map(|cell| cell.instructions) {
                for cell in cells.values_mut() {
                    cell.ratio_to_s2n_tls = Some(cell.instructions as f64 / reference as f64);
                }
            }
        }
        let mut mtls_ratios = Vec::new();
        for library in libraries::ALL.iter().map(|library| library.id) {
            for (mtls, plain) in MTLS_PAIRS {
                let get = |path: &str| paths.get(path).and_then(|cells| cells.get(library));
                if let (Some(m), Some(p)) = (get(mtls), get(plain)) {
                    mtls_ratios.push(MtlsRatio {
                        library: (*library).to_owned(),
                        mtls_path: (*mtls).to_owned(),
                        server_auth_path: (*plain).to_owned(),
                        ratio: m.instructions as f64 / p.instructions as f64,
                    });
                }
            }
        }
        Comparison {
            schema: COMPARISON_SCHEMA,
            measured_with,
            paths: paths
                .into_iter()
                .map(|(path, libraries)| PathRow { path, libraries })
                .collect(),
            mtls_ratios,
        }
    }

    /// The libraries that appear, in column order.
    fn libraries(&self) -> Vec<(&'static str, &'static str)> {
        libraries::ALL
            .iter()
            .map(|library| (library.id, library.name))
            .filter(|(name, _)| {
                self.paths
                    .iter()
                    .any(|row| row.libraries.contains_key(*name))
            })
            .collect()
    }

    /// The figures of `library` on `path`, if it has that path.
    pub fn cell(&self, path: &str, library: &str) -> Option<&Cell> {
        self.paths
            .iter()
            .find(|row| row.path == path)
            .and_then(|row| row.libraries.get(library))
    }

    /// The table of counts by path and library, with ratios to s2n-tls and
    /// (when profiles were read) the largest harness share of each path.
    pub fn path_table(&self) -> Table {
        let libraries = self.libraries();
        let mut header: Vec<String> = vec!["path".into()];
        for (_, display) in &libraries {
            header.push((*display).to_owned());
        }
        for (name, display) in &libraries {
            if *name != REFERENCE {
                header.push(format!("{display} / s2n-tls"));
            }
        }
        let shares = self
            .paths
            .iter()
            .flat_map(|row| row.libraries.values())
            .any(|cell| cell.harness_share_percent.is_some());
        if shares {
            header.push("harness share (max)".into());
        }
        let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut table = Table::new(&header_refs);
        for row in &self.paths {
            let mut cells = vec![row.path.clone()];
            for (name, _) in &libraries {
                cells.push(
                    row.libraries
                        .get(*name)
                        .map_or_else(|| "n/a".into(), Cell::describe),
                );
            }
            for (name, _) in &libraries {
                if *name != REFERENCE {
                    cells.push(
                        row.libraries
                            .get(*name)
                            .and_then(|cell| cell.ratio_to_s2n_tls)
                            .map_or_else(|| "-".into(), |ratio| format!("{ratio:.2}")),
                    );
                }
            }
            let share = row
                .libraries
                .values()
                .filter_map(|cell| cell.harness_share_percent)
                .fold(None, |max: Option<f64>, share| {
                    Some(max.map_or(share, |m| m.max(share)))
                });
            if shares {
                cells.push(share.map_or_else(|| "-".into(), |share| format!("{share:.3}%")));
            }
            table.row(cells);
        }
        table
    }

    /// Each library's mTLS handshakes against its server-auth ones.
    pub fn mtls_table(&self) -> Table {
        let mut table = Table::new(&[
            "library",
            "mTLS path",
            "server-auth path",
            "mTLS / server-auth",
        ]);
        for ratio in &self.mtls_ratios {
            let display = libraries::display(&ratio.library);
            table.row(vec![
                display.to_owned(),
                ratio.mtls_path.clone(),
                ratio.server_auth_path.clone(),
                format!("{:.2}", ratio.ratio),
            ]);
        }
        table
    }

    pub fn to_text(&self) -> String {
        let mut out = format!(
            "Instructions per path, measured with {}\n\n",
            self.measured_with.join(", ")
        );
        out.push_str(&self.path_table().to_text());
        if !self.mtls_ratios.is_empty() {
            out.push('\n');
            out.push_str(&self.mtls_table().to_text());
        }
        out.push_str(&super::sides::to_text(self));
        out
    }

    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "Instructions per path (one warm run each; measured with {}; `n/a`: the library has no such path)\n\n",
            self.measured_with
                .iter()
                .map(|with| super::markdown::cell(with))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.push_str(&self.path_table().to_markdown());
        if !self.mtls_ratios.is_empty() {
            out.push('\n');
            out.push_str(&self.mtls_table().to_markdown());
        }
        out
    }

    pub fn to_json(&self) -> crate::Result<String> {
        let mut text = serde_json::to_string_pretty(self).map_err(|source| {
            crate::MeasureError::Serialize {
                what: "comparison",
                source,
            }
        })?;
        text.push('\n');
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(harness: &str, instructions: u64, bytes: Option<u64>) -> Count {
        Count::from(&crate::fixtures::measurement(harness, instructions, bytes))
    }

    #[test]
    fn lines_up_paths_and_computes_ratios() {
        let records = vec![
            record("s2n_tls::handshake_rsa4096", 1_000, None),
            record("rustls::handshake_rsa4096", 900, None),
            record("openssl::handshake_rsa4096", 1_100, None),
            record("s2n_tls::mtls_rsa4096", 2_500, None),
            record("rustls::mtls_rsa4096", 1_800, None),
            record("rustls::x509_verify_chain", 50, None),
            record("s2n_tls::record_aes128gcm_16k", 2_048, Some(1_024)),
            record("calibration::spin_1m", 3_000_000, None),
        ];
        let comparison = Comparison::new(&records);
        let paths: Vec<&str> = comparison
            .paths
            .iter()
            .map(|row| row.path.as_str())
            .collect();
        assert_eq!(
            paths,
            vec![
                "handshake_rsa4096",
                "mtls_rsa4096",
                "record_aes128gcm_16k",
                "x509_verify_chain"
            ]
        );
        let handshake = &comparison.paths[0].libraries;
        assert_eq!(handshake["rustls"].ratio_to_s2n_tls, Some(0.9));
        assert_eq!(handshake["openssl"].ratio_to_s2n_tls, Some(1.1));
        assert_eq!(
            comparison.paths[2].libraries["s2n_tls"].instructions_per_byte,
            Some(2.0)
        );
        assert_eq!(
            comparison.paths[3].libraries["rustls"].ratio_to_s2n_tls,
            None
        );
        let ratios: Vec<(&str, f64)> = comparison
            .mtls_ratios
            .iter()
            .map(|r| (r.library.as_str(), r.ratio))
            .collect();
        assert_eq!(ratios, vec![("s2n_tls", 2.5), ("rustls", 2.0)]);

        let text = comparison.to_text();
        assert!(text.contains("Valgrind 3.19.0 (subtraction)"), "{text}");
        let markdown = comparison.to_markdown();
        assert!(
            markdown.contains(
                "| path | s2n-tls | rustls | OpenSSL | rustls / s2n-tls | OpenSSL / s2n-tls |"
            ),
            "{markdown}"
        );
        assert!(
            markdown.contains("| x509_verify_chain | n/a | 50 | n/a | - | - |\n"),
            "{markdown}"
        );
        assert!(markdown.contains("2,048 (2.00/B)"), "{markdown}");
        let json: serde_json::Value =
            serde_json::from_str(&comparison.to_json().expect("json")).expect("json");
        assert_eq!(json["schema"], 2);
        assert_eq!(
            json["paths"][0]["libraries"]["openssl"]["instructions"],
            1_100
        );
    }

    /// A Valgrind version from a hand-edited file cannot become markup in
    /// the Markdown; the program's own figures read unchanged.
    #[test]
    fn markdown_shows_foreign_text_as_code() {
        let mut count = record("s2n_tls::handshake_rsa4096", 1_000, None);
        count.measured_with = "Valgrind <img src=x> @octocat (markers)".into();
        let markdown = Comparison::new(&[count]).to_markdown();
        assert!(
            markdown.contains("measured with `Valgrind <img src=x> @octocat (markers)`"),
            "{markdown}"
        );
        assert!(
            markdown.contains("| handshake_rsa4096 | 1,000 |"),
            "{markdown}"
        );
    }

    /// A path that repeats a small call reports the cost of one call beside
    /// the count and the cost per byte, in every format.
    #[test]
    fn repeated_calls_are_reported_per_operation() {
        let mut seal = record("aws_lc_rs::aead_aes128gcm_seal_16", 913_408, Some(16_384));
        seal.operations_per_run = 1_024;
        let comparison = Comparison::new(&[seal]);
        let cell = &comparison.paths[0].libraries["aws_lc_rs"];
        assert_eq!(cell.instructions_per_operation, Some(892.0));
        assert_eq!(cell.operations_per_run, Some(1_024));
        let markdown = comparison.to_markdown();
        assert!(markdown.contains("913,408 (892/op, 55.75/B)"), "{markdown}");
        let json: serde_json::Value =
            serde_json::from_str(&comparison.to_json().expect("json")).expect("json");
        let cell = &json["paths"][0]["libraries"]["aws_lc_rs"];
        assert_eq!(cell["instructions_per_operation"], 892.0);

        // One call per run: no per-operation figure at all.
        let plain = Comparison::new(&[record("s2n_tls::handshake_rsa4096", 10, None)]);
        let cell = &plain.paths[0].libraries["s2n_tls"];
        assert_eq!(cell.instructions_per_operation, None);
        assert!(!plain.to_json().expect("json").contains("per_operation"));
    }
}
