//! Fake tools: shell scripts that stand in for Valgrind, its tools and
//! cargo, and misbehave on purpose. A fake marks the stage it reached with
//! a file (`stage/<name>`), so the campaign can interrupt `regress` right
//! there.
//!
//! The fake Valgrind that works runs the measured program natively (the
//! program writes its report as under Valgrind) and writes a profile of
//! 1,000 instructions per run it was asked for, as Valgrind 3.19 (the
//! subtraction method, so both of Valgrind's annotation tools are used);
//! the real `cg_annotate` and `cg_diff` then read those profiles.

use std::path::PathBuf;

use super::world::World;

/// How the fake Valgrind behaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Valgrind {
    /// Runs the program and writes a profile.
    Works,
    /// Works, and leaves a sleeping grandchild behind.
    LeavesGrandchild,
    /// Works, and leaves a daemon behind (`setsid`: out of its group).
    LeavesDaemon,
    /// Starts a sleeping grandchild and waits for it: hangs.
    Hangs,
    /// Starts a daemon (`setsid`) and a child that starts its own sleeping
    /// child, then hangs: what a wrapper leaves when `regress` is killed.
    HangsLeavingDaemon,
    /// Dies of SIGSEGV.
    Crashes,
    /// Exits 0 without running anything.
    RunsNothing,
    /// Exits 101 and prints nothing.
    Fails101,
    /// `--version` never answers.
    VersionHangs,
    /// The real Valgrind (`/usr/bin/valgrind`), marking the stage first.
    Real,
    /// The real Valgrind with the runner's options, running `sleep 30` in
    /// place of the program: killed at the time limit.
    RealHangs,
}

/// Which of Valgrind's tools beside it hang (the rest are the real ones).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tools {
    Real,
    /// `cg_annotate` hangs.
    AnnotateHangs,
    /// `cg_diff` hangs when a diff lines names up (on the profiles it
    /// normalised, `*.normalised.cachegrind.out`), the per-function diff of
    /// `regress diff`.
    DiffHangs,
    /// No `cg_annotate` or `cg_diff` beside it.
    Missing,
}

const HANG: &str = "sleep 300 & wait";

impl World {
    /// A fake Valgrind in a folder of its own, with `tools` beside it.
    pub fn valgrind(&self, mode: Valgrind, tools: Tools) -> PathBuf {
        let dir = self.fakes.join(format!("valgrind-{mode:?}-{tools:?}"));
        let stage = self.stage.display();
        // The fake counts nothing itself, so it cannot serve forks: it
        // runs the program without the fork server's variable, as a
        // Valgrind whose program never answers the greeting, and the
        // runner starts each child on its own.
        let program_run = r#"
unset REGRESS_FORK_SERVER_PROTOCOL
out=""; for arg in "$@"; do case "$arg" in --cachegrind-out-file=*) out="${arg#*=}";; esac; done
prog="${@: -1}"
"$prog" || exit $?
runs="${REGRESS_CHILD_RUNS:-3}"
count=$((runs * 1000 + 7))
printf 'desc: fake\ncmd: ./harness\nevents: Ir\nfl=harnesses/src/fake.rs\nfn=fake::path\n0 %s\nsummary: %s\n' "$count" "$count" > "$out"
"#;
        let body = match mode {
            Valgrind::Works => program_run.to_owned(),
            Valgrind::LeavesGrandchild => format!("{program_run}\n(sleep 300 &)\n"),
            Valgrind::LeavesDaemon => {
                format!("{program_run}\nsetsid sleep 300 </dev/null >/dev/null 2>&1 &\n")
            }
            Valgrind::Hangs => HANG.to_owned(),
            Valgrind::HangsLeavingDaemon => format!(
                "setsid sleep 300 </dev/null >/dev/null 2>&1 &\n(sleep 300; true) &\n{HANG}"
            ),
            Valgrind::Crashes => "kill -SEGV $$".to_owned(),
            Valgrind::RunsNothing => "exit 0".to_owned(),
            Valgrind::Fails101 => "exit 101".to_owned(),
            Valgrind::VersionHangs => String::new(),
            Valgrind::Real => "exec /usr/bin/valgrind \"$@\"".to_owned(),
            Valgrind::RealHangs => {
                "exec /usr/bin/valgrind \"${@:1:$#-1}\" /bin/sleep 30".to_owned()
            }
        };
        let version = match mode {
            Valgrind::VersionHangs => format!("touch {stage}/version; {HANG}"),
            Valgrind::Real | Valgrind::RealHangs => "exec /usr/bin/valgrind --version".to_owned(),
            _ => "echo valgrind-3.19.0; exit 0".to_owned(),
        };
        self.script(
            &dir.join("valgrind"),
            &format!(
                "#!/bin/bash\n# fake valgrind ({mode:?})\n\
                 if [ \"$1\" = --version ]; then {version}; fi\n\
                 touch {stage}/measure\n{body}\n"
            ),
        );
        let hang = |name: &str| format!("#!/bin/bash\ntouch {stage}/{name}\n{HANG}\n");
        let real = |name: &str| format!("#!/bin/bash\nexec /usr/bin/{name} \"$@\"\n");
        match tools {
            Tools::Missing => {}
            Tools::Real => {
                self.script(&dir.join("cg_annotate"), &real("cg_annotate"));
                self.script(&dir.join("cg_diff"), &real("cg_diff"));
            }
            Tools::AnnotateHangs => {
                self.script(&dir.join("cg_annotate"), &hang("annotate"));
                self.script(&dir.join("cg_diff"), &real("cg_diff"));
            }
            Tools::DiffHangs => {
                self.script(&dir.join("cg_annotate"), &real("cg_annotate"));
                self.script(
                    &dir.join("cg_diff"),
                    &format!(
                        "#!/bin/bash\ncase \"$*\" in *normalised.cachegrind.out*) touch {stage}/annotate; \
                         {HANG};; esac\nexec /usr/bin/cg_diff \"$@\"\n"
                    ),
                );
            }
        }
        dir.join("valgrind")
    }

    /// A fake cargo: `metadata` names one package; `test --no-run` copies
    /// the measured program into the target folder and says so in cargo's
    /// JSON, or (`hangs`) marks the build stage and never finishes.
    pub fn cargo(&self, hangs: bool) -> PathBuf {
        self.cargo_of(&self.program, hangs)
    }

    /// The fake cargo, building `program` as the measured program.
    pub fn cargo_of(&self, program: &std::path::Path, hangs: bool) -> PathBuf {
        let path = self.fakes.join(if hangs { "cargo-hangs" } else { "cargo" });
        let stage = self.stage.display();
        let program = program.display();
        let build = if hangs {
            HANG.to_owned()
        } else {
            format!(
                r#"target="${{CARGO_TARGET_DIR:-$PWD/target}}/debug"
# A hard link writes no data (a file-size limit then hits the runner's own
# copy first); touched, so it is newer than the worktree it is built from.
mkdir -p "$target" && ln -f {program} "$target/harnesses" && touch "$target/harnesses" || exit 101
printf '{{"reason":"compiler-artifact","package_id":"path+file:///w/harnesses#0.1.0","manifest_path":"/w/harnesses/Cargo.toml","target":{{"name":"harnesses","kind":["bin"],"crate_types":["bin"],"required-features":[],"src_path":"/w/harnesses/src/main.rs","edition":"2021","doctest":false,"test":true,"doc":true}},"profile":{{"opt_level":"3","debuginfo":1,"debug_assertions":false,"overflow_checks":false,"test":false}},"features":[],"filenames":[],"executable":"%s","fresh":false}}\n' "$target/harnesses""#
            )
        };
        self.script(
            &path,
            &format!(
                "#!/bin/bash\n# fake cargo\n\
                 if [ \"$1\" = metadata ]; then echo '{{\"packages\":[{{\"name\":\"harnesses\"}}]}}'; exit 0; fi\n\
                 touch {stage}/build\n{build}\n"
            ),
        );
        path
    }
}
