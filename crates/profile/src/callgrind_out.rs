//! Callgrind's dumps as a Cachegrind profile.
//!
//! A Callgrind child's dumps hold, per segment of the run, the self cost of
//! every source line of every function it executed, besides the call
//! graph. Summed and rewritten in Cachegrind's format (`fl=`, `fn=`, `line
//! count`), they are the run's per-function profile, which every tool
//! downstream reads as it reads Cachegrind's own: `cg_annotate`, `cg_diff`,
//! the harness share, the per-function diff. The call lines' inclusive
//! costs are left out (Cachegrind has none); Callgrind's recursion suffixes
//! (`f'2`) are folded into the function; lines of inlined code keep the
//! file they come from, as Cachegrind's do.
//!
//! Each instruction is charged to the function its address lies in, as
//! Cachegrind charges it: Callgrind keeps code that a function falls or
//! jumps into in that function's context (see [`crate::symbols`]), so a
//! dump with instruction positions (`--dump-instr=yes`) is read with the
//! measured program's symbols, and a cost of the program whose address
//! lies in another function is charged to that one, and one in no symbol
//! (the PLT's stubs, code without a symbol) to `???`, as Cachegrind does.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::symbols::{is_mangled, Symbols};

/// Self cost by file, function and line.
pub type Costs = BTreeMap<(String, String), BTreeMap<u64, i64>>;

/// What a cost of the measured program that lies in no symbol is charged
/// to: Cachegrind's name for it.
pub const NO_SYMBOL: &str = "???";

/// The measured program of a dump: its symbols, and which of the dump's
/// objects (`ob=`) it is.
pub struct Program<'a> {
    pub symbols: &'a Symbols,
    pub is_it: &'a dyn Fn(&str) -> bool,
}

/// What is wrong with a line of a Callgrind dump.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    #[error("positions {0:?}, not `instr` and/or `line`")]
    Positions(String),
    #[error("an unclosed name number")]
    UnclosedName,
    #[error("name ({0}) used before it was defined")]
    UndefinedName(String),
    #[error("a missing position")]
    MissingPosition,
    #[error("a bad position {0}")]
    BadPosition(usize),
    #[error("a bad cost")]
    BadCost,
    /// Of a call graph's reader (regress's flame graphs).
    #[error("a call without a callee")]
    CallWithoutCallee,
}

/// A line of a Callgrind dump that cannot be read: its number (from 1),
/// what is wrong with it, and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {number}: {problem}: {text:?}")]
pub struct DumpLineError {
    pub number: usize,
    pub problem: LineProblem,
    pub text: String,
}

impl DumpLineError {
    /// What turns a problem with `line`, the dump's line `index` (from 0,
    /// as `enumerate` counts), into its error: one rule for every reader
    /// of Callgrind's dumps.
    pub fn on_line(index: usize, line: &str) -> impl Fn(LineProblem) -> DumpLineError + '_ {
        move |problem| DumpLineError {
            number: index + 1,
            problem,
            text: line.to_owned(),
        }
    }
}

/// Where the address and the line are in a cost line's positions
/// (`positions: instr line`, `positions: line`).
#[derive(Debug, Clone, Copy)]
pub struct Positions {
    pub address: Option<usize>,
    pub line: Option<usize>,
    pub count: usize,
}

impl Default for Positions {
    fn default() -> Positions {
        Positions {
            address: None,
            line: Some(0),
            count: 1,
        }
    }
}

impl Positions {
    /// The `positions:` header's value.
    pub fn parse(value: &str) -> Result<Positions, LineProblem> {
        let names: Vec<&str> = value.split_whitespace().collect();
        if names.is_empty()
            || names.len() > 2
            || names.iter().any(|n| !matches!(*n, "instr" | "line"))
        {
            return Err(LineProblem::Positions(value.to_owned()));
        }
        Ok(Positions {
            address: names.iter().position(|n| *n == "instr"),
            line: names.iter().position(|n| *n == "line"),
            count: names.len(),
        })
    }
}

/// One position (`0x1f`, `12`, `+3`, `-1`, `*`) after `last`.
fn position(text: &str, last: i64) -> Option<i64> {
    match text {
        "*" => Some(last),
        p if p.starts_with('+') || p.starts_with('-') => last.checked_add(p.parse::<i64>().ok()?),
        p => match p.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16)
                .ok()
                .and_then(|v| i64::try_from(v).ok()),
            None => p.parse::<i64>().ok(),
        },
    }
}

/// Adds one Callgrind dump's self costs to `costs`; with `program`, each
/// of the program's costs goes to the function its instruction lies in.
pub fn add_dump(
    text: &str,
    costs: &mut Costs,
    program: Option<&Program>,
) -> Result<(), DumpLineError> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut functions: BTreeMap<String, String> = BTreeMap::new();
    let mut objects: BTreeMap<String, String> = BTreeMap::new();
    let mut file = String::new();
    let mut current_file = String::new();
    let mut function = String::new();
    let mut positions = Positions::default();
    let mut last = [0i64; 2];
    let mut in_program = false;
    let mut skip_next = false;
    for (number, line) in text.lines().enumerate() {
        let bad = DumpLineError::on_line(number, line);
        if let Some(value) = line.strip_prefix("positions:") {
            positions = Positions::parse(value).map_err(bad)?;
        } else if let Some(value) = line.strip_prefix("ob=") {
            let object = name(value, &mut objects).map_err(bad)?;
            in_program = program.is_some_and(|program| (program.is_it)(&object));
        } else if let Some(value) = line.strip_prefix("cob=") {
            name(value, &mut objects).map_err(bad)?;
        } else if let Some(value) = line.strip_prefix("fl=") {
            file = name(value, &mut files).map_err(bad)?;
            current_file = file.clone();
        } else if let Some(value) = line
            .strip_prefix("fi=")
            .or_else(|| line.strip_prefix("fe="))
        {
            current_file = name(value, &mut files).map_err(bad)?;
        } else if let Some(value) = line.strip_prefix("fn=") {
            function = unrecurse(&name(value, &mut functions).map_err(bad)?);
            current_file = file.clone();
        } else if let Some(value) = line.strip_prefix("cfn=") {
            name(value, &mut functions).map_err(bad)?;
        } else if let Some(value) = line
            .strip_prefix("cfi=")
            .or_else(|| line.strip_prefix("cfl="))
        {
            name(value, &mut files).map_err(bad)?;
        } else if line.starts_with("calls=") {
            skip_next = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '*')) {
            let mut fields = line.split_whitespace();
            for (index, slot) in last.iter_mut().enumerate().take(positions.count) {
                let text = fields
                    .next()
                    .ok_or_else(|| bad(LineProblem::MissingPosition))?;
                *slot =
                    position(text, *slot).ok_or_else(|| bad(LineProblem::BadPosition(index)))?;
            }
            if std::mem::take(&mut skip_next) {
                continue; // a call's inclusive cost
            }
            let cost: i64 = match fields.next() {
                Some(value) => value.parse().map_err(|_| bad(LineProblem::BadCost))?,
                None => 0,
            };
            if cost == 0 {
                continue;
            }
            let line_number = positions.line.map_or(0, |index| last[index]).max(0) as u64;
            let charged = match (program, positions.address) {
                (Some(program), Some(index)) if in_program => {
                    match program.symbols.at(last[index] as u64) {
                        Some(symbol) if !is_mangled(symbol) && symbol != function => {
                            symbol.to_owned()
                        }
                        Some(_) => function.clone(),
                        // In no symbol (the PLT's stubs, code whose symbol
                        // was stripped): Cachegrind's name for it.
                        None => NO_SYMBOL.to_owned(),
                    }
                }
                _ => function.clone(),
            };
            *costs
                .entry((current_file.clone(), charged))
                .or_default()
                .entry(line_number)
                .or_default() += cost;
        }
    }
    Ok(())
}

/// `(3) /a/b.c` defines name 3, `(3)` uses it, `x.c` is itself.
pub fn name(value: &str, names: &mut BTreeMap<String, String>) -> Result<String, LineProblem> {
    let Some(rest) = value.strip_prefix('(') else {
        return Ok(value.to_owned());
    };
    let (id, text) = rest.split_once(')').ok_or(LineProblem::UnclosedName)?;
    let text = text.trim_start();
    if text.is_empty() {
        names
            .get(id)
            .cloned()
            .ok_or_else(|| LineProblem::UndefinedName(id.to_owned()))
    } else {
        names.insert(id.to_owned(), text.to_owned());
        Ok(text.to_owned())
    }
}

/// `f'2` (Callgrind's second level of recursion of `f`) as `f`.
pub fn unrecurse(function: &str) -> String {
    match function.rsplit_once('\'') {
        Some((base, level)) if !level.is_empty() && level.bytes().all(|b| b.is_ascii_digit()) => {
            base.to_owned()
        }
        _ => function.to_owned(),
    }
}

/// `costs` as a Cachegrind profile of command `command`.
pub fn to_cachegrind(costs: &Costs, command: &str) -> String {
    let mut out =
        format!("desc: Callgrind's dumps of the counted run, summed\ncmd: {command}\nevents: Ir\n");
    let mut total: i64 = 0;
    for ((file, function), lines) in costs {
        let _ = writeln!(out, "fl={file}\nfn={function}");
        for (line, cost) in lines {
            let _ = writeln!(out, "{line} {cost}");
            total += cost;
        }
    }
    let _ = writeln!(out, "summary: {total}");
    out
}

/// The total of `costs`.
pub fn total(costs: &Costs) -> i64 {
    costs.values().flat_map(BTreeMap::values).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "version: 1\ncreator: callgrind-3.24.0\ncmd: ./harness\npart: 2\n\n\
        desc: Trigger: Client Request: glue\n\npositions: line\nevents: Ir\nsummary: 40\n\n\
        ob=(1) /x/harness\nfl=(1) /src/a.rs\nfn=(1) a::run\n10 5\n+2 3\n\
        cfl=(2) /src/b.rs\ncfn=(2) b::call'2\ncalls=1 7\n* 100\n\
        fi=(3) /rustc/lib.rs\n-1 2\nfe=(1)\n+4 10\n\
        fl=(2)\nfn=(2)\n7 20\n\ntotals: 40\n";

    #[test]
    fn self_costs_are_kept_by_file_function_and_line() {
        let mut costs = Costs::new();
        add_dump(DUMP, &mut costs, None).expect("dump");
        assert_eq!(
            total(&costs),
            40,
            "the call's inclusive 100 is not a self cost"
        );
        let a = &costs[&("/src/a.rs".to_owned(), "a::run".to_owned())];
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            [(&10, &5), (&12, &3), (&15, &10)]
        );
        // Inlined code keeps its own file, in the function it was inlined in.
        let inlined = &costs[&("/rustc/lib.rs".to_owned(), "a::run".to_owned())];
        assert_eq!(inlined[&11], 2);
        // A recursion level is its function.
        assert_eq!(
            costs[&("/src/b.rs".to_owned(), "b::call".to_owned())][&7],
            20
        );
        let profile = to_cachegrind(&costs, "./harness");
        assert!(profile.contains("events: Ir\n"), "{profile}");
        assert!(profile.ends_with("summary: 40\n"), "{profile}");
        // Two dumps add up.
        add_dump(DUMP, &mut costs, None).expect("again");
        assert_eq!(total(&costs), 80);
    }

    /// With instruction positions and the program's symbols, a cost goes
    /// to the function its address lies in (aws-lc's `mul4x_internal`
    /// running on into `__bn_post4x_internal`); a call's inclusive cost
    /// still moves the positions and is still left out; another object's
    /// costs keep Callgrind's names; without the symbols nothing moves.
    #[test]
    fn instructions_are_charged_to_the_function_they_lie_in() {
        const INSTR: &str = "positions: instr line\nevents: Ir\n\
            ob=(1) /x/harness\nfl=(1) /src/bn.S\nfn=(1) mul4x_internal\n\
            0x100 10 5\n+4 +1 3\n0x140 20 7\n\
            cfn=(2) callee\ncalls=1 0x200 30\n+2 * 100\n+2 +1 1\n\
            ob=(2) /lib/libc.so.6\nfl=(2) ./memcpy.S\nfn=(3) memcpy\n0x140 1 9\n\
            ob=(1)\nfl=(1)\nfn=(4) _ZN4rust4main17h0123456789abcdefE\n0x148 40 2\n\
            fn=(1)\n0x900 0 4\n";
        let symbols = Symbols::from_functions(&[
            (0x100, 0x140, "mul4x_internal"),
            (0x140, 0x148, "__bn_post4x_internal"),
            (0x148, 0x150, "_ZN4rust4main17h0123456789abcdefE"),
        ]);
        let is_it = |object: &str| object == "/x/harness";
        let program = Program {
            symbols: &symbols,
            is_it: &is_it,
        };
        let mut costs = Costs::new();
        add_dump(INSTR, &mut costs, Some(&program)).expect("dump");
        let of = |function: &str| -> Vec<(u64, i64)> {
            costs
                .iter()
                .filter(|((_, f), _)| f == function)
                .flat_map(|(_, lines)| lines.iter().map(|(l, c)| (*l, *c)))
                .collect()
        };
        assert_eq!(of("mul4x_internal"), [(10, 5), (11, 3)]);
        assert_eq!(of("__bn_post4x_internal"), [(20, 7), (21, 1)]);
        assert_eq!(of("memcpy"), [(1, 9)], "libc keeps Callgrind's name");
        // A mangled symbol is not compared with Callgrind's demangled name.
        assert_eq!(of("_ZN4rust4main17h0123456789abcdefE"), [(40, 2)]);
        // In no symbol (a PLT stub): Cachegrind's `???`.
        assert_eq!(of(NO_SYMBOL), [(0, 4)]);
        assert_eq!(total(&costs), 31);

        let mut unmoved = Costs::new();
        add_dump(INSTR, &mut unmoved, None).expect("dump");
        assert_eq!(total(&unmoved), 31);
        assert!(!unmoved.keys().any(|(_, f)| f == "__bn_post4x_internal"));
        assert!(add_dump("positions: instr column\n", &mut Costs::new(), None).is_err());
    }

    #[test]
    fn broken_dumps_are_refused() {
        let mut costs = Costs::new();
        assert!(add_dump("fn=(7)\n1 1\n", &mut costs, None).is_err());
        assert!(add_dump("fn=f\n+x 1\n", &mut costs, None).is_err());
        assert!(add_dump("fn=f\n1 y\n", &mut costs, None).is_err());
        let said = |dump: &str| {
            add_dump(dump, &mut Costs::new(), None)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            said("fn=(7)\n1 1\n"),
            r#"line 1: name (7) used before it was defined: "fn=(7)""#
        );
        assert_eq!(said("fn=f\n+x 1\n"), r#"line 2: a bad position 0: "+x 1""#);
        assert_eq!(
            said("positions: instr column\n"),
            r#"line 1: positions " instr column", not `instr` and/or `line`: "positions: instr column""#
        );
    }
}
