//! Flame graphs drawn by `inferno` from folded stacks.

use inferno::differential;
use inferno::flamegraph::{self, color::BasicPalette, Options, Palette};

use super::fold::{to_text, Folded};
use crate::format::{count, signed};

/// The picture's width in pixels; inferno scales it in the browser.
const WIDTH: usize = 1200;

fn options(title: &str, subtitle: String) -> Options<'static> {
    let mut options = Options::default();
    options.title = title.to_owned();
    options.subtitle = Some(subtitle);
    options.count_name = "instructions".to_owned();
    options.image_width = Some(WIDTH);
    options.colors = Palette::Basic(BasicPalette::Hot);
    // Colours from the names, so the same run draws the same picture.
    options.deterministic = true;
    options
}

/// A flame graph of `folded`.
pub fn plain(folded: &Folded, title: &str) -> std::io::Result<Vec<u8>> {
    let total: u64 = folded.values().sum();
    let mut options = options(
        title,
        format!("{} instructions; width is inclusive cost", count(total)),
    );
    let text = to_text(folded);
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options, text.lines(), &mut svg)?;
    Ok(svg)
}

/// A differential flame graph: `head`'s stacks, as wide as their cost in
/// head, each frame red where its own (self) cost grew against `base` and
/// blue where it shrank, the deeper the larger the change; a frame whose
/// own cost did not move stays pale. Stacks only `base` has are zero wide
/// (what went away is not drawn; the per-function diff lists it).
pub fn differential(base: &Folded, head: &Folded, title: &str) -> std::io::Result<Vec<u8>> {
    let (base_total, head_total): (u64, u64) = (base.values().sum(), head.values().sum());
    let delta = i128::from(head_total) - i128::from(base_total);
    let mut options = options(
        title,
        format!(
            "head {} instructions, base {} ({}); red grew, blue shrank; width is head's cost",
            count(head_total),
            count(base_total),
            signed(delta)
        ),
    );
    let mut pairs = Vec::new();
    differential::from_readers(
        differential::Options::default(),
        to_text(base).as_bytes(),
        to_text(head).as_bytes(),
        &mut pairs,
    )?;
    let pairs = String::from_utf8(pairs)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let mut lines: Vec<&str> = pairs.lines().collect();
    // inferno's merge of the two is hashed: sorted, the picture is stable.
    lines.sort_unstable();
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options, lines, &mut svg)?;
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(stacks: &[(&str, u64)]) -> Folded {
        stacks.iter().map(|(s, c)| (s.to_string(), *c)).collect()
    }

    /// The fill of the frame whose tooltip starts with `name`.
    fn fill<'a>(svg: &'a str, name: &str) -> &'a str {
        let title = svg
            .find(&format!("<title>{name} ("))
            .unwrap_or_else(|| panic!("no frame {name} in {svg}"));
        let rest = &svg[title..];
        let start = rest.find("fill=\"").expect("a fill") + "fill=\"".len();
        let end = rest[start..].find('"').expect("closed");
        &rest[start..start + end]
    }

    #[test]
    fn a_plain_graph_names_its_frames_escaped() {
        let svg = plain(
            &folded(&[("main;<T as x::Y>::f", 30), ("main", 10)]),
            "a::b: the counted run",
        )
        .expect("draw");
        let svg = String::from_utf8(svg).expect("utf-8");
        assert!(svg.contains("a::b: the counted run"), "{svg}");
        assert!(svg.contains("40 instructions"), "{svg}");
        assert!(svg.contains("&lt;T as x::Y&gt;::f"), "{svg}");
        assert!(!svg.contains("<T as"), "names are escaped");
    }

    /// Red where head grew, blue where it shrank, neutral where equal.
    #[test]
    fn a_differential_graph_is_red_where_head_grew_and_blue_where_it_shrank() {
        let base = folded(&[("main;grew", 100), ("main;shrank", 100), ("main;same", 100)]);
        let head = folded(&[("main;grew", 150), ("main;shrank", 50), ("main;same", 100)]);
        let svg = differential(&base, &head, "a::b").expect("draw");
        let svg = String::from_utf8(svg).expect("utf-8");
        let grew = fill(&svg, "grew");
        let shrank = fill(&svg, "shrank");
        assert!(grew.starts_with("rgb(255,"), "{grew}");
        assert!(shrank.ends_with(",255)"), "{shrank}");
        assert!(!shrank.starts_with("rgb(255,"), "{shrank}");
        assert_eq!(fill(&svg, "same"), "rgb(250,250,250)");
        assert!(
            svg.contains("head 300 instructions, base 300 (+0)"),
            "{svg}"
        );
    }
}
