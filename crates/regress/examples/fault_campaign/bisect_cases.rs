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

/// A bisect whose BAD no longer lists the harness (renamed): the fake
/// cargo builds, at the head commit, a program whose `list` leaves it out.
fn bisect_renamed(w: &World, t: &Tools) -> super::cases::Played {
    let mut call = bisect(w, "HEAD~1", "HEAD", false);
    let renamed = w.fakes.join("program-renamed");
    w.script(
        &renamed,
        &format!(
            "#!/bin/bash\nif [ \"$1\" = list ]; then {program} list | grep -vx '{HARNESS}'; \
             exit 0; fi\nexec {program} \"$@\"\n",
            program = w.program.display()
        ),
    );
    let base = w.cargo_of(&w.program, false);
    let at_base = w.fakes.join("cargo-base");
    std::fs::rename(&base, &at_base).expect("rename");
    let head = w.cargo_of(&renamed, false);
    let at_head = w.fakes.join("cargo-head");
    std::fs::rename(&head, &at_head).expect("rename");
    let cargo = w.fakes.join("cargo-renames");
    w.script(
        &cargo,
        &format!(
            "#!/bin/bash\nif grep -qx head README.md 2>/dev/null; then exec {} \"$@\"; fi\n\
             exec {} \"$@\"\n",
            at_head.display(),
            at_base.display()
        ),
    );
    call.env[0] = ("CARGO", cargo.display().to_string());
    w.play(t, &call)
}

pub fn all() -> Vec<Case> {
    vec![
        case(
            "bisect: BAD no longer has the harness (renamed)",
            2,
            "has no harness calibration::spin_1m",
            bisect_renamed,
        ),
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
            |w: &World, t: &Tools| {
                let mut played = w.play(t, &bisect(w, "HEAD~1", "HEAD", false));
                // In a log (not a terminal) stdout and stderr meet: every
                // printed result must end its line.
                if !played.ended.stdout.ends_with('\n') {
                    played
                        .problems
                        .push("stdout does not end with a newline (lines glue in a log)".into());
                }
                played
            },
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
