//! The cost of each path under each CPU profile: how much more a path
//! costs a library when the CPU lacks AVX, AES-NI or every extension
//! ([`CpuProfile`]).
//!
//! Built from counts of one harness under several profiles: the latest
//! records of each profile's `perf_outputs/` folder (`regress --cpu all
//! compare`) or committed baseline entries (the README's table, see
//! [`super::readme`]). Each profile's count is set against the default's.

use std::collections::BTreeMap;

use serde::Serialize;

use super::libraries;
use super::Table;
use crate::format::count;
use crate::harness_name::HarnessName;
use crate::judge::baseline::BaselineFile;
use crate::measure::cpu_profile::CpuProfile;
use crate::measure::measurement::Measurement;
use crate::measure::valgrind::{Method, Version};
use crate::workspace::Workspace;

/// Bumped whenever the JSON's meaning changes.
pub const CPU_MATRIX_SCHEMA: u32 = 1;

/// One harness's count under each profile it was measured with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixRow {
    pub harness: HarnessName,
    /// Instructions of one run, by profile name.
    pub instructions: BTreeMap<CpuProfile, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuMatrix {
    pub schema: u32,
    /// The profiles that have at least one count, in [`CpuProfile::ALL`]'s
    /// order.
    pub profiles: Vec<CpuProfile>,
    /// Valgrind versions and methods the counts were measured with.
    pub measured_with: Vec<String>,
    /// By harness name.
    pub rows: Vec<MatrixRow>,
}

/// One count of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileCount {
    pub cpu: CpuProfile,
    pub harness: HarnessName,
    pub instructions: u64,
    /// `Valgrind 3.24.0 (callgrind)`.
    pub measured_with: String,
}

impl CpuMatrix {
    /// Lines `counts` up by harness.
    pub fn new(counts: impl IntoIterator<Item = ProfileCount>) -> CpuMatrix {
        let mut rows: BTreeMap<HarnessName, BTreeMap<CpuProfile, u64>> = BTreeMap::new();
        let mut measured_with = Vec::new();
        for count in counts {
            if !measured_with.contains(&count.measured_with) {
                measured_with.push(count.measured_with);
            }
            rows.entry(count.harness)
                .or_default()
                .insert(count.cpu, count.instructions);
        }
        let profiles = CpuProfile::ALL
            .into_iter()
            .filter(|cpu| rows.values().any(|row| row.contains_key(cpu)))
            .collect();
        CpuMatrix {
            schema: CPU_MATRIX_SCHEMA,
            profiles,
            measured_with,
            rows: rows
                .into_iter()
                .map(|(harness, instructions)| MatrixRow {
                    harness,
                    instructions,
                })
                .collect(),
        }
    }

    /// The latest records of every profile's outputs.
    pub fn from_records(workspace: &Workspace) -> crate::Result<CpuMatrix> {
        let mut counts = Vec::new();
        for cpu in CpuProfile::ALL {
            let view = workspace.clone().with_cpu(cpu);
            for record in Measurement::read_all(&view)? {
                // A record is read from a file: it must be of the folder's
                // profile, or it is not counted as one.
                if record.fingerprint.cpu_profile != cpu {
                    continue;
                }
                counts.push(ProfileCount {
                    cpu,
                    harness: record.harness.clone(),
                    instructions: record.instructions,
                    measured_with: format!(
                        "Valgrind {} ({})",
                        record.fingerprint.valgrind, record.fingerprint.method
                    ),
                });
            }
        }
        Ok(CpuMatrix::new(counts))
    }

    /// The committed entries of Callgrind's method with the newest
    /// Valgrind that has every profile of a harness.
    pub fn from_baselines(files: &[BaselineFile]) -> CpuMatrix {
        let mut counts = Vec::new();
        for file in files {
            let of = |cpu: CpuProfile| {
                file.entries.iter().filter(move |entry| {
                    entry.fingerprint.method == Method::Callgrind
                        && entry.fingerprint.cpu_profile == cpu
                })
            };
            let newest = of(CpuProfile::Default)
                .filter_map(|entry| Version::parse(&entry.fingerprint.valgrind))
                .filter(|version| {
                    CpuProfile::ALL.into_iter().all(|cpu| {
                        of(cpu).any(|entry| {
                            Version::parse(&entry.fingerprint.valgrind) == Some(*version)
                        })
                    })
                })
                .max();
            let Some(version) = newest else { continue };
            for cpu in CpuProfile::ALL {
                if let Some(entry) = of(cpu)
                    .find(|entry| Version::parse(&entry.fingerprint.valgrind) == Some(version))
                {
                    counts.push(ProfileCount {
                        cpu,
                        harness: file.harness.clone(),
                        instructions: entry.instructions,
                        measured_with: format!(
                            "Valgrind {} ({})",
                            entry.fingerprint.valgrind, entry.fingerprint.method
                        ),
                    });
                }
            }
        }
        CpuMatrix::new(counts)
    }

    /// Rows of the harnesses whose path (the part after `::`) is one of
    /// `paths`, in that order and then by library; every row when `paths`
    /// is `None`.
    pub fn table(&self, paths: Option<&[&str]>) -> Table {
        let mut header = vec!["path".to_owned(), "library".to_owned()];
        for cpu in &self.profiles {
            header.push(if cpu.is_default() {
                cpu.name().to_owned()
            } else {
                format!("{} (vs default)", cpu.name())
            });
        }
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut table = Table::new(&header);
        let split = |row: &MatrixRow| -> Option<(String, String)> {
            let (library, path) = row.harness.split_once("::")?;
            Some((library.to_owned(), path.to_owned()))
        };
        let library_order = libraries::order;
        let mut rows: Vec<(usize, usize, &MatrixRow, String, String)> = self
            .rows
            .iter()
            .filter_map(|row| {
                let (library, path) = split(row)?;
                let path_order = match paths {
                    None => 0,
                    Some(paths) => paths.iter().position(|wanted| *wanted == path)?,
                };
                Some((path_order, library_order(&library), row, library, path))
            })
            .collect();
        rows.sort_by(|a, b| (a.0, &a.4, a.1).cmp(&(b.0, &b.4, b.1)));
        for (_, _, row, library, path) in rows {
            let display = libraries::display(&library);
            let default = row.instructions.get(&CpuProfile::Default).copied();
            let mut cells = vec![path, display.to_owned()];
            for cpu in &self.profiles {
                cells.push(match (row.instructions.get(cpu), default) {
                    (None, _) => "n/a".to_owned(),
                    (Some(n), _) if cpu.is_default() => count(*n),
                    (Some(n), Some(base)) if base > 0 => {
                        format!("{} ({})", count(*n), percent(*n, base))
                    }
                    (Some(n), _) => count(*n),
                });
            }
            table.row(cells);
        }
        table
    }

    pub fn to_json(&self) -> crate::Result<String> {
        serde_json::to_string_pretty(self).map_err(|source| crate::MeasureError::Serialize {
            what: "CPU profile comparison",
            source,
        })
    }
}

/// `+12.3 %` or `-0.4 %`: `n` against `base`.
fn percent(n: u64, base: u64) -> String {
    let change = (n as f64 - base as f64) / base as f64 * 100.0;
    format!("{change:+.1} %")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_of(cpu: CpuProfile, harness: &str, instructions: u64) -> ProfileCount {
        ProfileCount {
            cpu,
            harness: crate::fixtures::name(harness),
            instructions,
            measured_with: "Valgrind 3.24.0 (callgrind)".into(),
        }
    }

    #[test]
    fn each_profile_is_set_against_the_default() {
        let matrix = CpuMatrix::new([
            count_of(CpuProfile::Default, "s2n_tls::handshake_rsa4096", 1_000),
            count_of(CpuProfile::NoAvx, "s2n_tls::handshake_rsa4096", 1_250),
            count_of(CpuProfile::Default, "rustls::handshake_rsa4096", 800),
            count_of(CpuProfile::Default, "openssl::config_build", 10),
        ]);
        assert_eq!(matrix.profiles, [CpuProfile::Default, CpuProfile::NoAvx]);
        let table = matrix.table(Some(&["handshake_rsa4096"]));
        assert_eq!(
            table.header(),
            ["path", "library", "default", "no-avx (vs default)"]
        );
        assert_eq!(
            table.rows(),
            [
                ["handshake_rsa4096", "s2n-tls", "1,000", "1,250 (+25.0 %)"],
                ["handshake_rsa4096", "rustls", "800", "n/a"],
            ]
        );
        assert_eq!(matrix.table(None).rows().len(), 3);
        let json = matrix.to_json().expect("json");
        assert!(json.contains("\"no-avx\": 1250"), "{json}");
    }
}
