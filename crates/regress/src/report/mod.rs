//! Everything the runner shows a person: the one reporter of progress and
//! results ([`terminal`], fed with [`events`]), the tables it prints, and
//! the documents built from the data: the library comparison
//! ([`compare`]), the README's generated tables ([`readme`]) and the HTML
//! page ([`html`]).

pub mod compare;
pub mod events;
pub mod html;
pub mod readme;
pub mod terminal;

pub use events::Event;
pub use terminal::Reporter;

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

    /// A GitHub-flavoured Markdown table.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("| {} |\n", self.header.join(" | "));
        let rule: Vec<&str> = (0..self.header.len())
            .map(|column| if column == 0 { "---" } else { "---:" })
            .collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for row in &self.rows {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::count;

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
}
