//! A checker of the JSON Schema (draft 2020-12) keywords the published
//! schemas use, for `tests/schemas.rs`: the schemas of `docs/schemas/`
//! loaded by file name, `$ref` resolved across them, and the errors of a
//! value, each with its JSON pointer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The keywords the checker enforces, and the annotations it may skip.
pub const CHECKED: &[&str] = &[
    "$ref",
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "maxProperties",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
];
pub const ANNOTATIONS: &[&str] = &["$schema", "$id", "$defs", "title", "description"];

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every schema of `docs/schemas/`, by file name (its `$id`).
pub struct Schemas {
    pub files: BTreeMap<String, Value>,
}

impl Schemas {
    pub fn load() -> Schemas {
        let dir = root().join("docs/schemas");
        let mut files = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).expect("docs/schemas lists") {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("a UTF-8 name")
                .to_owned();
            if let Some(stem) = name.strip_suffix(".schema.json") {
                let schema = read_json(&path);
                assert_eq!(schema["$id"], json!(name), "{name}: `$id` is its file name");
                assert_eq!(
                    schema["$schema"],
                    json!("https://json-schema.org/draft/2020-12/schema"),
                    "{stem}"
                );
                files.insert(name, schema);
            }
        }
        Schemas { files }
    }

    /// The errors of `value` against the schema in file `name`, each with
    /// the JSON pointer of the offending value.
    pub fn errors(&self, name: &str, value: &Value) -> Vec<String> {
        let schema = self.files.get(name).unwrap_or_else(|| panic!("no {name}"));
        let mut errors = Vec::new();
        self.check(name, schema, value, "", &mut errors);
        errors
    }

    fn resolve(&self, file: &str, reference: &str) -> (String, &Value) {
        let (target, pointer) = reference.split_once('#').unwrap_or((reference, ""));
        let file = if target.is_empty() { file } else { target };
        let document = self
            .files
            .get(file)
            .unwrap_or_else(|| panic!("$ref {reference:?}: no schema {file}"));
        let schema = document
            .pointer(pointer)
            .unwrap_or_else(|| panic!("$ref {reference:?}: nothing at {pointer}"));
        (file.to_owned(), schema)
    }

    fn check(&self, file: &str, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let Some(schema) = schema.as_object() else {
            panic!("{file}: a schema that is not an object at {at}");
        };
        let mut fail = |message: String| errors.push(format!("{at}: {message}"));
        if let Some(Value::String(reference)) = schema.get("$ref") {
            let (file, target) = self.resolve(file, reference);
            let mut inner = Vec::new();
            self.check(&file, target, value, at, &mut inner);
            errors.extend(inner);
            return self.check_rest(file.as_str(), schema, value, at, errors);
        }
        if let Some(types) = schema.get("type") {
            let types: Vec<&str> = match types {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                _ => panic!("{file}: bad type at {at}"),
            };
            let is = |kind: &str| match kind {
                "object" => value.is_object(),
                "array" => value.is_array(),
                "string" => value.is_string(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                "null" => value.is_null(),
                other => panic!("{file}: unknown type {other}"),
            };
            if !types.iter().any(|kind| is(kind)) {
                fail(format!("{value} is not of type {types:?}"));
                return;
            }
        }
        if let Some(Value::Array(allowed)) = schema.get("enum") {
            if !allowed.contains(value) {
                fail(format!("{value} is not one of {allowed:?}"));
            }
        }
        if let Some(constant) = schema.get("const") {
            if constant != value {
                fail(format!("{value} is not {constant}"));
            }
        }
        self.check_rest(file, schema, value, at, errors);
    }

    /// The keywords besides `$ref`, `type`, `enum` and `const`.
    fn check_rest(
        &self,
        file: &str,
        schema: &serde_json::Map<String, Value>,
        value: &Value,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
        if let Some(number) = value.as_number() {
            // Integers compare exactly (a count near 2^63 is not an f64).
            let below = |limit: &Value| match (number.as_i64(), number.as_u64(), limit.as_i64()) {
                (Some(n), _, Some(l)) => n < l,
                (None, Some(_), Some(_)) => false,
                _ => number.as_f64().unwrap_or(f64::NAN) < limit.as_f64().unwrap_or(f64::NAN),
            };
            let above = |limit: &Value| match (number.as_u64(), limit.as_u64(), number.as_i64()) {
                (Some(n), Some(l), _) => n > l,
                (None, Some(_), Some(_)) => false,
                _ => number.as_f64().unwrap_or(f64::NAN) > limit.as_f64().unwrap_or(f64::NAN),
            };
            if let Some(minimum) = schema.get("minimum") {
                if below(minimum) {
                    errors.push(format!("{at}: {number} is below the minimum {minimum}"));
                }
            }
            if let Some(maximum) = schema.get("maximum") {
                if above(maximum) {
                    errors.push(format!("{at}: {number} is above the maximum {maximum}"));
                }
            }
        }
        if let Some(text) = value.as_str() {
            let length = text.chars().count() as u64;
            if bound("minLength").is_some_and(|min| length < min) {
                errors.push(format!("{at}: {text:?} is shorter than minLength"));
            }
            if bound("maxLength").is_some_and(|max| length > max) {
                errors.push(format!(
                    "{at}: a string of {length} characters is over maxLength"
                ));
            }
            if let Some(Value::String(pattern)) = schema.get("pattern") {
                let regex = regex::Regex::new(pattern)
                    .unwrap_or_else(|e| panic!("{file}: pattern {pattern:?}: {e}"));
                if !regex.is_match(text) {
                    errors.push(format!("{at}: {text:?} does not match {pattern}"));
                }
            }
        }
        if let Some(items) = value.as_array() {
            let length = items.len() as u64;
            if bound("minItems").is_some_and(|min| length < min) {
                errors.push(format!("{at}: {length} items, fewer than minItems"));
            }
            if bound("maxItems").is_some_and(|max| length > max) {
                errors.push(format!("{at}: {length} items, more than maxItems"));
            }
            if let Some(item) = schema.get("items") {
                for (index, element) in items.iter().enumerate() {
                    self.check(file, item, element, &format!("{at}/{index}"), errors);
                }
            }
        }
        if let Some(object) = value.as_object() {
            if let Some(Value::Array(required)) = schema.get("required") {
                for key in required.iter().filter_map(Value::as_str) {
                    if !object.contains_key(key) {
                        errors.push(format!("{at}: the required key `{key}` is missing"));
                    }
                }
            }
            if bound("maxProperties").is_some_and(|max| object.len() as u64 > max) {
                errors.push(format!("{at}: more than maxProperties keys"));
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            for (key, element) in object {
                let here = format!("{at}/{key}");
                if let Some(names) = schema.get("propertyNames") {
                    self.check(file, names, &Value::String(key.clone()), &here, errors);
                }
                match (
                    properties.and_then(|p| p.get(key)),
                    schema.get("additionalProperties"),
                ) {
                    (Some(property), _) => self.check(file, property, element, &here, errors),
                    (None, Some(Value::Bool(false))) => {
                        errors.push(format!("{at}: the key `{key}` is not allowed"))
                    }
                    (None, Some(additional @ Value::Object(_))) => {
                        self.check(file, additional, element, &here, errors)
                    }
                    (None, _) => {}
                }
            }
        }
    }
}

/// Every keyword of every (sub)schema of `schema`.
pub fn keywords(schema: &Value, out: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    for (key, value) in object {
        out.push(key.clone());
        match key.as_str() {
            "properties" | "$defs" => {
                for sub in value.as_object().expect("a map of schemas").values() {
                    keywords(sub, out);
                }
            }
            "items" | "additionalProperties" | "propertyNames" => keywords(value, out),
            _ => {}
        }
    }
}
