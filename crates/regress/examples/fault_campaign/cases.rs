//! The cases: each sets up its world, plays one `regress` command (or two
//! at once), and adds the checks of its own to the campaign's common ones.

use super::fakes::{Tools as ValgrindTools, Valgrind};
use super::world::{changes, Ended, Interrupt, Tools, World};

pub const HARNESS: &str = "calibration::spin_1m";

/// What playing a case gave.
pub struct Played {
    pub command: String,
    pub ended: Ended,
    pub survivors: Vec<String>,
    pub changed: Vec<String>,
    pub bytes: u64,
    /// Failed checks of the case's own.
    pub problems: Vec<String>,
}

pub struct Case {
    pub name: &'static str,
    pub code: i32,
    /// Text the message (first error or interrupt line) must contain.
    pub message: &'static str,
    pub play: Play,
}

/// What a case does: set its world up and play its call.
pub type Play = Box<dyn Fn(&World, &Tools) -> Played>;

/// One invocation of `regress`.
#[derive(Default, Clone)]
pub struct Call {
    pub args: Vec<String>,
    pub env: Vec<(&'static str, String)>,
    pub interrupt: Option<Interrupt>,
    pub fsize: Option<u64>,
}

impl World {
    pub fn play(&self, tools: &Tools, call: &Call) -> Played {
        let before = self.snapshot();
        let tmp_before = valgrind_leftovers();
        let args: Vec<&str> = call.args.iter().map(String::as_str).collect();
        let ended = self.run(tools, &args, &call.env, call.interrupt, call.fsize);
        let survivors = self.survivors();
        let (mut changed, bytes) = changes(&before, &self.snapshot());
        changed.extend(
            valgrind_leftovers()
                .difference(&tmp_before)
                .map(|name| format!("left /tmp/{name}")),
        );
        let mut shown = vec!["regress".to_owned()];
        shown.extend(call.args.iter().map(|arg| {
            arg.strip_prefix(&*self.root.to_string_lossy())
                .map_or_else(|| arg.clone(), |rest| format!("…{rest}"))
        }));
        Played {
            command: shown.join(" "),
            ended,
            survivors,
            changed,
            bytes,
            problems: Vec::new(),
        }
    }

    /// `regress ARGS`, nothing else set.
    pub fn play_args(&self, tools: &Tools, list: &[&str]) -> Played {
        self.play(
            tools,
            &Call {
                args: args(list),
                ..Call::default()
            },
        )
    }

    /// `regress --valgrind FAKE run --harness calibration::spin_1m` with
    /// the fake cargo.
    pub fn measure(&self, command: &str, mode: Valgrind, tools: ValgrindTools) -> Call {
        let valgrind = self.valgrind(mode, tools);
        let mut args = vec![
            "--valgrind".to_owned(),
            valgrind.display().to_string(),
            command.to_owned(),
            "--harness".to_owned(),
            HARNESS.to_owned(),
        ];
        if command == "noise" {
            args.extend(["--runs".to_owned(), "2".to_owned()]);
        }
        Call {
            args,
            env: vec![("CARGO", self.cargo(false).display().to_string())],
            ..Call::default()
        }
    }

    fn record(&self, harness: &str, file: &str) {
        let record = regress::fixtures::measurement("a::b", 1_234, None);
        let mut value = serde_json::to_value(&record).expect("json");
        value["harness"] = harness.into();
        std::fs::write(self.ws.join("perf_outputs").join(file), value.to_string())
            .expect("write record");
    }

    fn baseline(&self, edit: impl Fn(&mut serde_json::Value)) {
        let file = regress::fixtures::baseline(HARNESS, &[("3.19.0", 3_000)]);
        let mut value = serde_json::to_value(&file).expect("json");
        edit(&mut value);
        std::fs::write(
            self.ws.join("baselines/calibration.spin_1m.json"),
            serde_json::to_string_pretty(&value).expect("json"),
        )
        .expect("write baseline");
    }

    pub fn scratch_left(&self, played: &mut Played) {
        let scratch = self.ws.join("perf_outputs/.scratch");
        let left: Vec<String> = std::fs::read_dir(&scratch)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if !left.is_empty() {
            played.problems.push(format!("scratch left: {left:?}"));
        }
    }
}

pub fn case(
    name: &'static str,
    code: i32,
    message: &'static str,
    play: impl Fn(&World, &Tools) -> Played + 'static,
) -> Case {
    Case {
        name,
        code,
        message,
        play: Box::new(play),
    }
}

/// Runs a call and checks the scratch folder is empty afterwards.
pub fn clean(world: &World, tools: &Tools, call: &Call) -> Played {
    let mut played = world.play(tools, call);
    world.scratch_left(&mut played);
    played
}

/// `call`, signalled 300 ms after `stage` begins.
pub fn interrupted(mut call: Call, stage: &'static str, signal: i32) -> Call {
    call.interrupt = Some(Interrupt {
        stage,
        signal,
        after: std::time::Duration::from_millis(300),
    });
    call
}

pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|arg| (*arg).to_owned()).collect()
}

/// Every case of the campaign.
pub fn all() -> Vec<Case> {
    let mut cases = input_cases();
    cases.extend(tool_cases());
    cases.extend(super::interrupt_cases::all());
    cases.extend(super::diff_cases::all());
    cases.extend(super::bisect_cases::all());
    cases.extend(super::hostile_cases::all());
    cases
}

fn input_cases() -> Vec<Case> {
    vec![
        case(
            "bless: a record names ../../escape",
            2,
            "is not a harness name",
            |w, t| {
                w.record("../../escape", "escape.json");
                w.play_args(t, &["bless", "--harness", "escape"])
            },
        ),
        case(
            "bless: one of two baselines is corrupt",
            2,
            "not valid JSON",
            |w, t| {
                w.record("a::good", "a.good.json");
                w.record("a::bad", "a.bad.json");
                std::fs::write(w.ws.join("baselines/a.bad.json"), "{\"schema\": 1,").expect("w");
                bless_checked(w, t, None, "a.good.json")
            },
        ),
        case(
            "bless: writes fail (RLIMIT_FSIZE 100 B)",
            2,
            "cannot write the baseline",
            |w, t| {
                w.record("a::good", "a.good.json");
                bless_checked(w, t, Some(100), "a.good.json")
            },
        ),
        case(
            "bless: the second of two writes fails",
            2,
            "cannot write the baseline",
            |w, t| {
                // a::a's new file fits under the limit, a::z's grown file
                // does not: the first must be taken back.
                w.record("a::a", "a.a.json");
                w.record("a::z", "a.z.json");
                let versions = [("3.20.0", 1), ("3.21.0", 2), ("3.22.0", 3)];
                let file = regress::fixtures::baseline("a::z", &versions);
                std::fs::write(
                    w.ws.join("baselines/a.z.json"),
                    file.to_json().expect("json"),
                )
                .expect("write");
                bless_checked(w, t, Some(1_500), "a.a.json")
            },
        ),
        case(
            "run: baseline count 2^64-1",
            2,
            "more than any measurement can",
            |w, t| {
                w.baseline(|v| v["entries"][0]["instructions"] = u64::MAX.into());
                clean(
                    w,
                    t,
                    &w.measure("run", Valgrind::Works, ValgrindTools::Real),
                )
            },
        ),
        case(
            "run: baseline count 2^63, threshold 100 %",
            2,
            "more than any measurement",
            |w, t| {
                w.baseline(|v| {
                    v["entries"][0]["instructions"] = (1u64 << 63).into();
                    v["threshold"]["relative_percent"] = 100.0.into();
                });
                clean(
                    w,
                    t,
                    &w.measure("run", Valgrind::Works, ValgrindTools::Real),
                )
            },
        ),
        case("run: relative_percent 1e300", 2, "from 0 to 100", |w, t| {
            w.baseline(|v| v["threshold"]["relative_percent"] = 1e300.into());
            clean(
                w,
                t,
                &w.measure("run", Valgrind::Works, ValgrindTools::Real),
            )
        }),
        case("run: operations_per_run 0", 2, "0 calls per run", |w, t| {
            w.baseline(|v| v["entries"][0]["operations_per_run"] = 0.into());
            clean(
                w,
                t,
                &w.measure("run", Valgrind::Works, ValgrindTools::Real),
            )
        }),
        case("run: truncated baseline", 2, "not valid JSON", |w, t| {
            std::fs::write(w.ws.join("baselines/calibration.spin_1m.json"), "{\"sch").expect("w");
            clean(
                w,
                t,
                &w.measure("run", Valgrind::Works, ValgrindTools::Real),
            )
        }),
        case(
            "run: clean, stale scratch of a dead run",
            0,
            "harness",
            |w, t| {
                for stale in [
                    "binary.999999999",
                    "program.pid999999999",
                    "a.b.999999999.0",
                ] {
                    std::fs::create_dir_all(w.ws.join("perf_outputs/.scratch").join(stale))
                        .expect("mkdir");
                }
                let mut played = clean(
                    w,
                    t,
                    &w.measure("run", Valgrind::Works, ValgrindTools::Real),
                );
                if !w.ws.join("perf_outputs/calibration.spin_1m.json").is_file() {
                    played.problems.push("no record written".into());
                }
                played
            },
        ),
        case(
            "REGRESS_TIMEOUT_SECS=2^64-1",
            2,
            "from 1 to 86400",
            |w, t| {
                let mut call = w.measure("run", Valgrind::Works, ValgrindTools::Real);
                call.env
                    .push(("REGRESS_TIMEOUT_SECS", u64::MAX.to_string()));
                w.play(t, &call)
            },
        ),
        case("run --harness ''", 2, "an empty filter", |w, t| {
            w.play_args(t, &["run", "--harness", ""])
        }),
        case(
            "read-only output folder (a file in its place)",
            2,
            "cannot create",
            |w, t| {
                std::fs::remove_dir_all(w.ws.join("perf_outputs")).expect("rm");
                std::fs::write(w.ws.join("perf_outputs"), "not a folder").expect("write");
                let mut played = w.play(t, &w.measure("run", Valgrind::Works, ValgrindTools::Real));
                if std::fs::read_to_string(w.ws.join("perf_outputs"))
                    .ok()
                    .as_deref()
                    != Some("not a folder")
                {
                    played.problems.push("the file in its place changed".into());
                }
                played
            },
        ),
        case(
            "run: writes fail (RLIMIT_FSIZE 4 MiB)",
            2,
            "File too large",
            |w, t| {
                let mut call = w.measure("run", Valgrind::Works, ValgrindTools::Real);
                call.fsize = Some(4 << 20);
                clean(w, t, &call)
            },
        ),
    ]
}

fn tool_cases() -> Vec<Case> {
    let fake = |mode, tools, code, message| {
        case(
            message_name(mode, tools),
            code,
            message,
            move |w: &World, t: &Tools| {
                let mut call = w.measure("run", mode, tools);
                call.env.push(("REGRESS_TIMEOUT_SECS", "2".into()));
                let mut played = w.play(t, &call);
                // A failed measurement keeps its logs (the evidence); nothing else.
                let _ = std::fs::remove_dir_all(w.ws.join("perf_outputs/.scratch"));
                if mode == Valgrind::LeavesGrandchild {
                    w.scratch_left(&mut played);
                }
                played
            },
        )
    };
    vec![
        case(
            "--valgrind /nonexistent/valgrind",
            2,
            "valgrind was not found at",
            |w, t| {
                let call = Call {
                    args: args(&["--valgrind", "/nonexistent/valgrind", "run"]),
                    ..Call::default()
                };
                w.play(t, &call)
            },
        ),
        case(
            "no cg_annotate beside Valgrind or on PATH",
            2,
            "cg_annotate was not found",
            |w, t| {
                let mut call = w.measure("run", Valgrind::Works, ValgrindTools::Missing);
                call.env.push(("PATH", "/nonexistent".into()));
                w.play(t, &call)
            },
        ),
        fake(
            Valgrind::Hangs,
            ValgrindTools::Real,
            2,
            "did not finish under Valgrind within 2 s",
        ),
        fake(
            Valgrind::Crashes,
            ValgrindTools::Real,
            2,
            "failed under Valgrind (signal: 11",
        ),
        fake(
            Valgrind::RunsNothing,
            ValgrindTools::Real,
            2,
            "did not run the measured program",
        ),
        fake(
            Valgrind::Fails101,
            ValgrindTools::Real,
            2,
            "failed under Valgrind (exit code 101)",
        ),
        fake(
            Valgrind::VersionHangs,
            ValgrindTools::Real,
            2,
            "did not finish within 2 s",
        ),
        fake(
            Valgrind::LeavesGrandchild,
            ValgrindTools::Real,
            0,
            "harness",
        ),
        fake(
            Valgrind::Works,
            ValgrindTools::AnnotateHangs,
            2,
            "did not finish within 2 s",
        ),
        case("the real Valgrind measures", 0, "harness", |w, t| {
            clean(w, t, &w.measure("run", Valgrind::Real, ValgrindTools::Real))
        }),
        case(
            "the real Valgrind hangs (killed), 1 s limit",
            2,
            "did not finish under Valgrind within 1 s",
            |w, t| {
                // Its child is killed (SIGKILL), so nothing of Valgrind's
                // may stay in /tmp.
                let mut call = w.measure("run", Valgrind::RealHangs, ValgrindTools::Real);
                call.env.push(("REGRESS_TIMEOUT_SECS", "1".into()));
                let played = w.play(t, &call);
                let _ = std::fs::remove_dir_all(w.ws.join("perf_outputs/.scratch"));
                played
            },
        ),
    ]
}

fn message_name(mode: Valgrind, tools: ValgrindTools) -> &'static str {
    match (mode, tools) {
        (Valgrind::Hangs, _) => "Valgrind hangs (a sleeping grandchild), 2 s limit",
        (Valgrind::Crashes, _) => "Valgrind crashes (SIGSEGV)",
        (Valgrind::RunsNothing, _) => "Valgrind exits 0 without running the program",
        (Valgrind::Fails101, _) => "Valgrind exits 101, empty stderr",
        (Valgrind::VersionHangs, _) => "valgrind --version hangs, 2 s limit",
        (Valgrind::LeavesGrandchild, _) => "Valgrind leaves a grandchild running",
        (_, ValgrindTools::AnnotateHangs) => "cg_annotate hangs, 2 s limit",
        _ => "fake Valgrind",
    }
}

/// `regress bless`, with writes limited to `limit` bytes if given;
/// `absent` must not be in `baselines/` afterwards (all or nothing).
fn bless_checked(w: &World, t: &Tools, limit: Option<u64>, absent: &str) -> Played {
    let call = Call {
        args: args(&["bless"]),
        fsize: limit,
        ..Call::default()
    };
    let mut played = w.play(t, &call);
    if w.ws.join("baselines").join(absent).exists() {
        played.problems.push(format!("{absent} was left"));
    }
    played
}

/// Valgrind's files in `/tmp` (its gdbserver's FIFOs and shared memory,
/// named `vgdb-pipe-...` after the child's pid): a child killed at its
/// timeout or by an interrupt leaves them behind unless the runner turned
/// the gdbserver off, so a case that adds one wrote outside the project.
fn valgrind_leftovers() -> std::collections::BTreeSet<String> {
    std::fs::read_dir("/tmp")
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with("vgdb-pipe"))
                .collect()
        })
        .unwrap_or_default()
}
