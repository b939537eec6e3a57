//! Number formatting and tables for terminal and Markdown output.

/// `77097051` as `77,097,051`.
pub fn count(value: u64) -> String {
    group(&value.to_string())
}

/// `-1234` as `-1,234`, `1234` as `+1,234`.
pub fn signed(value: i64) -> String {
    let sign = if value < 0 { "-" } else { "+" };
    format!("{sign}{}", count(value.unsigned_abs()))
}

/// The relative change from `from` to `to`, as `+0.07%`.
pub fn signed_percent(from: u64, to: u64) -> String {
    if from == 0 {
        return "n/a".to_owned();
    }
    let percent = (to as f64 - from as f64) / from as f64 * 100.0;
    // A change too small for two decimals still deserves a nonzero figure:
    // "-0.00%" reads as "nothing changed".
    if percent != 0.0 && percent.abs() < 0.005 {
        format!("{percent:+.4}%")
    } else {
        format!("{percent:+.2}%")
    }
}

fn group(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
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

    #[test]
    fn groups_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(77_097_051), "77,097,051");
        assert_eq!(signed(-51_176), "-51,176");
        assert_eq!(signed(51_176), "+51,176");
        assert_eq!(signed_percent(77_000_000, 77_051_176), "+0.07%");
        assert_eq!(signed_percent(100, 50), "-50.00%");
        assert_eq!(signed_percent(95_773_780, 95_769_381), "-0.0046%");
        assert_eq!(signed_percent(5, 5), "+0.00%");
    }

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
