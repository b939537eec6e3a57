//! Call paths from a call graph: the folded stacks a flame graph is drawn
//! from.
//!
//! Callgrind keeps one level of context: how much each caller spent in
//! each callee, not the whole path. The paths are rebuilt from the top:
//!
//! - a function is *entered* by its calls (the inclusive cost of each
//!   caller's calls of it) and, when its own and its callees' costs exceed
//!   what its callers account for, from outside the graph (the counted
//!   region starts inside it): that excess makes it a root;
//! - walking down from each root, a path reaches a function with a share of
//!   its entries (the root's excess, or the caller's share times the
//!   caller's calls of it over the callee's entries), and that share of its
//!   self cost is charged to the path.
//!
//! Exact where every function has one caller. Where a function has
//! several, each path is charged in proportion to what its caller spent in
//! the function in all, as if every call cost the same: a `memcpy` called
//! with 16 bytes on one path and 16 KiB on another is charged evenly per
//! instruction spent, not per call, which is right on average and wrong for
//! the single call. Recursion through other functions is cut where a
//! function would appear twice on a path; paths thinner than
//! [`Limits::finest`] of the total are not followed; and the walk stops
//! after [`Limits::visits`] frames. Whatever self cost those leave
//! uncharged is charged to `[paths not followed];<function>`, so every
//! function's self cost, and the total, are exact to the instruction.

use std::collections::BTreeMap;

use super::graph::CallGraph;

/// The frame under which cost the walk did not reach is shown.
pub const NOT_FOLLOWED: &str = "[paths not followed]";

/// How far the walk goes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Paths whose inclusive cost is below this fraction of the total are
    /// not followed (a frame this narrow is far below a pixel).
    pub finest: f64,
    /// The deepest path.
    pub depth: usize,
    /// The most frames visited in all.
    pub visits: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            finest: 1e-5,
            depth: 256,
            visits: 2_000_000,
        }
    }
}

/// Folded stacks (`root;caller;callee`) and their self cost, sorted.
pub type Folded = BTreeMap<String, u64>;

/// The folded stacks of `graph`.
pub fn fold(graph: &CallGraph, limits: Limits) -> Folded {
    let names: Vec<&str> = graph.self_cost.keys().map(String::as_str).collect();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut names = names;
    for (from, to) in graph.calls.keys() {
        names.push(from);
        names.push(to);
    }
    names.sort_unstable();
    names.dedup();
    for (i, name) in names.iter().enumerate() {
        index.insert(name, i);
    }
    let n = names.len();
    let own: Vec<f64> = names
        .iter()
        .map(|name| graph.self_cost.get(*name).copied().unwrap_or(0) as f64)
        .collect();
    let mut callees: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    let mut called = vec![0f64; n];
    let mut calling = vec![0f64; n];
    for ((from, to), &cost) in &graph.calls {
        let (from, to) = (index[from.as_str()], index[to.as_str()]);
        callees[from].push((to, cost as f64));
        called[to] += cost as f64;
        calling[from] += cost as f64;
    }
    let inclusive: Vec<f64> = (0..n).map(|f| own[f] + calling[f]).collect();
    let from_outside: Vec<f64> = (0..n)
        .map(|f| (inclusive[f] - called[f]).max(0.0))
        .collect();
    let entries: Vec<f64> = (0..n).map(|f| called[f] + from_outside[f]).collect();

    let total: f64 = own.iter().sum();
    let mut walk = Walk {
        names: &names,
        own: &own,
        callees: &callees,
        entries: &entries,
        inclusive: &inclusive,
        finest: total * limits.finest,
        depth: limits.depth,
        visits_left: limits.visits,
        path: Vec::new(),
        on_path: vec![false; n],
        charged: vec![Vec::new(); n],
    };
    for root in 0..n {
        if from_outside[root] > 0.0 && entries[root] > 0.0 {
            walk.visit(root, from_outside[root] / entries[root]);
        }
    }

    // Whole instructions, each function's self cost exact.
    let mut folded = Folded::new();
    for (f, charged) in walk.charged.iter_mut().enumerate() {
        let own = own[f] as u64;
        let mut stacks: Vec<(String, u64)> = charged
            .drain(..)
            .map(|(stack, share)| (stack, share.round() as u64))
            .collect();
        let sum: u64 = stacks.iter().map(|(_, cost)| cost).sum();
        if sum < own {
            stacks.push((format!("{NOT_FOLLOWED};{}", names[f]), own - sum));
        } else {
            // Rounding overshot: take the excess from the largest stacks.
            let mut excess = sum - own;
            stacks.sort_by_key(|stack| std::cmp::Reverse(stack.1));
            for (_, cost) in stacks.iter_mut() {
                let taken = excess.min(*cost);
                *cost -= taken;
                excess -= taken;
            }
        }
        for (stack, cost) in stacks {
            if cost > 0 {
                *folded.entry(stack).or_default() += cost;
            }
        }
    }
    folded
}

/// The walk down from the roots.
struct Walk<'a> {
    names: &'a [&'a str],
    own: &'a [f64],
    callees: &'a [Vec<(usize, f64)>],
    entries: &'a [f64],
    inclusive: &'a [f64],
    finest: f64,
    depth: usize,
    visits_left: usize,
    path: Vec<usize>,
    on_path: Vec<bool>,
    /// Per function: the stacks it was charged to, with the self cost.
    charged: Vec<Vec<(String, f64)>>,
}

impl Walk<'_> {
    /// Visits `f` with `share` of its entries on the current path.
    fn visit(&mut self, f: usize, share: f64) {
        if self.visits_left == 0 || self.path.len() >= self.depth {
            return;
        }
        self.visits_left -= 1;
        self.path.push(f);
        self.on_path[f] = true;
        if self.own[f] > 0.0 {
            let stack = self
                .path
                .iter()
                .map(|&i| self.names[i])
                .collect::<Vec<_>>()
                .join(";");
            self.charged[f].push((stack, self.own[f] * share));
        }
        for &(callee, cost) in &self.callees[f] {
            if self.on_path[callee] || self.entries[callee] <= 0.0 {
                continue;
            }
            let reached = share * cost / self.entries[callee];
            if reached * self.inclusive[callee] < self.finest {
                continue;
            }
            self.visit(callee, reached);
        }
        self.on_path[f] = false;
        self.path.pop();
    }
}

/// Folded stacks as text, one `stack count` a line.
pub fn to_text(folded: &Folded) -> String {
    let mut out = String::new();
    for (stack, cost) in folded {
        out.push_str(stack);
        out.push(' ');
        out.push_str(&cost.to_string());
        out.push('\n');
    }
    out
}

/// What is wrong with a line of folded stacks ([`from_text`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FoldedLine {
    #[error("no count")]
    NoCount,
    #[error("a bad count {0:?}")]
    BadCount(String),
    #[error("a bad stack")]
    BadStack,
    #[error("the counts overflow")]
    Overflow,
}

/// Why [`from_text`] refuses a folded-stack text: the line (from 1) and
/// what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct FoldedError {
    pub line: usize,
    pub problem: FoldedLine,
}

/// Folded stacks read back from text (a file a runner wrote: bounded, and
/// every line checked).
pub fn from_text(text: &str) -> Result<Folded, FoldedError> {
    let mut folded = Folded::new();
    for (number, line) in text.lines().enumerate() {
        let bad = |problem| FoldedError {
            line: number + 1,
            problem,
        };
        let (stack, cost) = line
            .rsplit_once(' ')
            .ok_or_else(|| bad(FoldedLine::NoCount))?;
        let cost: u64 = cost
            .parse()
            .map_err(|_| bad(FoldedLine::BadCount(cost.to_owned())))?;
        if stack.is_empty() || stack.chars().any(char::is_control) {
            return Err(bad(FoldedLine::BadStack));
        }
        let entry = folded.entry(stack.to_owned()).or_default();
        *entry = entry
            .checked_add(cost)
            .ok_or_else(|| bad(FoldedLine::Overflow))?;
    }
    Ok(folded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Normalizer;

    fn graph(own: &[(&str, u64)], calls: &[(&str, &str, u64)]) -> CallGraph {
        CallGraph {
            self_cost: own.iter().map(|(f, c)| (f.to_string(), *c)).collect(),
            calls: calls
                .iter()
                .map(|(a, b, c)| ((a.to_string(), b.to_string()), *c))
                .collect(),
        }
    }

    #[test]
    fn a_tree_is_rebuilt_exactly() {
        let mut g = CallGraph::default();
        g.add_dump(super::super::graph::TEST_DUMP, &Normalizer::default())
            .expect("dump");
        let folded = fold(&g, Limits::default());
        let expected: Folded = [
            ("a::run", 20),
            ("a::run;b::call", 20),
            ("a::run;b::call;c::leaf", 78),
        ]
        .into_iter()
        .map(|(s, c)| (s.to_owned(), c))
        .collect();
        assert_eq!(folded, expected);
    }

    /// `shared` is called by `x` (costing 300 there) and `y` (100): its
    /// self cost and its callee's split 3 to 1 between the two paths.
    #[test]
    fn a_shared_callee_is_split_by_what_each_caller_spent() {
        let g = graph(
            &[
                ("main", 0),
                ("x", 0),
                ("y", 0),
                ("shared", 200),
                ("leaf", 200),
            ],
            &[
                ("main", "x", 300),
                ("main", "y", 100),
                ("x", "shared", 300),
                ("y", "shared", 100),
                ("shared", "leaf", 200),
            ],
        );
        let folded = fold(&g, Limits::default());
        assert_eq!(folded["main;x;shared"], 150);
        assert_eq!(folded["main;y;shared"], 50);
        assert_eq!(folded["main;x;shared;leaf"], 150);
        assert_eq!(folded["main;y;shared;leaf"], 50);
        assert_eq!(folded.values().sum::<u64>(), g.total());
    }

    /// `a` and `b` call each other: the cycle is cut, and what the cut
    /// leaves is charged to the frame of paths not followed; the total
    /// stays exact.
    #[test]
    fn mutual_recursion_is_cut_and_totals_stay_exact() {
        let g = graph(&[("a", 10), ("b", 10)], &[("a", "b", 15), ("b", "a", 5)]);
        let folded = fold(&g, Limits::default());
        assert_eq!(folded.values().sum::<u64>(), 20);
        assert!(folded.contains_key("a"), "{folded:?}");
        assert!(folded.contains_key("a;b"), "{folded:?}");
    }

    #[test]
    fn thin_paths_are_charged_to_paths_not_followed() {
        let g = graph(&[("main", 1_000_000), ("thin", 1)], &[("main", "thin", 1)]);
        let folded = fold(&g, Limits::default());
        assert_eq!(folded[&format!("{NOT_FOLLOWED};thin")], 1);
        assert_eq!(folded["main"], 1_000_000);
    }

    #[test]
    fn folded_text_round_trips_and_bad_text_is_refused() {
        let g = graph(&[("m", 3), ("f", 4)], &[("m", "f", 4)]);
        let folded = fold(&g, Limits::default());
        let text = to_text(&folded);
        assert_eq!(text, "m 3\nm;f 4\n");
        assert_eq!(from_text(&text).expect("read"), folded);
        assert!(from_text("m x\n").is_err());
        assert!(from_text("nocount\n").is_err());
        assert!(from_text(&format!("m {}\nm 1\n", u64::MAX)).is_err());
    }
}
