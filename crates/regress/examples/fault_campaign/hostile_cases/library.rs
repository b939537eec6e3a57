//! The `--library` checkouts of the hostile-input campaign: an s2n-tls
//! checkout whose `s2n-tls-sys` links outside, and one whose working tree
//! holds an oversized untracked file.

use std::path::{Path, PathBuf};

use crate::cases::{args, Call, Played};
use crate::fakes::{Tools as ValgrindTools, Valgrind};
use crate::world::{Tools, World};

/// An s2n-tls checkout of two commits whose `s2n-tls-sys` is a committed
/// symlink to the `outside/` folder (which holds what the layout check
/// wants): `regress diff --library` must refuse it and change nothing there.
pub(super) fn linked_s2n(w: &World, t: &Tools) -> Played {
    let outside = w.outside();
    sys_crate(&outside);
    let repo = s2n_checkout(w, |sys| {
        // Absolute: it points outside wherever the tree is exported to.
        std::os::unix::fs::symlink(&outside, sys).expect("link");
    });
    diff_library(w, t, &repo, &["HEAD~1", "HEAD"])
}

/// What the layout check wants of `s2n-tls-sys`: its manifest, a build
/// script, the C sources under `lib/` and generated bindings.
fn sys_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("lib/tls")).expect("mkdir");
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    std::fs::write(dir.join("build.rs"), "fn main() {}\n").expect("write");
    std::fs::write(dir.join("lib/tls/s2n.c"), "precious\n").expect("write");
    std::fs::write(dir.join("src/api.rs"), "// generated\n").expect("write");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"s2n-tls-sys\"\nversion = \"0.3.47\"\n",
    )
    .expect("write");
}

/// An s2n-tls checkout in s2n-tls's layout with two commits (the second
/// changes `tls/x.c`); `sys` makes its `bindings/rust/extended/s2n-tls-sys`.
fn s2n_checkout(w: &World, sys: impl FnOnce(&Path)) -> PathBuf {
    let repo = w.root.join("s2n");
    for dir in [
        "api",
        "crypto",
        "error",
        "stuffer",
        "tls",
        "utils",
        "tests/features",
        "cmake",
    ] {
        std::fs::create_dir_all(repo.join(dir)).expect("mkdir");
        std::fs::write(repo.join(dir).join("x.c"), "x\n").expect("write");
    }
    std::fs::write(repo.join("CMakeLists.txt"), "x\n").expect("write");
    let bindings = repo.join("bindings/rust/extended");
    std::fs::create_dir_all(bindings.join("s2n-tls")).expect("mkdir");
    std::fs::write(
        bindings.join("s2n-tls/Cargo.toml"),
        "[package]\nname = \"s2n-tls\"\nversion = \"0.3.47\"\n",
    )
    .expect("write");
    sys(&bindings.join("s2n-tls-sys"));
    crate::world::git(&repo, &["init", "-q", "-b", "main"]);
    crate::world::git(&repo, &["add", "-A"]);
    crate::world::git(&repo, &["commit", "-q", "-m", "base"]);
    std::fs::write(repo.join("tls/x.c"), "y\n").expect("write");
    crate::world::git(&repo, &["commit", "-q", "-am", "head"]);
    repo
}

/// `regress diff --library s2n-tls=REPO REVISIONS...` with a working
/// Valgrind and the fake cargo.
fn diff_library(w: &World, t: &Tools, repo: &Path, revisions: &[&str]) -> Played {
    let valgrind = w.valgrind(Valgrind::Works, ValgrindTools::Real);
    let spec = format!("s2n-tls={}", repo.display());
    let valgrind = valgrind.display().to_string();
    let mut all = vec!["--valgrind", &valgrind, "diff", "--library", &spec];
    all.extend_from_slice(revisions);
    let call = Call {
        args: args(&all),
        env: vec![("CARGO", w.cargo(false).display().to_string())],
        ..Call::default()
    };
    w.play(t, &call)
}

/// An s2n-tls checkout whose working tree holds an untracked file of
/// 300 MiB (sparse: no disk is used) beside an edit: the export of the
/// working tree (HEAD left out) refuses it before it copies anything or
/// builds, instead of copying for seconds with interrupts waiting (issue 27,
/// class 8).
pub(super) fn oversized_untracked(w: &World, t: &Tools) -> Played {
    let repo = s2n_checkout(w, sys_crate);
    // The generated list of C files the export expects of a commit.
    std::fs::write(
        repo.join("bindings/rust/extended/s2n-tls-sys/files.rs"),
        "// generated\n",
    )
    .expect("write");
    crate::world::git(&repo, &["add", "-A"]);
    crate::world::git(&repo, &["commit", "-q", "-m", "generated"]);
    std::fs::write(repo.join("tls/x.c"), "z\n").expect("write");
    let big = std::fs::File::create(repo.join("tls/capture.pcap")).expect("create");
    big.set_len(300 << 20).expect("size");
    let started = std::time::Instant::now();
    let mut played = diff_library(w, t, &repo, &["HEAD"]);
    if started.elapsed() > std::time::Duration::from_secs(20) {
        played.problems.push(format!(
            "took {:.1} s to refuse the file",
            started.elapsed().as_secs_f64()
        ));
    }
    played
}
