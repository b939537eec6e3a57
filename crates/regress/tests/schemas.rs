//! The published JSON Schemas (`docs/schemas/`) describe the files the
//! runner writes and reads: every committed baseline and history file, and
//! a record and a diff report as the runner serialises them, must match.
//!
//! The schemas are draft 2020-12. Rather than a schema crate (whose default
//! features fetch remote references), a small checker of the keywords the
//! schemas use is below; `the_schemas_use_only_checked_keywords` fails when
//! a schema gains a keyword it would otherwise ignore.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The keywords the checker enforces, and the annotations it may skip.
const CHECKED: &[&str] = &[
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
const ANNOTATIONS: &[&str] = &["$schema", "$id", "$defs", "title", "description"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every schema of `docs/schemas/`, by file name (its `$id`).
struct Schemas {
    files: BTreeMap<String, Value>,
}

impl Schemas {
    fn load() -> Schemas {
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
    fn errors(&self, name: &str, value: &Value) -> Vec<String> {
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
fn keywords(schema: &Value, out: &mut Vec<String>) {
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

#[test]
fn the_schemas_use_only_checked_keywords() {
    let schemas = Schemas::load();
    assert!(schemas.files.len() >= 5, "{:?}", schemas.files.keys());
    for (name, schema) in &schemas.files {
        let mut found = Vec::new();
        keywords(schema, &mut found);
        for keyword in found {
            assert!(
                CHECKED.contains(&keyword.as_str()) || ANNOTATIONS.contains(&keyword.as_str()),
                "{name} uses `{keyword}`, which this test does not check: teach it the keyword"
            );
        }
    }
}

/// The files of `dir` ending in `.json`, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_committed_baseline_matches_its_schema() {
    let schemas = Schemas::load();
    let files = json_files(&root().join("baselines"));
    assert!(files.len() >= 69, "{} baseline files", files.len());
    for path in files {
        let errors = schemas.errors("baseline.schema.json", &read_json(&path));
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
}

/// The history schema names the libraries `regress_source::LIBRARIES`
/// has, no more and no fewer: a library added there can keep a history.
#[test]
fn the_history_schema_lists_every_library() {
    let schema = read_json(&root().join("docs/schemas/history.schema.json"));
    let listed: Vec<&str> = schema["properties"]["library"]["enum"]
        .as_array()
        .expect("an enum of libraries")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let known: Vec<&str> = regress_source::LIBRARIES
        .iter()
        .map(|library| library.name)
        .collect();
    assert_eq!(listed, known);
}

/// The schema's figure names are the runner's metrics, in its order, no
/// more and no fewer: a metric added to the runner is one the published
/// schema accepts.
#[test]
fn the_metrics_schema_lists_every_metric() {
    let schema = read_json(&root().join("docs/schemas/common.schema.json"));
    let listed: Vec<&str> = schema["$defs"]["metrics"]["propertyNames"]["enum"]
        .as_array()
        .expect("an enum of metric names")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let known: Vec<&str> = regress::measure::metrics::Metric::ALL
        .iter()
        .map(|metric| metric.key())
        .collect();
    assert_eq!(listed, known);
}

#[test]
fn every_committed_history_file_matches_its_schema() {
    let schemas = Schemas::load();
    let mut checked = 0;
    let history = root().join("baselines/history");
    for library in std::fs::read_dir(&history).expect("baselines/history lists") {
        let library = library.expect("entry").path();
        let mut files = json_files(&library);
        if library.join("rev").is_dir() {
            files.extend(json_files(&library.join("rev")));
        }
        for path in files {
            let errors = schemas.errors("history.schema.json", &read_json(&path));
            assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 2, "{checked} history files");
}

/// Each schema's `schema` is the version the runner writes.
#[test]
fn the_schema_versions_are_the_runners() {
    let schemas = Schemas::load();
    for (name, version) in [
        (
            "baseline.schema.json",
            regress::judge::baseline::BASELINE_SCHEMA,
        ),
        (
            "measurement.schema.json",
            regress::measure::measurement::MEASUREMENT_SCHEMA,
        ),
        (
            "history.schema.json",
            regress::history::store::HISTORY_SCHEMA,
        ),
        (
            "diff-report.schema.json",
            regress::diff::report::DIFF_SCHEMA,
        ),
        ("lines.schema.json", regress::coverage::lines::LINES_SCHEMA),
    ] {
        assert_eq!(
            schemas.files[name]["properties"]["schema"]["const"],
            json!(version),
            "{name}"
        );
    }
}

/// The schema's bounds on a fingerprint are the runner's: a fingerprint
/// the runner accepts (OpenSSL's `libssl-build` is a compiler command line
/// of about 230 characters) must not fail its schema, and the schema must
/// not promise more than the runner reads.
#[test]
fn the_fingerprint_bounds_are_the_runners() {
    use regress::measure::fingerprint::{MAX_FIELD_CHARS, MAX_LIBRARY_CHARS};
    let schemas = Schemas::load();
    let defs = &schemas.files["common.schema.json"]["$defs"];
    assert_eq!(defs["text"]["maxLength"], json!(MAX_FIELD_CHARS));
    assert_eq!(
        defs["library_version"]["maxLength"],
        json!(MAX_LIBRARY_CHARS)
    );
    assert_eq!(
        defs["fingerprint"]["properties"]["libraries"]["additionalProperties"]["$ref"],
        json!("#/$defs/library_version")
    );
}

/// A record as the runner writes it, with and without the figures.
#[test]
fn a_measurement_record_matches_its_schema() {
    let schemas = Schemas::load();
    let plain = regress::fixtures::measurement("s2n_tls::handshake_rsa4096", 76_715_899, None);
    let mut record =
        regress::fixtures::measurement("rustls::record_aes128gcm_16k", 5_784_173, Some(1 << 20));
    record
        .metrics
        .insert(regress::measure::metrics::Metric::Allocations, 64);
    record
        .library_cpu
        .insert("OpenSSL".to_owned(), [1, 2, 3, 4]);
    for record in [plain, record] {
        let value = serde_json::to_value(&record).expect("JSON");
        let errors = schemas.errors("measurement.schema.json", &value);
        assert!(errors.is_empty(), "{value:#}: {errors:#?}");
    }
}

/// A diff report as the runner serialises it.
#[test]
fn a_diff_report_matches_its_schema() {
    use regress::compare::{FunctionDelta, HarnessDiff};
    use regress::diff::report::DiffReport;
    use regress::judge::Threshold;
    use regress::program::Commit as Revision;

    let schemas = Schemas::load();
    let harness = regress::fixtures::name("s2n_tls::handshake_rsa4096");
    let function = FunctionDelta {
        file: "tls/s2n_send.c".to_owned(),
        function: "s2n_regress_test_spin".to_owned(),
        origin: regress::compare::Origin::TlsLibrary,
        base: 0,
        head: 30_005,
        delta: 30_005,
    };
    let compared = HarnessDiff::compared(
        &harness,
        76_715_899,
        76_745_904,
        Threshold::default(),
        vec![function],
    );
    let report = DiffReport {
        schema: regress::diff::report::DIFF_SCHEMA,
        base: Revision {
            reference: "main".to_owned(),
            commit: "a".repeat(40),
        },
        head: Revision {
            reference: "HEAD".to_owned(),
            commit: "b".repeat(40),
        },
        valgrind: "3.24.0".to_owned(),
        method: regress::measure::valgrind::Method::Callgrind,
        cpu_profile: Default::default(),
        shards: Vec::new(),
        harnesses: vec![compared],
        problems: Vec::new(),
        sources: None,
        blind_spots: None,
        // Both sides' fingerprints, one of them with a different compiler.
        fingerprints: Some(regress::diff::report::SideFingerprints {
            base: regress::fixtures::fingerprint("3.24.0"),
            head: regress::measure::fingerprint::Fingerprint {
                rustc: "rustc 1.96.0".into(),
                ..regress::fixtures::fingerprint("3.24.0")
            },
        }),
    };
    let value = serde_json::to_value(&report).expect("JSON");
    let errors = schemas.errors("diff-report.schema.json", &value);
    assert!(errors.is_empty(), "{value:#}: {errors:#?}");

    // With blind spots, known and unknown.
    use regress::coverage::{BlindSpot, BlindSpots};
    let known = BlindSpots {
        unknown: None,
        considered: vec!["tls/s2n_psk.c".to_owned()],
        other_files: 2,
        changed: 3,
        base: Vec::new(),
        head: vec![BlindSpot {
            file: "tls/s2n_psk.c".to_owned(),
            function: "s2n_offered_psk_list_choose_psk".to_owned(),
            lines: vec![120, 121],
        }],
    };
    for spots in [known, BlindSpots::unknown("no line data")] {
        let report = DiffReport {
            blind_spots: Some(spots),
            ..report.clone()
        };
        let value = serde_json::to_value(&report).expect("JSON");
        let errors = schemas.errors("diff-report.schema.json", &value);
        assert!(errors.is_empty(), "{value:#}: {errors:#?}");
        let mut broken = value.clone();
        broken["blind_spots"]["head"] = json!([{ "file": "a.c", "function": "f", "lines": [0] }]);
        assert!(!schemas
            .errors("diff-report.schema.json", &broken)
            .is_empty());
    }
}

/// A lines file as the runner writes it.
#[test]
fn a_lines_file_matches_its_schema() {
    use regress::coverage::Lines;
    use regress_profile::callgrind_out::Costs;
    let schemas = Schemas::load();
    let costs = Costs::from([
        (
            (
                "/aws-lc/crypto/fipsmodule/bn/mul.c".to_owned(),
                "bn_mul_part_recursive".to_owned(),
            ),
            std::collections::BTreeMap::from([(0, 3), (120, 40), (121, 2)]),
        ),
        (
            ("???".to_owned(), "0x0000000004887000".to_owned()),
            std::collections::BTreeMap::from([(0, 9)]),
        ),
    ]);
    let lines = Lines::from_costs(
        &regress::fixtures::name("s2n_tls::handshake_rsa4096"),
        &costs,
    );
    let value: Value = serde_json::from_str(&lines.to_json()).expect("JSON");
    let errors = schemas.errors("lines.schema.json", &value);
    assert!(errors.is_empty(), "{value:#}: {errors:#?}");
    let mut broken = value.clone();
    broken["files"]["/a.c"] = json!({ "f": [] });
    assert!(!schemas.errors("lines.schema.json", &broken).is_empty());
}

/// The checker, and the schemas, refuse what the runner refuses: a
/// missing key, a wrong type, an unknown key, a count out of range, a name
/// that is not a harness name, an unknown metric.
#[test]
fn a_broken_file_fails_its_schema() {
    let schemas = Schemas::load();
    let path = root().join("baselines/s2n_tls.handshake_rsa4096.json");
    let good = read_json(&path);
    assert!(schemas.errors("baseline.schema.json", &good).is_empty());
    type Break = fn(&mut Value);
    let cases: [(&str, Break); 7] = [
        ("the required key `instructions` is missing", |v| {
            v["entries"][0]
                .as_object_mut()
                .expect("entry")
                .remove("instructions");
        }),
        ("is not of type [\"integer\"]", |v| {
            v["entries"][0]["instructions"] = json!("76715899");
        }),
        ("the key `instructions_total` is not allowed", |v| {
            v["entries"][0]["instructions_total"] = json!(1);
        }),
        ("is below the minimum 1", |v| {
            v["entries"][0]["instructions"] = json!(0)
        }),
        ("is above the maximum 9223372036854775807", |v| {
            v["entries"][0]["instructions"] = json!(u64::MAX)
        }),
        ("does not match", |v| v["harness"] = json!("../../escape")),
        ("is not one of", |v| {
            v["entries"][0]["metrics"]["cycles"] = json!(1)
        }),
    ];
    for (expected, break_it) in cases {
        let mut value = good.clone();
        break_it(&mut value);
        let errors = schemas.errors("baseline.schema.json", &value);
        assert!(
            errors.iter().any(|error| error.contains(expected)),
            "expected {expected:?}, got {errors:#?}"
        );
    }
    // And a history file with a harness key that is not a harness name.
    let history = root().join("baselines/history/s2n-tls/0.3.47.json");
    let mut value = read_json(&history);
    let paths = value["entries"][0]["paths"].as_object_mut().expect("paths");
    let count = paths.values().next().expect("a path").clone();
    paths.insert("S2N::Handshake".to_owned(), count);
    let errors = schemas.errors("history.schema.json", &value);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/S2N::Handshake") && e.contains("does not match")),
        "{errors:#?}"
    );
}
