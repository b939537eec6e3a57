//! Every child process the runner starts (Valgrind, `cg_annotate`,
//! `cg_diff`, the measured program, git, cargo) runs in a process group of
//! its own, with a time limit, and gets Ctrl-C forwarded: the one
//! implementation is the `regress-process` crate, which `regress-source`
//! uses too. Re-exported here under the runner's own path.

pub use regress_process::{
    adopt_orphans, check, install_interrupt_handler, interrupted, kill_adopted, output,
    serve_sentinel, stderr_text, Ended, ProcessError, Role, Sentinel, Supervised, EXIT_INTERRUPTED,
    SENTINEL_ARGUMENT,
};
