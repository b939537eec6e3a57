//! Which library versions this workspace's harnesses cover, as data, and
//! the cargo features a harness build needs for the versions a set of
//! patches brings.
//!
//! A library revision may carry another version than `Cargo.lock`'s. Most
//! skew needs nothing: the harnesses build whenever the API they use is
//! unchanged (s2n-tls 0.3.42 to 0.3.47 build from the same code). One skew
//! needs other harness code: rustls 0.24 changed its API, and rustls pull
//! requests target `main`, which is 0.24.0-dev while `Cargo.lock` holds
//! 0.23. The `harnesses` crate builds either generation, selected by a
//! feature ([`harness_features`] says which), and [`check_coverage`]
//! refuses a version no generation covers, naming what is covered.
//!
//! One API break is not visible in the version: rustls main after the
//! 0.24.0-dev.1 release still says 0.24.0-dev.1, but moved to externally
//! buffered output (rustls commit d993ef74b). A [`Variant`] tells the two
//! apart by a line of the patched crate's source ([`Marker`]).

use std::path::Path;

use crate::patch::PatchSet;

/// The versions of one library the harnesses cover, and how a build is
/// pointed at each.
#[derive(Debug, PartialEq, Eq)]
pub struct Coverage {
    /// The library's name in [`crate::library::LIBRARIES`].
    pub library: &'static str,
    /// The crate whose version decides (the library's main crate).
    pub krate: &'static str,
    /// Which version of that crate's decides.
    pub decided_by: DecidedBy,
    /// The generations, oldest first.
    pub generations: &'static [Generation],
}

/// Which version a generation's requirement is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedBy {
    /// The crate's own version.
    CrateVersion,
    /// The OpenSSL release an `openssl-src` crate carries, from its
    /// version's build metadata: `300.0.13+3.0.8` (a release) and
    /// `300.5.5+3.0.8` (a shell, [`crate::openssl_src`]) both decide as
    /// 3.0.8, and 1.1.1w as 1.1.1.
    OpenSslRelease,
}

/// Versions of a library that one body of harness code builds against.
#[derive(Debug, PartialEq, Eq)]
pub struct Generation {
    /// The versions, as a cargo version requirement (the same requirement
    /// the workspace's manifests state for them).
    pub versions: &'static str,
    /// How messages and the README name them.
    pub label: &'static str,
    /// The versions a build from source was checked against.
    pub checked: &'static str,
    /// The cargo features a harness build of these versions needs.
    pub features: &'static [&'static str],
    /// API variants inside the generation that the version does not tell
    /// apart.
    pub variants: &'static [Variant],
}

/// An API variant inside a generation: recognised by a marker in the
/// patched crate's source, it needs more features.
#[derive(Debug, PartialEq, Eq)]
pub struct Variant {
    pub label: &'static str,
    pub marker: Marker,
    pub features: &'static [&'static str],
}

/// A line of source that only one API variant has.
#[derive(Debug, PartialEq, Eq)]
pub struct Marker {
    /// The file, relative to the crate's folder.
    pub file: &'static str,
    /// Text the file contains in that variant.
    pub contains: &'static str,
}

/// What the harnesses cover, library by library.
pub static COVERAGE: [Coverage; 4] = [
    Coverage {
        library: "s2n-tls",
        krate: "s2n-tls",
        decided_by: DecidedBy::CrateVersion,
        generations: &[Generation {
            versions: ">=0.3.42, <0.4",
            label: "0.3.42 and later 0.3.x",
            checked: "0.3.42 (aws/s2n-tls HEAD of 2026-08-07), 0.3.47",
            features: &[],
            variants: &[],
        }],
    },
    Coverage {
        library: "rustls",
        krate: "rustls",
        decided_by: DecidedBy::CrateVersion,
        generations: &[
            Generation {
                versions: "^0.23",
                label: "0.23.x",
                checked: "0.23.46",
                features: &[],
                variants: &[],
            },
            Generation {
                versions: "=0.24.0-dev.1",
                label: "0.24.0-dev.1",
                checked: "0.24.0-dev.1 (crates.io), main at 6868ee84 (2026-08-19)",
                features: &["harnesses/rustls-0-24"],
                variants: &[Variant {
                    label: "rustls main after the 0.24.0-dev.1 release",
                    marker: Marker {
                        file: "src/conn/mod.rs",
                        contains: "pub struct MessageHandler<",
                    },
                    features: &["harnesses/rustls-0-24-main"],
                }],
            },
        ],
    },
    Coverage {
        library: "aws-lc-rs",
        krate: "aws-lc-rs",
        decided_by: DecidedBy::CrateVersion,
        generations: &[Generation {
            versions: "^1",
            label: "1.x",
            checked: "1.19.0",
            features: &[],
            variants: &[],
        }],
    },
    // Every OpenSSL tree is built by the pinned `openssl-src` build logic
    // (`crate::openssl_src`). For 1.1.1, `scripts/openssl-configure` drops
    // the two options of that logic 1.1.1's `Configure` does not know, and
    // `harnesses/build.rs` compiles the harnesses' `openssl_1_1` generation
    // (1.1.1's calls in place of 3.0's), seeing the version `openssl-sys`
    // built: nothing to select here, only to cover.
    Coverage {
        library: "openssl",
        krate: "openssl-src",
        decided_by: DecidedBy::OpenSslRelease,
        generations: &[
            Generation {
                versions: "~1.1.1",
                label: "1.1.1",
                checked: "1.1.1w",
                features: &[],
                variants: &[],
            },
            Generation {
                versions: "^3",
                label: "3.x",
                checked: "3.0.8, 3.1.4, 3.2.1, 3.3.2, 3.4.1, 3.5.5, 3.6.3",
                features: &[],
                variants: &[],
            },
            Generation {
                versions: "~4.0",
                label: "4.0",
                checked: "4.0.3",
                features: &[],
                variants: &[],
            },
        ],
    },
];

/// A patched version no generation of the harnesses covers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{library} {version} is not covered; the harnesses cover {covered}.\n  \
     Build against a covered version, or adapt the {library} harnesses \
     (`harnesses/src/`) to it."
)]
pub struct NotCovered {
    pub library: &'static str,
    /// The revision's version of the deciding crate.
    pub version: semver::Version,
    /// The covered generations, `0.23.x and 0.24.0-dev.1`.
    pub covered: String,
}

impl Coverage {
    /// The entry of `library`, if the harnesses say what they cover of it.
    pub fn of(library: &str) -> Option<&'static Coverage> {
        COVERAGE.iter().find(|coverage| coverage.library == library)
    }

    /// The generation covering the crate at `version`.
    pub fn generation(&self, version: &semver::Version) -> Option<&'static Generation> {
        let deciding = self.deciding(version)?;
        self.generations
            .iter()
            .find(|generation| generation.requirement().matches(&deciding))
    }

    /// The version the generations' requirements are matched against, for
    /// the crate at `version` (`None`: it says no OpenSSL release).
    pub fn deciding(&self, version: &semver::Version) -> Option<semver::Version> {
        match self.decided_by {
            DecidedBy::CrateVersion => Some(version.clone()),
            DecidedBy::OpenSslRelease => {
                let release = crate::openssl_src::OpenSslVersion::of_release(version)?;
                Some(semver::Version::new(
                    u64::from(release.major),
                    u64::from(release.minor),
                    u64::from(release.patch),
                ))
            }
        }
    }

    /// The release line of the crate at `version`, whose newest patch
    /// release stands for it (`regress history --newest-patch`): its
    /// `major.minor`, or for OpenSSL the line of the release it carries
    /// (3.0 of 300.0.13+3.0.8; 1.1.1 of 111.28.2+1.1.1w, not 1.1.0).
    pub fn release_line(&self, version: &semver::Version) -> (u64, u64, u64) {
        let release = match self.decided_by {
            DecidedBy::CrateVersion => None,
            DecidedBy::OpenSslRelease => crate::openssl_src::OpenSslVersion::of_release(version),
        };
        match release {
            Some(release) => {
                let (major, minor, line) = release.line();
                (major.into(), minor.into(), line.into())
            }
            None => (version.major, version.minor, 0),
        }
    }

    /// `0.23.x and 0.24.0-dev.1`, for messages.
    pub fn covered(&self) -> String {
        let labels: Vec<&str> = self.generations.iter().map(|g| g.label).collect();
        match labels.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => labels.concat(),
        }
    }
}

impl Generation {
    /// [`Generation::versions`] parsed.
    pub fn requirement(&self) -> semver::VersionReq {
        semver::VersionReq::parse(self.versions).unwrap_or_else(|error| {
            unreachable!("{:?} is not a requirement: {error}", self.versions)
        })
    }

    /// The features for the crate at `dir`: the generation's, and those of
    /// each variant whose marker its source has.
    fn features_for(&self, dir: &Path) -> Vec<&'static str> {
        let variants = self
            .variants
            .iter()
            .filter(|variant| variant.marker.is_in(dir))
            .flat_map(|variant| variant.features.iter().copied());
        self.features.iter().copied().chain(variants).collect()
    }
}

impl Marker {
    /// Whether the crate at `dir` has this marker. A file that cannot be
    /// read does not (the build then says what does not compile).
    pub fn is_in(&self, dir: &Path) -> bool {
        std::fs::read_to_string(dir.join(self.file)).is_ok_and(|text| text.contains(self.contains))
    }
}

/// The cargo `--features` a harness build against `patches` needs, sorted
/// and without repeats: `harnesses/rustls-0-24` when rustls is patched to
/// 0.24, plus `harnesses/rustls-0-24-main` when that 0.24 is rustls main.
/// Nothing for versions the default build covers, and nothing for versions
/// no generation covers ([`check_coverage`] refuses those).
pub fn harness_features(patches: &[PatchSet]) -> Vec<String> {
    let mut features: Vec<String> = patches
        .iter()
        .flat_map(|set| {
            set.crates.iter().filter_map(move |krate| {
                let coverage = Coverage::of(set.library.name)?;
                (coverage.krate == krate.name)
                    .then(|| coverage.generation(&krate.version))
                    .flatten()
                    .map(|generation| generation.features_for(&krate.path))
            })
        })
        .flatten()
        .map(str::to_owned)
        .collect();
    features.sort();
    features.dedup();
    features
}

/// Refuses the first patched version that no generation of the harnesses
/// covers: "rustls 0.25.0 is not covered; the harnesses cover 0.23.x and
/// 0.24.0-dev.1".
pub fn check_coverage(patches: &[PatchSet]) -> Result<(), NotCovered> {
    for set in patches {
        let Some(coverage) = Coverage::of(set.library.name) else {
            continue;
        };
        for krate in set
            .crates
            .iter()
            .filter(|krate| krate.name == coverage.krate)
        {
            if coverage.generation(&krate.version).is_none() {
                return Err(NotCovered {
                    library: coverage.library,
                    version: coverage
                        .deciding(&krate.version)
                        .unwrap_or_else(|| krate.version.clone()),
                    covered: coverage.covered(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::library::{Library, AWS_LC_RS, RUSTLS, S2N_TLS};
    use crate::patch::PatchedCrate;

    fn v(text: &str) -> semver::Version {
        semver::Version::parse(text).expect("version")
    }

    /// A patch set of `library` whose deciding crate is at `version`, in
    /// `dir`.
    fn set(library: &'static Library, version: &str, dir: &Path) -> PatchSet {
        let name = Coverage::of(library.name).expect("covered").krate;
        PatchSet {
            library,
            revision: "main (0123456789ab)".to_owned(),
            key: "k".to_owned(),
            crates: vec![PatchedCrate {
                name: name.to_owned(),
                version: v(version),
                path: dir.to_path_buf(),
            }],
        }
    }

    /// A crate folder; with `main`, its source has rustls main's marker.
    fn rustls_dir(main: bool) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let conn = dir.path().join("src/conn");
        std::fs::create_dir_all(&conn).expect("mkdir");
        let text = if main {
            "pub struct MessageHandler<'a, 'm, Side: SideData> {\n"
        } else {
            "pub struct Reader<'a> {\n"
        };
        std::fs::write(conn.join("mod.rs"), text).expect("write");
        dir
    }

    #[test]
    fn rustls_0_23_needs_no_feature() {
        let dir = rustls_dir(false);
        for version in ["0.23.0", "0.23.43", "0.23.46", "0.23.99"] {
            let patches = [set(&RUSTLS, version, dir.path())];
            assert_eq!(
                harness_features(&patches),
                Vec::<String>::new(),
                "{version}"
            );
            check_coverage(&patches).expect(version);
        }
    }

    #[test]
    fn rustls_0_24_release_and_main_select_their_features() {
        let release = rustls_dir(false);
        let patches = [set(&RUSTLS, "0.24.0-dev.1", release.path())];
        assert_eq!(harness_features(&patches), ["harnesses/rustls-0-24"]);
        check_coverage(&patches).expect("covered");
        let main = rustls_dir(true);
        let patches = [set(&RUSTLS, "0.24.0-dev.1", main.path())];
        assert_eq!(
            harness_features(&patches),
            ["harnesses/rustls-0-24", "harnesses/rustls-0-24-main"]
        );
        // A folder without the file is the release's API.
        let empty = tempfile::tempdir().expect("tempdir");
        let patches = [set(&RUSTLS, "0.24.0-dev.1", empty.path())];
        assert_eq!(harness_features(&patches), ["harnesses/rustls-0-24"]);
    }

    #[test]
    fn uncovered_versions_are_refused_with_what_is_covered() {
        let dir = rustls_dir(true);
        for version in [
            "0.25.0",
            "0.24.0-dev.2",
            "0.24.0",
            "0.22.4",
            "0.23.0-alpha.1",
        ] {
            let patches = [set(&RUSTLS, version, dir.path())];
            assert_eq!(
                harness_features(&patches),
                Vec::<String>::new(),
                "{version}"
            );
            let error = check_coverage(&patches).expect_err(version);
            assert_eq!(error.version, v(version));
            assert!(
                error.to_string().starts_with(&format!(
                    "rustls {version} is not covered; the harnesses cover 0.23.x and \
                     0.24.0-dev.1."
                )),
                "{error}"
            );
        }
    }

    #[test]
    fn s2n_tls_skew_needs_no_feature_within_the_range() {
        let dir = tempfile::tempdir().expect("tempdir");
        for version in ["0.3.42", "0.3.47", "0.3.48"] {
            let patches = [set(&S2N_TLS, version, dir.path())];
            assert_eq!(harness_features(&patches), Vec::<String>::new());
            check_coverage(&patches).expect(version);
        }
        for version in ["0.3.41", "0.4.0", "0.3.48-rc.1"] {
            let error = check_coverage(&[set(&S2N_TLS, version, dir.path())]).expect_err(version);
            assert!(
                error
                    .to_string()
                    .contains("the harnesses cover 0.3.42 and later 0.3.x"),
                "{error}"
            );
        }
    }

    #[test]
    fn several_sets_give_each_feature_once_and_the_first_refusal() {
        let main = rustls_dir(true);
        let other = tempfile::tempdir().expect("tempdir");
        let patches = [
            set(&S2N_TLS, "0.3.42", other.path()),
            set(&RUSTLS, "0.24.0-dev.1", main.path()),
            set(&RUSTLS, "0.24.0-dev.1", main.path()),
            set(&AWS_LC_RS, "1.19.0", other.path()),
        ];
        assert_eq!(
            harness_features(&patches),
            ["harnesses/rustls-0-24", "harnesses/rustls-0-24-main"]
        );
        check_coverage(&patches).expect("all covered");
        let refused = [
            set(&AWS_LC_RS, "2.0.0", other.path()),
            set(&RUSTLS, "0.25.0", main.path()),
        ];
        let error = check_coverage(&refused).expect_err("aws-lc-rs 2");
        assert_eq!(error.library, "aws-lc-rs");
    }

    /// Only the deciding crate counts: rustls's provider crate has versions
    /// of its own (0.1.0-dev.1 beside rustls 0.24.0-dev.1).
    #[test]
    fn other_crates_of_a_set_do_not_decide() {
        let main = rustls_dir(true);
        let mut patches = [set(&RUSTLS, "0.24.0-dev.1", main.path())];
        patches[0].crates.push(PatchedCrate {
            name: "rustls-aws-lc-rs".to_owned(),
            version: v("0.1.0-dev.1"),
            path: main.path().to_path_buf(),
        });
        check_coverage(&patches).expect("covered");
        assert_eq!(harness_features(&patches).len(), 2);
    }

    fn workspace_file(relative: &str) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(relative);
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    fn requirement_of(table: &toml::Table, name: &str) -> semver::VersionReq {
        let value = &table[name];
        let text = value
            .as_str()
            .or_else(|| value.get("version").and_then(toml::Value::as_str))
            .unwrap_or_else(|| panic!("{name} has no version"));
        semver::VersionReq::parse(text).expect("requirement")
    }

    /// The data states what the manifests require: a generation's range is
    /// the requirement its build uses, and every feature exists.
    #[test]
    fn the_data_matches_the_manifests() {
        let root: toml::Table = workspace_file("Cargo.toml").parse().expect("toml");
        let harnesses: toml::Table = workspace_file("harnesses/Cargo.toml")
            .parse()
            .expect("toml");
        let workspace_deps = root["workspace"]["dependencies"].as_table().expect("table");
        let deps = harnesses["dependencies"].as_table().expect("table");
        let generations = |library: &str| Coverage::of(library).expect("entry").generations;
        assert_eq!(
            generations("s2n-tls")[0].requirement(),
            requirement_of(workspace_deps, "s2n-tls")
        );
        assert_eq!(
            generations("rustls")[0].requirement(),
            requirement_of(deps, "rustls")
        );
        assert_eq!(
            generations("rustls")[1].requirement(),
            requirement_of(deps, "rustls024")
        );
        assert_eq!(
            generations("aws-lc-rs")[0].requirement(),
            requirement_of(deps, "aws-lc-rs")
        );
        let features = harnesses["features"].as_table().expect("features");
        for coverage in &COVERAGE {
            assert!(crate::library::Library::named(coverage.library).is_ok());
            for generation in coverage.generations {
                let variants = generation.variants.iter().flat_map(|v| v.features.iter());
                for feature in generation.features.iter().chain(variants) {
                    let name = feature
                        .strip_prefix("harnesses/")
                        .expect("a harnesses feature");
                    assert!(features.contains_key(name), "{feature}");
                }
            }
        }
    }

    /// The guide's table (`docs/harnesses.md`) says what the data says.
    #[test]
    fn the_docs_table_lists_every_generation() {
        let page = workspace_file("docs/harnesses.md");
        let start = page
            .find("## Versions the harnesses cover")
            .expect("the page's section");
        let section = &page[start..];
        let section = &section[..section[3..]
            .find("\n## ")
            .map_or(section.len(), |end| end + 3)];
        for coverage in &COVERAGE {
            for generation in coverage.generations {
                let row = section
                    .lines()
                    .find(|line| {
                        line.starts_with(&format!("| {} |", coverage.library))
                            && line.contains(generation.label)
                    })
                    .unwrap_or_else(|| {
                        panic!("no row for {} {}", coverage.library, generation.label)
                    });
                for feature in generation.features {
                    assert!(row.contains(feature), "{row}");
                }
                for variant in generation.variants {
                    for feature in variant.features {
                        assert!(section.contains(feature), "{feature}");
                    }
                }
            }
        }
    }
}
