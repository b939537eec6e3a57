//! s2n-tls's repository (the fixture of `regress-source`'s tests) with a
//! second commit that adds a known `noinline` loop to
//! `s2n_sendv_with_offset`, on `s2n_send`'s path only: shared by the
//! end-to-end test and the timing example.

use std::path::{Path, PathBuf};

use super::common;

/// Iterations of the injected loop; it costs 3 instructions each.
pub const SPIN: u64 = 10_000;
pub const SPIN_FUNCTION: &str = "s2n_regress_test_spin";

/// s2n-tls's repository with commit 2 adding the loop on `s2n_send`'s path.
///
/// `nonce`, when not empty, goes into a comment of both commits, so that a
/// timing run builds s2n-tls afresh instead of finding the last run's build.
#[allow(dead_code)] // each test binary uses one of the two
pub fn s2n_tls_with_a_spin(dir: &Path, nonce: &str) -> PathBuf {
    let root = common::repos::s2n_tls(dir, "0.3.47");
    let send = root.join("tls/s2n_send.c");
    if !nonce.is_empty() {
        let text = std::fs::read_to_string(&send).expect("read");
        std::fs::write(&send, format!("/* {nonce} */\n{text}")).expect("write");
        common::git(&root, &["commit", "-q", "-am", "nonce"]);
    }
    add_spin(&root);
    root
}

/// Commits the loop on `s2n_send`'s path in s2n-tls's repository at
/// `root` (a new commit on its current branch).
#[allow(dead_code)] // each test binary uses one of the two
pub fn add_spin(root: &Path) {
    let send = root.join("tls/s2n_send.c");
    common::replace_in(
        &send,
        "ssize_t s2n_sendv_with_offset(struct s2n_connection *conn,",
        &format!(
            "/* regress test: a known cost on the application-data path */\n\
             __attribute__((noinline)) void {SPIN_FUNCTION}(void)\n{{\n    \
             __asm__ volatile(\"mov ${SPIN}, %%ecx\\n1:\\n nop\\n dec %%ecx\\n jnz 1b\\n\" \
             ::: \"ecx\", \"cc\");\n}}\n\n\
             ssize_t s2n_sendv_with_offset(struct s2n_connection *conn,"
        ),
    );
    common::replace_in(
        &send,
        "    ssize_t result = s2n_sendv_with_offset_impl(conn, bufs, count, offs, blocked);",
        &format!(
            "    {SPIN_FUNCTION}();\n    \
             ssize_t result = s2n_sendv_with_offset_impl(conn, bufs, count, offs, blocked);"
        ),
    );
    common::git(root, &["commit", "-q", "-am", "a spin on the send path"]);
}
