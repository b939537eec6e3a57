//! Makes the s2n-tls repository of the end-to-end test in a folder, for
//! timing runs by hand (`scripts/library-diff-timing.sh`): commit 1 as
//! released (plus a comment naming NONCE, so s2n-tls is built afresh), commit 2
//! with a known loop on `s2n_send`'s path.
//!
//! ```sh
//! cargo run -p regress --example library_fixture -- DIR NONCE
//! ```
//!
//! Prints the repository's path.

#[path = "../../source/tests/common/mod.rs"]
mod common;
#[path = "../tests/library/spin.rs"]
mod spin;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, nonce] = args.as_slice() else {
        eprintln!("usage: library_fixture DIR NONCE");
        std::process::exit(2);
    };
    std::fs::create_dir_all(dir).expect("create the folder");
    let root = spin::s2n_tls_with_a_spin(std::path::Path::new(dir), nonce);
    println!("{}", root.display());
}
