//! Measures one harness: runs its child process(es) under Cachegrind,
//! annotates the region's profile into `perf_outputs/`, and records the
//! count.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use regress_measure::child::{PREPARED_INPUTS, PROTOCOL};
use regress_measure::heap::{HeapReport, HEAP_SCHEMA};
use regress_measure::parts::{PartSet, Plan};
use regress_profile::{annotated, cachegrind_out};

use super::{MeasureError, Result};
use crate::atomic_file;
use crate::coverage::lines::{self as executed, Lines};
use crate::harness_name::HarnessName;
use crate::limits;
use crate::measure::annotate;
use crate::measure::cachegrind::{self, ChildOutcome, ChildSpec, Tool};
use crate::measure::cpu_profile;
use crate::measure::fingerprint::Fingerprint;
use crate::measure::flame;
use crate::measure::fork_server::ForkServers;
use crate::measure::header::header;
pub use crate::measure::header::{header_lines, strip_header, HEADER_PREFIX};
use crate::measure::heap_hooks;
use crate::measure::measurement::{Measurement, MEASUREMENT_SCHEMA};
use crate::measure::metrics::{self, Metrics};
use crate::measure::scratch::ScratchDir;
use crate::measure::split::{self, Parts};
use crate::measure::valgrind::{Method, Valgrind};
use crate::toolchain::Built;
use crate::workspace::Workspace;
use regress_profile::callgrind_out;
use regress_profile::dhat::{self, Sites};

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
    pub fn measure(&self, harness: &str, binary: &Path) -> Result<Measurement> {
        let harness = HarnessName::new(harness)?;
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
        let result = self.measure_in(&harness, binary, scratch.path());
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

    /// A Cachegrind child that counts the run its method says.
    fn child<'a>(
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

    /// Whether this runner forks its Callgrind children from fork servers.
    pub(crate) fn fork_servers(&self) -> &ForkServers {
        &self.fork_servers
    }

    /// The run of `harness` split by part (a Callgrind child), checked to
    /// add up to `total`, its Cachegrind count.
    fn split(
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
                harness: harness.to_string(),
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

    /// The heap figures of `harness`'s counted run: a native child with the
    /// hooks preloaded and the CPU features Valgrind's CPU lacks
    /// (`valgrind_cpuid`, from a Valgrind child) hidden.
    fn heap(
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
    pub fn allocation_sites(&self, harness: &str, binary: &Path) -> Result<Sites> {
        let harness = HarnessName::new(harness)?;
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
                ..self.child(&harness, binary, scratch.path(), runs)
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

    /// The count of a Cachegrind method (`method`): the profile of the
    /// region, its count, the child that ran the path last, and the
    /// region's self costs by line (for subtraction, the growth of each
    /// line from N runs to N+1: `cg_diff` puts every cost on line 0).
    fn cachegrind_count(
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
                harness: harness.to_string(),
                count: i64::MIN,
            })?;
        Ok((region, total, last, costs))
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
                harness: harness.to_string(),
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
                harness: harness.to_string(),
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

    /// Writes the folded call paths of a Callgrind measurement and its
    /// flame graph into this runner's output folder.
    fn write_flame(&self, harness: &HarnessName, graph: &flame::CallGraph) -> Result<()> {
        let folded = flame::fold(graph, flame::Limits::default());
        let path = harness.file_in(&self.outputs, flame::FOLDED);
        atomic_file::write(&path, flame::to_text(&folded).as_bytes())?;
        flame::write_svg(&harness.file_in(&self.outputs, flame::PLAIN), || {
            flame::plain(&folded, &format!("{harness}: the counted run"))
        })
    }

    /// Writes the annotated profile (with the runner's header), the raw
    /// region profile, the lines it executed and the record of one
    /// measurement into this runner's output folder, and returns the
    /// record. The record is written last: a record means its files are
    /// there.
    fn write_outputs(
        &self,
        outcome: Outcome<'_>,
        annotation_text: &str,
        region_profile: &Path,
        lines: &Lines,
    ) -> Result<Measurement> {
        let harness = outcome.harness;
        let outputs = &self.outputs;
        let annotated_path = harness.file_in(outputs, ".annotated.txt");
        let profile_path = harness.file_in(outputs, ".cachegrind.out");
        let measurement = Measurement {
            schema: MEASUREMENT_SCHEMA,
            harness: harness.clone(),
            instructions: outcome.instructions,
            bytes_per_run: outcome.bytes_per_run,
            operations_per_run: outcome.operations_per_run,
            fingerprint: outcome.fingerprint,
            sides: outcome.sides,
            metrics: outcome.metrics,
            library_cpu: outcome.library_cpu,
            annotated: relative(&self.workspace, &annotated_path),
            profile: relative(&self.workspace, &profile_path),
        };

        let header = header(&measurement);
        atomic_file::write(
            &annotated_path,
            format!("{header}{annotation_text}").as_bytes(),
        )?;
        let profile_bytes = std::fs::read(region_profile)
            .map_err(|source| MeasureError::io("read", region_profile, source))?;
        atomic_file::write(&profile_path, &profile_bytes)?;
        self.line_data(|| {
            atomic_file::write(
                &Lines::path_in(outputs, harness),
                lines.to_json().as_bytes(),
            )
        })?;
        let mut record = serde_json::to_string_pretty(&measurement).map_err(|source| {
            MeasureError::Serialize {
                what: "measurement record",
                source,
            }
        })?;
        record.push('\n');
        atomic_file::write(&Measurement::path_in(outputs, harness), record.as_bytes())?;
        Ok(measurement)
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
            harness: harness.to_string(),
            before: before.report.cpu_features.clone(),
            after: last.report.cpu_features.clone(),
        });
    }
    if before.fork_position != last.fork_position {
        return Err(MeasureError::ForkPositionsDiffer {
            harness: harness.to_string(),
            last: last.fork_position,
            before: before.fork_position,
        });
    }
    Ok(())
}

fn relative(workspace: &Workspace, path: &Path) -> PathBuf {
    path.strip_prefix(workspace.root())
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runner told to write elsewhere writes everything there, the record
    /// included, and nothing into the workspace's `perf_outputs/` (a diff
    /// must never write into the checkout of the commit it measures).
    #[test]
    fn another_output_folder_receives_the_record_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Workspace::new(dir.path().join("checkout"));
        let elsewhere = dir.path().join("diff/base");
        std::fs::create_dir_all(&elsewhere).expect("mkdir");
        let runner = Runner {
            workspace: workspace.clone(),
            valgrind: crate::fixtures::valgrind("3.24.0"),
            timeout: Duration::from_secs(1),
            outputs: workspace.perf_outputs_dir(),
            builds: Arc::default(),
            hooks: Arc::default(),
            line_data_nanos: Arc::default(),
            fork_servers: ForkServers::from_env().expect("fork servers"),
        }
        .with_output_dir(&elsewhere);
        assert_eq!(runner.line_data_time(), Duration::ZERO);
        let profile = dir.path().join("region.cachegrind.out");
        std::fs::write(&profile, "events: Ir\nsummary: 5\n").expect("write");
        let written = runner
            .write_outputs(
                Outcome {
                    harness: &HarnessName::new("a::b").expect("name"),
                    instructions: 5,
                    bytes_per_run: None,
                    operations_per_run: 1,
                    fingerprint: crate::fixtures::fingerprint("3.24.0"),
                    sides: false,
                    metrics: Metrics::new(),
                    library_cpu: BTreeMap::new(),
                },
                "annotated\n",
                &profile,
                &Lines::from_costs(
                    &HarnessName::new("a::b").expect("name"),
                    &callgrind_out::Costs::from([(
                        ("/src/a.rs".to_owned(), "a::run".to_owned()),
                        BTreeMap::from([(7, 5)]),
                    )]),
                ),
            )
            .expect("write outputs");
        let name = HarnessName::new("a::b").expect("name");
        let record = Measurement::read(&Measurement::path_in(&elsewhere, &name)).expect("record");
        assert_eq!(record, written);
        assert_eq!(record.profile, elsewhere.join("a.b.cachegrind.out"));
        assert!(elsewhere.join("a.b.annotated.txt").is_file());
        let lines = Lines::read(&elsewhere.join("a.b.lines.json")).expect("lines");
        assert_eq!(lines.files["/src/a.rs"]["a::run"], [7]);
        assert!(!workspace.perf_outputs_dir().exists());
        // Writing the lines file counted as executed-lines work, in the
        // clone's figure as in the original's.
        assert!(runner.line_data_time() > Duration::ZERO);
        assert_eq!(runner.clone().line_data_time(), runner.line_data_time());
    }
}
