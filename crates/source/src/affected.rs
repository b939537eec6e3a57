//! Which harnesses a library's source reaches, derived from the resolved
//! dependency graph, to check the data in [`crate::library`] against.
//!
//! Each harness module measures a path through a few crates (its "roots"):
//! `s2n_tls::*` calls s2n-tls, `rustls::*` calls rustls and rustls-webpki,
//! and so on. A library affects a harness module when one of those roots
//! is, or depends (transitively, normal and build dependencies) on, a crate
//! the library provides. Phase B can use this to skip measuring harnesses a
//! revision cannot change.

use std::collections::{BTreeSet, HashMap, HashSet};

use cargo_metadata::{DependencyKind, Metadata, PackageId};

use crate::library::Library;

/// A harness module: its name prefix and the crates its paths call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HarnessModule {
    pub prefix: &'static str,
    pub roots: &'static [&'static str],
}

/// The harness modules of this workspace (`harnesses/src/<module>/`).
pub const HARNESS_MODULES: &[HarnessModule] = &[
    HarnessModule {
        prefix: "s2n_tls::",
        roots: &["s2n-tls"],
    },
    HarnessModule {
        prefix: "rustls::",
        roots: &["rustls", "rustls-webpki"],
    },
    HarnessModule {
        prefix: "aws_lc_rs::",
        roots: &["aws-lc-rs"],
    },
    HarnessModule {
        prefix: "openssl::",
        roots: &["openssl"],
    },
    HarnessModule {
        prefix: "calibration::",
        roots: &[],
    },
];

/// The harness prefixes whose roots reach a crate `library` provides, in
/// `metadata`'s resolved graph.
pub fn affected_by_resolve(metadata: &Metadata, library: &Library) -> BTreeSet<&'static str> {
    let Some(resolve) = &metadata.resolve else {
        return BTreeSet::new();
    };
    let provided: HashSet<&str> = library.crates.iter().map(|spec| spec.name).collect();
    let edges: HashMap<&PackageId, Vec<&PackageId>> = resolve
        .nodes
        .iter()
        .map(|node| {
            let deps = node
                .deps
                .iter()
                .filter(|dep| {
                    dep.dep_kinds
                        .iter()
                        .any(|info| info.kind != DependencyKind::Development)
                })
                .map(|dep| &dep.pkg)
                .collect();
            (&node.id, deps)
        })
        .collect();
    let reaches = |start: &PackageId| {
        let mut stack = vec![start];
        let mut seen = HashSet::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            if provided.contains(metadata[id].name.as_str()) {
                return true;
            }
            stack.extend(edges.get(id).into_iter().flatten().copied());
        }
        false
    };
    HARNESS_MODULES
        .iter()
        .filter(|module| {
            resolve.nodes.iter().any(|node| {
                module.roots.contains(&metadata[&node.id].name.as_str()) && reaches(&node.id)
            })
        })
        .map(|module| module.prefix)
        .collect()
}
