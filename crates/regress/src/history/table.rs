//! A history as Markdown: the count of every path at every version, then
//! each step whose change is beyond the path's threshold, with the
//! function that moved most. `regress history --markdown` prints it and
//! `regress readme` writes it into the README (section `history-<library>`).
//!
//! Everything shown comes from the history files, which are read as
//! hostile input; function and file names go into code spans
//! ([`crate::report::markdown`]), versions and counts are checked values.

use std::collections::BTreeSet;
use std::path::Path;

use super::store::{Entry, HistoryDir, Record};
use super::HistoryError;
use crate::format::{count, signed, signed_percent};
use crate::harness_name::HarnessName;
use crate::judge::baseline::BaselineFile;
use crate::judge::{judge, Threshold};
use crate::measure::valgrind::{Method, Version};
use crate::report::markdown::{cell, code};
use crate::report::Table;

/// The Valgrind version and method whose entries a table shows: markers
/// (the method without the subtraction's few instructions of loop), the
/// newest Valgrind, when any record has one; else the newest of any.
pub fn setup(records: &[Record]) -> Option<(String, Method)> {
    let setups: BTreeSet<(String, Method)> = records
        .iter()
        .flat_map(|record| record.entries.iter().map(Entry::setup))
        .collect();
    setups
        .into_iter()
        .max_by_key(|(valgrind, method)| (*method == Method::Markers, Version::parse(valgrind)))
}

/// The Markdown of `records` (oldest first) for `setup`; the thresholds
/// of the steps come from `baselines`.
pub fn markdown(
    library: &str,
    records: &[Record],
    setup: &(String, Method),
    baselines: &Path,
) -> String {
    let shown: Vec<(&Record, &Entry)> = records
        .iter()
        .filter_map(|record| record.entry(setup).map(|entry| (record, entry)))
        .collect();
    if shown.is_empty() {
        return format!(
            "No version of {library} is measured with Valgrind {} ({}).\n",
            setup.0, setup.1
        );
    }
    let label = Record::label;
    let paths: BTreeSet<&HarnessName> = shown.iter().flat_map(|(_, e)| e.paths.keys()).collect();
    let mut header = vec!["path".to_owned()];
    header.extend(shown.iter().map(|(record, _)| label(record)));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut counts = Table::new(&header);
    for path in &paths {
        let mut row = vec![short_name(path).to_owned()];
        row.extend(shown.iter().map(|(_, entry)| {
            entry
                .paths
                .get(*path)
                .map_or_else(|| "-".to_owned(), |p| count(p.instructions))
        }));
        counts.row(row);
    }

    // Written by hand, not with `Table`: the last cell holds code spans
    // next to plain text, and `Table` would make the whole cell one span.
    let mut steps = String::from(
        "| step | path | change | function that moved most |\n| --- | --- | ---: | --- |\n",
    );
    for pair in shown.windows(2) {
        let ((before, from), (after, to)) = (pair[0], pair[1]);
        let step_name = format!("{} to {}", label(before), label(after));
        let mut any = false;
        for path in &paths {
            let (Some(a), Some(b)) = (from.paths.get(*path), to.paths.get(*path)) else {
                continue;
            };
            let judgement = judge(
                a.instructions,
                b.instructions,
                threshold(baselines, path, a.instructions),
            );
            if !judgement.change.is_significant() {
                continue;
            }
            any = true;
            let moved = to
                .step
                .as_ref()
                .filter(|step| step.from == before.revision)
                .and_then(|step| step.moved.get(*path))
                .map_or_else(
                    || "n/a".to_owned(),
                    |moved| {
                        format!(
                            "{} ({}) {}",
                            code(&moved.function),
                            code(&moved.file),
                            signed(moved.delta)
                        )
                    },
                );
            steps.push_str(&format!(
                "| {} | {} | {} ({}) | {moved} |\n",
                cell(&step_name),
                cell(short_name(path)),
                signed(i128::from(b.instructions) - i128::from(a.instructions)),
                signed_percent(a.instructions, b.instructions)
            ));
        }
        if !any {
            steps.push_str(&format!(
                "| {} | every path | within its threshold | |\n",
                cell(&step_name)
            ));
        }
    }
    let mut out = format!(
        "Instructions per path of {library}, one warm run each, measured with Valgrind {} ({}):\n\n",
        setup.0, setup.1
    );
    out.push_str(&counts.to_markdown());
    if shown.len() > 1 {
        out.push_str(
            "\nSteps beyond the path's threshold (its committed one, else 0.05 % with a floor of \
             1 % of the count, at most 1,000), and the function whose cost moved most in each:\n\n",
        );
        out.push_str(&steps);
    }
    out
}

/// The README sections of every library with a history in `baselines`'
/// history folder whose section marker `text` has
/// (`<!-- regress readme: history-<library> -->`): what `regress readme`
/// hands the results pages' generator
/// ([`crate::report::readme::MoreSections`]).
pub fn readme_sections(
    baselines: &Path,
    text: &str,
) -> Result<Vec<(String, String)>, HistoryError> {
    let root = baselines.join(super::HISTORY_FOLDER);
    let root = root.as_path();
    let mut sections = Vec::new();
    for library in regress_source::LIBRARIES.iter().copied() {
        let section = format!("history-{}", library.name);
        if !text.contains(&format!("<!-- regress readme: {section} -->")) {
            continue;
        }
        let records = HistoryDir::new(root, library).published()?;
        let body = match setup(&records) {
            Some(setup) => markdown(library.name, &records, &setup, baselines),
            None => format!("No published version of {library} is measured yet.\n"),
        };
        sections.push((section, body));
    }
    Ok(sections)
}

/// `handshake_rsa4096` of `s2n_tls::handshake_rsa4096`.
fn short_name(name: &HarnessName) -> &str {
    name.as_str()
        .split_once("::")
        .map_or(name.as_str(), |(_, path)| path)
}

/// The committed threshold of `harness`, else a first bless's.
fn threshold(baselines: &Path, harness: &HarnessName, count: u64) -> Threshold {
    match BaselineFile::load(baselines, harness) {
        Ok(Some(file)) => file.threshold,
        _ => Threshold::for_count(count),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::fixtures::{fingerprint, name};
    use crate::history::store::{Kind, Moved, PathCount, Step, HISTORY_SCHEMA};

    fn record(version: &str, count: u64, step: Option<Step>) -> Record {
        Record {
            schema: HISTORY_SCHEMA,
            library: "s2n-tls".to_owned(),
            kind: Kind::Published,
            revision: version.to_owned(),
            title: None,
            entries: vec![Entry {
                fingerprint: fingerprint("3.24.0"),
                paths: BTreeMap::from([(
                    name("s2n_tls::handshake_rsa4096"),
                    PathCount {
                        instructions: count,
                        bytes_per_run: None,
                        operations_per_run: 1,
                    },
                )]),
                step,
            }],
        }
    }

    #[test]
    fn steps_beyond_the_threshold_name_their_function() {
        let moved = Step {
            from: "0.3.45".to_owned(),
            moved: BTreeMap::from([(
                name("s2n_tls::handshake_rsa4096"),
                Moved {
                    function: "s2n_x|<b>".to_owned(),
                    file: "tls/s2n_x.c".to_owned(),
                    delta: 90_000,
                },
            )]),
        };
        let records = vec![
            record("0.3.44", 76_000_000, None),
            record("0.3.45", 76_000_010, None),
            record("0.3.46", 76_100_000, Some(moved)),
        ];
        let setup = setup(&records).expect("a setup");
        assert_eq!(setup, ("3.24.0".to_owned(), Method::Markers));
        let text = markdown("s2n-tls", &records, &setup, Path::new("/nonexistent"));
        assert!(
            text.contains("| handshake_rsa4096 | 76,000,000 | 76,000,010 | 76,100,000 |"),
            "{text}"
        );
        assert!(
            text.contains("| 0.3.44 to 0.3.45 | every path | within its threshold | |"),
            "{text}"
        );
        assert!(
            text.contains("| 0.3.45 to 0.3.46 | handshake_rsa4096 | +99,990 (+0.13%) | `s2n_x\\|<b>` (`tls/s2n_x.c`) +90,000 |"),
            "{text}"
        );
    }
}
