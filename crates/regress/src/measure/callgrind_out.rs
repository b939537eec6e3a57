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

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Self cost by file, function and line.
pub type Costs = BTreeMap<(String, String), BTreeMap<u64, i64>>;

/// Adds one Callgrind dump's self costs to `costs`.
pub fn add_dump(text: &str, costs: &mut Costs) -> Result<(), String> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut functions: BTreeMap<String, String> = BTreeMap::new();
    let mut file = String::new();
    let mut current_file = String::new();
    let mut function = String::new();
    let mut last_line: i64 = 0;
    let mut skip_next = false;
    for (number, line) in text.lines().enumerate() {
        let bad = |what: &str| format!("line {}: {what}: {line:?}", number + 1);
        if let Some(value) = line.strip_prefix("fl=") {
            file = name(value, &mut files).map_err(|e| bad(&e))?;
            current_file = file.clone();
        } else if let Some(value) = line
            .strip_prefix("fi=")
            .or_else(|| line.strip_prefix("fe="))
        {
            current_file = name(value, &mut files).map_err(|e| bad(&e))?;
        } else if let Some(value) = line.strip_prefix("fn=") {
            function = unrecurse(&name(value, &mut functions).map_err(|e| bad(&e))?);
            current_file = file.clone();
        } else if let Some(value) = line.strip_prefix("cfn=") {
            name(value, &mut functions).map_err(|e| bad(&e))?;
        } else if let Some(value) = line
            .strip_prefix("cfi=")
            .or_else(|| line.strip_prefix("cfl="))
        {
            name(value, &mut files).map_err(|e| bad(&e))?;
        } else if line.starts_with("calls=") {
            skip_next = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '*')) {
            let mut fields = line.split_whitespace();
            let position = fields.next().unwrap_or_default();
            last_line = match position {
                "*" => last_line,
                p if p.starts_with('+') || p.starts_with('-') => {
                    last_line + p.parse::<i64>().map_err(|_| bad("a bad position"))?
                }
                p => p.parse::<i64>().map_err(|_| bad("a bad position"))?,
            };
            if std::mem::take(&mut skip_next) {
                continue; // a call's inclusive cost
            }
            let cost: i64 = match fields.next() {
                Some(value) => value.parse().map_err(|_| bad("a bad cost"))?,
                None => 0,
            };
            if cost != 0 {
                *costs
                    .entry((current_file.clone(), function.clone()))
                    .or_default()
                    .entry(last_line.max(0) as u64)
                    .or_default() += cost;
            }
        }
    }
    Ok(())
}

/// `(3) /a/b.c` defines name 3, `(3)` uses it, `x.c` is itself.
pub(crate) fn name(value: &str, names: &mut BTreeMap<String, String>) -> Result<String, String> {
    let Some(rest) = value.strip_prefix('(') else {
        return Ok(value.to_owned());
    };
    let (id, text) = rest.split_once(')').ok_or("an unclosed name number")?;
    let text = text.trim_start();
    if text.is_empty() {
        names
            .get(id)
            .cloned()
            .ok_or_else(|| format!("name ({id}) used before it was defined"))
    } else {
        names.insert(id.to_owned(), text.to_owned());
        Ok(text.to_owned())
    }
}

/// `f'2` (Callgrind's second level of recursion of `f`) as `f`.
pub(crate) fn unrecurse(function: &str) -> String {
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
        add_dump(DUMP, &mut costs).expect("dump");
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
        add_dump(DUMP, &mut costs).expect("again");
        assert_eq!(total(&costs), 80);
    }

    #[test]
    fn broken_dumps_are_refused() {
        let mut costs = Costs::new();
        assert!(add_dump("fn=(7)\n1 1\n", &mut costs).is_err());
        assert!(add_dump("fn=f\n+x 1\n", &mut costs).is_err());
        assert!(add_dump("fn=f\n1 y\n", &mut costs).is_err());
    }
}
