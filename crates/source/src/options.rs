//! How long each kind of step may take, and how a caller stops a run.

use std::time::Duration;

use crate::process::{Limits, Role};

/// What a timeout's message tells the user.
const REMEDY: &str = "\n  A from-source step that takes this long is stuck, or the machine is \
                      very slow; the limits are regress_source::Timeouts.";

/// Time limits per kind of external command. Each command that exceeds its
/// limit is killed with everything it started.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// One git query (`rev-parse`, `ls-files`, `status`...).
    pub git: Duration,
    /// Streaming a whole tree out of git (aws-lc is tens of MiB).
    pub export: Duration,
    /// A generation step (s2n-tls: builds bindgen the first time, then
    /// runs it: about a minute on 2 cores).
    pub generate: Duration,
    /// `cargo metadata` / `cargo update` (may fetch the registry index).
    pub cargo: Duration,
    /// Building the harnesses (aws-lc and s2n-tls from scratch: minutes).
    pub build: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            git: Duration::from_secs(120),
            export: Duration::from_secs(1200),
            generate: Duration::from_secs(1800),
            cargo: Duration::from_secs(600),
            build: Duration::from_secs(3600),
        }
    }
}

/// What every step of this crate is run with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub timeouts: Timeouts,
    /// Polled while a command runs; `true` stops it (phase B passes its
    /// Ctrl-C flag).
    pub cancelled: Option<fn() -> bool>,
    /// Show the output of generation steps and builds as they run (a
    /// terminal wants it; tests and logs do not).
    pub echo: bool,
}

impl Options {
    pub fn limits(&self, timeout: Duration) -> Limits {
        Limits {
            timeout,
            cancelled: self.cancelled,
            role: Role::Work,
            remedy: REMEDY,
        }
    }

    pub fn git_limits(&self) -> Limits {
        self.limits(self.timeouts.git)
    }
}
