//! The published JSON Schemas (`docs/schemas/`) describe the files the
//! runner writes and reads: every committed baseline and history file, and
//! a record and a diff report as the runner serialises them, must match.
//!
//! The schemas are draft 2020-12. Rather than a schema crate (whose default
//! features fetch remote references), a small checker of the keywords the
//! schemas use is in `schemas/checker.rs`;
//! `the_schemas_use_only_checked_keywords` fails when a schema gains a
//! keyword it would otherwise ignore.

#[path = "schemas/checker.rs"]
mod checker;

use std::path::{Path, PathBuf};

use checker::{keywords, read_json, root, Schemas, ANNOTATIONS, CHECKED};
use serde_json::{json, Value};

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

/// The strings of the enum at `pointer` (a JSON pointer) in the published
/// schema `name`.
fn schema_enum(name: &str, pointer: &str) -> Vec<String> {
    read_json(&root().join("docs/schemas").join(name))
        .pointer(pointer)
        .and_then(Value::as_array)
        .expect("an enum")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The history schema names the libraries `regress_source::LIBRARIES`
/// has, no more and no fewer: a library added there can keep a history.
#[test]
fn the_history_schema_lists_every_library() {
    let known: Vec<&str> = regress_source::LIBRARIES
        .iter()
        .map(|library| library.name)
        .collect();
    assert_eq!(
        schema_enum("history.schema.json", "/properties/library/enum"),
        known
    );
}

/// The schema's figure names are the runner's metrics, in its order, no
/// more and no fewer: a metric added to the runner is one the published
/// schema accepts.
#[test]
fn the_metrics_schema_lists_every_metric() {
    let known: Vec<&str> = regress::measure::metrics::Metric::ALL
        .iter()
        .map(|metric| metric.key())
        .collect();
    let listed = schema_enum("common.schema.json", "/$defs/metrics/propertyNames/enum");
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
