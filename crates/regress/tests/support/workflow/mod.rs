//! Runs this project's GitHub workflows on this machine, so that a broken
//! step fails a test here and not on the first real pull request.
//!
//! A [`Runner`] reads a workflow file and runs its jobs in order (`needs`
//! first, each `strategy.matrix` entry as a job of its own), and in each
//! job its steps, as GitHub's runner does:
//!
//! - a `run:` step is the workflow's own shell text, with every `${{ … }}`
//!   expression replaced, run by `bash --noprofile --norc -eo pipefail` in
//!   its `working-directory`, with the workflow's, the job's and the step's
//!   `env`, the variables earlier steps wrote to `$GITHUB_ENV`, and
//!   `GITHUB_WORKSPACE`, `GITHUB_ENV`, `GITHUB_OUTPUT`,
//!   `GITHUB_STEP_SUMMARY`, `GITHUB_EVENT_PATH` and `RUNNER_TEMP`;
//!   `$GITHUB_OUTPUT` becomes `steps.<id>.outputs`;
//! - `if:` (of a job or a step) is evaluated (`always()`, `success()`,
//!   `failure()`, `==`, `!=`, `&&`, `||`, `!`, parentheses), and
//!   `continue-on-error` is honoured;
//! - the actions the workflows use are played by what they do:
//!   `actions/checkout` clones the named repository from a local folder at
//!   the named ref and depth (a clone of the workspace path, emptied first,
//!   as a fresh runner has it), `actions/upload-artifact` and
//!   `actions/download-artifact` copy into and out of a store kept per
//!   workflow run (`run-id` reads another run's), `actions/cache` restores
//!   nothing (a cold cache: it only ever saves time), and
//!   `actions/github-script` is not run (it calls GitHub's API; the test
//!   checks the files it reads instead). Any other action fails the test,
//!   so a new one cannot go unplayed;
//! - steps the test names as machine set-up ([`Runner::machine_step`]:
//!   installing system packages) are reported skipped, not run.
//!
//! The context a workflow reads (`github.*`, `inputs.*`, `vars.*`) is
//! given by the test. Reading a `github.` or `inputs.` value the test did
//! not give fails the test, where GitHub would silently give an empty
//! string: that is how a misspelt event field shows up. Unset `vars.` are
//! empty, as on GitHub.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use yaml_rust2::{Yaml, YamlLoader};

mod expression;
mod github;
mod steps;

use expression::{evaluate, interpolate, lookup, scalar, truthy};
// Not every test binary uses every helper.
#[allow(unused_imports)]
pub use github::*;
use steps::*;

/// How a job or step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    Success,
    Failure,
    Skipped,
}

/// One step as it ran.
#[derive(Debug)]
pub struct StepRun {
    pub name: String,
    pub conclusion: Conclusion,
    /// Its standard output and error (a `run:` step), or what the emulator
    /// did (an action).
    pub log: String,
    /// How long it took.
    pub elapsed: std::time::Duration,
}

/// One job (one matrix entry) as it ran.
#[derive(Debug)]
pub struct JobRun {
    /// The job's id, and its matrix values (`diff (shard=1)`).
    pub name: String,
    pub conclusion: Conclusion,
    pub steps: Vec<StepRun>,
    /// What its steps appended to `$GITHUB_STEP_SUMMARY`.
    pub summary: String,
}

/// A workflow as it ran.
#[derive(Debug)]
pub struct WorkflowRun {
    /// The run's id, which a later workflow's `run-id` names.
    pub id: u64,
    pub jobs: Vec<JobRun>,
}

impl WorkflowRun {
    /// Every job's and step's name, conclusion and log, for a failure
    /// message.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        for job in &self.jobs {
            text.push_str(&format!("job {}: {:?}\n", job.name, job.conclusion));
            for step in &job.steps {
                text.push_str(&format!(
                    "  step {:?}: {:?} in {:.1} s\n{}\n",
                    step.name,
                    step.conclusion,
                    step.elapsed.as_secs_f64(),
                    indent(&step.log)
                ));
            }
        }
        text
    }

    /// The job called `name` (with its matrix part, if any).
    pub fn job(&self, name: &str) -> &JobRun {
        self.jobs
            .iter()
            .find(|job| job.name == name)
            .unwrap_or_else(|| panic!("no job {name:?}:\n{}", self.describe()))
    }
}

impl StepRun {
    fn skipped(name: String, log: String) -> StepRun {
        StepRun {
            name,
            conclusion: Conclusion::Skipped,
            log,
            elapsed: std::time::Duration::ZERO,
        }
    }
}

impl JobRun {
    fn skipped(name: String) -> JobRun {
        JobRun {
            name,
            conclusion: Conclusion::Skipped,
            steps: Vec::new(),
            summary: String::new(),
        }
    }

    /// The step called `name`.
    pub fn step(&self, name: &str) -> &StepRun {
        self.steps
            .iter()
            .find(|step| step.name == name)
            .unwrap_or_else(|| panic!("job {} has no step {name:?}", self.name))
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    | {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The machine the workflows run on.
pub struct Runner {
    /// `owner/name` to the local repository `actions/checkout` clones.
    repositories: BTreeMap<String, PathBuf>,
    /// Where the workspace, the temporary folder and the artifacts live.
    root: PathBuf,
    /// Variables the runner machine itself has (`PATH`, …), beside the
    /// test process's own.
    machine_env: Vec<(String, String)>,
    /// Steps (by the start of their name) that set up the machine and are
    /// not run here, with the reason.
    machine_steps: Vec<(String, String)>,
    next_run: u64,
}

impl Runner {
    /// A runner whose scratch space is the new folder `root`.
    pub fn new(root: &Path) -> Runner {
        std::fs::create_dir_all(root.join("artifacts")).expect("create the artifact store");
        Runner {
            repositories: BTreeMap::new(),
            root: root.to_path_buf(),
            machine_env: Vec::new(),
            machine_steps: Vec::new(),
            next_run: 1000,
        }
    }

    /// `actions/checkout` of `name` (`owner/repo`) clones `path`.
    pub fn repository(&mut self, name: &str, path: &Path) -> &mut Runner {
        self.repositories
            .insert(name.to_owned(), path.to_path_buf());
        self
    }

    /// A variable every step of every job sees, as one the runner machine
    /// sets (a self-hosted runner's `CARGO_TARGET_DIR`, a `PATH`).
    pub fn machine_env(&mut self, name: &str, value: &str) -> &mut Runner {
        self.machine_env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Steps whose name starts with `name` are not run, for `reason`
    /// (installing system packages: a test must not change the machine).
    /// They are reported as skipped, with the reason as their log.
    pub fn machine_step(&mut self, name: &str, reason: &str) -> &mut Runner {
        self.machine_steps
            .push((name.to_owned(), reason.to_owned()));
        self
    }

    /// The workspace every job checks out into (`$GITHUB_WORKSPACE`): one
    /// path, as on GitHub, emptied at the start of each job.
    pub fn workspace(&self) -> PathBuf {
        self.root.join("work")
    }

    /// `$RUNNER_TEMP`, emptied at the start of each job.
    pub fn temp(&self) -> PathBuf {
        self.root.join("temp")
    }

    /// Runs `workflow` (a file under `.github/workflows/`) with `context`:
    /// `{"github": {...}, "inputs": {...}, "vars": {...}}`.
    pub fn run(&mut self, workflow: &Path, context: Value) -> WorkflowRun {
        let text = std::fs::read_to_string(workflow)
            .unwrap_or_else(|e| panic!("read {}: {e}", workflow.display()));
        let docs = YamlLoader::load_from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not YAML: {e}", workflow.display()));
        let doc = docs.into_iter().next().expect("one YAML document");
        self.next_run += 1;
        let id = self.next_run;
        let mut context = context;
        apply_input_defaults(&doc, &mut context);
        let workflow_env = env_of(&doc["env"]);
        let mut runs: Vec<JobRun> = Vec::new();
        let mut ended: BTreeMap<String, Conclusion> = BTreeMap::new();
        for (job_id, job) in jobs_in_order(&doc) {
            let needs = list_of(&job["needs"]);
            let needs_ok = needs
                .iter()
                .all(|need| ended.get(need) == Some(&Conclusion::Success));
            let mut conclusion = Conclusion::Success;
            for matrix in matrix_entries(&job["strategy"]["matrix"]) {
                let name = match &matrix {
                    Value::Object(map) if !map.is_empty() => format!(
                        "{job_id} ({})",
                        map.iter()
                            .map(|(k, v)| format!("{k}={}", scalar(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => job_id.clone(),
                };
                let mut job_context = context.clone();
                job_context["matrix"] = matrix;
                job_context["runner"] = json!({
                    "os": "Linux",
                    "temp": path_text(&self.temp()),
                });
                let state = Status {
                    any_failed: !needs_ok,
                };
                // Without an `if`, a job runs when every job it needs
                // succeeded (`success()`).
                let runs_job = match job["if"].as_str() {
                    Some(condition) => truthy(&evaluate(condition, &job_context, state)),
                    None => needs_ok,
                };
                let run = if runs_job {
                    self.run_job(id, &name, &job, &workflow_env, job_context)
                } else {
                    JobRun::skipped(name)
                };
                if run.conclusion == Conclusion::Failure {
                    conclusion = Conclusion::Failure;
                } else if run.conclusion == Conclusion::Skipped && conclusion == Conclusion::Success
                {
                    conclusion = Conclusion::Skipped;
                }
                runs.push(run);
            }
            ended.insert(job_id, conclusion);
        }
        WorkflowRun { id, jobs: runs }
    }

    fn run_job(
        &self,
        run_id: u64,
        name: &str,
        job: &Yaml,
        workflow_env: &[(String, String)],
        mut context: Value,
    ) -> JobRun {
        let workspace = self.workspace();
        let temp = self.temp();
        for dir in [&workspace, &temp] {
            if dir.exists() {
                std::fs::remove_dir_all(dir).expect("empty the runner's folders");
            }
            std::fs::create_dir_all(dir).expect("create the runner's folders");
        }
        let event_path = temp.join("event.json");
        std::fs::write(&event_path, context["github"]["event"].to_string()).expect("event.json");

        let mut job_env: Vec<(String, String)> = Vec::new();
        for (key, value) in workflow_env.iter().chain(&env_of(&job["env"])) {
            let value = interpolate(value, &context, Status::default());
            job_env.push((key.clone(), value));
        }
        let mut from_github_env: Vec<(String, String)> = Vec::new();
        let mut steps = Vec::new();
        let mut summary = String::new();
        let mut status = Status::default();
        context["steps"] = json!({});
        for (index, step) in list(&job["steps"]).iter().enumerate() {
            let step_name = step["name"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| step["uses"].as_str().map(str::to_owned))
                .unwrap_or_else(|| format!("step {index}"));
            let condition = step["if"].as_str().unwrap_or("success()");
            if !truthy(&evaluate(condition, &context, status)) {
                steps.push(StepRun::skipped(step_name, String::new()));
                continue;
            }
            if let Some((_, reason)) = self
                .machine_steps
                .iter()
                .find(|(start, _)| step_name.starts_with(start.as_str()))
            {
                steps.push(StepRun::skipped(step_name, reason.clone()));
                continue;
            }
            let files = StepFiles::new(&temp, index);
            let mut env: Vec<(String, String)> = self.machine_env.clone();
            env.extend(job_env.iter().cloned());
            env.extend(from_github_env.iter().cloned());
            for (key, value) in env_of(&step["env"]) {
                env.push((key, interpolate(&value, &context, status)));
            }
            env.extend([
                ("CI".to_owned(), "true".to_owned()),
                ("GITHUB_ACTIONS".to_owned(), "true".to_owned()),
                ("GITHUB_WORKSPACE".to_owned(), path_text(&workspace)),
                ("RUNNER_TEMP".to_owned(), path_text(&temp)),
                ("GITHUB_EVENT_PATH".to_owned(), path_text(&event_path)),
                ("GITHUB_ENV".to_owned(), path_text(&files.env)),
                ("GITHUB_OUTPUT".to_owned(), path_text(&files.output)),
                ("GITHUB_STEP_SUMMARY".to_owned(), path_text(&files.summary)),
            ]);
            let started = std::time::Instant::now();
            let (ok, log) = if let Some(script) = step["run"].as_str() {
                let dir = match step["working-directory"].as_str() {
                    Some(relative) => workspace.join(interpolate(relative, &context, status)),
                    None => workspace.clone(),
                };
                let script = interpolate(script, &context, status);
                run_script(&script, &dir, &env, &files.script)
            } else if let Some(uses) = step["uses"].as_str() {
                let with = with_of(&step["with"], &context, status);
                self.play_action(run_id, uses, &with, &context, &workspace)
            } else {
                panic!("step {step_name:?} of {name} neither runs nor uses anything");
            };
            from_github_env.extend(read_key_values(&files.env));
            if let Some(id) = step["id"].as_str() {
                let outputs: serde_json::Map<String, Value> = read_key_values(&files.output)
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                context["steps"][id] = json!({ "outputs": outputs });
            }
            summary.push_str(&std::fs::read_to_string(&files.summary).unwrap_or_default());
            let continue_on_error = step["continue-on-error"].as_bool() == Some(true);
            if !ok && !continue_on_error {
                status.any_failed = true;
            }
            steps.push(StepRun {
                name: step_name,
                conclusion: if ok {
                    Conclusion::Success
                } else {
                    Conclusion::Failure
                },
                log,
                elapsed: started.elapsed(),
            });
        }
        JobRun {
            name: name.to_owned(),
            conclusion: if status.any_failed {
                Conclusion::Failure
            } else {
                Conclusion::Success
            },
            steps,
            summary,
        }
    }

    /// What an action does, played on this machine: `(succeeded, log)`.
    fn play_action(
        &self,
        run_id: u64,
        uses: &str,
        with: &BTreeMap<String, String>,
        context: &Value,
        workspace: &Path,
    ) -> (bool, String) {
        let action = uses.split('@').next().unwrap_or(uses);
        let store = self.root.join("artifacts");
        match action {
            "actions/checkout" => self.checkout(with, context, workspace),
            "actions/cache" => (true, "cache: nothing restored (a cold cache)".to_owned()),
            "actions/upload-artifact" => {
                let name = with.get("name").expect("upload-artifact needs a name");
                let into = store.join(run_id.to_string()).join(name);
                let mut copied = 0;
                for line in with.get("path").map(String::as_str).unwrap_or("").lines() {
                    let line = line.trim();
                    if line.is_empty() {
                        continue;
                    }
                    let from = workspace.join(line);
                    if from.is_dir() {
                        copied += copy_tree(&from, &into);
                    } else if from.is_file() {
                        let file = from.file_name().expect("a file name");
                        std::fs::create_dir_all(&into).expect("mkdir");
                        std::fs::copy(&from, into.join(file)).expect("copy");
                        copied += 1;
                    }
                }
                let missing = with
                    .get("if-no-files-found")
                    .map(String::as_str)
                    .unwrap_or("warn");
                if copied == 0 && missing == "error" {
                    return (false, format!("upload {name}: no files found"));
                }
                (true, format!("uploaded {copied} files as {name}"))
            }
            "actions/download-artifact" => {
                let from_run = with
                    .get("run-id")
                    .map(|id| id.parse::<u64>().expect("a run id"))
                    .unwrap_or(run_id);
                let run_store = store.join(from_run.to_string());
                let into = match with.get("path") {
                    Some(path) => workspace.join(path),
                    None => workspace.to_path_buf(),
                };
                if let Some(name) = with.get("name") {
                    let from = run_store.join(name);
                    if !from.is_dir() {
                        return (false, format!("no artifact {name} in run {from_run}"));
                    }
                    let files = copy_tree(&from, &into);
                    return (true, format!("downloaded {name}: {files} files"));
                }
                let pattern = with
                    .get("pattern")
                    .expect("download-artifact: a name or a pattern");
                let prefix = pattern
                    .strip_suffix('*')
                    .expect("patterns used here end with *");
                let mut names = Vec::new();
                for entry in std::fs::read_dir(&run_store).into_iter().flatten() {
                    let entry = entry.expect("entry");
                    let artifact = entry.file_name().to_string_lossy().into_owned();
                    if artifact.starts_with(prefix) {
                        copy_tree(&entry.path(), &into.join(&artifact));
                        names.push(artifact);
                    }
                }
                if names.is_empty() {
                    return (false, format!("no artifact matches {pattern}"));
                }
                names.sort();
                (true, format!("downloaded {}", names.join(", ")))
            }
            "actions/github-script" => (
                true,
                "github-script: not run (it calls GitHub's API)".to_owned(),
            ),
            other => panic!("the workflow uses {other}, which this test does not play"),
        }
    }

    /// `actions/checkout`: the repository named by `repository` (default
    /// `github.repository`) at `ref` (default `github.sha`), `fetch-depth`
    /// commits deep (0: everything), into `path` under the workspace.
    fn checkout(
        &self,
        with: &BTreeMap<String, String>,
        context: &Value,
        workspace: &Path,
    ) -> (bool, String) {
        let repository = with.get("repository").cloned().unwrap_or_else(|| {
            scalar(lookup(context, "github.repository").expect("github.repository"))
        });
        let Some(origin) = self.repositories.get(&repository) else {
            panic!("the test gave no local repository for {repository}");
        };
        let reference = with
            .get("ref")
            .filter(|r| !r.is_empty())
            .cloned()
            .unwrap_or_else(|| scalar(lookup(context, "github.sha").expect("github.sha")));
        let dir = match with.get("path") {
            Some(path) => workspace.join(path),
            None => workspace.to_path_buf(),
        };
        if dir.exists() {
            for entry in std::fs::read_dir(&dir).expect("list") {
                let path = entry.expect("entry").path();
                if path.is_dir() && !path.is_symlink() {
                    std::fs::remove_dir_all(&path).expect("empty the checkout folder");
                } else {
                    std::fs::remove_file(&path).expect("empty the checkout folder");
                }
            }
        }
        std::fs::create_dir_all(&dir).expect("mkdir");
        let url = format!("file://{}", origin.display());
        let depth = with.get("fetch-depth").map(String::as_str).unwrap_or("1");
        let mut fetch: Vec<String> = vec!["fetch".into(), "--no-tags".into(), "-q".into()];
        if depth != "0" {
            fetch.push(format!("--depth={depth}"));
        }
        fetch.push("origin".into());
        if depth == "0" {
            fetch.push("+refs/heads/*:refs/remotes/origin/*".into());
        }
        fetch.push(reference.clone());
        let mut log = String::new();
        for args in [
            vec!["init".to_owned(), "-q".to_owned()],
            vec![
                "remote".to_owned(),
                "add".to_owned(),
                "origin".to_owned(),
                url,
            ],
            fetch,
            vec![
                "checkout".to_owned(),
                "-q".to_owned(),
                "--force".to_owned(),
                "--detach".to_owned(),
                "FETCH_HEAD".to_owned(),
            ],
        ] {
            let output = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(&args)
                .stdin(Stdio::null())
                .output()
                .expect("run git");
            log.push_str(&format!(
                "git {}\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
            if !output.status.success() {
                return (false, log);
            }
        }
        (true, log)
    }
}
