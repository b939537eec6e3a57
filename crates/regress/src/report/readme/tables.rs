//! The generated sections' text, from the committed baseline files: the
//! library comparison and its per-side and AEAD tables, the method
//! agreement, the CPU profiles.

use std::fmt::Write as _;
use std::path::Path;

use super::ReadmeError;
use crate::format::{count, signed};
use crate::judge::baseline::{BaselineEntry, BaselineFile};
use crate::measure::valgrind::{Method, Version};
use crate::report::compare::{Comparison, Count};
use crate::report::cpu_matrix::CpuMatrix;
use crate::report::Table;

/// The paths of the CPU profile table: the handshakes, the 16 KiB records
/// and the largest AEAD call, where the profiles move counts most.
const CPU_PROFILE_PATHS: &[&str] = &[
    "handshake_rsa4096",
    "handshake_ecdsa_p256",
    "handshake_tls12_rsa4096",
    "record_aes128gcm_16k",
    "record_chacha20poly1305_16k",
    "record_tls12_chacha20poly1305_16k",
    "aead_aes128gcm_seal_16384",
];

/// The AEAD ciphers and message sizes of the per-call table, as harness
/// names spell them.
const AEAD_CIPHERS: &[(&str, &str)] = &[("aes128gcm", "AES-128-GCM"), ("aes256gcm", "AES-256-GCM")];
const AEAD_SIZES: &[u64] = &[16, 64, 256, 1024, 8192, 16384];

/// One baseline file's entry for a method: the newest Valgrind's when
/// several machines have one.
/// `file`'s entry of `method` with the newest (`newest`) or the oldest
/// Valgrind version.
fn entry(file: &BaselineFile, method: Method, newest: bool) -> Option<&BaselineEntry> {
    let of_method = file.entries.iter().filter(|entry| {
        entry.fingerprint.method == method && entry.fingerprint.cpu_profile.is_default()
    });
    let version = |entry: &&BaselineEntry| Version::parse(&entry.fingerprint.valgrind);
    if newest {
        of_method.max_by_key(version)
    } else {
        of_method.min_by_key(version)
    }
}

fn to_count(file: &BaselineFile, entry: &BaselineEntry) -> Count {
    Count {
        harness: file.harness.clone(),
        instructions: entry.instructions,
        bytes_per_run: entry.bytes_per_run,
        operations_per_run: entry.operations_per_run,
        measured_with: format!(
            "Valgrind {} ({})",
            entry.fingerprint.valgrind, entry.fingerprint.method
        ),
        harness_share_percent: None,
        sides: crate::measure::metrics::is_split(&entry.metrics),
        metrics: entry.metrics.clone(),
    }
}

/// Every baseline file in `dir`, by harness name: the files of `dir` itself
/// named `<lib>.<name>.json`. Folders without that suffix (`history/`, the
/// published versions' histories) are passed by, neither loaded nor refused.
pub fn load_all(dir: &Path) -> Result<Vec<BaselineFile>, ReadmeError> {
    let entries =
        std::fs::read_dir(dir).map_err(|source| crate::MeasureError::io("list", dir, source))?;
    let mut stems: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    stems.sort();
    let mut files = Vec::new();
    for stem in stems {
        // `s2n_tls.handshake` names `s2n_tls::handshake`; `load` checks the
        // file says the same.
        let harness = crate::HarnessName::new(&stem.replacen('.', "::", 1))
            .map_err(crate::MeasureError::from)?;
        if let Some(file) = BaselineFile::load(dir, &harness).map_err(Box::new)? {
            files.push(file);
        }
    }
    Ok(files)
}

/// The generated text of every section, from the baseline files.
///
/// The tables show each harness's entry of the newest Valgrind measured
/// with Callgrind's method (the default since it counts the same
/// instructions as Cachegrind's in one child), else with the markers
/// method; the agreement table sets the older method or version against
/// it: subtraction (3.19) against markers (3.22+), or Callgrind's method on
/// the oldest Valgrind against the newest.
pub fn sections(files: &[BaselineFile], dir: &Path) -> Result<Vec<(String, String)>, ReadmeError> {
    let counts = |method, newest| -> Vec<Count> {
        files
            .iter()
            .filter_map(|file| entry(file, method, newest).map(|entry| to_count(file, entry)))
            .collect()
    };
    let (markers, older) = if counts(Method::Callgrind, true).is_empty() {
        (
            counts(Method::Markers, true),
            counts(Method::Subtraction, true),
        )
    } else {
        (
            counts(Method::Callgrind, true),
            counts(Method::Callgrind, false),
        )
    };
    if markers.is_empty() {
        return Err(ReadmeError::NoEntries {
            dir: dir.to_path_buf(),
            method: Method::Markers,
        });
    }
    // The AEAD paths have a table of their own; the comparison is of the
    // TLS libraries.
    let (aead, tls): (Vec<Count>, Vec<Count>) = markers
        .iter()
        .cloned()
        .partition(|count| count.harness.starts_with("aws_lc_rs::"));
    let comparison = Comparison::new(&tls);
    Ok(vec![
        ("library-comparison".to_owned(), comparison.to_markdown()),
        (
            "post-quantum".to_owned(),
            crate::report::real_world::post_quantum(&tls),
        ),
        (
            "defaults".to_owned(),
            crate::report::real_world::defaults(files, &tls),
        ),
        (
            "hostile".to_owned(),
            crate::report::real_world::hostile(&tls),
        ),
        (
            "amplification".to_owned(),
            crate::report::real_world::amplification(&comparison),
        ),
        (
            "worst-amplification".to_owned(),
            crate::report::real_world::worst_amplification(&comparison),
        ),
        (
            "sides-and-held".to_owned(),
            crate::report::sides::to_markdown(&comparison),
        ),
        (
            "aead-per-call".to_owned(),
            aead_table(&Comparison::new(&aead)).to_markdown(),
        ),
        (
            "method-agreement".to_owned(),
            method_agreement(&older, &markers),
        ),
        ("cpu-profiles".to_owned(), cpu_profiles(files)),
    ])
}

/// The paths of [`CPU_PROFILE_PATHS`] under every CPU profile, from the
/// newest Valgrind that has them all.
fn cpu_profiles(files: &[BaselineFile]) -> String {
    let matrix = CpuMatrix::from_baselines(files);
    if matrix.profiles.len() < 2 {
        return "No baseline has entries of a CPU profile other than the default.\n".to_owned();
    }
    let mut text = matrix.table(Some(CPU_PROFILE_PATHS)).to_markdown();
    let _ = writeln!(
        text,
        "\nInstructions of one run ({}).",
        matrix.measured_with.join("; ")
    );
    text
}

/// Instructions per call (and per byte) of the aws-lc-rs AEAD paths, by
/// message size.
fn aead_table(comparison: &Comparison) -> Table {
    let mut header = vec!["message bytes".to_owned(), "calls per run".to_owned()];
    for (_, cipher) in AEAD_CIPHERS {
        for direction in ["seal", "open"] {
            header.push(format!("{cipher} {direction}"));
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for size in AEAD_SIZES {
        let mut calls = None;
        let mut row = vec![count(*size)];
        for (cipher, _) in AEAD_CIPHERS {
            for direction in ["seal", "open"] {
                let path = format!("aead_{cipher}_{direction}_{size}");
                let cell = comparison.cell(&path, "aws_lc_rs");
                calls = calls.or(cell.map(|c| c.operations_per_run.unwrap_or(1)));
                row.push(cell.map_or_else(
                    || "n/a".to_owned(),
                    |cell| {
                        let per_call = cell
                            .instructions_per_operation
                            .unwrap_or(cell.instructions as f64);
                        let per_byte = cell
                            .instructions_per_byte
                            .map_or_else(String::new, |b| format!(" ({b:.2}/B)"));
                        format!("{}{per_byte}", count(per_call.round() as u64))
                    },
                ));
            }
        }
        row.insert(1, calls.map_or_else(|| "n/a".to_owned(), count));
        table.row(row);
    }
    table
}

/// Every harness measured both ways: the subtraction entry against the
/// markers entry, and the largest relative difference.
fn method_agreement(subtraction: &[Count], markers: &[Count]) -> String {
    let (Some(sub), Some(mark)) = (subtraction.first(), markers.first()) else {
        return "No harness has entries of both methods.\n".to_owned();
    };
    if sub.measured_with == mark.measured_with {
        return "No harness has entries of two methods or Valgrind versions.\n".to_owned();
    }
    // `Valgrind 3.19.0 (subtraction)` as `subtraction (Valgrind 3.19.0)`.
    let name = |count: &Count| match count.measured_with.rsplit_once(" (") {
        Some((valgrind, method)) => format!("{} ({valgrind})", method.trim_end_matches(')')),
        None => count.measured_with.clone(),
    };
    let (sub_name, mark_name) = (name(sub), name(mark));
    let mut table = Table::new(&["harness", &sub_name, &mark_name, "difference", "%"]);
    let mut largest: f64 = 0.0;
    for before in subtraction {
        let Some(after) = markers.iter().find(|m| m.harness == before.harness) else {
            continue;
        };
        let difference = i128::from(after.instructions) - i128::from(before.instructions);
        let percent = difference.unsigned_abs() as f64 / before.instructions as f64 * 100.0;
        largest = largest.max(percent);
        table.row(vec![
            before.harness.to_string(),
            count(before.instructions),
            count(after.instructions),
            signed(difference),
            format!("{percent:.5}"),
        ]);
    }
    let mut out = table.to_markdown();
    let _ = write!(out, "\nlargest difference: {largest:.5} %\n");
    out
}
