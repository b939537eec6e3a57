//! The source lines one harness executed: `perf_outputs/<harness>.lines.json`.
//!
//! The runner writes it next to the region profile at measure time, from
//! the same run that gave the count, whatever the method:
//!
//! - Callgrind (the default): the dumps' self costs by file, function and
//!   line ([`regress_profile::callgrind_out::Costs`]); Callgrind's `fi=`/`fe=`
//!   switches give inlined code the file and line it came from;
//! - Cachegrind with markers (Valgrind 3.22+): the child's profile, which
//!   already counts the region only;
//! - Cachegrind by subtraction (Valgrind 3.19): the lines whose count grew
//!   from the whole-process profile of N runs to that of N+1, the region's
//!   own lines ([`region`]). `cg_diff` cannot give them: it puts every cost
//!   of a function on line 0.
//!
//! Cachegrind names each instruction's file and line from the debug
//! information of the address itself, so inlined code is in its own file
//! there too. The function is always the symbol the code was compiled into;
//! which source function a line belongs to is read from the source
//! ([`super::source`]).
//!
//! The file is data read back as hostile input: at most [`MAX_FILES`]
//! files, names of at most [`MAX_NAME`] bytes, lines up to [`MAX_LINE`]. Its
//! schema is `docs/schemas/lines.schema.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::CoverageError;
use crate::harness_name::HarnessName;
use crate::limits;
use regress_profile::callgrind_out::Costs;

/// The version of the lines file.
pub const LINES_SCHEMA: u32 = 1;
/// The suffix of a harness's lines file in an output folder.
pub const SUFFIX: &str = ".lines.json";
/// The most source files one harness may execute (a TLS handshake runs a
/// few thousand).
pub const MAX_FILES: usize = 100_000;
/// The longest file or function name kept.
pub const MAX_NAME: usize = 4096;
/// The highest line number accepted.
pub const MAX_LINE: u32 = 10_000_000;
/// The largest lines file read.
pub const MAX_BYTES: u64 = 64 << 20;

/// The lines one harness executed, by source file and by the function
/// (symbol) they were compiled into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lines {
    pub schema: u32,
    pub harness: HarnessName,
    /// File, then function, then the lines executed, ascending.
    pub files: BTreeMap<String, BTreeMap<String, Vec<u32>>>,
}

impl Lines {
    /// The lines of `costs` with a cost above zero; line 0 (code without
    /// line information) and Valgrind's `???` file are left out.
    pub fn from_costs(harness: &HarnessName, costs: &Costs) -> Lines {
        let mut files: BTreeMap<String, BTreeMap<String, Vec<u32>>> = BTreeMap::new();
        for ((file, function), lines) in costs {
            if file == "???" || file.len() > MAX_NAME || function.len() > MAX_NAME {
                continue;
            }
            let run: Vec<u32> = lines
                .iter()
                .filter(|(line, cost)| **cost > 0 && **line > 0 && **line <= u64::from(MAX_LINE))
                .map(|(line, _)| *line as u32)
                .collect();
            if run.is_empty() {
                continue;
            }
            let entry = files
                .entry(file.clone())
                .or_default()
                .entry(function.clone())
                .or_default();
            entry.extend(run);
            entry.sort_unstable();
            entry.dedup();
        }
        Lines {
            schema: LINES_SCHEMA,
            harness: harness.clone(),
            files,
        }
    }

    /// Where the lines of `harness` are in the output folder `dir`.
    pub fn path_in(dir: &Path, harness: &HarnessName) -> PathBuf {
        harness.file_in(dir, SUFFIX)
    }

    pub fn to_json(&self) -> String {
        // Serialising maps of strings and numbers cannot fail.
        let mut text = serde_json::to_string(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a lines file, checking its schema and bounds.
    pub fn read(path: &Path) -> Result<Lines, CoverageError> {
        let text = limits::read_capped(path, MAX_BYTES)
            .map_err(|source| CoverageError::io("read", path, source))?;
        let bad = |reason: String| CoverageError::BadLines {
            path: path.to_path_buf(),
            reason,
        };
        let lines: Lines = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if lines.schema != LINES_SCHEMA {
            return Err(bad(format!(
                "schema {}, and this regress reads schema {LINES_SCHEMA}; measure again",
                lines.schema
            )));
        }
        if lines.files.len() > MAX_FILES {
            return Err(bad(format!("more than {MAX_FILES} files")));
        }
        for (file, functions) in &lines.files {
            if file.len() > MAX_NAME || functions.keys().any(|f| f.len() > MAX_NAME) {
                return Err(bad(format!("a name longer than {MAX_NAME} bytes")));
            }
            if functions
                .values()
                .flatten()
                .any(|line| *line == 0 || *line > MAX_LINE)
            {
                return Err(bad(format!("{file}: a line outside 1..={MAX_LINE}")));
            }
        }
        Ok(lines)
    }

    /// Every line executed in `file`, whatever the function.
    pub fn lines_of(&self, file: &str) -> BTreeSet<u32> {
        self.files
            .get(file)
            .into_iter()
            .flat_map(|functions| functions.values().flatten().copied())
            .collect()
    }
}

/// The per-line self costs of a Cachegrind profile (its `Ir` column).
pub fn cachegrind_costs(path: &Path) -> Result<Costs, CoverageError> {
    let text = limits::read_capped(path, limits::MAX_TOOL_FILE)
        .map_err(|source| CoverageError::io("read", path, source))?;
    parse_cachegrind(&text).map_err(|reason| CoverageError::BadProfile {
        path: path.to_path_buf(),
        reason,
    })
}

/// Why [`parse_cachegrind`] cannot read a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("line {line}: {problem}")]
    Line { line: usize, problem: ProfileLine },
    #[error("no `events:` line")]
    NoEvents,
}

/// What is wrong with a line of a Cachegrind profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileLine {
    #[error("no Ir event")]
    NoIr,
    #[error("a cost line before `events:`, `fl=` and `fn=`")]
    CostBeforeHeaders,
    #[error("a bad line number")]
    BadLineNumber,
    #[error("a bad count")]
    BadCount,
}

/// The costs by file, function and line of Cachegrind's format: `fl=`,
/// `fn=`, then `line count...` (names in full, never compressed).
pub fn parse_cachegrind(text: &str) -> Result<Costs, ProfileError> {
    let mut costs = Costs::new();
    let mut file: Option<&str> = None;
    let mut function: Option<&str> = None;
    let mut ir: Option<usize> = None;
    for (number, line) in text.lines().enumerate() {
        let bad = |problem: ProfileLine| ProfileError::Line {
            line: number + 1,
            problem,
        };
        if let Some(events) = line.strip_prefix("events:") {
            ir = Some(
                events
                    .split_whitespace()
                    .position(|event| event == "Ir")
                    .ok_or_else(|| bad(ProfileLine::NoIr))?,
            );
        } else if let Some(name) = line.strip_prefix("fl=") {
            file = Some(name);
            function = None;
        } else if let Some(name) = line.strip_prefix("fn=") {
            function = Some(name);
        } else if line.starts_with(|c: char| c.is_ascii_digit()) {
            let (Some(file), Some(function), Some(ir)) = (file, function, ir) else {
                return Err(bad(ProfileLine::CostBeforeHeaders));
            };
            let mut fields = line.split_whitespace();
            let at: u64 = fields
                .next()
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| bad(ProfileLine::BadLineNumber))?;
            let cost: i64 = match fields.nth(ir) {
                None | Some(".") => 0,
                Some(value) => value.parse().map_err(|_| bad(ProfileLine::BadCount))?,
            };
            *costs
                .entry((file.to_owned(), function.to_owned()))
                .or_default()
                .entry(at)
                .or_default() += cost;
        }
    }
    if ir.is_none() {
        return Err(ProfileError::NoEvents);
    }
    Ok(costs)
}

/// The region's own lines from two whole-process profiles, of N runs
/// (`before`) and of N+1 (`after`): each line's growth.
pub fn region(before: &Costs, after: &Costs) -> Costs {
    let mut grown = Costs::new();
    for (key, lines) in after {
        let earlier = before.get(key);
        for (line, cost) in lines {
            let was = earlier.and_then(|l| l.get(line)).copied().unwrap_or(0);
            let growth = cost.saturating_sub(was);
            if growth > 0 {
                grown.entry(key.clone()).or_default().insert(*line, growth);
            }
        }
    }
    grown
}

/// The lines files of every harness in the output folder `dir`, read and
/// checked; files of other suffixes are ignored.
pub fn read_all(dir: &Path) -> Result<Vec<Lines>, CoverageError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(CoverageError::io("list", dir, source)),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(SUFFIX))
        })
        .collect();
    paths.sort();
    paths.iter().map(|path| Lines::read(path)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHOLE_2: &str = "desc: I1 cache:\ncmd: ./harness\nevents: Ir\n\
        fl=/src/a.c\nfn=setup\n3 10\nfn=work\n10 4\n11 2\n\
        fl=/src/inline.h\nfn=work\n7 6\nfl=???\nfn=0x1234\n0 9\nsummary: 31\n";
    const WHOLE_3: &str = "desc: I1 cache:\ncmd: ./harness\nevents: Ir\n\
        fl=/src/a.c\nfn=setup\n3 10\nfn=work\n10 6\n11 3\n12 1\n\
        fl=/src/inline.h\nfn=work\n7 9\nfl=???\nfn=0x1234\n0 13\nsummary: 42\n";

    #[test]
    fn subtraction_keeps_the_lines_the_extra_run_executed() {
        let before = parse_cachegrind(WHOLE_2).expect("2 runs");
        let after = parse_cachegrind(WHOLE_3).expect("3 runs");
        let name = HarnessName::new("a::b").expect("name");
        let lines = Lines::from_costs(&name, &region(&before, &after));
        // Setup ran as often in both: not the region's. Inlined code keeps
        // its own file; code without line information is left out.
        assert_eq!(lines.files.len(), 2, "{lines:?}");
        assert_eq!(lines.files["/src/a.c"]["work"], vec![10, 11, 12]);
        assert!(!lines.files["/src/a.c"].contains_key("setup"));
        assert_eq!(lines.files["/src/inline.h"]["work"], vec![7]);
        assert_eq!(lines.lines_of("/src/a.c"), BTreeSet::from([10, 11, 12]));
    }

    #[test]
    fn a_lines_file_reads_back_and_hostile_ones_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let name = HarnessName::new("a::b").expect("name");
        let lines = Lines::from_costs(&name, &parse_cachegrind(WHOLE_3).expect("profile"));
        let path = Lines::path_in(dir.path(), &name);
        std::fs::write(&path, lines.to_json()).expect("write");
        assert_eq!(Lines::read(&path).expect("read"), lines);
        assert_eq!(read_all(dir.path()).expect("all"), vec![lines]);
        for (text, expected) in [
            (r#"{"schema":9,"harness":"a::b","files":{}}"#, "schema 9"),
            (
                r#"{"schema":1,"harness":"a::b","files":{"f":{"g":[0]}}}"#,
                "outside",
            ),
            (
                r#"{"schema":1,"harness":"a::b","files":{},"x":1}"#,
                "unknown field",
            ),
            // The file names its harness; a name that is not one (a path
            // out of the folder) is refused as the file is read.
            (
                r#"{"schema":1,"harness":"../x","files":{}}"#,
                "is not a harness name",
            ),
        ] {
            std::fs::write(&path, text).expect("write");
            let error = Lines::read(&path).unwrap_err().to_string();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }

    /// Real profiles of `loop N` (crates/profile/tests/fixtures): 3.19's
    /// whole-process runs of N and 2N iterations, and 3.24's region.
    #[test]
    fn real_profiles_give_the_region_lines_of_both_cachegrind_methods() {
        const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../profile/tests/fixtures");
        let read = |file: &str| {
            cachegrind_costs(Path::new(&format!("{FIXTURES}/{file}"))).expect("a real profile")
        };
        let name = HarnessName::new("fixture::loop").expect("name");
        // Subtraction: only the loop's body ran more often.
        let grown = Lines::from_costs(
            &name,
            &region(
                &read("v3.19/loop-n.cachegrind.out"),
                &read("v3.19/loop-2n.cachegrind.out"),
            ),
        );
        let spin = &grown.files["src/loop.c"]["spin_17h1a2b3c4d"];
        assert!(spin.contains(&37) && spin.contains(&38), "{spin:?}");
        assert!(
            !grown.files["src/loop.c"].contains_key("checksum"),
            "{grown:?}"
        );
        assert!(
            !grown.files.keys().any(|f| f.contains("libc-start")),
            "{grown:?}"
        );
        // Markers: the region between the requests, and nothing before it.
        let marked = Lines::from_costs(&name, &read("v3.24/region-n.cachegrind.out"));
        let source = &marked.files["src/loop.c"];
        assert!(source["spin_17h1a2b3c4d"].contains(&38), "{marked:?}");
        assert!(source["checksum"].contains(&54), "{marked:?}");
        assert!(
            !source["main"].contains(&60),
            "before the region: {marked:?}"
        );
    }

    #[test]
    fn broken_profiles_are_refused() {
        assert!(parse_cachegrind("fl=a\nfn=b\n1 2\n").is_err());
        // Cachegrind writes names in full, parentheses and all.
        let below = parse_cachegrind("events: Ir\nfl=a\nfn=(below main)\n1 2\n").expect("ok");
        assert_eq!(below[&("a".to_owned(), "(below main)".to_owned())][&1], 2);
        assert!(parse_cachegrind("events: Ir\nfl=a\nfn=b\n1 y\n").is_err());
        assert!(parse_cachegrind("events: Dr\n").is_err());
        let said = |text: &str| parse_cachegrind(text).expect_err("refused").to_string();
        assert_eq!(
            said("fl=a\nfn=b\n1 2\n"),
            "line 3: a cost line before `events:`, `fl=` and `fn=`"
        );
        assert_eq!(said("events: Ir\nfl=a\nfn=b\n1 y\n"), "line 4: a bad count");
        assert_eq!(said("events: Dr\n"), "line 1: no Ir event");
        assert_eq!(said("fl=a\n"), "no `events:` line");
    }
}
