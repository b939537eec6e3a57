//! Which function of a source file each line belongs to, read from the
//! source itself.
//!
//! A profile names the symbol code was compiled into; code inlined from
//! another function (everything LTO inlined, every `static inline` helper)
//! is in that symbol, at the file and line it came from. Reading the
//! functions' extents from the source gives the line back to its own
//! function, and says which functions of a file ran none of their lines.
//!
//! The reader is a small lexer, not a parser: it skips comments, strings,
//! character literals (and Rust's lifetimes and raw strings) and C's
//! preprocessor lines, and matches braces.
//!
//! - C: a `{` at file level (or inside `extern "C" {`) whose declaration
//!   has a `(` and no `=` before it opens the function named by the
//!   identifier before that `(`.
//! - Rust: `fn NAME` opens a function at the first `{` outside its
//!   signature's brackets (a `;` first is a declaration without a body);
//!   functions nest, and a line belongs to the innermost.

use std::path::Path;

/// One function's extent in its file: lines `start..=end`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span {
    pub name: String,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn contains(&self, line: u32) -> bool {
        (self.start..=self.end).contains(&line)
    }
}

/// The source languages whose functions are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    C,
    Rust,
}

impl Language {
    /// The language of a file, by its extension.
    pub fn of(path: &str) -> Option<Language> {
        match Path::new(path).extension()?.to_str()? {
            "c" | "h" | "cc" | "cpp" | "inc" => Some(Language::C),
            "rs" => Some(Language::Rust),
            _ => None,
        }
    }
}

/// Whether a file of this name is compiled source (assembly included, whose
/// functions are not read).
pub fn is_compiled_source(path: &str) -> bool {
    Language::of(path).is_some()
        || matches!(
            Path::new(path).extension().and_then(|e| e.to_str()),
            Some("S" | "s" | "asm")
        )
}

/// The functions of `text`, in order of their first line.
pub fn functions(text: &str, language: Language) -> Vec<Span> {
    let tokens = lex(text, language);
    let mut spans = match language {
        Language::C => c_functions(&tokens),
        Language::Rust => rust_functions(&tokens),
    };
    spans.sort_by(|a, b| (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name)));
    spans
}

/// The innermost function of `spans` holding `line`.
pub fn enclosing(spans: &[Span], line: u32) -> Option<&Span> {
    spans
        .iter()
        .filter(|span| span.contains(line))
        .min_by_key(|span| span.end - span.start)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Punct(char),
    Literal,
}

fn lex(text: &str, language: Language) -> Vec<(Token, u32)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line: u32 = 1;
    let mut at_line_start = true;
    let mut i = 0;
    let n = chars.len();
    // Skips to just after the closing `quote`, honouring backslashes.
    let quoted = |mut i: usize, quote: char, line: &mut u32| -> usize {
        i += 1;
        while i < n && chars[i] != quote {
            if chars[i] == '\\' {
                i += 1;
            }
            if i < n && chars[i] == '\n' {
                *line += 1;
            }
            i += 1;
        }
        i + 1
    };
    while i < n {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            at_line_start = true;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let starts_line = std::mem::replace(&mut at_line_start, false);
        let next = chars.get(i + 1).copied();
        if c == '#' && starts_line && language == Language::C {
            // A preprocessor line, with its continuations.
            while i < n && chars[i] != '\n' {
                if chars[i] == '\\' && chars.get(i + 1) == Some(&'\n') {
                    line += 1;
                    i += 1;
                }
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('/') {
            while i < n && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut depth = 1;
            i += 2;
            while i < n && depth > 0 {
                match (chars[i], chars.get(i + 1).copied()) {
                    ('*', Some('/')) => {
                        depth -= 1;
                        i += 2;
                    }
                    ('/', Some('*')) if language == Language::Rust => {
                        depth += 1;
                        i += 2;
                    }
                    ('\n', _) => {
                        line += 1;
                        i += 1;
                    }
                    _ => i += 1,
                }
            }
            continue;
        }
        if c == '"' {
            i = quoted(i, '"', &mut line);
            tokens.push((Token::Literal, line));
            continue;
        }
        if c == '\'' {
            if language == Language::Rust {
                match (next, chars.get(i + 2).copied()) {
                    (Some('\\'), _) => {
                        i = quoted(i, '\'', &mut line);
                        tokens.push((Token::Literal, line));
                    }
                    (Some(_), Some('\'')) => {
                        i += 3;
                        tokens.push((Token::Literal, line));
                    }
                    // A lifetime or a label: its name follows as an ident.
                    _ => i += 1,
                }
            } else {
                i = quoted(i, '\'', &mut line);
                tokens.push((Token::Literal, line));
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < n && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // Rust's raw strings: r"..", r#".."#, br#".."#.
            if language == Language::Rust
                && (word == "r" || word == "br")
                && matches!(chars.get(i), Some('"' | '#'))
            {
                let mut hashes = 0;
                while chars.get(i) == Some(&'#') {
                    hashes += 1;
                    i += 1;
                }
                if chars.get(i) == Some(&'"') {
                    i += 1;
                    loop {
                        if i >= n {
                            break;
                        }
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                            i += 1 + hashes;
                            break;
                        }
                        i += 1;
                    }
                    tokens.push((Token::Literal, line));
                    continue;
                }
            }
            tokens.push((Token::Ident(word), line));
            continue;
        }
        tokens.push((Token::Punct(c), line));
        i += 1;
    }
    tokens
}

/// What an open brace opened.
enum Brace {
    /// `extern "C" {`: its contents are at file level.
    Transparent,
    Function {
        name: String,
        start: u32,
    },
    Block,
}

fn c_functions(tokens: &[(Token, u32)]) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut stack: Vec<Brace> = Vec::new();
    // The tokens since the last `;`, `{` or `}` at file level.
    let mut header: Vec<&(Token, u32)> = Vec::new();
    for token in tokens {
        let at_file_level = stack.iter().all(|b| matches!(b, Brace::Transparent));
        match &token.0 {
            Token::Punct('{') => {
                if !at_file_level {
                    stack.push(Brace::Block);
                    continue;
                }
                let brace = c_declaration(&header).unwrap_or(Brace::Block);
                header.clear();
                stack.push(brace);
            }
            Token::Punct('}') => {
                if let Some(Brace::Function { name, start }) = stack.pop() {
                    spans.push(Span {
                        name,
                        start,
                        end: token.1,
                    });
                }
                if stack.iter().all(|b| matches!(b, Brace::Transparent)) {
                    header.clear();
                }
            }
            Token::Punct(';') if at_file_level => header.clear(),
            _ if at_file_level => header.push(token),
            _ => {}
        }
    }
    spans
}

/// What a file-level `{` after `header` opens.
fn c_declaration(header: &[&(Token, u32)]) -> Option<Brace> {
    if matches!(
        header,
        [(Token::Ident(word), _), (Token::Literal, _)] if word == "extern"
    ) {
        return Some(Brace::Transparent);
    }
    let paren = header
        .iter()
        .position(|(token, _)| *token == Token::Punct('('))?;
    if header[..paren]
        .iter()
        .any(|(token, _)| *token == Token::Punct('='))
    {
        return None;
    }
    match header.get(paren.checked_sub(1)?) {
        Some((Token::Ident(name), _)) => Some(Brace::Function {
            name: name.clone(),
            start: header.first().map_or(0, |(_, line)| *line),
        }),
        _ => None,
    }
}

fn rust_functions(tokens: &[(Token, u32)]) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut stack: Vec<Brace> = Vec::new();
    // A `fn NAME` whose body has not opened yet, and the depth of brackets
    // in its signature.
    let mut pending: Option<(String, u32)> = None;
    let mut nesting: i32 = 0;
    let mut previous_fn = false;
    for (token, line) in tokens {
        match token {
            Token::Ident(word) if previous_fn => {
                pending = Some((word.clone(), *line));
                nesting = 0;
            }
            Token::Punct('(' | '[') if pending.is_some() => nesting += 1,
            Token::Punct(')' | ']') if pending.is_some() => nesting -= 1,
            Token::Punct(';') if pending.is_some() && nesting <= 0 => pending = None,
            Token::Punct('{') => match pending.take() {
                Some((name, start)) if nesting <= 0 => {
                    stack.push(Brace::Function { name, start });
                }
                other => {
                    pending = other;
                    stack.push(Brace::Block);
                }
            },
            Token::Punct('}') => {
                if let Some(Brace::Function { name, start }) = stack.pop() {
                    spans.push(Span {
                        name,
                        start,
                        end: *line,
                    });
                }
            }
            _ => {}
        }
        previous_fn = *token == Token::Ident("fn".to_owned());
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spans: &[Span]) -> Vec<(&str, u32, u32)> {
        spans
            .iter()
            .map(|s| (s.name.as_str(), s.start, s.end))
            .collect()
    }

    #[test]
    fn c_functions_are_found_past_comments_strings_and_the_preprocessor() {
        let text = r#"#include "x.h"
#define BLOCK { \
    1 }
#ifdef __cplusplus
extern "C" {
#endif
static const struct s2n_kem k = { .name = "{" };
/* s2n_fake(void) { */
S2N_RESULT s2n_psk_init(struct s2n_psk *psk,
        s2n_psk_type type)
{
    char c = '}';
    if (psk) { return "}"; }
    return S2N_RESULT_OK;
}

struct s { int a; };
static inline int s2n_inline(int x) { return x; }
int s2n_decl(void);
#ifdef __cplusplus
}
#endif
"#;
        let spans = functions(text, Language::C);
        assert_eq!(
            names(&spans),
            [("s2n_psk_init", 9, 15), ("s2n_inline", 18, 18)]
        );
        assert_eq!(
            enclosing(&spans, 12).map(|s| s.name.as_str()),
            Some("s2n_psk_init")
        );
        assert_eq!(enclosing(&spans, 17), None);
    }

    #[test]
    fn rust_functions_nest_and_skip_lifetimes_raw_strings_and_declarations() {
        let text = r##"impl<'a> Conn<'a> {
    pub fn new(buf: [u8; 4]) -> Self where Self: Sized {
        let s = r#"fn fake() {"#;
        let c = '{';
        fn inner() -> u8 { b'}' }
        Self { buf }
    }
}
trait T { fn declared(&self); }
/* /* nested */ fn hidden() {} */
fn last<'b>(x: &'b str) -> &'b str {
    x
}
"##;
        let spans = functions(text, Language::Rust);
        assert_eq!(
            names(&spans),
            [("new", 2, 7), ("inner", 5, 5), ("last", 11, 13)]
        );
        assert_eq!(enclosing(&spans, 5).map(|s| s.name.as_str()), Some("inner"));
        assert_eq!(enclosing(&spans, 6).map(|s| s.name.as_str()), Some("new"));
        assert_eq!(enclosing(&spans, 9), None);
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Language::of("tls/s2n_psk.c"), Some(Language::C));
        assert_eq!(Language::of("src/lib.rs"), Some(Language::Rust));
        assert_eq!(Language::of("README.md"), None);
        assert!(is_compiled_source("crypto/aes/aesni-x86_64.s"));
        assert!(!is_compiled_source("docs/USAGE-GUIDE.md"));
    }
}
