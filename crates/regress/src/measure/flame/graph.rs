//! Callgrind's call graph of a run: each function's self cost and, for
//! each caller and callee, the inclusive cost of the calls between them.
//!
//! Read from the same dumps as the per-line profile
//! ([`regress_profile::callgrind_out`]): a cost line after `fn=` is the
//! function's own cost; `cfn=` names a callee, `calls=` announces a call
//! record and the cost line after it is the inclusive cost of those calls.
//! Names are normalised ([`Normalizer::function`]) as they are read, so two
//! builds of the same code give the same graph, and Callgrind's recursion
//! levels (`f'2`) are their function: a call of a function to itself is
//! cost the function already holds, and is left out.

use std::collections::BTreeMap;

use crate::compare::Normalizer;
use regress_profile::callgrind_out::{name, unrecurse, DumpLineError, LineProblem, Positions};

/// The most distinct functions a graph may hold; a handshake runs a few
/// thousand.
pub const MAX_FUNCTIONS: usize = 200_000;

/// Why [`CallGraph::add_dump`] cannot read a dump.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error(transparent)]
    Line(#[from] DumpLineError),
    #[error("more than {MAX_FUNCTIONS} functions")]
    TooManyFunctions,
}

/// Self costs and call costs by function name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallGraph {
    /// Instructions executed in each function itself.
    pub self_cost: BTreeMap<String, u64>,
    /// Inclusive instructions of the calls from a caller to a callee.
    pub calls: BTreeMap<(String, String), u64>,
}

impl CallGraph {
    /// Adds one Callgrind dump's self and call costs.
    pub fn add_dump(&mut self, text: &str, normalizer: &Normalizer) -> Result<(), GraphError> {
        let mut functions: BTreeMap<String, String> = BTreeMap::new();
        let mut function = String::new();
        let mut callee: Option<String> = None;
        let mut call: Option<String> = None;
        // The cost follows the positions (`instr line` or `line`).
        let mut positions = Positions::default();
        for (number, line) in text.lines().enumerate() {
            let bad = DumpLineError::on_line(number, line);
            if let Some(value) = line.strip_prefix("positions:") {
                positions = Positions::parse(value).map_err(bad)?;
            } else if let Some(value) = line.strip_prefix("fn=") {
                let raw = name(value, &mut functions).map_err(bad)?;
                function = frame(&raw, normalizer);
                call = None;
            } else if let Some(value) = line.strip_prefix("cfn=") {
                let raw = name(value, &mut functions).map_err(bad)?;
                callee = Some(frame(&raw, normalizer));
            } else if line.starts_with("calls=") {
                call = Some(
                    callee
                        .take()
                        .ok_or_else(|| bad(LineProblem::CallWithoutCallee))?,
                );
            } else if line.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '*'))
            {
                let cost: u64 = match line.split_whitespace().nth(positions.count) {
                    Some(value) => value.parse().map_err(|_| bad(LineProblem::BadCost))?,
                    None => 0,
                };
                match call.take() {
                    Some(to) if to == function => {} // recursion: already in its cost
                    Some(to) => self.add_call(function.clone(), to, cost),
                    None if cost > 0 => {
                        *self.self_cost.entry(function.clone()).or_default() += cost
                    }
                    None => {}
                }
            }
        }
        if self.self_cost.len() > MAX_FUNCTIONS {
            return Err(GraphError::TooManyFunctions);
        }
        Ok(())
    }

    fn add_call(&mut self, from: String, to: String, cost: u64) {
        if cost > 0 {
            *self.calls.entry((from, to)).or_default() += cost;
        }
    }

    /// The sum of all self costs: the run's instructions.
    pub fn total(&self) -> u64 {
        self.self_cost.values().sum()
    }
}

/// The name a function has in a folded stack: normalised, its recursion
/// level dropped, and without the characters the format gives a meaning
/// (`;` separates frames, a line ends a stack) or that no one can read.
pub fn frame(raw: &str, normalizer: &Normalizer) -> String {
    let function = unrecurse(raw);
    normalizer
        .function(&function)
        .chars()
        .map(|c| match c {
            ';' => ':',
            c if c.is_control() => ' ',
            c => c,
        })
        .take(400)
        .collect()
}

/// `a::run` calls `b::call` (100 inclusive, of which 20 its own and 80
/// in `c`), and `b::call` recurses once (`b::call'2`).
#[cfg(test)]
pub(crate) const TEST_DUMP: &str = "version: 1\ncreator: callgrind-3.24.0\ncmd: ./harness\n\
        positions: line\nevents: Ir\nsummary: 118\n\n\
        ob=(1) /x/harness\nfl=(1) /src/a.rs\nfn=(1) a::run\n10 5\n+2 3\n\
        cfl=(2) /src/b.rs\ncfn=(2) b::call'2\ncalls=1 7\n* 100\n\
        fi=(3) /rustc/lib.rs\n-1 2\nfe=(1)\n+4 10\n\
        fl=(2)\nfn=(2)\n7 20\ncfn=(3) c::leaf::h0123456789abcdef\ncalls=2 1\n8 80\n\
        cfn=(2)\ncalls=1 7\n9 30\n\
        fn=(3)\n1 78\n\ntotals: 118\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_and_call_costs_are_read_by_function() {
        let mut graph = CallGraph::default();
        graph
            .add_dump(TEST_DUMP, &Normalizer::default())
            .expect("dump");
        assert_eq!(graph.self_cost["a::run"], 20);
        assert_eq!(graph.self_cost["b::call"], 20);
        assert_eq!(
            graph.self_cost["c::leaf"], 78,
            "the hash is normalised away"
        );
        assert_eq!(graph.total(), 118);
        assert_eq!(graph.calls[&("a::run".into(), "b::call".into())], 100);
        assert_eq!(graph.calls[&("b::call".into(), "c::leaf".into())], 80);
        assert_eq!(graph.calls.len(), 2, "the recursive call is left out");
        // Two dumps add up.
        graph
            .add_dump(TEST_DUMP, &Normalizer::default())
            .expect("again");
        assert_eq!(graph.total(), 236);
    }

    #[test]
    fn broken_dumps_are_refused() {
        let normalizer = Normalizer::default();
        let mut graph = CallGraph::default();
        assert!(graph.add_dump("fn=(7)\n1 1\n", &normalizer).is_err());
        assert!(graph.add_dump("fn=f\n1 y\n", &normalizer).is_err());
        assert!(graph
            .add_dump("fn=f\ncalls=1 2\n3 4\n", &normalizer)
            .is_err());
    }

    #[test]
    fn frames_cannot_break_the_folded_format() {
        let normalizer = Normalizer::default();
        assert_eq!(frame("a;b\nc'3", &normalizer), "a:b c");
        assert_eq!(frame("f'2", &normalizer), "f");
    }
}
