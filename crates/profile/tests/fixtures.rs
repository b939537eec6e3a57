//! Parses every committed fixture: real files written by Valgrind 3.19 and
//! 3.24 from `tests/fixtures/src/loop.c` (see `tests/fixtures/README.md`).
//!
//! The expected numbers are not copied from the files alone: `spin` runs a
//! 7-instruction loop, so it costs `7 * N + 7`; `checksum` costs
//! `7 * ROUNDS + 4`. The rest are cross-checks between files that different
//! tools wrote (raw profile, `cg_diff`, both `cg_annotate`s).

use std::path::{Path, PathBuf};

use regress_profile::{annotated, cachegrind_out, FunctionCost, ProfileError};

const N: i64 = 100_000;
const VERSIONS: [&str; 2] = ["v3.19", "v3.24"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn profile(name: &str) -> cachegrind_out::Profile {
    cachegrind_out::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn annotation(name: &str) -> annotated::Annotation {
    annotated::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn instructions(name: &str) -> i64 {
    profile(name)
        .instructions()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The instructions of `function` in `file`, which must appear exactly once.
fn cost_of(functions: &[FunctionCost], file: &str, function: &str) -> i64 {
    let matching: Vec<_> = functions
        .iter()
        .filter(|f| f.file == file && f.function == function)
        .collect();
    assert_eq!(matching.len(), 1, "{file}:{function} in {functions:#?}");
    matching[0].instructions
}

fn spin(n: i64) -> i64 {
    7 * n + 7
}

fn checksum(rounds: i64) -> i64 {
    7 * rounds + 4
}

/// Every fixture of a kind, so that a newly added file is parsed too.
fn fixtures_named(suffix: &str) -> Vec<String> {
    let mut names = Vec::new();
    for version in VERSIONS {
        let dir = fixture(version);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let name = entry.expect("directory entry").file_name();
            let name = name.to_str().expect("UTF-8 fixture name");
            if name.ends_with(suffix) {
                names.push(format!("{version}/{name}"));
            }
        }
    }
    names.sort();
    assert!(!names.is_empty(), "no *{suffix} fixtures");
    names
}

#[test]
fn every_complete_profile_parses_and_its_functions_add_up() {
    for name in fixtures_named(".cachegrind.out") {
        if name.ends_with("/truncated.cachegrind.out") || name.ends_with("/empty.cachegrind.out") {
            continue;
        }
        let profile = profile(&name);
        let total = profile.instructions().expect("has Ir");
        let sum: i64 = profile.functions.iter().map(|f| f.instructions).sum();
        assert_eq!(sum, total, "{name}: functions do not add up to the summary");
        assert!(profile.command.is_some(), "{name}: no cmd:");
    }
}

#[test]
fn every_annotation_parses() {
    for name in fixtures_named(".annotated.txt") {
        let annotation = annotation(&name);
        assert!(!annotation.functions.is_empty(), "{name}: no function rows");
    }
}

#[test]
fn loop_profiles_count_the_loop_exactly() {
    for version in VERSIONS {
        for (file, n) in [("loop-n", N), ("loop-2n", 2 * N)] {
            let name = format!("{version}/{file}.cachegrind.out");
            let profile = profile(&name);
            assert_eq!(profile.events, ["Ir"], "{name}");
            assert_eq!(profile.command.as_deref(), Some(&*format!("./loop {n}")));
            assert_eq!(
                cost_of(&profile.functions, "src/loop.c", "spin_17h1a2b3c4d"),
                spin(n)
            );
            assert_eq!(
                cost_of(&profile.functions, "src/loop.c", "checksum"),
                checksum(4096)
            );
        }
    }
}

#[test]
fn whole_process_counts() {
    // The same binary's whole process, under two Valgrind versions: close,
    // but not equal. Never compare counts across Valgrind versions.
    assert_eq!(instructions("v3.19/loop-n.cachegrind.out"), 856_874);
    assert_eq!(instructions("v3.24/loop-n.cachegrind.out"), 857_711);
    assert_eq!(instructions("v3.19/loop-2n.cachegrind.out"), 1_556_874);
    assert_eq!(instructions("v3.24/loop-2n.cachegrind.out"), 1_557_711);
}

#[test]
fn doubling_n_adds_exactly_the_loop() {
    for version in VERSIONS {
        let n = instructions(&format!("{version}/loop-n.cachegrind.out"));
        let n2 = instructions(&format!("{version}/loop-2n.cachegrind.out"));
        assert_eq!(n2 - n, spin(2 * N) - spin(N), "{version}");
    }
}

#[test]
fn cg_diff_summary_is_the_difference_of_the_profiles() {
    for version in VERSIONS {
        let name = format!("{version}/diff.cachegrind.out");
        let diff = profile(&name);
        let n = instructions(&format!("{version}/loop-n.cachegrind.out"));
        let n2 = instructions(&format!("{version}/loop-2n.cachegrind.out"));
        assert_eq!(diff.instructions().expect("has Ir"), n2 - n, "{name}");
        assert_eq!(diff.instructions().expect("has Ir"), 700_000);
        assert_eq!(
            diff.command.as_deref(),
            Some("./loop 100000; ./loop 200000"),
            "{name}"
        );
        assert_eq!(
            cost_of(&diff.functions, "src/loop.c", "spin_17h1a2b3c4d"),
            700_000
        );
        // Everything else cancels out.
        for f in &diff.functions {
            if f.function != "spin_17h1a2b3c4d" {
                assert_eq!(f.instructions, 0, "{name}: {f:?}");
            }
        }
    }
}

#[test]
fn cg_diff_across_builds_goes_both_ways() {
    // Build B: other folder, other symbol hash, checksum() with 1024 rounds.
    // cg_diff's --mod-filename/--mod-funcname line the two builds up.
    let diff = profile("v3.19/diff-build-b.cachegrind.out");
    let expected = instructions("v3.19/loop-2n.build-b.cachegrind.out")
        - instructions("v3.19/loop-n.cachegrind.out");
    assert_eq!(diff.instructions().expect("has Ir"), expected);
    assert_eq!(expected, 678_496);
    assert_eq!(cost_of(&diff.functions, "src/loop.c", "spin"), 700_000);
    assert_eq!(
        cost_of(&diff.functions, "src/loop.c", "checksum"),
        checksum(1024) - checksum(4096)
    );
    assert_eq!(checksum(1024) - checksum(4096), -21_504);

    let b = profile("v3.24/loop-2n.build-b.cachegrind.out");
    assert_eq!(
        cost_of(&b.functions, "/build-b/loop.c", "spin_17h9f8e7d6c"),
        spin(2 * N)
    );
    assert_eq!(
        cost_of(&b.functions, "/build-b/loop.c", "checksum"),
        checksum(1024)
    );
}

#[test]
fn several_events() {
    for version in VERSIONS {
        let name = format!("{version}/loop-n.branch-sim.cachegrind.out");
        let profile = profile(&name);
        assert_eq!(profile.events, ["Ir", "Bc", "Bcm", "Bi", "Bim"], "{name}");
        assert_eq!(profile.summary.len(), 5);
        // Branch simulation does not change what runs.
        assert_eq!(
            profile.instructions().expect("has Ir"),
            instructions(&format!("{version}/loop-n.cachegrind.out"))
        );
        assert_eq!(
            cost_of(&profile.functions, "src/loop.c", "spin_17h1a2b3c4d"),
            spin(N)
        );
        assert_eq!(profile.total("Bim"), Some(167));
        assert!(
            profile.total("Bc").expect("has Bc") > N,
            "one branch per iteration"
        );
        assert_eq!(profile.total("D1mr"), None);

        let annotation = annotation(&format!("{version}/loop-n.branch-sim.annotated.txt"));
        assert_eq!(annotation.events, profile.events);
        assert_eq!(
            annotation.total_instructions,
            profile.instructions().expect("Ir")
        );
        assert_eq!(
            cost_of(&annotation.functions, "src/loop.c", "spin_17h1a2b3c4d"),
            spin(N)
        );
    }
}

#[test]
fn annotated_totals_equal_the_raw_summaries() {
    for version in VERSIONS {
        for file in ["loop-n", "loop-n.branch-sim"] {
            let raw = instructions(&format!("{version}/{file}.cachegrind.out"));
            let annotation = annotation(&format!("{version}/{file}.annotated.txt"));
            assert_eq!(annotation.total_instructions, raw, "{version}/{file}");
        }
    }
    let region = annotation("v3.24/region-n.annotated.txt");
    assert_eq!(
        region.total_instructions,
        instructions("v3.24/region-n.cachegrind.out")
    );
}

#[test]
fn annotated_rows_match_the_raw_profile() {
    // Every row cg_annotate lists is a (file, function) total of the
    // profile, in both layouts; the list is sorted, largest first.
    for version in VERSIONS {
        let profile = profile(&format!("{version}/loop-n.cachegrind.out"));
        let annotation = annotation(&format!("{version}/loop-n.annotated.txt"));
        assert_eq!(annotation.events, ["Ir"]);
        for row in &annotation.functions {
            assert_eq!(
                cost_of(&profile.functions, &row.file, &row.function),
                row.instructions,
                "{version}: {row:?}"
            );
        }
        assert_eq!(
            annotation.functions[0],
            FunctionCost {
                file: "src/loop.c".into(),
                function: "spin_17h1a2b3c4d".into(),
                instructions: spin(N),
            },
            "{version}"
        );
        assert_eq!(annotation.functions[1].function, "checksum");
        assert_eq!(annotation.functions[1].instructions, checksum(4096));
    }
}

#[test]
fn perl_annotation_is_one_flat_list() {
    let annotation = annotation("v3.19/loop-n.annotated.txt");
    // Above the 0.1% threshold, largest first.
    assert_eq!(annotation.functions.len(), 18);
    assert!(annotation
        .functions
        .windows(2)
        .all(|w| w[0].instructions >= w[1].instructions));
    assert_eq!(
        cost_of(
            &annotation.functions,
            "./elf/./elf/dl-lookup.c",
            "do_lookup_x"
        ),
        21_245
    );
}

#[test]
fn python_annotation_groups_rows_by_file() {
    let annotation = annotation("v3.24/loop-n.annotated.txt");
    // One symbol, charged to three files (code inlined from headers): three
    // rows, each under its own `< file:` group.
    for (file, cost) in [
        ("./elf/./elf/dl-reloc.c", 15_446),
        ("./elf/./elf/do-rel.h", 3_871),
        ("./elf/../sysdeps/x86_64/dl-machine.h", 3_728),
    ] {
        assert_eq!(
            cost_of(&annotation.functions, file, "_dl_relocate_object"),
            cost
        );
    }
    // A file whose one listed function is the whole file is a single
    // `file:function` row in this layout.
    assert_eq!(
        cost_of(
            &annotation.functions,
            "./elf/../sysdeps/generic/dl-new-hash.h",
            "_dl_lookup_symbol_x"
        ),
        8_106
    );
    // File totals (`<` rows) are not function rows.
    assert!(annotation.functions.iter().all(|f| !f.function.is_empty()));
    assert!(!annotation
        .functions
        .iter()
        .any(|f| f.instructions == 728_704 || f.instructions == 33_687));
}

#[test]
fn diff_annotations() {
    // 3.19: cg_annotate of cg_diff's output; 3.24: cg_annotate --diff.
    for version in VERSIONS {
        let name = format!("{version}/diff.annotated.txt");
        let annotation = annotation(&name);
        assert_eq!(annotation.total_instructions, 700_000, "{name}");
        assert_eq!(
            annotation.functions,
            [FunctionCost {
                file: "src/loop.c".into(),
                function: "spin_17h1a2b3c4d".into(),
                instructions: 700_000,
            }],
            "{name}"
        );

        // Across builds, lined up with --mod-filename/--mod-funcname: one
        // function up, one down.
        let name = format!("{version}/diff-build-b.annotated.txt");
        let across = self::annotation(&name);
        assert_eq!(across.total_instructions, 678_496, "{name}");
        assert_eq!(
            across.functions,
            [
                FunctionCost {
                    file: "src/loop.c".into(),
                    function: "spin".into(),
                    instructions: 700_000,
                },
                FunctionCost {
                    file: "src/loop.c".into(),
                    function: "checksum".into(),
                    instructions: -21_504,
                },
            ],
            "{name}"
        );
    }
}

#[test]
fn region_profile_has_only_the_measured_functions() {
    // 3.24, --instr-at-start=no with start/stop client requests.
    let profile = profile("v3.24/region-n.cachegrind.out");
    let names: Vec<&str> = profile.functions.iter().map(|f| &*f.function).collect();
    assert_eq!(names, ["checksum", "main", "spin_17h1a2b3c4d"]);
    assert_eq!(
        cost_of(&profile.functions, "src/loop.c", "spin_17h1a2b3c4d"),
        spin(N)
    );
    assert_eq!(
        profile.instructions().expect("has Ir"),
        spin(N) + checksum(4096) + cost_of(&profile.functions, "src/loop.c", "main")
    );
}

#[test]
fn truncated_profiles_are_errors_that_name_the_file() {
    for version in VERSIONS {
        let path = fixture(&format!("{version}/truncated.cachegrind.out"));
        let error = cachegrind_out::read(&path).expect_err("truncated");
        match &error {
            ProfileError::InFile { path: p, error } => {
                assert_eq!(p, &path);
                assert!(
                    matches!(**error, ProfileError::Truncated { .. }),
                    "{version}: {error:?}"
                );
            }
            other => panic!("{version}: expected InFile(Truncated), got {other:?}"),
        }
        let message = error.to_string();
        assert!(message.contains(&*path.to_string_lossy()), "{message}");
        assert!(message.contains("truncated"), "{message}");
        assert!(message.contains("summary:"), "{message}");
    }
}

#[test]
fn empty_files_are_errors() {
    for version in VERSIONS {
        let path = fixture(&format!("{version}/empty.cachegrind.out"));
        let error = cachegrind_out::read(&path).expect_err("empty");
        assert!(
            matches!(&error, ProfileError::InFile { error, .. } if matches!(**error, ProfileError::Empty)),
            "{error:?}"
        );
        let error = annotated::read(&path).expect_err("empty");
        assert!(
            matches!(&error, ProfileError::InFile { error, .. } if matches!(**error, ProfileError::Empty)),
            "{error:?}"
        );
    }
}

#[test]
fn truncated_annotations_are_errors() {
    for name in fixtures_named(".annotated.txt") {
        let text = std::fs::read_to_string(fixture(&name)).expect("readable");
        // Cut before the end of the function summary: always an error.
        let end = text
            .find("-- Function:file summary")
            .or_else(|| text.find("-- Auto-annotated source"))
            .or_else(|| text.find("The following files"))
            .unwrap_or(text.len());
        let list = text.find("file:function").expect("has the list");
        for cut in [
            10,
            text.len() / 8,
            list - 5,
            list + 30,
            usize::midpoint(list, end),
        ] {
            let cut = cut.min(end - 90);
            let cut = (0..=cut)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            assert!(
                annotated::parse(&text[..cut]).is_err(),
                "{name} cut at {cut} parsed"
            );
        }
    }
}

#[test]
fn garbage_is_an_error() {
    // Each parser given the other's input, and a binary.
    let raw = std::fs::read_to_string(fixture("v3.19/loop-n.cachegrind.out")).expect("readable");
    let report = std::fs::read_to_string(fixture("v3.24/loop-n.annotated.txt")).expect("readable");
    assert!(matches!(
        cachegrind_out::parse(&report),
        Err(ProfileError::Malformed { line: 1, .. })
    ));
    assert!(matches!(
        annotated::parse(&raw),
        Err(ProfileError::Unrecognized { .. })
    ));
    let source = std::fs::read_to_string(fixture("src/loop.c")).expect("readable");
    assert!(cachegrind_out::parse(&source).is_err());
    assert!(annotated::parse(&source).is_err());
}

#[test]
fn function_costs_serialize() {
    let annotation = annotation("v3.24/diff-build-b.annotated.txt");
    let json = serde_json::to_string(&annotation.functions).expect("serializes");
    assert_eq!(
        json,
        r#"[{"file":"src/loop.c","function":"spin","instructions":700000},{"file":"src/loop.c","function":"checksum","instructions":-21504}]"#
    );
    let back: Vec<FunctionCost> = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, annotation.functions);
}
