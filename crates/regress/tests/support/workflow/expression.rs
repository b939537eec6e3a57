//! GitHub's expressions: `${{ … }}` in text, and `if:` conditions.

use serde_json::{json, Value};

use super::steps::Status;

/// A value as text, as `${{ }}` puts it into a string.
pub(super) fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

pub(super) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// A dotted context path (`github.event.pull_request.number`).
pub(super) fn lookup<'a>(context: &'a Value, path: &str) -> Option<&'a Value> {
    let mut value = context;
    for part in path.split('.') {
        value = value.get(part)?;
    }
    Some(value)
}

/// Replaces every `${{ expression }}` in `text`.
pub(super) fn interpolate(text: &str, context: &Value, status: Status) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let end = after.find("}}").expect("an expression ends with }}");
        out.push_str(&scalar(&evaluate(&after[..end], context, status)));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Evaluates an expression (with or without `${{ }}` around it).
pub(super) fn evaluate(expression: &str, context: &Value, status: Status) -> Value {
    let trimmed = expression.trim();
    let inner = trimmed
        .strip_prefix("${{")
        .and_then(|e| e.strip_suffix("}}"))
        .unwrap_or(trimmed);
    let tokens = tokenize(inner);
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        context,
        status,
    };
    let value = parser.or();
    assert!(
        parser.at == tokens.len(),
        "unparsed rest of the expression {inner:?}"
    );
    value
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Path(String),
    Text(String),
    Number(f64),
    Op(&'static str),
}

fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                assert!(i < chars.len(), "unterminated string in {text:?}");
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                s.push(chars[i]);
                i += 1;
            }
            tokens.push(Token::Text(s));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let number: String = chars[start..i].iter().collect();
            tokens.push(Token::Number(number.parse().expect("a number")));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '-' | '.'))
            {
                i += 1;
            }
            tokens.push(Token::Path(chars[start..i].iter().collect()));
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let op = ["==", "!=", "&&", "||"]
                .into_iter()
                .find(|op| *op == two)
                .map(|op| (op, 2))
                .or_else(|| {
                    ["!", "(", ")", ","]
                        .into_iter()
                        .find(|op| op.starts_with(c))
                        .map(|op| (op, 1))
                })
                .unwrap_or_else(|| panic!("unknown character {c:?} in {text:?}"));
            tokens.push(Token::Op(op.0));
            i += op.1;
        }
    }
    tokens
}

struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    context: &'a Value,
    status: Status,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, op: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Op(found)) if *found == op);
        if found {
            self.at += 1;
        }
        found
    }

    fn or(&mut self) -> Value {
        let mut left = self.and();
        while self.eat("||") {
            let right = self.and();
            left = if truthy(&left) { left } else { right };
        }
        left
    }

    fn and(&mut self) -> Value {
        let mut left = self.equality();
        while self.eat("&&") {
            let right = self.equality();
            left = if truthy(&left) { right } else { left };
        }
        left
    }

    fn equality(&mut self) -> Value {
        let left = self.unary();
        if self.eat("==") {
            let right = self.unary();
            return Value::Bool(equal(&left, &right));
        }
        if self.eat("!=") {
            let right = self.unary();
            return Value::Bool(!equal(&left, &right));
        }
        left
    }

    fn unary(&mut self) -> Value {
        if self.eat("!") {
            return Value::Bool(!truthy(&self.unary()));
        }
        self.primary()
    }

    fn primary(&mut self) -> Value {
        let token = self.peek().cloned().expect("an expression ends early");
        self.at += 1;
        match token {
            Token::Op("(") => {
                let value = self.or();
                assert!(self.eat(")"), "a ( without its )");
                value
            }
            Token::Text(s) => Value::String(s),
            Token::Number(n) => json!(n),
            Token::Path(path) if self.eat("(") => {
                let mut args = Vec::new();
                while !self.eat(")") {
                    args.push(self.or());
                    self.eat(",");
                }
                self.call(&path, &args)
            }
            Token::Path(path) => match path.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ => self.read(&path),
            },
            Token::Op(op) => panic!("unexpected {op} in an expression"),
        }
    }

    fn call(&self, function: &str, args: &[Value]) -> Value {
        match function {
            "always" => Value::Bool(true),
            "success" => Value::Bool(!self.status.any_failed),
            "failure" => Value::Bool(self.status.any_failed),
            "cancelled" => Value::Bool(false),
            "contains" => {
                let (haystack, needle) = (scalar(&args[0]), scalar(&args[1]));
                Value::Bool(haystack.to_lowercase().contains(&needle.to_lowercase()))
            }
            other => panic!("the expression calls {other}(), which this test does not evaluate"),
        }
    }

    fn read(&self, path: &str) -> Value {
        if let Some(value) = lookup(self.context, path) {
            return value.clone();
        }
        let root = path.split('.').next().unwrap_or(path);
        match root {
            // GitHub gives '' for an unset variable or output.
            "vars" | "steps" | "env" => Value::Null,
            _ => panic!("the workflow reads {path}, which the test did not give"),
        }
    }
}

/// GitHub's `==`: strings compare without case, otherwise by value.
fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::String(a), Value::String(b)) => a.eq_ignore_ascii_case(b),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::String(s), Value::Number(n)) | (Value::Number(n), Value::String(s)) => {
            s.trim().parse::<f64>().ok() == n.as_f64()
        }
        (a, b) => a == b,
    }
}
