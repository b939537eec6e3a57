//! The history page of `regress report` (`perf_outputs/report/history.html`):
//! per library, one line per path across its versions, in instructions
//! (log axis: a 2.5 M resumption and a 151 M mTLS handshake on one chart)
//! and in percent of the first version shown (where a step stands out),
//! then the table of [`super::table`].
//!
//! Drawn with the report's own SVG charts ([`crate::report::html::svg`]),
//! every line in the library's colour (the report's rule), paths told
//! apart by marker and dash. Plain markup, no script, no external resource.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::store::{HistoryDir, Record};
use super::table::{markdown, setup};
use super::HistoryError;
use crate::harness_name::HarnessName;
use crate::report::html::svg::{escape, line_chart, Axis, Marker, Series, Style};
use crate::report::libraries;

const DASHES: [Option<&str>; 4] = [None, Some("6 3"), Some("2 3"), Some("8 3 2 3")];

/// Writes the page and its charts into `dir` when any library has a
/// history under `root`; returns the page, or `None` when there is none.
pub fn write(root: &Path, baselines: &Path, dir: &Path) -> Result<Option<PathBuf>, HistoryError> {
    let mut body = String::new();
    let mut files = Vec::new();
    for library in regress_source::LIBRARIES.iter().copied() {
        let records = HistoryDir::new(root, library).published()?;
        let Some(setup) = setup(&records) else {
            continue;
        };
        let shown: Vec<&Record> = records
            .iter()
            .filter(|r| r.entry(&setup).is_some())
            .collect();
        let versions: Vec<String> = shown.iter().map(|r| r.label()).collect();
        let paths: std::collections::BTreeSet<HarnessName> = shown
            .iter()
            .flat_map(|r| {
                r.entry(&setup)
                    .into_iter()
                    .flat_map(|e| e.paths.keys().cloned())
            })
            .collect();
        let colour = libraries::colour(&library.name.replace('-', "_"));
        let series = |relative: bool| -> Vec<Series> {
            paths
                .iter()
                .enumerate()
                .map(|(index, path)| {
                    let counts: Vec<Option<f64>> = shown
                        .iter()
                        .map(|r| {
                            r.entry(&setup)
                                .and_then(|e| e.paths.get(path))
                                .map(|p| p.instructions as f64)
                        })
                        .collect();
                    let first = counts.iter().flatten().next().copied().unwrap_or(1.0);
                    Series {
                        name: path
                            .as_str()
                            .split_once("::")
                            .map_or(path.as_str(), |p| p.1)
                            .to_owned(),
                        values: counts
                            .into_iter()
                            .map(|v| {
                                v.map(|v| {
                                    if relative {
                                        (v / first - 1.0) * 100.0
                                    } else {
                                        v
                                    }
                                })
                            })
                            .collect(),
                        style: Style {
                            colour,
                            marker: Marker::ALL[index % Marker::ALL.len()],
                            dash: DASHES[(index / Marker::ALL.len()) % DASHES.len()],
                        },
                    }
                })
                .collect()
        };
        let charts = [
            (
                format!("history-{}.svg", library.name),
                format!("{library}: instructions per path"),
                line_chart(
                    &format!("{library}: instructions per path by version"),
                    "instructions",
                    Axis::Log,
                    &versions,
                    &series(false),
                ),
            ),
            (
                format!("history-{}-change.svg", library.name),
                format!("{library}: change from {}", versions[0]),
                line_chart(
                    &format!("{library}: % change from {}", versions[0]),
                    "% change",
                    Axis::Linear,
                    &versions,
                    &series(true),
                ),
            ),
        ];
        let _ = writeln!(body, "<h2>{}</h2>", escape(library.name));
        for (file, title, svg) in charts {
            let _ = writeln!(body, "<h3>{}</h3>\n<figure>{svg}</figure>", escape(&title));
            files.push((file, svg));
        }
        let table = markdown(library.name, &records, &setup, baselines);
        let _ = writeln!(body, "<pre>{}</pre>", escape(&table));
    }
    if files.is_empty() {
        return Ok(None);
    }
    std::fs::create_dir_all(dir).map_err(|source| {
        crate::MeasureError::io("create the folder", dir.to_path_buf(), source)
    })?;
    for (file, svg) in files {
        crate::atomic_file::write(&dir.join(file), svg.as_bytes())?;
    }
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>TLS instruction \
         counts across versions</title><style>body{{font-family:sans-serif;max-width:920px;\
         margin:2em auto;color:#222}}pre{{font-size:12px;overflow-x:auto}}</style></head><body>\n\
         <h1>Instruction counts across published versions</h1>\n<p>From <code>baselines/history/</code>: \
         one warm run of each path per version, counted by Valgrind (the method each entry names).</p>\n\
         {body}</body></html>\n"
    );
    let path = dir.join("history.html");
    crate::atomic_file::write(&path, page.as_bytes())?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_history_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("report");
        assert!(write(dir.path(), dir.path(), &out).expect("ok").is_none());
        assert!(!out.exists());
    }
}
