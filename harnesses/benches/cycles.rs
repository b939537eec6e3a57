//! A criterion measurement in CPU cycles, from the time-stamp counter.
//!
//! On current x86_64 CPUs the TSC ticks at a constant rate close to the
//! nominal frequency, not the boosted one, so "cycles" here are reference
//! cycles; bytes per cycle from it are comparable with published figures
//! such as ARM's 0.70 bytes/cycle for AES-GCM-256 at 16 KiB, within that
//! caveat.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;

pub struct Cycles;

/// True where the counter can be read (x86_64).
pub fn available() -> bool {
    cfg!(target_arch = "x86_64")
}

pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: RDTSC has no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

impl Measurement for Cycles {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        now()
    }

    fn end(&self, start: u64) -> u64 {
        now().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CyclesFormatter
    }
}

struct CyclesFormatter;

impl ValueFormatter for CyclesFormatter {
    fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
        "cycles"
    }

    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        match throughput {
            Throughput::Bytes(bytes) | Throughput::BytesDecimal(bytes) => {
                for value in values.iter_mut() {
                    *value = *bytes as f64 / *value;
                }
                "bytes/cycle"
            }
            Throughput::Elements(elements) => {
                for value in values.iter_mut() {
                    *value = *elements as f64 / *value;
                }
                "elements/cycle"
            }
            _ => "cycles",
        }
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "cycles"
    }
}
