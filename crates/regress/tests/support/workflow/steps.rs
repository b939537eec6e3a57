//! What a job's steps read and write (their files, scripts and the
//! workflow's YAML), and the order of jobs and matrix entries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use yaml_rust2::Yaml;

use super::expression::interpolate;

/// Whether an earlier step of the job failed (for `success()` and
/// `failure()`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Status {
    pub(super) any_failed: bool,
}

/// The files a step's `run:` reads and writes.
pub(super) struct StepFiles {
    pub(super) script: PathBuf,
    pub(super) env: PathBuf,
    pub(super) output: PathBuf,
    pub(super) summary: PathBuf,
}

impl StepFiles {
    pub(super) fn new(temp: &Path, index: usize) -> StepFiles {
        let dir = temp.join("_runner_file_commands");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = |kind: &str| {
            let path = dir.join(format!("{kind}_{index}"));
            std::fs::write(&path, "").expect("create a file command");
            path
        };
        StepFiles {
            script: dir.join(format!("step_{index}.sh")),
            env: file("set_env"),
            output: file("set_output"),
            summary: file("step_summary"),
        }
    }
}

pub(super) fn run_script(
    script: &str,
    dir: &Path,
    env: &[(String, String)],
    file: &Path,
) -> (bool, String) {
    std::fs::write(file, script).expect("write the step's script");
    let mut command = Command::new("bash");
    command
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(file)
        .current_dir(dir)
        .env_remove("REGRESS_ROOT")
        .stdin(Stdio::null());
    // A runner has none of the variables `cargo test` sets for this test
    // (`OUT_DIR`, `CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, ...). They must not
    // reach a step: s2n-tls-sys's build script watches `OUT_DIR`, so a
    // step's cargo that saw it rebuilt s2n-tls's C code in the shared
    // target folder, and the next plain build rebuilt it again (50 s of CI).
    for (name, _) in std::env::vars_os() {
        if name
            .to_str()
            .is_some_and(regress::program::set_by_cargo_run)
        {
            command.env_remove(name);
        }
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run bash");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), log)
}

/// `NAME=value` lines and `NAME<<DELIMITER` blocks, as `$GITHUB_ENV` and
/// `$GITHUB_OUTPUT` hold them.
pub(super) fn read_key_values(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut pairs = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let mut value = Vec::new();
            for line in lines.by_ref() {
                if line == delimiter {
                    break;
                }
                value.push(line);
            }
            pairs.push((name.to_owned(), value.join("\n")));
        } else if let Some((name, value)) = line.split_once('=') {
            pairs.push((name.to_owned(), value.to_owned()));
        } else if !line.trim().is_empty() {
            panic!(
                "{} has a line GitHub would refuse: {line:?}",
                path.display()
            );
        }
    }
    pairs
}

/// Copies the files under `from` into `into` (created); the number copied.
pub(super) fn copy_tree(from: &Path, into: &Path) -> usize {
    std::fs::create_dir_all(into).expect("mkdir");
    let mut copied = 0;
    for entry in std::fs::read_dir(from).expect("list") {
        let entry = entry.expect("entry");
        let path = entry.path();
        let file_type = entry.file_type().expect("type");
        if file_type.is_dir() {
            copied += copy_tree(&path, &into.join(entry.file_name()));
        } else if file_type.is_file() {
            std::fs::copy(&path, into.join(entry.file_name())).expect("copy");
            copied += 1;
        }
    }
    copied
}

pub(super) fn path_text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_owned()
}

pub(super) fn list(yaml: &Yaml) -> Vec<Yaml> {
    match yaml {
        Yaml::Array(items) => items.clone(),
        Yaml::BadValue | Yaml::Null => Vec::new(),
        other => panic!("expected a list, found {other:?}"),
    }
}

pub(super) fn list_of(yaml: &Yaml) -> Vec<String> {
    match yaml {
        Yaml::String(one) => vec![one.clone()],
        other => list(other).iter().map(yaml_text).collect(),
    }
}

pub(super) fn yaml_text(yaml: &Yaml) -> String {
    match yaml {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null | Yaml::BadValue => String::new(),
        other => panic!("expected a scalar, found {other:?}"),
    }
}

pub(super) fn env_of(yaml: &Yaml) -> Vec<(String, String)> {
    match yaml {
        Yaml::Hash(map) => map
            .iter()
            .map(|(k, v)| (yaml_text(k), yaml_text(v)))
            .collect(),
        Yaml::BadValue | Yaml::Null => Vec::new(),
        other => panic!("expected a map of variables, found {other:?}"),
    }
}

pub(super) fn with_of(yaml: &Yaml, context: &Value, status: Status) -> BTreeMap<String, String> {
    env_of(yaml)
        .into_iter()
        .map(|(k, v)| {
            // A cache's key hashes files (`hashFiles`); the cache restores
            // nothing here, so its inputs are not evaluated.
            let value = if v.contains("hashFiles(") {
                v
            } else {
                interpolate(&v, context, status)
            };
            (k, value)
        })
        .collect()
}

/// The jobs, each after the jobs it `needs` (in file order otherwise).
pub(super) fn jobs_in_order(doc: &Yaml) -> Vec<(String, Yaml)> {
    let Yaml::Hash(jobs) = &doc["jobs"] else {
        panic!("the workflow has no jobs");
    };
    let mut pending: Vec<(String, Yaml)> = jobs
        .iter()
        .map(|(k, v)| (yaml_text(k), v.clone()))
        .collect();
    let mut ordered: Vec<(String, Yaml)> = Vec::new();
    while !pending.is_empty() {
        let ready = pending
            .iter()
            .position(|(_, job)| {
                list_of(&job["needs"])
                    .iter()
                    .all(|need| ordered.iter().any(|(id, _)| id == need))
            })
            .expect("the jobs' needs form no cycle");
        ordered.push(pending.remove(ready));
    }
    ordered
}

/// Every combination of a `strategy.matrix` (one entry, empty, without one).
pub(super) fn matrix_entries(matrix: &Yaml) -> Vec<Value> {
    let Yaml::Hash(axes) = matrix else {
        return vec![Value::Null];
    };
    let mut entries = vec![serde_json::Map::new()];
    for (axis, values) in axes {
        let axis = yaml_text(axis);
        let mut next = Vec::new();
        for entry in &entries {
            for value in list(values) {
                let mut entry = entry.clone();
                entry.insert(axis.clone(), Value::String(yaml_text(&value)));
                next.push(entry);
            }
        }
        entries = next;
    }
    entries.into_iter().map(Value::Object).collect()
}

/// A `workflow_call`'s inputs the caller left out take their defaults.
pub(super) fn apply_input_defaults(doc: &Yaml, context: &mut Value) {
    let Yaml::Hash(inputs) = &doc["on"]["workflow_call"]["inputs"] else {
        return;
    };
    if context.get("inputs").is_none() {
        context["inputs"] = json!({});
    }
    for (name, spec) in inputs {
        let name = yaml_text(name);
        if context["inputs"].get(&name).is_some() {
            continue;
        }
        if spec["required"].as_bool() == Some(true) {
            panic!("the workflow requires the input {name}, which the test did not give");
        }
        context["inputs"][&name] = Value::String(yaml_text(&spec["default"]));
    }
}
