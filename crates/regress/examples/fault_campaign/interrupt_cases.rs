//! The interrupt cases: SIGINT or SIGTERM while a command measures,
//! builds or writes; every one must end with 130, leave no process and
//! change nothing outside `perf_outputs/`. And SIGKILL, which `regress`
//! cannot handle: its sentinel must leave no process either.

use std::path::Path;

use super::cases::{args, case, clean, interrupted, Call, Case, HARNESS};
use super::fakes::{Tools as ValgrindTools, Valgrind};
use super::world::{Tools, World};

pub fn all() -> Vec<Case> {
    let at = |name, command: &'static str, mode, tools, stage, signal, hang_build: bool| {
        case(name, 130, "interrupted", move |w: &World, t: &Tools| {
            let mut call = w.measure(command, mode, tools);
            if hang_build {
                call.env = vec![("CARGO", w.cargo(true).display().to_string())];
            }
            clean(w, t, &interrupted(call, stage, signal))
        })
    };
    let (int, term) = (libc::SIGINT, libc::SIGTERM);
    let (hangs, works, real) = (Valgrind::Hangs, Valgrind::Works, ValgrindTools::Real);
    vec![
        at(
            "run, SIGINT while cargo builds",
            "run",
            works,
            real,
            "build",
            int,
            true,
        ),
        at(
            "run, SIGINT while Valgrind measures",
            "run",
            hangs,
            real,
            "measure",
            int,
            false,
        ),
        at(
            "run, SIGTERM while Valgrind measures",
            "run",
            hangs,
            real,
            "measure",
            term,
            false,
        ),
        at(
            "run, SIGINT while cg_annotate runs",
            "run",
            works,
            ValgrindTools::AnnotateHangs,
            "annotate",
            int,
            false,
        ),
        case(
            "run, SIGINT while the real Valgrind measures",
            130,
            "interrupted",
            |w, t| {
                let mut call = w.measure("run", Valgrind::Real, ValgrindTools::Real);
                // A path that takes seconds under Valgrind.
                call.args[4] = "rustls::handshake_rsa4096".into();
                clean(w, t, &interrupted(call, "measure", libc::SIGINT))
            },
        ),
        case(
            "scale, SIGINT while the program runs natively",
            130,
            "interrupted",
            |w, t| {
                let mut call = Call {
                    args: args(&["scale", "--harness", HARNESS, "--seconds", "30"]),
                    env: vec![("CARGO", w.cargo(false).display().to_string())],
                    ..Call::default()
                };
                call = interrupted(call, "build", libc::SIGINT);
                if let Some(interrupt) = &mut call.interrupt {
                    interrupt.after = std::time::Duration::from_millis(1_500);
                }
                clean(w, t, &call)
            },
        ),
        case(
            "list: the program's list hangs, 2 s limit",
            2,
            "did not finish within 2 s",
            |w, t| {
                let program = w.fakes.join("program-hangs");
                w.script(
                    &program,
                    "#!/bin/bash
sleep 300 & wait
",
                );
                let call = Call {
                    args: args(&["list"]),
                    env: vec![
                        ("CARGO", w.cargo_of(&program, false).display().to_string()),
                        ("REGRESS_TIMEOUT_SECS", "2".into()),
                    ],
                    ..Call::default()
                };
                w.play(t, &call)
            },
        ),
        at(
            "noise, SIGINT while cargo builds",
            "noise",
            works,
            real,
            "build",
            int,
            true,
        ),
        at(
            "noise, SIGINT while Valgrind measures",
            "noise",
            hangs,
            real,
            "measure",
            int,
            false,
        ),
        // SIGKILL: nothing in `regress` can act; its sentinel kills the
        // daemon and the wrapper's child (no message to check: 128 + 9).
        case(
            "run, SIGKILL while a wrapper measures, leaving a daemon and a child",
            137,
            "",
            |w, t| {
                let call = w.measure("run", Valgrind::HangsLeavingDaemon, ValgrindTools::Real);
                w.play(t, &interrupted(call, "measure", libc::SIGKILL))
            },
        ),
        case("two runs at once", 0, "harness", |w, t| {
            let call = w.measure("run", Valgrind::Works, ValgrindTools::Real);
            let mut played = std::thread::scope(|scope| {
                let second = scope.spawn(|| {
                    let args: Vec<&str> = call.args.iter().map(String::as_str).collect();
                    w.run(t, &args, &call.env, None, None)
                });
                let mut played = w.play(t, &call);
                let second = second.join().expect("thread");
                if second.code != Some(0) {
                    played
                        .problems
                        .push(format!("the other run: {}", second.message()));
                }
                played
            });
            w.scratch_left(&mut played);
            let record = w.ws.join("perf_outputs/calibration.spin_1m.json");
            if regress::Measurement::read(Path::new(&record)).is_err() {
                played.problems.push("the record is not whole".into());
            }
            played
        }),
    ]
}
