//! The heap children of a harness: its heap figures (a native child with
//! the hooks preloaded) and its allocation sites (two DHAT children).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use regress_measure::child::PREPARED_INPUTS;
use regress_measure::heap::{HeapReport, HEAP_SCHEMA};
use regress_measure::parts::Plan;

use super::{Runner, NEXT_SCRATCH};
use crate::harness_name::HarnessName;
use crate::limits;
use crate::measure::cachegrind::{self, ChildSpec, Tool};
use crate::measure::cpu_profile;
use crate::measure::heap_hooks;
use crate::measure::scratch::ScratchDir;
use crate::measure::{MeasureError, Result};
use regress_profile::dhat::{self, Sites};

impl Runner {
    /// The heap hooks library, built once per runner.
    fn hooks(&self) -> Result<PathBuf> {
        let mut hooks = self
            .hooks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(path) = hooks.as_ref() {
            return Ok(path.clone());
        }
        let path = heap_hooks::build(&self.outputs)?;
        *hooks = Some(path.clone());
        Ok(path)
    }

    /// The heap figures of `harness`'s counted run: a native child with the
    /// hooks preloaded and the CPU features Valgrind's CPU lacks
    /// (`valgrind_cpuid`, from a Valgrind child) hidden.
    pub(super) fn heap(
        &self,
        harness: &HarnessName,
        binary: &Path,
        scratch: &Path,
        valgrind_cpuid: Option<[u32; 4]>,
    ) -> Result<HeapReport> {
        let hooks = self.hooks()?;
        let native_only = match (valgrind_cpuid, regress_measure::cpu::ids()) {
            (Some(valgrind), Some(native)) => cpu_profile::native_only(valgrind, native),
            _ => [0; 4],
        };
        let ia32cap = self.workspace.cpu().ia32cap(native_only);
        let child = ChildSpec {
            plan: Plan::Nothing,
            tool: Tool::Heap {
                hooks: &hooks,
                ia32cap: &ia32cap,
                under_none: cachegrind::heap_child_under_none(
                    std::env::var(crate::env::HEAP_CHILD).ok().as_deref(),
                )?,
            },
            ..self.child(harness, binary, scratch, PREPARED_INPUTS)
        }
        .run()?;
        let path = &child.profile;
        let bad = |reason: String| MeasureError::BadHeapReport {
            path: path.clone(),
            reason,
        };
        let text = limits::read_capped(path, limits::MAX_SMALL_FILE)
            .map_err(|source| bad(format!("cannot read it ({source})")))?;
        let report: HeapReport =
            serde_json::from_str(&text).map_err(|error| bad(error.to_string()))?;
        if report.schema != HEAP_SCHEMA {
            return Err(bad(format!("schema {}, not {HEAP_SCHEMA}", report.schema)));
        }
        Ok(report)
    }

    /// The allocation sites of `harness`'s counted run, with their stacks:
    /// two DHAT children, 3 runs minus 2 ([`dhat`]). What a diff runs when
    /// the heap figures changed.
    pub fn allocation_sites(&self, harness: &HarnessName, binary: &Path) -> Result<Sites> {
        crate::process::check()?;
        let mut scratch = ScratchDir::create(
            &self.outputs.join(".scratch"),
            &format!(
                "{}.dhat.{}",
                harness.file_stem(),
                NEXT_SCRATCH.fetch_add(1, Ordering::Relaxed)
            ),
        )?;
        let mut sites = Vec::new();
        for runs in [PREPARED_INPUTS, PREPARED_INPUTS - 1] {
            let child = ChildSpec {
                plan: Plan::Nothing,
                tool: Tool::Dhat,
                ..self.child(harness, binary, scratch.path(), runs)
            }
            .run();
            let read = child.and_then(|child| {
                let text = limits::read_capped(&child.profile, limits::MAX_TOOL_FILE)
                    .map_err(|source| MeasureError::io("read", &child.profile, source))?;
                dhat::parse(&text).map_err(|error| MeasureError::BadAllocationSites {
                    path: child.profile.clone(),
                    error,
                })
            });
            match read {
                Ok(found) => sites.push(found),
                Err(error) => {
                    if !error.is_interrupted() {
                        scratch.keep();
                    }
                    return Err(error);
                }
            }
        }
        Ok(dhat::subtract(&sites[0], &sites[1]))
    }
}
