//! Measurements a from-source diff can reuse: the edit-and-measure loop
//! diffs the same base again and again, and re-measuring it would double
//! every round.
//!
//! A count depends on the measured program and on the Valgrind that counts
//! it, and on nothing else: with the determinism recipe of this project the
//! same program under the same Valgrind counts the same, to the instruction
//! (`regress noise`: spread 0 on every harness). So a side's measurements
//! are kept under a key made of the program's bytes (which hold the library
//! revision, the harnesses, the compilers and the lock's versions), the
//! Valgrind program, its version and its method, and the CPU profile, and
//! reused whole (record,
//! raw profile and annotated text) when the key is the same.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::ProgramError;
use crate::harness_name::HarnessName;
use crate::measure::cpu_profile::CpuProfile;
use crate::measure::flame;
use crate::measure::valgrind::Valgrind;
use crate::Measurement;

/// The files of one measurement, by the suffix of the harness's file stem.
/// An entry from before line data was kept has no `.lines.json`: it is
/// measured again.
const FILES: [&str; 4] = [".json", ".cachegrind.out", ".annotated.txt", ".lines.json"];

/// Files a measurement has when its method gives them: a Callgrind
/// measurement's call paths and flame graph.
const OPTIONAL: [&str; 2] = [flame::FOLDED, flame::PLAIN];

/// What a cache entry holds, in the key: entries of an older runner, made
/// before the call paths were kept, are not found.
const FORMAT: &str = "entry 2: record, profile, annotation, call paths";

/// The stored measurements of one measured program under one Valgrind.
#[derive(Debug, Clone)]
pub struct MeasurementCache {
    dir: PathBuf,
}

impl MeasurementCache {
    /// The cache of `program` measured with `valgrind` under the CPU
    /// profile `cpu`, under `root`.
    pub fn new(
        root: &Path,
        program: &Path,
        valgrind: &Valgrind,
        cpu: CpuProfile,
    ) -> Result<Self, ProgramError> {
        let mut hash = Sha256::new();
        let mut file = std::fs::File::open(program)
            .map_err(|source| ProgramError::io("read", program, source))?;
        std::io::copy(&mut file, &mut hash)
            .map_err(|source| ProgramError::io("read", program, source))?;
        for part in [
            valgrind.program.to_string_lossy().as_bytes(),
            valgrind.version.to_string().as_bytes(),
            valgrind.method.to_string().as_bytes(),
            cpu.name().as_bytes(),
            FORMAT.as_bytes(),
        ] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        let key: String = hash.finalize()[..16]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        Ok(MeasurementCache {
            dir: root.join(key),
        })
    }

    /// The stored measurement of `harness`, copied into `outputs` as if it
    /// had just been made; `None` when there is none (or it does not load).
    pub fn load(&self, harness: &HarnessName, outputs: &Path) -> Option<Measurement> {
        if !FILES
            .iter()
            .all(|suffix| harness.file_in(&self.dir, suffix).is_file())
        {
            return None;
        }
        std::fs::create_dir_all(outputs).ok()?;
        for suffix in OPTIONAL {
            let stored = harness.file_in(&self.dir, suffix);
            if stored.is_file() {
                std::fs::copy(stored, harness.file_in(outputs, suffix)).ok()?;
            }
        }
        for suffix in FILES {
            std::fs::copy(
                harness.file_in(&self.dir, suffix),
                harness.file_in(outputs, suffix),
            )
            .ok()?;
        }
        Measurement::read(&harness.file_in(outputs, ".json")).ok()
    }

    /// Keeps the measurement of `harness` just written to `outputs`. Best
    /// effort: a cache that cannot be written only costs a measurement
    /// next time. Written beside, then renamed, so a half-stored entry is
    /// never found.
    pub fn store(&self, harness: &HarnessName, outputs: &Path) {
        let staging = self.dir.join(format!(".staging-{}", std::process::id()));
        let stored = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(&staging)?;
            for suffix in FILES {
                std::fs::copy(
                    harness.file_in(outputs, suffix),
                    harness.file_in(&staging, suffix),
                )?;
            }
            for suffix in OPTIONAL {
                let written = harness.file_in(outputs, suffix);
                if written.is_file() {
                    std::fs::copy(written, harness.file_in(&self.dir, suffix))?;
                }
            }
            // The record last: `load` needs them all.
            for suffix in FILES.iter().rev() {
                std::fs::rename(
                    harness.file_in(&staging, suffix),
                    harness.file_in(&self.dir, suffix),
                )?;
            }
            Ok(())
        })();
        if stored.is_err() {
            for suffix in FILES.iter().chain(&OPTIONAL) {
                let _ = std::fs::remove_file(harness.file_in(&self.dir, suffix));
            }
        }
        let _ = std::fs::remove_dir_all(&staging);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_follows_the_program_the_valgrind_and_the_cpu_profile() {
        let dir = tempfile::tempdir().expect("tempdir");
        let program = dir.path().join("harnesses");
        std::fs::write(&program, b"program one").expect("write");
        let valgrind = crate::fixtures::valgrind("3.19.0");
        let one = MeasurementCache::new(dir.path(), &program, &valgrind, CpuProfile::Default)
            .expect("key");
        let again = MeasurementCache::new(dir.path(), &program, &valgrind, CpuProfile::Default)
            .expect("key");
        assert_eq!(one.dir, again.dir);
        let other = crate::fixtures::valgrind("3.24.0");
        let by_valgrind =
            MeasurementCache::new(dir.path(), &program, &other, CpuProfile::Default).expect("key");
        assert_ne!(one.dir, by_valgrind.dir);
        let by_cpu =
            MeasurementCache::new(dir.path(), &program, &valgrind, CpuProfile::NoAvx).expect("key");
        assert_ne!(one.dir, by_cpu.dir);
        std::fs::write(&program, b"program two").expect("write");
        let by_program =
            MeasurementCache::new(dir.path(), &program, &valgrind, CpuProfile::Default)
                .expect("key");
        assert_ne!(one.dir, by_program.dir);
    }

    /// A measurement's call paths and flame graph travel with it when
    /// it has them.
    #[test]
    fn call_paths_are_kept_and_restored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = MeasurementCache {
            dir: dir.path().join("cache"),
        };
        let harness = crate::fixtures::name("a::b");
        let outputs = dir.path().join("outputs");
        std::fs::create_dir_all(&outputs).expect("mkdir");
        for (suffix, text) in [
            (".cachegrind.out", "events: Ir\n"),
            (".annotated.txt", "text"),
            (".lines.json", "{}"),
            (flame::FOLDED, "main 5\n"),
            (flame::PLAIN, "<svg/>"),
        ] {
            std::fs::write(harness.file_in(&outputs, suffix), text).expect("write");
        }
        std::fs::write(harness.file_in(&outputs, ".json"), "{}").expect("write");
        cache.store(&harness, &outputs);
        let elsewhere = dir.path().join("elsewhere");
        // The record does not load as a measurement, but every file came back.
        let _ = cache.load(&harness, &elsewhere);
        assert_eq!(
            std::fs::read_to_string(harness.file_in(&elsewhere, flame::FOLDED)).expect("read"),
            "main 5\n"
        );
        assert!(harness.file_in(&elsewhere, flame::PLAIN).is_file());
    }

    #[test]
    fn an_incomplete_entry_is_not_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = MeasurementCache {
            dir: dir.path().join("cache"),
        };
        let harness = crate::fixtures::name("a::b");
        let outputs = dir.path().join("outputs");
        std::fs::create_dir_all(&outputs).expect("mkdir");
        std::fs::write(harness.file_in(&outputs, ".json"), "{}").expect("write");
        // The profile and the annotated text are missing: nothing stored.
        cache.store(&harness, &outputs);
        assert!(cache
            .load(&harness, &dir.path().join("elsewhere"))
            .is_none());
        assert!(!harness.file_in(&cache.dir, ".json").exists());
    }
}
