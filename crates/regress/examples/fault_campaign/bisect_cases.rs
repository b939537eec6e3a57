//! The cases of `regress bisect` over this workspace's commits: a GOOD
//! that is not an ancestor of BAD, a range whose two ends count the same
//! (the fake cargo builds one program for both), and an interrupt while a
//! revision builds. None may change the repository (its `.git` included)
//! or leave a process; the clone and kept builds under
//! `target/regress-revisions/` are regress's own.

use super::cases::{args, case, interrupted, Call, Case, HARNESS};
use super::fakes::{Tools as ValgrindTools, Valgrind};
use super::world::{Tools, World};

/// A workspace bisect of the case's repository from `good` to `bad`.
fn bisect(w: &World, good: &str, bad: &str, cargo_hangs: bool) -> Call {
    let repo = w.repository();
    let valgrind = w.valgrind(Valgrind::Works, ValgrindTools::Real);
    Call {
        args: vec![
            "--valgrind".into(),
            valgrind.display().to_string(),
            "bisect".into(),
            good.into(),
            bad.into(),
            "--harness".into(),
            HARNESS.into(),
        ],
        env: vec![
            ("CARGO", w.cargo(cargo_hangs).display().to_string()),
            ("REGRESS_ROOT", repo.display().to_string()),
        ],
        ..Call::default()
    }
}

pub fn all() -> Vec<Case> {
    vec![
        case(
            "bisect: GOOD is not an ancestor of BAD",
            2,
            "is not an ancestor of BAD",
            |w: &World, t: &Tools| {
                let call = Call {
                    args: args(&["bisect", "HEAD", "HEAD~1", "--harness", HARNESS]),
                    ..bisect(w, "HEAD", "HEAD~1", false)
                };
                w.play(t, &call)
            },
        ),
        case(
            "bisect: the same count at both ends",
            1,
            "no step",
            |w: &World, t: &Tools| w.play(t, &bisect(w, "HEAD~1", "HEAD", false)),
        ),
        case(
            "bisect, SIGINT while cargo builds GOOD",
            130,
            "interrupted",
            |w: &World, t: &Tools| {
                let call = interrupted(bisect(w, "HEAD~1", "HEAD", true), "build", libc::SIGINT);
                w.play(t, &call)
            },
        ),
    ]
}
