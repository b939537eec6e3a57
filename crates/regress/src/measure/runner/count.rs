//! The children that count a harness: a Cachegrind method's count (one
//! child, or two whose difference is the region) and the Callgrind split
//! of the run by part.

use std::path::{Path, PathBuf};

use regress_measure::child::PREPARED_INPUTS;
use regress_measure::parts::{PartSet, Plan};
use regress_profile::cachegrind_out;

use super::Runner;
use crate::coverage::lines as executed;
use crate::harness_name::HarnessName;
use crate::measure::annotate;
use crate::measure::cachegrind::{ChildOutcome, ChildSpec, Tool};
use crate::measure::split::{self, Parts};
use crate::measure::valgrind::Method;
use crate::measure::{MeasureError, Result};
use regress_profile::callgrind_out;

impl Runner {
    /// A Cachegrind child that counts the run its method says.
    pub(super) fn child<'a>(
        &'a self,
        harness: &'a HarnessName,
        binary: &'a Path,
        scratch: &'a Path,
        runs: usize,
    ) -> ChildSpec<'a> {
        ChildSpec {
            valgrind: &self.valgrind,
            binary,
            harness,
            runs,
            plan: match self.valgrind.method {
                Method::Markers => Plan::Cachegrind(PartSet::run()),
                // A Cachegrind child of the Callgrind method only counts a
                // program that cannot be split (see `measure_in`): its
                // version's Cachegrind method, by version.
                Method::Subtraction | Method::Callgrind => {
                    match Method::for_version(self.valgrind.version) {
                        Method::Markers => Plan::Cachegrind(PartSet::run()),
                        _ => Plan::Nothing,
                    }
                }
            },
            tool: Tool::Cachegrind,
            cpu: self.workspace.cpu(),
            scratch,
            timeout: self.timeout,
            fork_servers: Some(&self.fork_servers),
            fork_position: None,
        }
    }

    /// The run of `harness` split by part (a Callgrind child), checked to
    /// add up to `total`, its Cachegrind count.
    pub(super) fn split(
        &self,
        harness: &HarnessName,
        binary: &Path,
        scratch: &Path,
        total: u64,
    ) -> Result<Parts> {
        let child = ChildSpec {
            plan: Plan::Callgrind,
            tool: Tool::Callgrind,
            ..self.child(harness, binary, scratch, PREPARED_INPUTS)
        }
        .run()?;
        let parts = split::read_dumps(&child.profile, None)?.parts;
        if parts.total() != total {
            return Err(MeasureError::PartsDoNotAddUp {
                harness: harness.clone(),
                client: parts.client(),
                server: parts.server(),
                glue: parts.glue,
                sum: parts.total(),
                total,
                method: self.valgrind.method.to_string(),
                logs: scratch.to_path_buf(),
            });
        }
        Ok(parts)
    }

    /// The count of a Cachegrind method (`method`): the profile of the
    /// region, its count, the child that ran the path last, and the
    /// region's self costs by line (for subtraction, the growth of each
    /// line from N runs to N+1: `cg_diff` puts every cost on line 0).
    pub(super) fn cachegrind_count(
        &self,
        method: Method,
        harness: &HarnessName,
        binary: &Path,
        scratch: &Path,
    ) -> Result<(PathBuf, i64, ChildOutcome, callgrind_out::Costs)> {
        let last = self
            .child(harness, binary, scratch, PREPARED_INPUTS)
            .run()?;
        if method == Method::Markers {
            let total = read_profile(&last.profile)?
                .instructions()
                .map_err(|source| MeasureError::Profile {
                    path: last.profile.clone(),
                    source,
                })?;
            let costs = self.line_data(|| executed::cachegrind_costs(&last.profile))?;
            return Ok((last.profile.clone(), total, last, costs));
        }
        // Forked, at its partner's position: see `fork_server`.
        let before = ChildSpec {
            fork_position: last.fork_position,
            ..self.child(harness, binary, scratch, PREPARED_INPUTS - 1)
        }
        .run()?;
        check_same_start(harness, &before, &last)?;
        let region = scratch.join("region.cachegrind.out");
        annotate::diff(&self.valgrind, &before.profile, &last.profile, &region)?;
        let costs = self.line_data(|| -> Result<_> {
            Ok(executed::region(
                &executed::cachegrind_costs(&before.profile)?,
                &executed::cachegrind_costs(&last.profile)?,
            ))
        })?;
        let (after, before) = (
            instructions_of(&last.profile)?,
            instructions_of(&before.profile)?,
        );
        // Checked: the counts come from files a child wrote.
        let total = after
            .checked_sub(before)
            .ok_or(MeasureError::NonPositiveCount {
                harness: harness.clone(),
                count: i64::MIN,
            })?;
        Ok((region, total, last, costs))
    }
}

fn read_profile(path: &Path) -> Result<cachegrind_out::Profile> {
    cachegrind_out::read(path).map_err(|source| MeasureError::Profile {
        path: path.to_path_buf(),
        source,
    })
}

fn instructions_of(path: &Path) -> Result<i64> {
    read_profile(path)?
        .instructions()
        .map_err(|source| MeasureError::Profile {
            path: path.to_path_buf(),
            source,
        })
}

/// Both subtraction children must have seen the same CPU, and (forked)
/// been forked at the same position of their servers, or their difference
/// means nothing.
fn check_same_start(
    harness: &HarnessName,
    before: &ChildOutcome,
    last: &ChildOutcome,
) -> Result<()> {
    if before.report.cpu_features != last.report.cpu_features {
        return Err(MeasureError::CpuFeaturesDiffer {
            harness: harness.clone(),
            before: before.report.cpu_features.clone(),
            after: last.report.cpu_features.clone(),
        });
    }
    if before.fork_position != last.fork_position {
        return Err(MeasureError::ForkPositionsDiffer {
            harness: harness.clone(),
            last: last.fork_position,
            before: before.fork_position,
        });
    }
    Ok(())
}
