//! The documentation against the program: every generated section of the
//! Markdown files is on a page `regress readme` checks, and every `regress`
//! command the README and the guide show parses as written.

use std::path::{Path, PathBuf};
use std::process::Command;

use regress::report::readme::{markers, regenerate, COMMAND, PAGES};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every Markdown file under `docs/`, as (path from the
/// root, text).
fn documents() -> Vec<(String, String)> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("docs/ lists") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).expect("read");
            let relative = file
                .strip_prefix(&root)
                .expect("inside the root")
                .to_string_lossy()
                .replace('\\', "/");
            (relative, text)
        })
        .collect()
}

/// Every generated section is on exactly one page, and no Markdown file of
/// the repository carries a marker that `regress readme` would not check.
#[test]
fn every_marker_is_in_a_page() {
    let mut declared: Vec<&str> = PAGES
        .iter()
        .flat_map(|page| page.sections)
        .copied()
        .collect();
    let count = declared.len();
    declared.sort_unstable();
    declared.dedup();
    assert_eq!(declared.len(), count, "a section is on two pages");
    for library in regress_source::LIBRARIES {
        let history = format!("history-{}", library.name);
        let has_history = root().join("baselines/history").join(library.name).is_dir();
        assert_eq!(
            declared.contains(&history.as_str()),
            has_history,
            "{history}"
        );
    }
    let mut seen = Vec::new();
    for (path, text) in documents() {
        let page = PAGES.iter().find(|page| page.path == path);
        for section in markers(&text) {
            let page = page.unwrap_or_else(|| {
                panic!("{path} has a generated section `{section}` but is not in PAGES")
            });
            assert!(page.sections.contains(&section), "{path}: {section}");
            seen.push(section.to_owned());
        }
    }
    for section in declared {
        assert!(seen.iter().any(|s| s == section), "no marker of {section}");
    }
}

/// The commands of the shell blocks that run `regress`, with `\`
/// continuations joined, `&&` split and comments cut.
fn regress_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_shell = false;
    let mut line = String::new();
    for raw in text.lines() {
        if raw.starts_with("```") {
            in_shell = raw == "```sh";
            continue;
        }
        if !in_shell {
            continue;
        }
        let code = raw.split(" #").next().unwrap_or("").trim_end();
        if let Some(start) = code.strip_suffix('\\') {
            line.push_str(start);
            continue;
        }
        line.push_str(code);
        for command in line.split("&&") {
            let command = command.trim();
            for prefix in ["cargo run -p regress -- ", "cargo run -q -p regress -- "] {
                if let Some(args) = command.strip_prefix(prefix) {
                    commands.push(args.to_owned());
                }
            }
        }
        line.clear();
    }
    commands
}

/// Every `cargo run -p regress -- ...` of a shell block parses: the same
/// arguments with `--help` exit 0, so the command, its options and their
/// values exist as written. The placeholders people replace (GOOD, BAD,
/// NAME) are given real values.
#[test]
fn every_documented_regress_command_parses() {
    let mut checked = 0;
    for (path, text) in documents() {
        for command in regress_commands(&text) {
            let args: Vec<String> = command
                .split_whitespace()
                .map(|word| match word {
                    "GOOD" => "HEAD~1".to_owned(),
                    "BAD" => "HEAD".to_owned(),
                    "NAME" => "s2n_tls::handshake_rsa4096".to_owned(),
                    other => other.to_owned(),
                })
                .collect();
            let output = Command::new(env!("CARGO_BIN_EXE_regress"))
                .args(&args)
                .arg("--help")
                .env("REGRESS_ROOT", root())
                .output()
                .expect("run regress");
            assert!(
                output.status.success(),
                "{path}: `regress {command}` does not parse: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} commands found");
}

#[test]
fn commands_are_read_from_shell_blocks_only() {
    let text = "```sh\ncargo run -p regress -- run && cargo run -p regress -- bless   # both\n\
                cargo run -p regress -- bisect A B \\\n    --by 3\n```\n\
                cargo run -p regress -- not-in-a-block\n```text\ncargo run -p regress -- no\n```\n";
    assert_eq!(
        regress_commands(text),
        vec!["run", "bless", "bisect A B     --by 3"]
    );
}

/// The committed results pages' tables are what `baselines/` (and its
/// `history/`) says. This reads only committed files, so it holds on a
/// fresh clone.
#[test]
fn the_generated_tables_agree_with_the_baselines() {
    let root = root();
    let pages = regenerate(&root, &root.join("baselines"), &|baselines, text| {
        Ok(regress::history::table::readme_sections(baselines, text)?)
    })
    .expect("pages and baselines load");
    assert_eq!(pages.len(), PAGES.len());
    for page in pages {
        assert!(
            page.is_current(),
            "{}'s generated tables disagree with baselines/; regenerate them with \
             `{COMMAND}` and commit the result",
            page.path.display()
        );
    }
}
