//! Git repositories in the real layouts of s2n-tls, rustls, aws-lc-rs and
//! OpenSSL, made from the published crates of the versions this workspace
//! locks.

use std::path::{Path, PathBuf};

use super::{copy, git, registry_source, replace_in, write};

/// Files a published crate has that its repository does not.
const PACKAGING_ONLY: &[&str] = &[
    "Cargo.toml",
    "Cargo.toml.orig",
    "Cargo.lock",
    ".cargo_vcs_info.json",
    ".cargo-ok",
];

/// Copies a published crate's folder as its repository has it: everything
/// but the packaging files (and `skip`), with the real manifest
/// (`Cargo.toml.orig`, path dependencies and all) as `Cargo.toml`.
fn copy_crate(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        let name = name.to_str().expect("utf-8 name");
        if PACKAGING_ONLY.contains(&name) || skip.contains(&name) {
            continue;
        }
        copy(&entry.path(), &to.join(name));
    }
    std::fs::copy(from.join("Cargo.toml.orig"), to.join("Cargo.toml")).expect("manifest");
}

/// s2n-tls's layout: the C tree at the root, the bindings workspace in
/// `bindings/rust/extended/`.
///
/// The registry's s2n-tls-sys is what `generate.sh` produced: its `lib/` is
/// the C tree (copied back to the root here) and its `src/` holds the
/// generated bindings. The repository's `generate/` crate is not published,
/// so this repository keeps the generated `src/` and `files.rs` and has no
/// `generate/`: an export of it exercises the C-tree copy, not bindgen (the
/// real repository's bindgen step was checked by hand, see the crate docs).
pub fn s2n_tls(dir: &Path, version: &str) -> PathBuf {
    let root = dir.join("s2n-tls");
    let sys = registry_source("s2n-tls-sys", "0.3.47");
    let tls = registry_source("s2n-tls", "0.3.47");
    for folder in [
        "api",
        "crypto",
        "error",
        "stuffer",
        "tls",
        "utils",
        "cmake",
        "CMakeLists.txt",
    ] {
        copy(&sys.join("lib").join(folder), &root.join(folder));
    }
    copy(
        &sys.join("lib/tests/features"),
        &root.join("tests/features"),
    );
    let bindings = root.join("bindings/rust/extended");
    write(
        &bindings.join("Cargo.toml"),
        "[workspace]\nmembers = [\"s2n-tls\", \"s2n-tls-sys\"]\nexclude = [\"generate\"]\nresolver = \"2\"\n",
    );
    // As in the repository: a toolchain pin that is not installed here, which
    // every cargo or rustc started under this folder would obey but for
    // RUSTUP_TOOLCHAIN.
    write(
        &bindings.join("rust-toolchain.toml"),
        "[toolchain]\nchannel = \"1.91\"\n",
    );
    write(
        &bindings.join(".gitignore"),
        "target/\nCargo.lock\ns2n-tls-sys/lib\n",
    );
    copy_crate(&sys, &bindings.join("s2n-tls-sys"), &["lib"]);
    copy_crate(&tls, &bindings.join("s2n-tls"), &[]);
    if version != "0.3.47" {
        let sys_manifest = bindings.join("s2n-tls-sys/Cargo.toml");
        replace_in(
            &sys_manifest,
            "version = \"0.3.47\"",
            &format!("version = \"{version}\""),
        );
        let tls_manifest = bindings.join("s2n-tls/Cargo.toml");
        replace_in(
            &tls_manifest,
            "version = \"0.3.47\"",
            &format!("version = \"{version}\""),
        );
        replace_in(&tls_manifest, "\"=0.3.47\"", &format!("\"={version}\""));
    }
    write(&root.join(".gitignore"), "/build/\n*.o\n");
    commit_all(&root, "s2n-tls in its repository layout");
    root
}

/// rustls's layout: a workspace whose `rustls/` folder is the crate. The
/// published manifest is used (the repository's inherits from a workspace
/// this test does not rebuild); `version` replaces the published one.
pub fn rustls(dir: &Path, version: &str) -> PathBuf {
    let root = dir.join("rustls");
    let published = registry_source("rustls", "0.23.46");
    copy_crate(&published, &root.join("rustls"), &[]);
    std::fs::copy(published.join("Cargo.toml"), root.join("rustls/Cargo.toml")).expect("manifest");
    replace_in(
        &root.join("rustls/Cargo.toml"),
        "version = \"0.23.46\"",
        &format!("version = \"{version}\""),
    );
    write(
        &root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"rustls\"]\nresolver = \"2\"\n",
    );
    write(&root.join(".gitignore"), "target/\n");
    commit_all(&root, "rustls in its repository layout");
    root
}

/// aws-lc-rs's layout: a workspace with `aws-lc-rs/` and `aws-lc-sys/`,
/// whose `aws-lc/` C sources are a git submodule (its own repository, made
/// from the published aws-lc-sys's `aws-lc/`, added with `git submodule
/// add` so that its repository lives under `.git/modules/`).
pub fn aws_lc_rs(dir: &Path) -> PathBuf {
    let upstream = dir.join("aws-lc");
    let sys = registry_source("aws-lc-sys", "0.47.0");
    let rs = registry_source("aws-lc-rs", "1.19.0");
    copy(&sys.join("aws-lc"), &upstream);
    commit_all(&upstream, "aws-lc");
    let root = dir.join("aws-lc-rs");
    copy_crate(&rs, &root.join("aws-lc-rs"), &[]);
    copy_crate(&sys, &root.join("aws-lc-sys"), &["aws-lc"]);
    write(&root.join("Cargo.toml"), &workspace_manifest(&[&rs, &sys]));
    write(&root.join(".gitignore"), "target/\n");
    commit_all(&root, "aws-lc-rs without its submodule");
    git(
        &root,
        &[
            "submodule",
            "--quiet",
            "add",
            "../aws-lc",
            "aws-lc-sys/aws-lc",
        ],
    );
    git(&root, &["commit", "--quiet", "-m", "aws-lc as a submodule"]);
    root
}

/// A root manifest whose `[workspace.dependencies]` has every dependency
/// the members inherit, with the requirements the published (normalized)
/// manifests recorded.
fn workspace_manifest(published: &[&Path]) -> String {
    let mut dependencies = std::collections::BTreeMap::new();
    for dir in published {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("manifest");
        let manifest: toml::Table = text.parse().expect("toml");
        let mut tables: Vec<&toml::Value> =
            ["dependencies", "dev-dependencies", "build-dependencies"]
                .iter()
                .filter_map(|key| manifest.get(*key))
                .collect();
        if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
            for target in targets.values() {
                for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                    tables.extend(target.get(key));
                }
            }
        }
        for table in tables.into_iter().filter_map(toml::Value::as_table) {
            for (name, spec) in table {
                let version = match spec {
                    toml::Value::String(version) => version.clone(),
                    other => match other.get("version").and_then(toml::Value::as_str) {
                        Some(version) => version.to_owned(),
                        None => continue,
                    },
                };
                dependencies.insert(name.clone(), version);
            }
        }
    }
    let mut text = "[workspace]\nmembers = [\"aws-lc-rs\", \"aws-lc-sys\"]\nresolver = \"2\"\n\n[workspace.dependencies]\n".to_owned();
    for (name, version) in dependencies {
        text.push_str(&format!("{name} = {:?}\n", version));
    }
    text
}

/// OpenSSL's repository at the release the pinned `openssl-src` carries:
/// its `openssl/` folder is OpenSSL's own tree (`Configure`, `crypto/`,
/// `ssl/`, `include/`, ...). With `version`, `VERSION.dat` says that
/// release instead (for a tree of another line).
pub fn openssl(dir: &Path, version: Option<(u32, u32, u32)>) -> PathBuf {
    let root = dir.join("openssl");
    let locked = super::locked_version("openssl-src");
    copy(
        &registry_source("openssl-src", &locked).join("openssl"),
        &root,
    );
    if let Some((major, minor, patch)) = version {
        write(
            &root.join("VERSION.dat"),
            &format!("MAJOR={major}\nMINOR={minor}\nPATCH={patch}\n"),
        );
    }
    commit_all(&root, "OpenSSL");
    root
}

pub fn commit_all(root: &Path, message: &str) {
    if !root.join(".git").exists() {
        git(root, &["init", "--quiet"]);
    }
    git(root, &["add", "--all"]);
    git(root, &["commit", "--quiet", "-m", message]);
}
