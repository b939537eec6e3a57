//! Clocks that never move.
//!
//! s2n-tls reads its wall clock to validate certificates and to issue, age and
//! accept session tickets, and its monotonic clock for timers. Real clocks
//! would make counts depend on the day the measurement runs (certificate
//! lifetimes, ticket ages, ticket-key selection). Every config the harnesses
//! build installs both of these, so the same binary executes the same
//! instructions on every run.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use s2n_tls::callbacks::{MonotonicClock, WallClock};

/// 2026-01-01T00:00:00Z, in seconds since the Unix epoch: inside the test
/// certificates' validity (2025-01-01 to 2125-01-01).
pub const FIXED_WALL_CLOCK_SECS: u64 = 1_767_225_600;

/// An arbitrary constant for the monotonic clock; s2n-tls only ever
/// subtracts monotonic readings from one another.
pub const FIXED_MONOTONIC_SECS: u64 = 1_000_000;

/// The fixed wall-clock time as a [`SystemTime`], for APIs that take one
/// (session-ticket key introduction times).
pub fn fixed_wall_time() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(FIXED_WALL_CLOCK_SECS)
}

/// A wall clock stuck at [`FIXED_WALL_CLOCK_SECS`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedWallClock;

impl WallClock for FixedWallClock {
    fn get_time_since_epoch(&self) -> Duration {
        Duration::from_secs(FIXED_WALL_CLOCK_SECS)
    }
}

/// A monotonic clock stuck at [`FIXED_MONOTONIC_SECS`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedMonotonicClock;

impl MonotonicClock for FixedMonotonicClock {
    fn get_time(&self) -> Duration {
        Duration::from_secs(FIXED_MONOTONIC_SECS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_is_new_year_2026() {
        // 56 years of 365 days plus the 14 leap days from 1972 to 2024.
        let days = 56 * 365 + 14;
        assert_eq!(FIXED_WALL_CLOCK_SECS, days * 86_400);
        assert_eq!(
            FixedWallClock.get_time_since_epoch(),
            FixedWallClock.get_time_since_epoch()
        );
    }
}
