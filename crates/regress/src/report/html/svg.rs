//! Minimal SVG charts: grouped bars and lines, drawn as plain markup so the
//! report needs no script, font or network.
//!
//! A series carries its own look ([`Style`]): the caller gives every library
//! one colour on every chart, and tells series of one library apart by
//! marker and dash, so a reader never has to match two blues. The y axis is
//! linear or logarithmic ([`Axis`]); the logarithmic one keeps a 7.7 K path
//! readable beside a 150 M one.

use std::fmt::Write;

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 150.0;

/// Escapes text for XML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The shape drawn at each point of a line (and in its legend key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
}

impl Marker {
    pub const ALL: [Marker; 4] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
    ];

    fn draw(self, out: &mut String, x: f64, y: f64, colour: &str) {
        let _ = match self {
            Marker::Circle => write!(
                out,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{colour}"/>"#
            ),
            Marker::Square => write!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="{colour}"/>"#,
                x - 4.0,
                y - 4.0
            ),
            Marker::Triangle => write!(
                out,
                r#"<polygon points="{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{colour}"/>"#,
                y - 5.0,
                x - 5.0,
                y + 4.0,
                x + 5.0,
                y + 4.0
            ),
            Marker::Diamond => write!(
                out,
                r#"<polygon points="{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}" fill="white" stroke="{colour}" stroke-width="2"/>"#,
                y - 5.0,
                x + 5.0,
                y + 5.0,
                x - 5.0
            ),
        };
    }
}

/// How a series looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub colour: &'static str,
    pub marker: Marker,
    /// `stroke-dasharray` of a line; `None` for a solid one.
    pub dash: Option<&'static str>,
}

impl Style {
    /// ` stroke-dasharray="…"` for a dashed line, nothing for a solid one.
    fn dash_attribute(&self) -> String {
        self.dash
            .map_or_else(String::new, |d| format!(r#" stroke-dasharray="{d}""#))
    }
}

/// A named series of values, one per category (None: no bar/point).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
    pub style: Style,
}

/// How values map to heights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Axis {
    /// From 0 to a round maximum.
    Linear,
    /// Powers of ten around the values; for counts that span magnitudes.
    Log,
}

/// The y scale of one chart.
struct Scale {
    axis: Axis,
    low: f64,
    high: f64,
}

impl Scale {
    fn new(axis: Axis, series: &[Series]) -> Scale {
        let values = || {
            series
                .iter()
                .flat_map(|s| s.values.iter().flatten().copied())
        };
        let max = values().fold(0.0f64, f64::max);
        match axis {
            Axis::Linear => Scale {
                axis,
                low: 0.0,
                high: nice_max(max),
            },
            Axis::Log => {
                let min = values().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
                let low = if min.is_finite() {
                    min.log10().floor()
                } else {
                    0.0
                };
                let high = if max > 0.0 { max.log10().ceil() } else { 1.0 };
                Scale {
                    axis,
                    low,
                    high: high.max(low + 1.0),
                }
            }
        }
    }

    /// The fraction of the plot's height at which `value` sits (0: bottom).
    fn fraction(&self, value: f64) -> f64 {
        let fraction = match self.axis {
            Axis::Linear => value / self.high,
            Axis::Log if value > 0.0 => (value.log10() - self.low) / (self.high - self.low),
            Axis::Log => 0.0,
        };
        fraction.clamp(0.0, 1.0)
    }

    fn ticks(&self) -> Vec<f64> {
        match self.axis {
            Axis::Linear => (0..=5).map(|t| self.high * t as f64 / 5.0).collect(),
            Axis::Log => (self.low as i32..=self.high as i32)
                .map(|power| 10f64.powi(power))
                .collect(),
        }
    }
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

const PLOT_HEIGHT: f64 = HEIGHT - TOP - BOTTOM;
const PLOT_WIDTH: f64 = WIDTH - LEFT - RIGHT;

fn y_of(scale: &Scale, value: f64) -> f64 {
    TOP + PLOT_HEIGHT * (1.0 - scale.fraction(value))
}

/// The body of a chart's opening: title, background, grid lines with their
/// values, and the y label; and the scale the values map with. The SVG
/// element itself is written last ([`finish`]), once the legend's place,
/// and with it the chart's height, is known.
fn frame(title: &str, y_label: &str, axis: Axis, series: &[Series]) -> (String, Scale) {
    let scale = Scale::new(axis, series);
    let mut out = String::new();
    let _ = write!(out, r#"<title>{}</title>"#, escape(title));
    let _ = write!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for value in scale.ticks() {
        let y = y_of(&scale, value);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            compact(value)
        );
    }
    let label = match scale.axis {
        Axis::Linear => y_label.to_owned(),
        Axis::Log => format!("{y_label} (log scale)"),
    };
    let _ = write!(
        out,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + PLOT_HEIGHT / 2.0,
        escape(&label)
    );
    (out, scale)
}

/// The SVG element around a chart's `body`, tall enough for everything down
/// to `bottom` (the legend's last row).
fn finish(body: &str, bottom: f64) -> String {
    let height = (bottom + 14.0).max(HEIGHT).ceil();
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12">{body}</svg>"#
    )
}

/// The angle of a bar chart's category labels, in degrees.
const LABEL_ANGLE: f64 = 35.0;
/// About how wide one character of a 10 px label is.
const LABEL_CHAR_WIDTH: f64 = 5.6;

/// How far below the plot the rotated category labels reach: the longest
/// label's length along the slant, projected on the vertical, plus its
/// offset and its own height.
fn label_depth(categories: &[String]) -> f64 {
    let longest = categories
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    12.0 + longest * LABEL_CHAR_WIDTH * LABEL_ANGLE.to_radians().sin() + 10.0
}

/// Legend keys flow left to right from `top` and wrap into rows below the
/// plot; a key shows the series' colour, and for lines its dash and marker.
/// Returns the baseline of the last row.
fn legend(out: &mut String, series: &[Series], lines: bool, top: f64) -> f64 {
    let mut x = LEFT;
    let mut y = top + 12.0;
    for s in series {
        // About 7 px per character at 12 px sans-serif, plus the key.
        let width = 30.0 + 7.0 * s.name.chars().count() as f64 + 18.0;
        if x + width > WIDTH - RIGHT && x > LEFT {
            x = LEFT;
            y += 18.0;
        }
        let colour = s.style.colour;
        if lines {
            let dash = s.style.dash_attribute();
            let _ = write!(
                out,
                r#"<line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2"{dash}/>"#,
                x + 24.0,
                y - 4.0,
                y - 4.0
            );
            s.style.marker.draw(out, x + 12.0, y - 4.0, colour);
        } else {
            let _ = write!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="14" height="12" fill="{colour}"/>"#,
                x + 5.0,
                y - 10.0
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{y:.1}">{}</text>"#,
            x + 30.0,
            escape(&s.name)
        );
        x += width;
    }
    y
}

/// Grouped bars: one group per category, one bar per series.
pub fn bar_chart(
    title: &str,
    y_label: &str,
    axis: Axis,
    categories: &[String],
    series: &[Series],
) -> String {
    let (mut out, scale) = frame(title, y_label, axis, series);
    let group = PLOT_WIDTH / categories.len().max(1) as f64;
    let bar = (group * 0.8) / series.len().max(1) as f64;
    let bottom = TOP + PLOT_HEIGHT;
    for (c, category) in categories.iter().enumerate() {
        let group_x = LEFT + group * c as f64 + group * 0.1;
        for (index, s) in series.iter().enumerate() {
            let Some(value) = s.values.get(c).copied().flatten() else {
                continue;
            };
            let top = y_of(&scale, value);
            let _ = write!(
                out,
                r#"<rect x="{:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {}: {}</title></rect>"#,
                group_x + bar * index as f64,
                bar.max(1.0),
                (bottom - top).max(0.5),
                s.style.colour,
                escape(&s.name),
                escape(category),
                compact(value)
            );
        }
        let label_x = group_x + group * 0.4;
        let label_y = bottom + 12.0;
        let _ = write!(
            out,
            r#"<text transform="translate({label_x:.1} {label_y:.1}) rotate(-{LABEL_ANGLE})" text-anchor="end" font-size="10">{}</text>"#,
            escape(category)
        );
    }
    // Below the longest rotated label, never over it.
    let top = (bottom + label_depth(categories)).max(HEIGHT - BOTTOM + 72.0);
    let last = legend(&mut out, series, false, top);
    finish(&out, last)
}

/// Lines over categorical x positions (e.g. record sizes), each point
/// marked with its series' marker.
pub fn line_chart(
    title: &str,
    y_label: &str,
    axis: Axis,
    x_labels: &[String],
    series: &[Series],
) -> String {
    let (mut out, scale) = frame(title, y_label, axis, series);
    let step = PLOT_WIDTH / x_labels.len().max(1) as f64;
    let x_of = |i: usize| LEFT + step * (i as f64 + 0.5);
    for (i, label) in x_labels.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x_of(i),
            TOP + PLOT_HEIGHT + 16.0,
            escape(label)
        );
    }
    for s in series {
        let colour = s.style.colour;
        let points: Vec<(f64, f64)> = s
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (x_of(i), y_of(&scale, v))))
            .collect();
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let dash = s.style.dash_attribute();
        let _ = write!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash}><title>{}</title></polyline>"#,
            path.join(" "),
            escape(&s.name)
        );
        for (x, y) in points {
            s.style.marker.draw(&mut out, x, y, colour);
        }
    }
    let last = legend(&mut out, series, true, TOP + PLOT_HEIGHT + 40.0);
    finish(&out, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STYLE: Style = Style {
        colour: "#1f77b4",
        marker: Marker::Circle,
        dash: None,
    };

    #[test]
    fn nice_axis_and_compact_numbers() {
        assert_eq!(nice_max(77_000_000.0), 100_000_000.0);
        assert_eq!(nice_max(11.2), 20.0);
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(compact(77_000_000.0), "77 M");
        assert_eq!(compact(1_500.0), "1.5 K");
        assert_eq!(compact(0.25), "0.25");
    }

    /// On a log axis a 7.7 K path stands well clear of the bottom beside a
    /// 150 M one; on a linear axis it would be under a pixel.
    #[test]
    fn a_log_axis_keeps_small_values_visible() {
        let series = vec![Series {
            name: "rustls".into(),
            values: vec![Some(7_715.0), Some(150_497_534.0)],
            style: STYLE,
        }];
        let log = Scale::new(Axis::Log, &series);
        assert_eq!((log.low, log.high), (3.0, 9.0));
        assert!(log.fraction(7_715.0) > 0.1, "{}", log.fraction(7_715.0));
        assert_eq!(log.ticks().len(), 7);
        let linear = Scale::new(Axis::Linear, &series);
        assert!(linear.fraction(7_715.0) * PLOT_HEIGHT < 1.0);
    }

    /// The numbers of the attribute `name="..."` of every element `tag`
    /// in `svg`.
    fn attribute(svg: &str, tag: &str, name: &str) -> Vec<f64> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .filter_map(|element| {
                let start = element.find(&format!(" {name}=\""))? + name.len() + 3;
                let rest = &element[start..];
                rest[..rest.find('"')?].parse().ok()
            })
            .collect()
    }

    /// The legend sits below the longest rotated category label (it
    /// overlapped the path names under the report's first chart), and the
    /// chart grows to hold it.
    #[test]
    fn the_legend_clears_the_longest_label() {
        let series = vec![Series {
            name: "s2n-tls".into(),
            values: vec![Some(10.0), Some(20.0)],
            style: STYLE,
        }];
        let short = bar_chart("t", "i", Axis::Log, &["a".into(), "b".into()], &series);
        let long_label = "s2n_tls::hostile_hello_1_byte_records_and_more".to_owned();
        let long = bar_chart(
            "t",
            "i",
            Axis::Log,
            &["a".into(), long_label.clone()],
            &series,
        );
        let bottom = TOP + PLOT_HEIGHT;
        let label_reach = bottom
            + 12.0
            + long_label.chars().count() as f64 * LABEL_CHAR_WIDTH * LABEL_ANGLE.to_radians().sin();
        // The legend key's rectangle is the last `<rect x=`.
        let key_top = *attribute(&long, "rect", "y").last().expect("a legend key");
        assert!(key_top > label_reach, "{key_top} <= {label_reach}");
        let height = attribute(&long, "svg", "height")[0];
        assert!(height > key_top + 12.0, "{height}");
        assert!(height > attribute(&short, "svg", "height")[0]);
        assert_eq!(attribute(&short, "svg", "height")[0], HEIGHT);
    }

    #[test]
    fn charts_are_well_formed_and_escaped() {
        let series = vec![
            Series {
                name: "s2n-tls".into(),
                values: vec![Some(10.0), None],
                style: STYLE,
            },
            Series {
                name: "a<b".into(),
                values: vec![Some(5.0), Some(7.0)],
                style: Style {
                    colour: "#ff7f0e",
                    marker: Marker::Triangle,
                    dash: Some("6 3"),
                },
            },
        ];
        let bars = bar_chart(
            "t",
            "instructions",
            Axis::Log,
            &["x".into(), "y".into()],
            &series,
        );
        assert!(bars.starts_with("<svg") && bars.ends_with("</svg>"));
        assert_eq!(
            bars.matches("<rect x=").count(),
            3 + 2,
            "three bars and two legend keys"
        );
        assert!(bars.contains("a&lt;b") && !bars.contains("a<b"));
        let lines = line_chart(
            "t",
            "per byte",
            Axis::Linear,
            &["1k".into(), "16k".into()],
            &series,
        );
        assert_eq!(lines.matches("<polyline").count(), 2);
        // One marker per point, plus one per legend key.
        assert_eq!(lines.matches("<circle").count(), 1 + 1);
        assert_eq!(lines.matches("<polygon").count(), 2 + 1);
        assert_eq!(lines.matches("stroke-dasharray=\"6 3\"").count(), 2);
    }
}
