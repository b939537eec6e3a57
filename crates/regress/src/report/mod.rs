//! Everything the runner shows a person: the one reporter of progress and
//! results ([`terminal`], fed with [`events`]), the tables it prints, and
//! the documents built from the data: the library comparison
//! ([`compare`]) and its side, stage and heap tables ([`sides`]), the
//! README's generated tables ([`readme`]) and the HTML page ([`html`]).

pub mod compare;
pub mod cpu_matrix;
pub mod events;
pub mod html;
pub mod libraries;
pub mod markdown;
pub mod readme;
pub mod real_world;
pub mod sides;
pub mod terminal;

pub use events::Event;
pub use terminal::Reporter;

use crate::format::count;
use crate::measure::scale::Scaling;

/// A scaling run as a table: threads, total time and operations,
/// operations per second overall and per thread.
pub fn scaling_table(scaling: &Scaling) -> Table {
    let mut table = Table::new(&[
        "threads",
        "total time (s)",
        "total ops",
        "ops/s",
        "ops/s per thread",
    ]);
    for point in &scaling.points {
        table.row(vec![
            point.threads.to_string(),
            format!("{:.2}", point.wall_seconds),
            count(point.total_operations()),
            format!("{:.1}", point.operations_per_second()),
            format!("{:.1}", point.operations_per_second_per_thread()),
        ]);
    }
    table
}

/// A plain text table with right-aligned numeric columns, as a terminal
/// reader expects.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn header(&self) -> &[String] {
        &self.header
    }

    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.header.len())
            .map(|column| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|row| row.get(column).map_or(0, |cell| cell.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Fixed-width text; the first column left-aligned, the rest right.
    pub fn to_text(&self) -> String {
        let widths = self.widths();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(column, (cell, width))| {
                    if column == 0 {
                        format!("{cell:<width$}")
                    } else {
                        format!("{cell:>width$}")
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured Markdown table. A cell that is not plain text of
    /// the program's own vocabulary is shown as code ([`markdown::cell`]):
    /// names and versions come from records and baselines.
    pub fn to_markdown(&self) -> String {
        let cells = |row: &[String]| -> String {
            row.iter()
                .map(|cell| markdown::cell(cell))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        let mut out = format!("| {} |\n", cells(&self.header));
        let rule: Vec<&str> = (0..self.header.len())
            .map(|column| if column == 0 { "---" } else { "---:" })
            .collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for row in &self.rows {
            out.push_str(&format!("| {} |\n", cells(row)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::scale::SCALE_SCHEMA;
    use regress_measure::scale::{ScaleReport, ThreadResult};

    #[test]
    fn tables_align() {
        let mut table = Table::new(&["harness", "instructions"]);
        table.row(vec!["a::b".into(), count(1_000_000)]);
        table.row(vec!["long::name".into(), count(5)]);
        assert_eq!(
            table.to_text(),
            "harness     instructions\na::b           1,000,000\nlong::name             5\n"
        );
        assert!(table
            .to_markdown()
            .starts_with("| harness | instructions |\n| --- | ---: |\n"));
    }

    #[test]
    fn scaling_table_has_the_documented_columns() {
        let scaling = Scaling {
            schema: SCALE_SCHEMA,
            harness: crate::fixtures::name("a::b"),
            seconds_per_point: 1.0,
            points: vec![ScaleReport {
                harness: "a::b".into(),
                threads: 2,
                wall_seconds: 1.01,
                per_thread: vec![
                    ThreadResult {
                        operations: 100,
                        busy_seconds: 0.5,
                    },
                    ThreadResult {
                        operations: 50,
                        busy_seconds: 0.5,
                    },
                ],
            }],
        };
        let markdown = scaling_table(&scaling).to_markdown();
        assert!(
            markdown
                .starts_with("| threads | total time (s) | total ops | ops/s | ops/s per thread |"),
            "{markdown}"
        );
        assert!(
            markdown.contains("| 2 | 1.01 | 150 | 300.0 | 150.0 |"),
            "{markdown}"
        );
    }
}
