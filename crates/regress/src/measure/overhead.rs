//! How much of a measured region the harness itself costs.
//!
//! A harness adds its own code to the region: the in-memory transport that
//! carries bytes between client and server, buffer handling, the loop that
//! drives both sides. That cost must stay negligible (under 1 %) or it
//! distorts comparisons between libraries. It is read from the region's raw
//! profile, which (unlike `cg_annotate`'s summary, cut at 0.1 %) holds every
//! function: the instructions whose source file lies in the harnesses crate
//! (`harnesses/src/`), inlined code included, since Cachegrind attributes an
//! instruction to the file its debug line information names.
//!
//! What this cannot see: copies the transport asks glibc's `memcpy` to do
//! are attributed to glibc, not to the harness. The record harnesses' doc
//! comments give that figure.

use std::path::Path;

use regress_profile::cachegrind_out;

/// The part of a path that marks the harnesses crate's own sources.
pub const HARNESS_SOURCES: &str = "harnesses/src/";

/// Percent of the region's instructions in harness source files.
pub fn harness_share_percent(profile: &Path) -> Result<f64, regress_profile::ProfileError> {
    let profile = cachegrind_out::read(profile)?;
    let total = profile.instructions()?;
    Ok(share(&profile, total))
}

fn share(profile: &cachegrind_out::Profile, total: i64) -> f64 {
    if total <= 0 {
        return 0.0;
    }
    let harness: i64 = profile
        .functions
        .iter()
        .filter(|function| function.file.contains(HARNESS_SOURCES))
        .map(|function| function.instructions)
        .sum();
    harness as f64 / total as f64 * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_harness_files() {
        let text = "events: Ir\n\
fl=/work/main/harnesses/src/s2n_tls/transport.rs\nfn=send\n1 30\n\
fl=/aws-lc/crypto/x.c\nfn=mul\n5 960\n\
fl=/rustc/abc/library/core/src/slice.rs\nfn=copy\n2 10\n\
summary: 1000\n";
        let profile = cachegrind_out::parse(text).expect("parse");
        assert!((share(&profile, 1000) - 3.0).abs() < 1e-9);
    }
}
