//! The one reporter: everything the `regress` binary shows goes through
//! here.
//!
//! Results (tables, lists) go to stdout, where a pipe or a file can take
//! them. Progress goes to stderr: on a terminal, an `indicatif` bar with a
//! line above it per finished measurement; in a log (CI, a pipe), no bar and
//! no per-measurement lines, so the log holds what matters: the Valgrind in
//! use, failures, verdicts that need a reader, and the closing timing line.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::events::{DiffStep, Event, Listener};
use super::Table;
use crate::format::count;

/// Renders events on stderr and results on stdout.
pub struct Reporter {
    /// Whether progress is drawn (stderr is a terminal).
    live: bool,
    /// The bar of the batch of measurements under way.
    bar: Mutex<Option<ProgressBar>>,
}

impl Default for Reporter {
    fn default() -> Reporter {
        Reporter::new()
    }
}

impl Reporter {
    /// A reporter that draws progress when stderr is a terminal.
    pub fn new() -> Reporter {
        Reporter {
            live: std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    /// A result: to stdout, as is, ending with a newline (added when the
    /// text lacks one), so that in a log, where stdout and stderr meet, the
    /// next line never runs on after it.
    pub fn print(&self, text: &str) {
        self.suspended(|| {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            if !text.is_empty() && !text.ends_with('\n') {
                let _ = stdout.write_all(b"\n");
            }
            let _ = stdout.flush();
        });
    }

    /// A result table, as fixed-width text on stdout.
    pub fn table(&self, table: &Table) {
        self.print(&table.to_text());
    }

    /// A line for the user on stderr, shown in logs too.
    pub fn note(&self, line: &str) {
        self.suspended(|| eprintln!("{line}"));
    }

    /// Runs `write` with the bar (if any) cleared, so lines do not tear it.
    fn suspended(&self, write: impl FnOnce()) {
        let bar = self.bar.lock().ok().and_then(|bar| bar.clone());
        match bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// A line only a person watching needs (the terminal, not the log).
    fn progress_line(&self, line: String) {
        if !self.live {
            return;
        }
        match self.bar.lock().ok().and_then(|bar| bar.clone()) {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn start_bar(&self, total: usize) {
        let target = if self.live {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total as u64), target);
        if let Ok(style) = ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar);
        }
    }

    fn finish_bar(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut bar| bar.take()) {
            bar.finish_and_clear();
        }
    }

    fn advance(&self, message: String) {
        if let Some(bar) = self.bar.lock().ok().and_then(|bar| bar.clone()) {
            bar.inc(1);
            bar.set_message(message);
        }
    }
}

fn side_prefix(side: Option<&str>) -> String {
    side.map_or_else(String::new, |side| format!("{side} "))
}

impl Listener for Reporter {
    fn event(&self, event: Event<'_>) {
        match event {
            Event::ValgrindFound(valgrind) => self.note(&format!(
                "Valgrind {} at {} (method: {})",
                valgrind.version,
                valgrind.program.display(),
                valgrind.method
            )),
            Event::MeasuringStarted { total, .. } => self.start_bar(total),
            Event::Measured {
                side,
                harness,
                result,
            } => {
                let what = result.map_or_else(|_| "failed".to_owned(), count);
                let line = format!("{}{harness}: {what}", side_prefix(side));
                self.advance(line.clone());
                self.progress_line(line);
            }
            Event::MeasuringFinished {
                total,
                workers,
                elapsed,
            } => {
                self.finish_bar();
                self.note(&format!(
                    "{total} measurements in {:.1} s on {workers} workers",
                    elapsed.as_secs_f64()
                ));
            }
            Event::HarnessFailed {
                side,
                harness,
                error,
            } => self.note(&format!("error: {}{harness}: {error}", side_prefix(side))),
            Event::Verdict(message) => self.note(&message.to_string()),
            Event::Diff(step) => self.note(&format!("regress diff: {}", diff_step(step))),
            Event::Scaling {
                index,
                total,
                harness,
                threads,
                seconds,
            } => self.progress_line(format!(
                "[{index}/{total}] {harness}: 1..{threads} threads, {seconds} s each"
            )),
            Event::Wrote(path) => self.note(&format!("wrote {}", path.display())),
        }
    }
}

fn seconds(elapsed: Duration) -> String {
    format!("{:.0} s", elapsed.as_secs_f64())
}

/// A diff step in words.
fn diff_step(step: DiffStep<'_>) -> String {
    match step {
        DiffStep::UncommittedChanges => "the work tree has uncommitted changes; they are not \
             measured (commit them to include them)"
            .to_owned(),
        DiffStep::Revisions { base, head } => {
            format!("base {} ({}), head {} ({})", base.0, base.1, head.0, head.1)
        }
        DiffStep::WaitingForLock => {
            "waiting for another regress diff in this checkout to finish".to_owned()
        }
        DiffStep::TargetDirPassedOver { env_dir, dir } => format!(
            "CARGO_TARGET_DIR={} contains the sources the diff builds, so it builds in {dir} instead",
            env_dir.display()
        ),
        DiffStep::OwnTargetDir { side, reason, dir } => format!(
            "{reason}, so the {side} commit builds in {dir} rather than sharing a target folder"
        ),
        DiffStep::Building {
            side,
            commit,
            worktree,
        } => format!("building the {side} harnesses ({commit}) in {worktree}"),
        DiffStep::Built {
            side,
            elapsed,
            harnesses,
            kept: false,
        } => format!(
            "built the {side} harnesses in {}: {harnesses} harnesses",
            seconds(elapsed)
        ),
        DiffStep::Built {
            side,
            elapsed,
            harnesses,
            kept: true,
        } => format!(
            "took the {side} harnesses from a kept build (same sources, compilers and \
             settings) in {}: {harnesses} harnesses",
            seconds(elapsed)
        ),
        DiffStep::Shard {
            shard,
            selected,
            of,
        } => format!("shard {shard}: {selected} of {of} harnesses"),
        // Hundredths: `scripts/blind-spots-cost.sh` reads these figures.
        DiffStep::BlindSpots { elapsed, line_data } => format!(
            "blind spots found in {:.2} s, after {:.2} s of executed-lines data while measuring",
            elapsed.as_secs_f64(),
            line_data.as_secs_f64()
        ),
        DiffStep::StaleWorktree { path } => format!(
            "removing the worktree {} that an interrupted diff left",
            path.display()
        ),
        DiffStep::WorktreeLeft { path, error } => format!(
            "cannot remove the worktree {}: {error}; remove it by hand and run `git worktree prune`",
            path.display()
        ),
        DiffStep::NoInterruptHandler { error } => format!(
            "cannot handle Ctrl-C ({error}); an interrupted diff leaves its worktrees for the \
             next one to remove"
        ),
        DiffStep::Interrupted => "interrupted; cleaning up".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_steps_read_as_sentences() {
        assert_eq!(
            diff_step(DiffStep::Revisions {
                base: ("aaaaaaaaaaaa", "main"),
                head: ("bbbbbbbbbbbb", "HEAD"),
            }),
            "base aaaaaaaaaaaa (main), head bbbbbbbbbbbb (HEAD)"
        );
        assert_eq!(
            diff_step(DiffStep::Built {
                side: "head",
                elapsed: Duration::from_secs(61),
                harnesses: 69,
                kept: false,
            }),
            "built the head harnesses in 61 s: 69 harnesses"
        );
        assert_eq!(
            diff_step(DiffStep::Built {
                side: "base",
                elapsed: Duration::from_secs(2),
                harnesses: 69,
                kept: true,
            }),
            "took the base harnesses from a kept build (same sources, compilers and settings) \
             in 2 s: 69 harnesses"
        );
    }
}
