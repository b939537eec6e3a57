//! Makes an s2n-tls repository of N commits for timing `regress bisect`
//! by hand (`scripts/bisect-timing.sh`): commit 1 as released, commit K
//! adding the known loop on `s2n_send`'s path (`spin.rs`), every other
//! commit a comment in `tls/s2n_config.c`, each naming NONCE, so that every
//! commit's C tree differs and s2n-tls is built afresh for each.
//!
//! ```sh
//! cargo run -p regress --example bisect_fixture -- DIR NONCE N K
//! ```
//!
//! Prints the repository's path.

#[path = "../../source/tests/common/mod.rs"]
mod common;
#[path = "../tests/library/spin.rs"]
mod spin;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, nonce, commits, step] = args.as_slice() else {
        eprintln!("usage: bisect_fixture DIR NONCE N K");
        std::process::exit(2);
    };
    let (Ok(commits), Ok(step)) = (commits.parse::<usize>(), step.parse::<usize>()) else {
        eprintln!("N and K are numbers of commits");
        std::process::exit(2);
    };
    if !(2..=commits).contains(&step) {
        eprintln!("K must be from 2 to N");
        std::process::exit(2);
    }
    std::fs::create_dir_all(dir).expect("create the folder");
    let root = common::repos::s2n_tls(std::path::Path::new(dir), "0.3.47");
    for n in 2..=commits {
        if n == step {
            spin::add_spin(&root);
            continue;
        }
        let file = root.join("tls/s2n_config.c");
        let text = std::fs::read_to_string(&file).expect("read");
        std::fs::write(&file, format!("/* {nonce} {n} */\n{text}")).expect("write");
        common::git(&root, &["commit", "-q", "-am", &format!("comment {n}")]);
    }
    println!("{}", root.display());
}
