//! Every child process `regress` and `regress-source` start: Valgrind,
//! `cg_annotate` and `cg_diff`, the measured program, git, cargo, the
//! s2n-tls binding generator.
//!
//! Why one crate for both: a child that hangs, or that leaves a grandchild
//! behind, must never hang or outlive `regress`, whichever part of it
//! started the child, and a Ctrl-C must reach every child the same way.
//! So every child
//!
//! * gets its arguments as a vector, never through a shell;
//! * starts in a process group of its own ([`Supervised`]), which is killed
//!   as a whole: on a timeout, on cancellation, on an interrupt, after the
//!   child exits (a wrapper that leaves a grandchild running leaves
//!   nothing), and when the caller gives up on it (the guard's `Drop`);
//! * is reaped only after its group was killed: the leader is watched with
//!   `waitid(WNOWAIT)`, so its id, which is the group's, cannot have been
//!   reused by an unrelated process when the kill is sent;
//! * on Linux dies with `regress` (`PR_SET_PDEATHSIG`);
//! * if it leaves its group (`setsid`), comes back to `regress` when its
//!   parent dies (`regress` is a child subreaper) and is killed when the
//!   command ends ([`adopt_orphans`], [`kill_adopted`]);
//! * if `regress` itself is killed outright, is killed by the sentinel, a
//!   process of its own that watches `regress` ([`Sentinel`]; what it can
//!   and cannot reach is in its documentation).
//!
//! A child in a group of its own no longer receives the terminal's Ctrl-C,
//! so [`install_interrupt_handler`] forwards it: SIGINT, SIGTERM and SIGHUP
//! record the request, send SIGTERM to every live group and SIGKILL two
//! seconds later; a wait then returns [`ProcessError::Interrupted`] and no
//! new child starts, except clean-up commands ([`Role::Cleanup`]) that
//! remove a diff's worktrees. A second signal kills every group and exits
//! at once with [`EXIT_INTERRUPTED`].
//!
//! Two ways in: [`run`] for a [`Program`] whose diagnostic output is kept
//! as a tail (and optionally logged and echoed), [`output`] for a
//! `std::process::Command` whose whole output is wanted; [`Streaming`] for
//! a child whose pipes the caller drives, and [`Supervised`] itself for
//! callers that wire the pipes their own way.

mod error;
mod interrupt;
mod orphans;
mod procfs;
mod program;
mod run;
mod sentinel;
mod streaming;
mod supervised;

pub use error::ProcessError;
pub use interrupt::{check, install_interrupt_handler, interrupted, EXIT_INTERRUPTED};
pub use orphans::{adopt_orphans, kill_adopted};
pub use program::Program;
pub use run::{last_lines, output, run, stderr_text, Finished, RunOptions};
pub use sentinel::{serve_sentinel, Sentinel, SentinelError, RUN_VARIABLE, SENTINEL_ARGUMENT};
pub use streaming::Streaming;
pub use supervised::{Ended, Limits, Role, Supervised};

#[cfg(test)]
pub(crate) mod test_support;
