//! `regress constant-flow`: do secret-dependent operations execute the same
//! instructions under different secrets?
//!
//! The measured program serves each (operation, variant) as an entry named
//! `constant_flow::<library>::<operation>::<group>::<variant>`
//! (`harnesses/src/constant_flow/`). The **group** is the variant's public
//! outcome (`accepted`/`rejected` for an AEAD open, `ok` otherwise). The
//! check counts each variant's run with one Callgrind child
//! ([`Runner::function_costs`]) and compares the self cost of *every*
//! function and line (no threshold):
//!
//! - **within a group**, each variant against the group's first variant: an
//!   attacker cannot tell these apart by their outcome, so any difference is
//!   a finding unless the allowlist names it;
//! - **across groups**, the first variant of each group against the first
//!   variant of the operation's first group: the outcome is public, so code
//!   after the verdict may differ, but only in the functions the allowlist
//!   names, with its reason;
//! - **run to run** (`runs` > 1): every further run of a variant against its
//!   first run: a difference means the count is not repeatable, and is a
//!   finding too ("spread 0").
//!
//! What is compared is the counted run, or for an entry that marks its
//! sides (the server's processing of a ClientHello, within a handshake)
//! only its `server_flight` part: the client verifies each variant's
//! (public) certificate and is not the subject.

pub mod allowlist;
pub mod compare;
pub mod report;

use std::collections::BTreeMap;
use std::path::Path;

use regress_measure::parts::Part;

use crate::harness_name::HarnessName;
use crate::measure::costs::RunCosts;
use crate::measure::runner::Runner;
use crate::measure::MeasureError;
use crate::parallel;
use crate::report::events::{Event, Listener};
pub use allowlist::{Allowlist, AllowlistError};
pub use compare::{FunctionDiff, LineDiff};
use regress_profile::callgrind_out::Costs;
pub use report::{Comparison, Difference, OperationReport, Report, Unstable, VariantReport};

/// The first part of every constant-flow entry's name.
pub use crate::harness_name::CONSTANT_FLOW_PREFIX as PREFIX;

/// The most runs per variant `--runs` accepts.
pub const MAX_RUNS: u32 = 100;

/// What the check cannot get past.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(
        "{name:?} is not a constant-flow entry: expected \
         {PREFIX}::<library>::<operation>::<group>::<variant>"
    )]
    BadName { name: String },
    #[error("no constant-flow operation matches {filter:?}; the measured program's `list` shows them (`cargo run -p harnesses -- list`)")]
    NothingSelected { filter: String },
    #[error("--runs must be 1 to {MAX_RUNS}, not {runs}")]
    BadRuns { runs: u32 },
    #[error("{harness} could not be measured: {source}")]
    Measure {
        harness: HarnessName,
        #[source]
        source: Box<MeasureError>,
    },
    #[error(
        "{harness} marks its sides but its run has no server_flight part: the comparison \
         would compare nothing"
    )]
    NoServerFlight { harness: HarnessName },
    #[error(transparent)]
    Allowlist(#[from] AllowlistError),
    #[error(transparent)]
    Measuring(Box<MeasureError>),
}

impl From<MeasureError> for CheckError {
    fn from(error: MeasureError) -> CheckError {
        CheckError::Measuring(Box::new(error))
    }
}

impl CheckError {
    /// Whether the user interrupted the check.
    pub fn is_interrupted(&self) -> bool {
        match self {
            CheckError::Measure { source, .. } | CheckError::Measuring(source) => {
                source.is_interrupted()
            }
            _ => false,
        }
    }
}

/// One variant of one operation, from its entry's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The entry's full name.
    pub name: HarnessName,
    /// `<library>::<operation>`.
    pub operation: String,
    pub group: String,
    pub variant: String,
}

impl Variant {
    /// Parses `constant_flow::<library>::<operation>::<group>::<variant>`.
    pub fn parse(name: &str) -> Result<Variant, CheckError> {
        let bad = || CheckError::BadName {
            name: name.chars().take(160).collect(),
        };
        let checked = HarnessName::new(name).map_err(|_| bad())?;
        let parts: Vec<&str> = name.split("::").collect();
        match parts.as_slice() {
            [PREFIX, library, operation, group, variant] => Ok(Variant {
                name: checked,
                operation: format!("{library}::{operation}"),
                group: (*group).to_owned(),
                variant: (*variant).to_owned(),
            }),
            _ => Err(bad()),
        }
    }
}

pub use crate::harness_name::is_constant_flow;

/// The variants among `names` whose operation contains `filter` (all when
/// `None`), in the order given. Each constant-flow entry's name is parsed
/// ([`Variant::parse`]), so `names` may be [`HarnessName`]s (a program's
/// list) or text (the harness tests' fixtures).
pub fn select<N: AsRef<str>>(
    names: &[N],
    filter: Option<&str>,
) -> Result<Vec<Variant>, CheckError> {
    let mut variants = Vec::new();
    for name in names
        .iter()
        .map(AsRef::as_ref)
        .filter(|name| is_constant_flow(name))
    {
        let variant = Variant::parse(name)?;
        if filter.is_none_or(|filter| variant.operation.contains(filter)) {
            variants.push(variant);
        }
    }
    if variants.is_empty() {
        return Err(CheckError::NothingSelected {
            filter: filter.unwrap_or("").to_owned(),
        });
    }
    Ok(variants)
}

/// What to check, and with what.
pub struct Request<'a> {
    pub runner: &'a Runner,
    /// The measured program.
    pub binary: &'a Path,
    pub variants: &'a [Variant],
    /// Runs per variant, 1 to [`MAX_RUNS`].
    pub runs: u32,
    pub allowlist: &'a Allowlist,
    /// Whether every operation is checked, so that an allowlist entry that
    /// matched nothing is stale (with `--operation`, an entry may cover
    /// operations that were not run).
    pub all_operations: bool,
    pub workers: usize,
    pub listener: &'a dyn Listener,
}

/// The costs a comparison looks at: the whole run, or its `server_flight`
/// part for an entry that marks its sides. Returns the scope's name too.
fn scoped(
    harness: &HarnessName,
    costs: RunCosts,
) -> Result<(&'static str, Costs, u64), CheckError> {
    if costs.sides {
        let mut by_part = costs.dumps.by_part;
        let part =
            by_part
                .remove(&Part::ServerFlight)
                .ok_or_else(|| CheckError::NoServerFlight {
                    harness: harness.clone(),
                })?;
        Ok((
            Part::ServerFlight.name(),
            part,
            costs.dumps.parts.server_flight,
        ))
    } else {
        Ok(("run", costs.dumps.costs, costs.dumps.parts.total()))
    }
}

/// The first run of a variant.
struct First {
    scope: &'static str,
    costs: Costs,
    instructions: u64,
    operations_per_run: u64,
}

/// Measures every variant `runs` times and compares: see the module's
/// documentation. The report says what differed; the caller decides the
/// exit code ([`Report::findings`]).
pub fn check(request: &Request<'_>) -> Result<Report, CheckError> {
    if !(1..=MAX_RUNS).contains(&request.runs) {
        return Err(CheckError::BadRuns { runs: request.runs });
    }
    let Request {
        runner,
        binary,
        variants,
        ..
    } = *request;
    let listener = request.listener;
    let started = std::time::Instant::now();
    let total = variants.len() * request.runs as usize;
    listener.event(Event::MeasuringStarted {
        total,
        workers: request.workers,
    });
    let announce = |variant: &Variant, result: Result<u64, &dyn std::fmt::Display>| {
        listener.event(Event::Measured {
            side: None,
            harness: &variant.name,
            result,
        });
    };

    // The first run of every variant, kept whole.
    let firsts = parallel::map(
        variants,
        request.workers,
        |variant| -> Result<First, CheckError> {
            let costs = runner
                .function_costs(&variant.name, binary)
                .map_err(|source| measure_error(variant, source))?;
            let operations_per_run = costs.operations_per_run;
            let (scope, costs, instructions) = scoped(&variant.name, costs)?;
            Ok(First {
                scope,
                costs,
                instructions,
                operations_per_run,
            })
        },
        |_, variant, result| match result {
            Ok(first) => announce(variant, Ok(first.instructions)),
            Err(error) => announce(variant, Err(error)),
        },
    );
    let firsts: Vec<First> = firsts.into_iter().collect::<Result<_, _>>()?;

    // Every further run, compared with the first as soon as it is counted,
    // so that only differences are kept.
    let again: Vec<(usize, u32)> = (0..variants.len())
        .flat_map(|index| (1..request.runs).map(move |run| (index, run)))
        .collect();
    let unstable = parallel::map(
        &again,
        request.workers,
        |&(index, _)| -> Result<(u64, Vec<FunctionDiff>), CheckError> {
            let variant = &variants[index];
            let costs = runner
                .function_costs(&variant.name, binary)
                .map_err(|source| measure_error(variant, source))?;
            let (_, costs, instructions) = scoped(&variant.name, costs)?;
            Ok((instructions, compare::compare(&firsts[index].costs, &costs)))
        },
        |_, &(index, _), result| match result {
            Ok((instructions, _)) => announce(&variants[index], Ok(*instructions)),
            Err(error) => announce(&variants[index], Err(error)),
        },
    );
    listener.event(Event::MeasuringFinished {
        total,
        workers: request.workers,
        elapsed: started.elapsed(),
    });
    let mut spreads: Vec<Option<Unstable>> = vec![None; variants.len()];
    let mut counts: Vec<Vec<u64>> = firsts.iter().map(|f| vec![f.instructions]).collect();
    for (&(index, run), result) in again.iter().zip(unstable) {
        let (instructions, differences) = result?;
        counts[index].push(instructions);
        if !differences.is_empty() && spreads[index].is_none() {
            spreads[index] = Some(Unstable {
                run: run + 1,
                differences,
            });
        }
    }

    let mut operations: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (index, variant) in variants.iter().enumerate() {
        if !operations.contains_key(variant.operation.as_str()) {
            order.push(&variant.operation);
        }
        operations
            .entry(&variant.operation)
            .or_default()
            .push(index);
    }
    let mut used = vec![false; request.allowlist.entries.len()];
    let mut reports = Vec::new();
    for operation in order {
        let indices = &operations[operation];
        reports.push(compare_operation(
            operation,
            indices,
            variants,
            &firsts,
            &counts,
            &mut spreads,
            request.allowlist,
            &mut used,
        ));
    }
    let stale = request
        .allowlist
        .entries
        .iter()
        .zip(&used)
        .filter(|(entry, used)| {
            request.all_operations
                && !**used
                && reports.iter().any(|report| entry.covers(&report.operation))
        })
        .map(|(entry, _)| entry.clone())
        .collect();
    Ok(Report {
        schema: report::SCHEMA,
        valgrind: runner.valgrind.version.to_string(),
        runs: request.runs,
        operations: reports,
        stale,
    })
}

fn measure_error(variant: &Variant, source: MeasureError) -> CheckError {
    CheckError::Measure {
        harness: variant.name.clone(),
        source: Box::new(source),
    }
}

/// The comparisons of one operation's variants (`indices` into `variants`).
#[allow(clippy::too_many_arguments)]
fn compare_operation(
    operation: &str,
    indices: &[usize],
    variants: &[Variant],
    firsts: &[First],
    counts: &[Vec<u64>],
    spreads: &mut [Option<Unstable>],
    allowlist: &Allowlist,
    used: &mut [bool],
) -> OperationReport {
    // The first variant of each group, in order of appearance.
    let mut leaders: Vec<usize> = Vec::new();
    for &index in indices {
        if !leaders
            .iter()
            .any(|&leader| variants[leader].group == variants[index].group)
        {
            leaders.push(index);
        }
    }
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for &index in indices {
        let leader = leaders
            .iter()
            .copied()
            .find(|&leader| variants[leader].group == variants[index].group)
            .unwrap_or(index);
        if leader != index {
            pairs.push((leader, index));
        }
    }
    for &leader in leaders.iter().skip(1) {
        pairs.push((leaders[0], leader));
    }
    let comparisons = pairs
        .into_iter()
        .map(|(a, b)| {
            let (va, vb) = (&variants[a], &variants[b]);
            let groups = [va.group.as_str(), vb.group.as_str()];
            let differences = compare::compare(&firsts[a].costs, &firsts[b].costs)
                .into_iter()
                .map(|diff| {
                    let allowed = allowlist.allows(operation, groups, &diff.function);
                    if let Some(entry) = allowed {
                        used[entry] = true;
                    }
                    Difference {
                        allowed: allowed.map(|entry| allowlist.entries[entry].reason.clone()),
                        known: allowed.is_some_and(|entry| allowlist.entries[entry].known_finding),
                        diff,
                    }
                })
                .collect();
            Comparison {
                a: va.variant.clone(),
                b: vb.variant.clone(),
                groups: [va.group.clone(), vb.group.clone()],
                differences,
            }
        })
        .collect();
    OperationReport {
        operation: operation.to_owned(),
        scope: firsts[indices[0]].scope.to_owned(),
        variants: indices
            .iter()
            .map(|&index| VariantReport {
                variant: variants[index].variant.clone(),
                group: variants[index].group.clone(),
                instructions: counts[index].clone(),
                operations_per_run: firsts[index].operations_per_run,
                unstable: spreads[index].take(),
            })
            .collect(),
        comparisons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_into_operation_group_and_variant() {
        let variant =
            Variant::parse("constant_flow::openssl::aes128gcm_open::rejected::tag_last_byte")
                .expect("parses");
        assert_eq!(variant.operation, "openssl::aes128gcm_open");
        assert_eq!(variant.group, "rejected");
        assert_eq!(variant.variant, "tag_last_byte");
        for bad in [
            "constant_flow::a::b::c",
            "perf::a::b::c::d",
            "constant_flow::a::b::c::d::e",
            "constant_flow::A::b::c::d",
            "constant_flow::../x::b::c::d",
        ] {
            assert!(Variant::parse(bad).is_err(), "{bad}");
        }
        assert!(is_constant_flow("constant_flow::a::b::c::d"));
        assert!(!is_constant_flow("constant_flowx::a"));
        assert!(!is_constant_flow("s2n_tls::handshake_rsa4096"));
    }

    #[test]
    fn selection_keeps_constant_flow_entries_matching_the_filter() {
        let names: Vec<HarnessName> = [
            "s2n_tls::handshake_rsa4096",
            "constant_flow::openssl::x25519::ok::scalar_a",
            "constant_flow::aws_lc_rs::x25519::ok::scalar_a",
            "constant_flow::aws_lc_rs::ecdh_p256::ok::scalar_a",
        ]
        .map(crate::fixtures::name)
        .to_vec();
        assert_eq!(select(&names, None).expect("all").len(), 3);
        assert_eq!(select(&names, Some("x25519")).expect("two").len(), 2);
        assert!(matches!(
            select(&names, Some("nothing")),
            Err(CheckError::NothingSelected { .. })
        ));
    }
}
