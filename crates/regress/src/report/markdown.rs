//! Text that did not come from the program, made safe for GitHub Markdown.
//!
//! A pull request decides much of what a diff report says: function and
//! file names of its code, the messages of its failures, and in CI the
//! whole `report.json` comes back as an artifact of its run. Markdown
//! written from such text must not turn it into markup: a link, an image,
//! HTML, a mention (`@user`), a table cell border or a second comment
//! marker. Inside a code span or a fenced code block GitHub renders text
//! literally and does not link mentions, URLs or issue numbers, so every
//! such string goes into one ([`code`], [`block`]), after the characters
//! that could still break out are dealt with: line breaks and control
//! characters (a code span is one line), Unicode bidirectional controls
//! (which can make the shown text differ from the real one), `|` (which
//! ends a table cell even in a code span) and the HTML comment opener (so
//! the raw text never holds the comment's marker). Cells of the program's
//! own tables go through [`cell`], which leaves the program's vocabulary as
//! it is and puts anything else in a code span.

/// Longer texts are cut (C++-style generic names run to hundreds of
/// characters).
pub const NAME_LIMIT: usize = 160;

/// The longest free text (an error message) shown in a block.
pub const BLOCK_LIMIT: usize = 4_000;

/// Whether `c` would change how the text around it is shown: control
/// characters, bidirectional overrides and isolates, zero-width and other
/// invisible format characters, line and paragraph separators.
fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
        )
}

/// `text` with invisible characters replaced, cut to `limit` characters,
/// and the HTML comment opener broken up.
fn sanitize(text: &str, limit: usize, keep_newlines: bool) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if keep_newlines && c == '\n' {
                c
            } else if is_invisible(c) {
                ' '
            } else {
                c
            }
        })
        .take(limit)
        .collect();
    if text.chars().count() > limit {
        out.push('…');
    }
    while out.contains("<!--") {
        out = out.replace("<!--", "<! --");
    }
    out
}

/// `text` as an inline code span that is safe inside a table cell.
pub fn code(text: &str) -> String {
    let text = sanitize(text, NAME_LIMIT, false).replace('|', "\\|");
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.trim().is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A fenced code block for free text (error messages, problems).
pub fn block(text: &str) -> String {
    let text = sanitize(text, BLOCK_LIMIT, true);
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}text\n{}\n{fence}\n", text.trim_end())
}

/// Whether `text` holds only what the program itself writes in its tables:
/// letters, digits, spaces and `. , ( ) / % + - : ± ×`, and underscores
/// inside words (where GitHub never reads them as emphasis).
fn is_plain(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    chars.iter().enumerate().all(|(index, &c)| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | '.' | ',' | '(' | ')' | '/' | '%' | '+' | '-' | ':' | '±' | '×'
            )
            || (c == '_'
                && index > 0
                && chars[index - 1].is_ascii_alphanumeric()
                && chars
                    .get(index + 1)
                    .is_some_and(char::is_ascii_alphanumeric))
    })
}

/// A table cell: the text as it is when it is plain (`is_plain`), else
/// a code span. The tables' own vocabulary (names, counts, ratios) reads
/// unchanged; anything else cannot become markup.
pub fn cell(text: &str) -> String {
    if is_plain(text) {
        text.to_owned()
    } else {
        code(text)
    }
}

/// What a reader sees as Markdown, not as code: `markdown` without its
/// fenced blocks and code spans (for tests of what untrusted text may do).
#[cfg(test)]
pub(crate) fn outside_code(markdown: &str) -> String {
    let mut outside = String::new();
    let mut fence: Option<String> = None;
    for line in markdown.lines() {
        if let Some(open) = &fence {
            if line == open {
                fence = None;
            }
            continue;
        }
        if line.starts_with("```") {
            fence = Some(line.chars().take_while(|c| *c == '`').collect());
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find('`') {
            outside.push_str(&rest[..start]);
            let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
            let after = &rest[start + ticks..];
            rest = after
                .find("`".repeat(ticks).as_str())
                .map_or("", |end| &after[end + ticks..]);
        }
        outside.push_str(rest);
        outside.push('\n');
    }
    outside
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings a pull request could plant in a report: each must come out
    /// inside a code span or block, unable to end it.
    const HOSTILE: &[&str] = &[
        "@octocat please merge",
        "[click](https://evil.example)",
        "![x](https://evil.example/i.png)",
        "<img src=x onerror=alert(1)>",
        "<!-- regress-diff -->",
        "a|b|c",
        "``` fenced ```",
        "`tick`",
        "line\nbreak\r\nagain",
        "bidi \u{202e}txet\u{202c} zero\u{200b}width",
        "https://evil.example/#1",
        "**bold** _em_ ~~strike~~",
        "",
        "   ",
    ];

    fn code_span_body(span: &str) -> &str {
        let fence = span.len() - span.trim_start_matches('`').len();
        &span[fence..span.len() - fence]
    }

    #[test]
    fn hostile_text_stays_inside_one_code_span() {
        for text in HOSTILE {
            let span = code(text);
            let body = code_span_body(&span);
            let fence = span.len() - span.trim_start_matches('`').len();
            assert!(
                !body.contains(&"`".repeat(fence)),
                "{text:?}: the fence occurs inside: {span}"
            );
            assert!(!span.contains('\n') && !span.contains('\r'), "{span:?}");
            assert!(!span.contains("<!--"), "{span}");
            assert!(!body.replace("\\|", "").contains('|'), "{span}");
            assert!(!span.chars().any(is_invisible), "{span:?}");
            assert_eq!(outside_code(&format!("a {span} b")), "a  b\n");
        }
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("uses `tick`"), "`` uses `tick` ``");
        assert_eq!(code("`start"), "`` `start ``");
        assert_eq!(code("line\nbreak"), "`line break`");
        assert_eq!(
            code("x".repeat(500).as_str()).chars().count(),
            NAME_LIMIT + 3
        );
    }

    #[test]
    fn hostile_text_stays_inside_one_block() {
        for text in HOSTILE {
            let fenced = block(text);
            let fence: String = fenced.chars().take_while(|c| *c == '`').collect();
            let body = &fenced[fence.len() + "text\n".len()..fenced.len() - fence.len() - 1];
            assert!(!body.contains(fence.as_str()), "{fenced}");
            assert!(!fenced.contains("<!--"), "{fenced}");
        }
        assert!(block("say ```hi```").starts_with("````text\n"));
        assert!(block(&"x".repeat(10_000)).len() < BLOCK_LIMIT + 100);
    }

    #[test]
    fn the_programs_own_cells_read_unchanged_and_others_are_code() {
        for own in [
            "x509_parse_chain",
            "95,710,268 (12.06/B)",
            "rustls / s2n-tls",
            "Valgrind 3.24.0 (markers)",
            "n/a",
            "-",
            "±3,000",
            "0.99",
        ] {
            assert_eq!(cell(own), own);
        }
        for hostile in HOSTILE.iter().filter(|t| !t.trim().is_empty()) {
            assert!(cell(hostile).starts_with('`'), "{hostile:?}");
        }
        assert_eq!(cell("_em_"), "`_em_`");
    }
}
