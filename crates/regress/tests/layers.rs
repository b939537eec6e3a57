//! Holds the rule written at the top of `src/lib.rs`: stages never import
//! commands, and commands never import each other.
//!
//! It reads every source file of the library (`src/`, without the binary in
//! `src/bin/`, which is the edge that calls the commands) and every
//! `crate::…` path in its code, `use` lines and paths written inline alike,
//! and names each import that breaks the rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The commands' own logic: each imports stages, never another command.
const COMMANDS: [&str; 4] = ["bisect", "constant_flow", "diff", "history"];

/// The imports that still break the rule, each with the reason it is
/// allowed for now. An entry that no longer occurs fails the test too, so
/// the list only shrinks.
const KNOWN: [(&str, &str, &str); 0] = [];

/// The top-level module a file of `src/` belongs to: its folder, or its
/// stem for a file at the root (`lib.rs` is the crate itself).
fn module_of(relative: &Path) -> String {
    let mut parts = relative.components();
    let first = parts
        .next()
        .expect("a file under src/ has a path")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    if parts.next().is_some() {
        first
    } else {
        first.trim_end_matches(".rs").to_owned()
    }
}

/// The top-level modules that `text` names through `crate::`, in code
/// (comment lines are skipped): `crate::a::…`, and each name of a group
/// `crate::{a, b::c, …}`, which may run over several lines.
fn imports(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        // `$crate::` and `regress_crate::` are not this crate's paths.
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name = item.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() {
                    found.insert(name.to_owned());
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// Every import of `src/` (but `src/bin/`) that breaks the rule, as
/// `file -> module: why`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in files {
        let relative = path.strip_prefix(src).expect("under src/");
        if relative.starts_with("bin") {
            continue;
        }
        let from = module_of(relative);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        for to in imports(&text) {
            if to == from || !COMMANDS.contains(&to.as_str()) {
                continue;
            }
            let why = if COMMANDS.contains(&from.as_str()) {
                "a command imports another command"
            } else {
                "a stage imports a command"
            };
            found.push(format!("{} -> {to}: {why}", relative.display()));
        }
    }
    found
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn stages_import_no_command_and_commands_import_no_other_command() {
    let found = violations(&src());
    let known: Vec<String> = KNOWN
        .iter()
        .map(|(file, to, _)| format!("{file} -> {to}"))
        .collect();
    let new: Vec<&String> = found
        .iter()
        .filter(|v| !known.iter().any(|k| v.starts_with(&format!("{k}:"))))
        .collect();
    assert!(
        new.is_empty(),
        "imports that break the layering rule at the top of src/lib.rs:\n  {}\n\
         Move what both need into a stage (measure/, judge/, compare/, program/ or a \
         shared root module), or import it from there.",
        new.iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join("\n  ")
    );
    for (entry, (file, to, _)) in known.iter().zip(KNOWN) {
        assert!(
            found.iter().any(|v| v.starts_with(&format!("{entry}:"))),
            "{file} no longer imports {to}: remove it from KNOWN in {}",
            file!()
        );
    }
}

#[test]
fn the_reader_sees_use_lines_groups_and_inline_paths_but_not_comments() {
    let text = "use crate::diff::Side;\n\
                use crate::{judge, measure::Runner,\n    history::table};\n\
                // use crate::bisect::line;\n\
                /// [`crate::constant_flow`]\n\
                let x = crate::program::build(y);\n\
                macro_rules! m { () => { $crate::other }; }\n";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["diff", "history", "judge", "measure", "program"]);
}

#[test]
fn files_belong_to_their_folder_or_their_stem() {
    assert_eq!(module_of(Path::new("diff/render.rs")), "diff");
    assert_eq!(module_of(Path::new("report/html/mod.rs")), "report");
    assert_eq!(module_of(Path::new("discover.rs")), "discover");
}

/// The longest source file the house allows, in lines: a file longer than
/// this is two things, to be split by what each part does.
const MAX_FILE_LINES: usize = 600;

/// No source file of the workspace's crates (`crates/*/src`, `crates/*/tests`,
/// `harnesses/src`, `harnesses/tests`) is over [`MAX_FILE_LINES`] lines.
#[test]
fn no_source_file_is_over_six_hundred_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut folders = vec![root.join("harnesses/src"), root.join("harnesses/tests")];
    let crates = std::fs::read_dir(root.join("crates")).expect("read crates/");
    for entry in crates {
        let krate = entry.expect("a folder entry").path();
        folders.extend(["src", "tests"].map(|part| krate.join(part)));
    }
    let mut files = Vec::new();
    for folder in folders.iter().filter(|folder| folder.is_dir()) {
        rust_files(folder, &mut files);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            let lines = text.lines().count();
            (lines > MAX_FILE_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by what each part does: {long:?}"
    );
}
