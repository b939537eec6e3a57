//! Measures one harness: runs its child process(es) under Cachegrind,
//! annotates the region's profile into `perf_outputs/`, and records the
//! count.
//!
//! [`Runner`] and what a measurement does, start to finish
//! (`Runner::measure_in`), are here; the pieces it calls are beside it:
//! `count.rs` (the children that count: the Cachegrind methods' count and
//! the Callgrind split by part), `heap.rs` (the heap figures and a
//! run's allocation sites) and `outputs.rs` (the files a measurement
//! writes, the record last).

mod count;
mod heap;
mod outputs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use regress_measure::child::{PREPARED_INPUTS, PROTOCOL};
use regress_measure::parts::Plan;
use regress_profile::annotated;

use super::{MeasureError, Result};
use crate::coverage::lines::Lines;
use crate::harness_name::HarnessName;
use crate::measure::annotate;
use crate::measure::cachegrind::{self, ChildSpec, Tool};
use crate::measure::cpu_profile;
use crate::measure::fingerprint::Fingerprint;
use crate::measure::flame;
use crate::measure::fork_server::ForkServers;
pub use crate::measure::header::{header_lines, strip_header, HEADER_PREFIX};
use crate::measure::measurement::Measurement;
use crate::measure::metrics::{self, Metrics};
use crate::measure::scratch::ScratchDir;
use crate::measure::split;
use crate::measure::valgrind::{Method, Valgrind};
use crate::toolchain::Built;
use crate::workspace::Workspace;
use regress_profile::callgrind_out;

static NEXT_SCRATCH: AtomicU64 = AtomicU64::new(0);

/// Everything needed to measure harnesses on this machine.
#[derive(Debug, Clone)]
pub struct Runner {
    pub workspace: Workspace,
    pub valgrind: Valgrind,
    pub timeout: Duration,
    outputs: PathBuf,
    /// How each measured program was built (its compilers and crate
    /// versions), read once per program.
    builds: Arc<Mutex<BTreeMap<PathBuf, Built>>>,
    /// The heap hooks library, built on first use.
    hooks: Arc<Mutex<Option<PathBuf>>>,
    /// Nanoseconds spent on the executed-lines data (what a diff's blind
    /// spots are found from), summed over every measurement of this runner
    /// and its clones: reading line costs only that data needs, and
    /// building and writing `<harness>.lines.json`.
    line_data_nanos: Arc<AtomicU64>,
    /// Whether its Callgrind children are forked from fork servers.
    fork_servers: ForkServers,
}

impl Runner {
    pub fn new(workspace: Workspace, valgrind: Valgrind, timeout: Duration) -> Result<Runner> {
        Ok(Runner {
            outputs: workspace.perf_outputs_dir(),
            workspace,
            valgrind,
            timeout,
            builds: Arc::default(),
            hooks: Arc::default(),
            line_data_nanos: Arc::default(),
            fork_servers: ForkServers::from_env()?,
        })
    }

    /// The time this runner (and its clones) spent on executed-lines data
    /// so far: what the blind spots add to a measurement.
    pub fn line_data_time(&self) -> Duration {
        Duration::from_nanos(self.line_data_nanos.load(Ordering::Relaxed))
    }

    /// Runs `work` as executed-lines work, adding its wall time to
    /// [`Runner::line_data_time`].
    fn line_data<T>(&self, work: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let result = work();
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.line_data_nanos.fetch_add(nanos, Ordering::Relaxed);
        result
    }

    /// Writes every output, the record included, to `dir` instead of the
    /// workspace's `perf_outputs/` (a two-commit diff keeps each side's
    /// outputs apart, and an old commit's checkout is never written to).
    pub fn with_output_dir(mut self, dir: impl Into<PathBuf>) -> Runner {
        self.outputs = dir.into();
        self
    }

    /// Forks this runner's Callgrind children from fork servers (`true`,
    /// the default unless `REGRESS_FORK_SERVER=off`), or starts each under
    /// a Valgrind of its own.
    pub fn with_fork_servers(mut self, enabled: bool) -> Runner {
        self.fork_servers = ForkServers::new(enabled);
        self
    }

    /// Where this runner writes annotated profiles and records.
    pub fn output_dir(&self) -> &Path {
        &self.outputs
    }

    /// The runner the environment describes (`REGRESS_VALGRIND`,
    /// `REGRESS_TIMEOUT_SECS`, `REGRESS_ROOT`).
    pub fn from_env() -> Result<Runner> {
        Runner::new(
            Workspace::discover()?,
            Valgrind::from_env()?,
            cachegrind::timeout_from_env()?,
        )
    }

    /// Measures `harness`, a test of the test binary `binary`, and writes its
    /// annotated profile and record into `perf_outputs/`.
    pub fn measure(&self, harness: &HarnessName, binary: &Path) -> Result<Measurement> {
        crate::process::check()?;
        let outputs = &self.outputs;
        std::fs::create_dir_all(outputs)
            .map_err(|source| MeasureError::io("create the output folder", outputs, source))?;
        let mut scratch = ScratchDir::create(
            &self.outputs.join(".scratch"),
            &format!(
                "{}.{}",
                harness.file_stem(),
                NEXT_SCRATCH.fetch_add(1, Ordering::Relaxed)
            ),
        )?;
        let result = self.measure_in(harness, binary, scratch.path());
        if let Err(error) = &result {
            // Keep the scratch folder after a failure: its logs are the
            // evidence the error message points to. An interrupted one
            // holds no evidence of anything.
            if !error.is_interrupted() {
                scratch.keep();
            }
        }
        result
    }

    /// How `binary` was built (compilers, linker, crate versions), read
    /// once.
    fn built(&self, binary: &Path) -> Result<Built> {
        let mut known = self
            .builds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(built) = known.get(binary) {
            return Ok(built.clone());
        }
        let built = crate::toolchain::of(binary)?;
        known.insert(binary.to_path_buf(), built.clone());
        Ok(built)
    }

    /// Whether this runner forks its Callgrind children from fork servers.
    pub(crate) fn fork_servers(&self) -> &ForkServers {
        &self.fork_servers
    }

    fn measure_in(
        &self,
        harness: &HarnessName,
        binary: &Path,
        scratch: &Path,
    ) -> Result<Measurement> {
        let mut method = self.valgrind.method;
        let mut split_parts = None;
        let mut graph = None;
        let (region_profile, instructions, last, costs) = if method == Method::Callgrind {
            let child = ChildSpec {
                plan: Plan::Callgrind,
                tool: Tool::Callgrind,
                ..self.child(harness, binary, scratch, PREPARED_INPUTS)
            }
            .run()?;
            if child.report.protocol >= PROTOCOL {
                let dumps = split::read_dumps(&child.profile, Some(&child.program))?;
                let region = scratch.join("region.cachegrind.out");
                std::fs::write(
                    &region,
                    callgrind_out::to_cachegrind(&dumps.costs, "./harness"),
                )
                .map_err(|source| MeasureError::io("write", &region, source))?;
                let total = dumps.parts.total() as i64;
                split_parts = Some(dumps.parts);
                graph = Some(dumps.graph);
                (region, total, child, dumps.costs)
            } else {
                // A program from before the protocol of parts (a diff's old
                // base) marks nothing Callgrind can dump: its version's
                // Cachegrind method counts it.
                method = Method::for_version(self.valgrind.version);
                self.cachegrind_count(method, harness, binary, scratch)?
            }
        } else {
            self.cachegrind_count(method, harness, binary, scratch)?
        };
        if instructions <= 0 {
            return Err(MeasureError::NonPositiveCount {
                harness: harness.clone(),
                count: instructions,
            });
        }
        let annotation_text = annotate::annotate(&self.valgrind, &region_profile)?;
        let annotation =
            annotated::parse(&annotation_text).map_err(|source| MeasureError::Profile {
                path: region_profile.clone(),
                source,
            })?;
        if annotation.total_instructions != instructions {
            return Err(MeasureError::AnnotationMismatch {
                harness: harness.clone(),
                annotated: annotation.total_instructions,
                raw: instructions,
            });
        }
        cpu_profile::check_region(
            self.workspace.cpu(),
            harness,
            &region_profile,
            &last.report.library_cpu,
        )?;

        // A program from before the protocol of parts and heap children
        // (the base of a diff, say) gives the count alone.
        let current = last.report.protocol >= PROTOCOL;
        let parts = match split_parts {
            Some(parts) if last.report.sides => Some(parts),
            Some(_) => None,
            None if current && last.report.sides => {
                Some(self.split(harness, binary, scratch, instructions as u64)?)
            }
            None => None,
        };
        let heap = if current {
            Some(self.heap(harness, binary, scratch, last.report.cpuid)?)
        } else {
            None
        };

        // The versions the program was built with, and what it loads at run
        // time (the system's libssl).
        let Built {
            toolchain,
            mut libraries,
        } = self.built(binary)?;
        libraries.extend(last.report.runtime_libraries.clone());
        let mut fingerprint = Fingerprint::new(
            &self.valgrind,
            last.report.cpu_features.clone(),
            libraries,
            toolchain,
        );
        fingerprint.method = method;
        fingerprint.cpu_profile = self.workspace.cpu();
        if let Some(graph) = graph.as_ref().filter(|_| flame::enabled()) {
            self.write_flame(harness, graph)?;
        }
        self.write_outputs(
            Outcome {
                harness,
                instructions: instructions as u64,
                bytes_per_run: last.report.bytes_per_run,
                operations_per_run: last.report.operations_per_run,
                fingerprint,
                sides: last.report.sides,
                metrics: metrics::collect(parts.as_ref(), heap.as_ref()),
                library_cpu: last.report.library_cpu.clone(),
            },
            &annotation_text,
            &region_profile,
            &self.line_data(|| Lines::from_costs(harness, &costs)),
        )
    }
}

/// What a measurement found, before it is written down.
struct Outcome<'a> {
    harness: &'a HarnessName,
    instructions: u64,
    bytes_per_run: Option<u64>,
    operations_per_run: u64,
    fingerprint: Fingerprint,
    sides: bool,
    metrics: Metrics,
    library_cpu: BTreeMap<String, [u32; 4]>,
}
