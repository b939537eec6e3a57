//! Minimal SVG charts: grouped bars and lines, drawn as plain markup so the
//! report needs no script, font or network.

use std::fmt::Write;

/// Colours for series, chosen to stay distinguishable in print.
const PALETTE: &[&str] = &[
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
];

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 130.0;

/// Escapes text for XML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A named series of values, one per category (None: no bar/point).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// Rounds `max` up to a "nice" axis maximum (1, 2 or 5 times a power of ten).
fn nice_max(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(max.log10().floor());
    for step in [1.0, 2.0, 5.0, 10.0] {
        if step * magnitude >= max {
            return step * magnitude;
        }
    }
    10.0 * magnitude
}

/// Formats an axis value compactly: 77 M, 1.5 K, 0.25.
pub fn compact(value: f64) -> String {
    let abs = value.abs();
    if abs >= 1e9 {
        format!("{:.3} G", value / 1e9).replace(".000", "")
    } else if abs >= 1e6 {
        format!("{:.1} M", value / 1e6).replace(".0 ", " ")
    } else if abs >= 1e3 {
        format!("{:.1} K", value / 1e3).replace(".0 ", " ")
    } else if abs >= 10.0 || abs == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

fn frame(out: &mut String, title: &str, y_label: &str, y_max: f64) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(out, r#"<title>{}</title>"#, escape(title));
    let _ = write!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let plot_height = HEIGHT - TOP - BOTTOM;
    for tick in 0..=5 {
        let value = y_max * tick as f64 / 5.0;
        let y = TOP + plot_height * (1.0 - tick as f64 / 5.0);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            compact(value)
        );
    }
    let _ = write!(
        out,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + plot_height / 2.0,
        escape(y_label)
    );
}

/// Legend keys flow left to right and wrap into rows below the plot.
fn legend(out: &mut String, series: &[Series]) {
    let mut x = LEFT;
    let mut y = HEIGHT - BOTTOM + 62.0;
    for (index, s) in series.iter().enumerate() {
        // About 7 px per character at 12 px sans-serif, plus the key.
        let width = 16.0 + 7.0 * s.name.chars().count() as f64 + 18.0;
        if x + width > WIDTH - RIGHT && x > LEFT {
            x = LEFT;
            y += 16.0;
        }
        let colour = PALETTE[index % PALETTE.len()];
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{y:.1}">{}</text>"#,
            y - 10.0,
            x + 16.0,
            escape(&s.name)
        );
        x += width;
    }
}

/// Grouped bars: one group per category, one bar per series.
pub fn bar_chart(title: &str, y_label: &str, categories: &[String], series: &[Series]) -> String {
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0f64, |a, b| a.max(*b));
    let y_max = nice_max(max);
    let mut out = String::new();
    frame(&mut out, title, y_label, y_max);
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let group = plot_width / categories.len().max(1) as f64;
    let bar = (group * 0.8) / series.len().max(1) as f64;
    for (c, category) in categories.iter().enumerate() {
        let group_x = LEFT + group * c as f64 + group * 0.1;
        for (index, s) in series.iter().enumerate() {
            let Some(value) = s.values.get(c).copied().flatten() else {
                continue;
            };
            let h = plot_height * value / y_max;
            let _ = write!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{} {}: {}</title></rect>"#,
                group_x + bar * index as f64,
                TOP + plot_height - h,
                bar.max(1.0),
                PALETTE[index % PALETTE.len()],
                escape(&s.name),
                escape(category),
                compact(value)
            );
        }
        let label_x = group_x + group * 0.4;
        let label_y = TOP + plot_height + 12.0;
        let _ = write!(
            out,
            r#"<text transform="translate({label_x:.1} {label_y:.1}) rotate(30)" font-size="10">{}</text>"#,
            escape(category)
        );
    }
    legend(&mut out, series);
    out.push_str("</svg>");
    out
}

/// Lines over categorical x positions (e.g. record sizes).
pub fn line_chart(title: &str, y_label: &str, x_labels: &[String], series: &[Series]) -> String {
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0f64, |a, b| a.max(*b));
    let y_max = nice_max(max);
    let mut out = String::new();
    frame(&mut out, title, y_label, y_max);
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let step = plot_width / x_labels.len().max(1) as f64;
    let x_of = |i: usize| LEFT + step * (i as f64 + 0.5);
    for (i, label) in x_labels.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x_of(i),
            TOP + plot_height + 16.0,
            escape(label)
        );
    }
    for (index, s) in series.iter().enumerate() {
        let colour = PALETTE[index % PALETTE.len()];
        let points: Vec<(f64, f64)> = s
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (x_of(i), TOP + plot_height * (1.0 - v / y_max))))
            .collect();
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for (x, y) in points {
            let _ = write!(
                out,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{colour}"/>"#
            );
        }
    }
    legend(&mut out, series);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axis_and_compact_numbers() {
        assert_eq!(nice_max(77_000_000.0), 100_000_000.0);
        assert_eq!(nice_max(11.2), 20.0);
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(compact(77_000_000.0), "77 M");
        assert_eq!(compact(1_500.0), "1.5 K");
        assert_eq!(compact(0.25), "0.25");
    }

    #[test]
    fn charts_are_well_formed_and_escaped() {
        let series = vec![
            Series {
                name: "s2n-tls".into(),
                values: vec![Some(10.0), None],
            },
            Series {
                name: "a<b".into(),
                values: vec![Some(5.0), Some(7.0)],
            },
        ];
        let bars = bar_chart("t", "instructions", &["x".into(), "y".into()], &series);
        assert!(bars.starts_with("<svg") && bars.ends_with("</svg>"));
        assert_eq!(
            bars.matches("<rect x=").count(),
            3 + 2,
            "three bars and two legend keys"
        );
        assert!(bars.contains("a&lt;b") && !bars.contains("a<b"));
        let lines = line_chart("t", "per byte", &["1k".into(), "16k".into()], &series);
        assert_eq!(lines.matches("<polyline").count(), 2);
        assert_eq!(lines.matches("<circle").count(), 3);
    }
}
