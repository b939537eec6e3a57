//! A path whose instruction count is known in closed form.
//!
//! It proves the pipeline measures exactly what it should: the loop below
//! executes exactly [`INSTRUCTIONS_PER_ITERATION`] instructions per
//! iteration, so a harness of 2N iterations must count exactly N x 3 more
//! than one of N. Any leak of setup, teardown or process noise into the
//! region breaks that equality.

use regress_measure::program::AnyHarness;
use regress_measure::{Harness, HarnessError};

use crate::paths::{NoHarness, Path};

/// Instructions in one iteration of [`spin`]'s loop.
pub const INSTRUCTIONS_PER_ITERATION: u64 = 3;

/// A loop of exactly `iterations` iterations of three instructions.
#[derive(Debug, Clone, Copy)]
pub struct Spin {
    pub iterations: u64,
}

impl Harness for Spin {
    type Setup = ();
    type Input = ();
    type Output = u64;

    fn setup(&self) -> Result<(), HarnessError> {
        Ok(())
    }

    fn prepare(&self, _: &()) -> Result<(), HarnessError> {
        Ok(())
    }

    fn run(&self, _: &(), _: ()) -> Result<u64, HarnessError> {
        Ok(spin(self.iterations))
    }

    fn check(&self, _: &(), output: &u64) -> Result<(), HarnessError> {
        if *output == self.iterations {
            Ok(())
        } else {
            Err(format!("loop counted {output}, expected {}", self.iterations).into())
        }
    }
}

/// The harness of a `spin_*` path.
pub fn harness(path: &Path) -> Result<Box<dyn AnyHarness>, NoHarness> {
    match *path {
        Path::Spin { iterations, .. } => Ok(Box::new(Spin { iterations })),
        _ => Err(NoHarness::OnlyLoop),
    }
}

/// Runs the loop and returns how many iterations it made.
///
/// Written in assembly so the compiler can neither unroll nor vectorise it:
/// the per-iteration count is a fact of this source, not of an optimiser.
#[inline(never)]
pub fn spin(iterations: u64) -> u64 {
    if iterations == 0 {
        return 0;
    }
    let mut counted: u64 = 0;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: pure register arithmetic on the two operands.
    unsafe {
        core::arch::asm!(
            "2:",
            "add {counted}, 1",
            "sub {left}, 1",
            "jnz 2b",
            counted = inout(reg) counted,
            left = inout(reg) iterations => _,
            options(nomem, nostack),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: pure register arithmetic on the two operands.
    unsafe {
        core::arch::asm!(
            "2:",
            "add {counted}, {counted}, #1",
            "subs {left}, {left}, #1",
            "b.ne 2b",
            counted = inout(reg) counted,
            left = inout(reg) iterations => _,
            options(nomem, nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        for _ in 0..iterations {
            counted = std::hint::black_box(counted + 1);
        }
    }
    counted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_counts_every_iteration() {
        assert_eq!(spin(0), 0);
        assert_eq!(spin(1), 1);
        assert_eq!(spin(1_000), 1_000);
    }

    #[test]
    fn check_rejects_a_wrong_count() {
        let harness = Spin { iterations: 10 };
        assert!(harness.check(&(), &10).is_ok());
        assert!(harness.check(&(), &9).is_err());
    }
}
