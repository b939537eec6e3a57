//! The count of a run split by part: whose code the instructions were.
//!
//! A Callgrind child of a harness that marks its sides dumps the cost of
//! every segment of the counted run, labelled with the segment's part
//! (`regress_measure::parts::Plan::Callgrind`): `PROFILE.1`, `PROFILE.2`,
//! ... in order, each with `desc: Trigger: Client Request: <part>` and a
//! `summary:` line. Summed by part, they give the client's and the server's
//! instructions by stage and the harness's glue. The segments partition
//! the run, and Callgrind counts what Cachegrind counts (both without
//! chasing, see [`super::cachegrind::NO_CHASING`]), so the parts add up to
//! the Cachegrind total of the same run exactly; the runner checks that
//! they do, every time.

use std::path::{Path, PathBuf};

use regress_measure::parts::Part;
use serde::{Deserialize, Serialize};

use super::flame::{CallGraph, GraphError};
use super::fork_server::file_id;
use super::symbols;
use super::{MeasureError, Result};
use crate::compare::Normalizer;
use crate::limits;
use regress_profile::callgrind_out::{self, Costs, DumpLineError};

/// Instructions of one counted run, by part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parts {
    /// The client's first stage: up to and including its ClientHello.
    pub client_hello: u64,
    /// The server's first stage: answering the ClientHello with its first
    /// flight.
    pub server_flight: u64,
    /// The client's second stage: the server's flight, and its own last.
    pub client_finish: u64,
    /// The server's second stage: the client's last flight.
    pub server_finish: u64,
    /// The harness's own code between the calls.
    pub glue: u64,
}

impl Parts {
    /// The client's instructions: both its stages.
    pub fn client(&self) -> u64 {
        self.client_hello + self.client_finish
    }

    /// The server's instructions: both its stages.
    pub fn server(&self) -> u64 {
        self.server_flight + self.server_finish
    }

    /// Client, server and glue: the whole run.
    pub fn total(&self) -> u64 {
        self.client() + self.server() + self.glue
    }

    /// The count of `part` (0 for a part outside the run).
    pub fn get(&self, part: Part) -> u64 {
        match part {
            Part::ClientHello => self.client_hello,
            Part::ServerFlight => self.server_flight,
            Part::ClientFinish => self.client_finish,
            Part::ServerFinish => self.server_finish,
            Part::Glue => self.glue,
            _ => 0,
        }
    }

    fn add(&mut self, part: Part, instructions: u64) -> bool {
        let slot = match part {
            Part::ClientHello => &mut self.client_hello,
            Part::ServerFlight => &mut self.server_flight,
            Part::ClientFinish => &mut self.client_finish,
            Part::ServerFinish => &mut self.server_finish,
            Part::Glue => &mut self.glue,
            _ => return false,
        };
        *slot += instructions;
        true
    }
}

/// The most dumps a run may make: a handshake crosses a few dozen
/// boundaries; more means something marks far too often.
pub const MAX_DUMPS: usize = 4096;

/// A Callgrind child's run: its count by part, and its per-line self
/// costs (the run's profile, see [`regress_profile::callgrind_out`]), in all and by
/// part (the constant-flow check compares one side's part alone).
#[derive(Debug, Clone, Default)]
pub struct Dumps {
    pub parts: Parts,
    pub costs: Costs,
    pub by_part: std::collections::BTreeMap<Part, Costs>,
    /// The run's call graph, all parts together ([`super::flame`]).
    pub graph: CallGraph,
}

/// Reads the dumps `PROFILE.1`, `PROFILE.2`, ... of a Callgrind child and
/// sums them by part, checking that each dump's costs add up to its
/// summary. With `program` (the measured program the child ran), each of
/// its costs is charged to the function its instruction lies in
/// ([`callgrind_out`]).
pub fn read_dumps(profile: &Path, program: Option<&Path>) -> Result<Dumps> {
    let symbols = program.map(symbols::of).transpose()?;
    let program_path =
        program.map(|path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    // The same file by another name too: a fork server's child runs the
    // server's link to the program, a hard link of the one in `program`'s
    // folder.
    let file_id = |path: &Path| file_id(path).ok();
    let program_id = program.and_then(file_id);
    let is_it = |object: &str| {
        program_path.as_deref().is_some_and(|program| {
            Path::new(object) == program
                || std::fs::canonicalize(object).is_ok_and(|object| object == program)
                || program_id.is_some_and(|id| file_id(Path::new(object)) == Some(id))
        })
    };
    let attribution = symbols.as_deref().map(|symbols| callgrind_out::Program {
        symbols,
        is_it: &is_it,
    });
    let mut parts = Parts::default();
    let mut costs = Costs::new();
    let mut by_part: std::collections::BTreeMap<Part, Costs> = std::collections::BTreeMap::new();
    let mut graph = CallGraph::default();
    let normalizer = Normalizer::default();
    let mut dumps = 0;
    for number in 1.. {
        let path = PathBuf::from(format!("{}.{number}", profile.display()));
        let text = match limits::read_capped(&path, limits::MAX_TOOL_FILE) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(source) => return Err(MeasureError::io("read", &path, source)),
        };
        if number > MAX_DUMPS {
            return Err(bad(&path, DumpProblem::TooMany));
        }
        let (part, instructions) = parse_dump(&text).map_err(|reason| bad(&path, reason))?;
        let mut dump = Costs::new();
        callgrind_out::add_dump(&text, &mut dump, attribution.as_ref())
            .map_err(|reason| bad(&path, reason.into()))?;
        if callgrind_out::total(&dump) != instructions as i64 {
            return Err(bad(
                &path,
                DumpProblem::Sum {
                    lines: callgrind_out::total(&dump),
                    summary: instructions,
                },
            ));
        }
        graph
            .add_dump(&text, &normalizer)
            .map_err(|reason| bad(&path, reason.into()))?;
        let of_part = by_part.entry(part).or_default();
        for (key, lines) in dump {
            let function = costs.entry(key.clone()).or_default();
            let in_part = of_part.entry(key).or_default();
            for (line, cost) in lines {
                *function.entry(line).or_default() += cost;
                *in_part.entry(line).or_default() += cost;
            }
        }
        if !parts.add(part, instructions) {
            return Err(bad(&path, DumpProblem::OutsideRun(part.name())));
        }
        dumps += 1;
    }
    if dumps == 0 {
        return Err(bad(profile, DumpProblem::NoDump));
    }
    Ok(Dumps {
        parts,
        costs,
        by_part,
        graph,
    })
}

fn bad(path: &Path, reason: DumpProblem) -> MeasureError {
    MeasureError::BadDump {
        path: path.to_path_buf(),
        reason,
    }
}

/// Why a Callgrind dump of a counted run cannot be read
/// ([`MeasureError::BadDump`]).
#[derive(Debug, thiserror::Error)]
pub enum DumpProblem {
    #[error("more than {MAX_DUMPS} dumps")]
    TooMany,
    #[error("the label {0:?} names no part")]
    UnknownPart(String),
    #[error("the first event is not Ir: {0:?}")]
    FirstEventNotIr(String),
    #[error("the summary {0:?} is not a count")]
    BadSummary(String),
    #[error("no `desc: Trigger: Client Request:` label")]
    NoLabel,
    #[error("no `summary:` line")]
    NoSummary,
    #[error(transparent)]
    Line(#[from] DumpLineError),
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error("its lines add up to {lines}, its summary says {summary}")]
    Sum { lines: i64, summary: u64 },
    #[error("a dump of {0}, outside the run")]
    OutsideRun(&'static str),
    #[error("Callgrind wrote no dump of the run (a program that does not mark its parts?)")]
    NoDump,
}

/// The part and the instruction count of one dump.
fn parse_dump(text: &str) -> std::result::Result<(Part, u64), DumpProblem> {
    let mut part = None;
    let mut summary = None;
    for line in text.lines() {
        if let Some(label) = line.strip_prefix("desc: Trigger: Client Request: ") {
            part = Some(
                Part::from_name(label.trim())
                    .ok_or_else(|| DumpProblem::UnknownPart(label.trim().to_owned()))?,
            );
        } else if let Some(events) = line.strip_prefix("events:") {
            if events.split_whitespace().next() != Some("Ir") {
                return Err(DumpProblem::FirstEventNotIr(events.to_owned()));
            }
        } else if let Some(value) = line.strip_prefix("summary:") {
            let first = value.split_whitespace().next().unwrap_or("");
            summary = Some(
                first
                    .parse::<u64>()
                    .ok()
                    .filter(|count| *count <= limits::MAX_COUNT)
                    .ok_or_else(|| DumpProblem::BadSummary(first.to_owned()))?,
            );
        }
    }
    match (part, summary) {
        (Some(part), Some(summary)) => Ok((part, summary)),
        (None, _) => Err(DumpProblem::NoLabel),
        (_, None) => Err(DumpProblem::NoSummary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(label: &str, count: u64) -> String {
        format!(
            "version: 1\ncreator: callgrind-3.24.0\npid: 1\ncmd: ./harness\npart: 1\n\n\
             desc: I1 cache: \ndesc: Timerange: Basic block 0 - 10\n\
             desc: Trigger: Client Request: {label}\n\npositions: line\nevents: Ir\n\
             summary: {count}\n\nfl=(1) /src/a.rs\nfn=(1) a::{label}\n1 {count}\n\ntotals: {count}\n"
        )
    }

    #[test]
    fn dumps_are_summed_by_part() {
        let dir = tempfile::tempdir().expect("tempdir");
        let profile = dir.path().join("callgrind-3.out");
        for (number, (label, count)) in [
            ("glue", 75),
            ("client_hello", 183_074),
            ("glue", 69),
            ("server_flight", 1_303_981),
            ("client_finish", 2_841_029),
            ("server_finish", 69_166),
            ("glue", 91),
        ]
        .into_iter()
        .enumerate()
        {
            std::fs::write(
                format!("{}.{}", profile.display(), number + 1),
                dump(label, count),
            )
            .expect("write");
        }
        // The final dump at exit is not the run's.
        std::fs::write(&profile, dump("glue", 4102)).expect("write");
        let parts = read_dumps(&profile, None).expect("parts").parts;
        assert_eq!(parts.glue, 235);
        assert_eq!(parts.client(), 183_074 + 2_841_029);
        assert_eq!(parts.server(), 1_303_981 + 69_166);
        assert_eq!(parts.total(), 4_397_485);
        assert_eq!(parts.get(Part::ServerFlight), 1_303_981);
    }

    #[test]
    fn broken_dumps_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().expect("tempdir");
        let profile = dir.path().join("callgrind-3.out");
        let error = read_dumps(&profile, None).unwrap_err().to_string();
        assert!(error.contains("wrote no dump"), "{error}");
        for (text, expected) in [
            (dump("outside", 5), "outside the run"),
            (dump("nonsense", 5), "names no part"),
            (
                dump("glue", 5).replace("summary: 5", "summary: -5"),
                "not a count",
            ),
            (dump("glue", 5).replace("summary: 5\n", ""), "no `summary:`"),
            (
                dump("glue", 5).replace("events: Ir", "events: Dr"),
                "not Ir",
            ),
        ] {
            std::fs::write(format!("{}.1", profile.display()), text).expect("write");
            let error = read_dumps(&profile, None).unwrap_err().to_string();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }
}
