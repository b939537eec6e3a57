//! Library repositories (the fixtures of `regress-source`'s tests) with a
//! second commit that adds a known loop on a path only application data
//! takes: shared by the end-to-end tests and the timing example.
//!
//! - s2n-tls: a `noinline` C function called from `s2n_sendv_with_offset`,
//!   on `s2n_send`'s path only;
//! - rustls: an `#[inline(never)]` Rust function called from
//!   `CommonState::send_appdata_encrypt`, which encrypts application data
//!   (never a handshake message).
//!
//! Each iteration is `nop; dec; jnz`: 3 instructions.

use std::path::{Path, PathBuf};

use super::common;

/// Iterations of the injected loop; it costs 3 instructions each.
pub const SPIN: u64 = 10_000;
pub const SPIN_FUNCTION: &str = "s2n_regress_test_spin";
/// The injected Rust function, as the report names it (module path,
/// without the symbol hash).
#[allow(dead_code)] // used by the library end-to-end test only
pub const RUSTLS_SPIN_FUNCTION: &str = "rustls::common_state::regress_test_spin";

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

/// rustls's repository (the published 0.23.46 in its layout) with commit 2
/// adding the loop at the top of `send_appdata_encrypt`, which runs once
/// per write of application data (one record per write on the record
/// paths). rustls forbids unsafe code crate-wide; the commit relaxes that
/// to `deny` so that the loop, inline assembly of a known length, can
/// allow it for itself.
#[allow(dead_code)] // used by the library end-to-end test only
pub fn rustls_with_a_spin(dir: &Path) -> PathBuf {
    let root = common::repos::rustls(dir, "0.23.46");
    common::replace_in(
        &root.join("rustls/src/lib.rs"),
        "#![forbid(unsafe_code, unused_must_use)]",
        "#![deny(unsafe_code)]\n#![forbid(unused_must_use)]",
    );
    let state = root.join("rustls/src/common_state.rs");
    common::replace_in(
        &state,
        "    ) -> usize {\n        // Here, the limit on sendable_tls applies to encrypted data,",
        "    ) -> usize {\n        regress_test_spin();\n        \
         // Here, the limit on sendable_tls applies to encrypted data,",
    );
    let text = std::fs::read_to_string(&state).expect("read");
    let spin = format!(
        "\n/// regress test: a known cost on the application-data path.\n\
         #[inline(never)]\n\
         #[allow(unsafe_code)]\n\
         fn regress_test_spin() {{\n    \
         // SAFETY: a loop on one register; no memory, no stack.\n    \
         unsafe {{\n        \
         core::arch::asm!(\"mov ecx, {SPIN}\", \"2:\", \"nop\", \"dec ecx\", \"jnz 2b\", \
         out(\"ecx\") _, options(nomem, nostack));\n    \
         }}\n\
         }}\n"
    );
    std::fs::write(&state, format!("{text}{spin}")).expect("write");
    common::git(
        &root,
        &["commit", "-q", "-am", "a spin on the application-data path"],
    );
    root
}
