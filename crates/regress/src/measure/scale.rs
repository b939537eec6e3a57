//! `regress scale`: how a path's wall-clock throughput scales with threads.
//!
//! Each thread count is a fresh native process of the harness test binary
//! (no Valgrind), so one measurement cannot warm or pollute the next.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use regress_measure::scale::{ScaleReport, ScaleRequest};
use serde::{Deserialize, Serialize};

use super::{MeasureError, Result};
use crate::harness_name::HarnessName;
use crate::process::{self, Role};

/// Bumped whenever the JSON's meaning changes.
pub const SCALE_SCHEMA: u32 = 1;

/// The paths scaled when the user names none: full handshakes (RSA and
/// ECDSA), mTLS, and chain verification, for every library that has them.
pub const DEFAULT_PATHS: &[&str] = &[
    "::handshake_rsa4096",
    "::handshake_ecdsa_p256",
    "::mtls_rsa4096",
    "::x509_verify_chain",
];

/// One harness scaled over 1..=N threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    pub schema: u32,
    pub harness: HarnessName,
    pub seconds_per_point: f64,
    pub points: Vec<ScaleReport>,
}

/// Runs `harness` on 1, 2, ... `max_threads` threads for `duration` each.
pub fn scale(
    binary: &Path,
    harness: &HarnessName,
    max_threads: usize,
    duration: Duration,
    scratch: &Path,
) -> Result<Scaling> {
    std::fs::create_dir_all(scratch)
        .map_err(|source| MeasureError::io("create", scratch, source))?;
    let mut points = Vec::new();
    for threads in 1..=max_threads.max(1) {
        let report_path = harness.file_in(scratch, &format!("-{threads}.json"));
        let request = ScaleRequest {
            harness: harness.to_string(),
            threads,
            duration,
            report: report_path.clone(),
        };
        let mut command = Command::new(binary);
        command.envs(request.to_env());
        // Set-up and the timed part, with room to spare: a child past this
        // is hung, and is killed with its group.
        let limit = duration.saturating_mul(2) + Duration::from_secs(120);
        let output = process::output(command, binary, limit, 1 << 20, Role::Work)?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let lines: Vec<&str> = stderr.lines().collect();
            return Err(MeasureError::ScaleFailed {
                harness: harness.clone(),
                threads,
                status: output.status.to_string(),
                stderr: lines[lines.len().saturating_sub(40)..].join("\n"),
            });
        }
        let text = match std::fs::read_to_string(&report_path) {
            Ok(text) => text,
            Err(_) => {
                return Err(MeasureError::ScaleNoReport {
                    harness: harness.clone(),
                    binary: binary.to_path_buf(),
                })
            }
        };
        let report: ScaleReport =
            serde_json::from_str(&text).map_err(|source| MeasureError::Json {
                what: "scaling report",
                path: report_path.clone(),
                source,
            })?;
        let _ = std::fs::remove_file(&report_path);
        points.push(report);
    }
    Ok(Scaling {
        schema: SCALE_SCHEMA,
        harness: harness.clone(),
        seconds_per_point: duration.as_secs_f64(),
        points,
    })
}
