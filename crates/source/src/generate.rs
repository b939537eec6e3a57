//! Making an export buildable: the generation steps a library's repository
//! needs before cargo can build it from there.
//!
//! s2n-tls's repository does not hold a buildable `s2n-tls-sys`: its
//! `bindings/rust/extended/generate.sh` copies the C tree into
//! `s2n-tls-sys/lib/` and runs the `generate/` crate (bindgen, which needs
//! libclang: Debian's `libclang-dev`) to write `src/api.rs`,
//! `src/features/*.rs`, `files.rs` and the manifest's feature list. This
//! does the same inside the export, never in the user's checkout, and
//! without the script's `rustup` calls (see [`crate::cargo`] for the
//! toolchain). An export that already carries generated bindings (no
//! `generate/` folder, `src/api.rs` present) only gets the C tree copied.
//!
//! rustls and aws-lc-rs need nothing: aws-lc-rs commits its generated files
//! (symbol-prefix headers, source lists, pregenerated bindings).

use std::path::{Path, PathBuf};

use crate::cargo::Cargo;
use crate::dirs::SourceDirs;
use crate::error::SourceError;
use crate::library::{Generation, Library, S2N_BINDINGS};
use crate::options::Options;
use crate::paths::{copy_tree, inside, symlinks_below};
use crate::process::{self, RunOptions};

/// What `generate.sh` copies into `s2n-tls-sys/lib/`: (from, to), relative
/// to the repository root and to `lib/`.
const S2N_C_TREE: &[(&str, &str)] = &[
    ("api", "api"),
    ("crypto", "crypto"),
    ("error", "error"),
    ("stuffer", "stuffer"),
    ("tls", "tls"),
    ("utils", "utils"),
    ("tests/features", "tests/features"),
    ("CMakeLists.txt", "CMakeLists.txt"),
    ("cmake", "cmake"),
];

/// Files `s2n-tls-sys` cannot build without, after generation.
const S2N_GENERATED: &[&str] = &["Cargo.toml", "files.rs", "src/api.rs"];

/// How many lines of a failed step's output an error shows.
const TAIL_LINES: usize = 25;

/// Runs `library`'s generation step in the export `tree`.
pub(crate) fn generate(
    library: &'static Library,
    tree: &Path,
    label: &str,
    dirs: &SourceDirs,
    options: &Options,
) -> Result<(), SourceError> {
    match library.generation {
        Generation::None => Ok(()),
        Generation::S2nTlsBindings => s2n_tls_bindings(library, tree, label, dirs, options),
        Generation::OpenSslShell => crate::openssl_src::generate(tree, dirs, options),
    }
}

fn s2n_tls_bindings(
    library: &'static Library,
    tree: &Path,
    label: &str,
    dirs: &SourceDirs,
    options: &Options,
) -> Result<(), SourceError> {
    // The generation step writes into these two folders, and the
    // generator (bindgen, a process of its own) would follow a link it met
    // there: a revision that commits one (`s2n-tls-sys -> /somewhere`) is
    // refused, as is one with a link on the way to them.
    let mut writable = Vec::new();
    for folder in ["s2n-tls-sys", "generate"] {
        let relative = Path::new(S2N_BINDINGS).join(folder);
        let full = inside(tree, &relative).map_err(|error| unsafe_tree(tree, error.to_string()))?;
        let links =
            symlinks_below(&full, 5).map_err(|error| SourceError::io("list", &full, error))?;
        if let Some(link) = links.first() {
            return Err(unsafe_tree(
                tree,
                format!(
                    "{} is a symlink inside {}, a folder the generation step writes into; \
                     the runner never writes through a link",
                    link.strip_prefix(tree).unwrap_or(link).display(),
                    relative.display()
                ),
            ));
        }
        writable.push(full);
    }
    let (sys, generator) = (writable[0].clone(), writable[1].clone());
    copy_c_tree(library, tree, &sys, label)?;
    if generator.join("Cargo.toml").is_file() {
        run_generator(library, &generator, label, dirs, options)?;
    } else if !sys.join("src/api.rs").is_file() {
        return Err(SourceError::Layout {
            library: library.name,
            path: tree.to_path_buf(),
            at: format!(" at {label}"),
            missing: format!(
                "{S2N_BINDINGS}/generate/ (to generate the bindings) or \
                 {S2N_BINDINGS}/s2n-tls-sys/src/api.rs (generated ones)"
            ),
        });
    }
    let missing: Vec<&str> = S2N_GENERATED
        .iter()
        .copied()
        .filter(|file| !sys.join(file).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(SourceError::Layout {
            library: library.name,
            path: sys,
            at: format!(" at {label}, after generation"),
            missing: missing.join(", "),
        });
    }
    Ok(())
}

/// A revision whose tree holds a link where the generation writes.
fn unsafe_tree(tree: &Path, reason: String) -> SourceError {
    SourceError::UnsafeContent {
        what: "a symlink",
        repo: tree.to_path_buf(),
        reason,
    }
}

/// `generate.sh`'s copies: a fresh `s2n-tls-sys/lib/` with the C sources.
fn copy_c_tree(
    library: &'static Library,
    tree: &Path,
    sys: &Path,
    label: &str,
) -> Result<(), SourceError> {
    let missing: Vec<&str> = S2N_C_TREE
        .iter()
        .map(|(from, _)| *from)
        .filter(|from| std::fs::symlink_metadata(tree.join(from)).is_err())
        .collect();
    if !missing.is_empty() {
        return Err(SourceError::Layout {
            library: library.name,
            path: tree.to_path_buf(),
            at: format!(" at {label}"),
            missing: missing.join(", "),
        });
    }
    let lib = sys.join("lib");
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |error| SourceError::io(action, path, error)
    };
    // Whatever the revision has at lib/ goes, as generate.sh's `rm -rf`.
    match std::fs::symlink_metadata(&lib) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&lib).map_err(io("remove", &lib))?,
        Ok(_) => std::fs::remove_file(&lib).map_err(io("remove", &lib))?,
        Err(_) => {}
    }
    std::fs::create_dir_all(lib.join("tests")).map_err(io("create", &lib))?;
    let features = sys.join("src/features");
    std::fs::create_dir_all(&features).map_err(io("create", &features))?;
    for (from, to) in S2N_C_TREE {
        let target = lib.join(to);
        copy_tree(&tree.join(from), &target).map_err(io("copy the C sources to", &target))?;
    }
    Ok(())
}

/// `cargo run -- ../s2n-tls-sys` in the export's `generate/`, logged.
fn run_generator(
    library: &'static Library,
    generator: &Path,
    label: &str,
    dirs: &SourceDirs,
    options: &Options,
) -> Result<(), SourceError> {
    make_own_workspace(&generator.join("Cargo.toml"))?;
    let cargo = Cargo::detect(dirs.workspace(), options)?;
    let log = log_path(dirs, "generate-s2n-tls")?;
    let program = cargo
        .program(generator, ["run", "--quiet", "--", "../s2n-tls-sys"])
        .env("CARGO_TARGET_DIR", dirs.generate_target());
    let finished = process::run(
        &program,
        &options.limits(options.timeouts.generate),
        RunOptions {
            capture_stdout: false,
            log: Some(&log),
            echo: options.echo,
        },
    )?;
    if finished.success() {
        return Ok(());
    }
    let tail = finished.tail(TAIL_LINES);
    let hint = if tail.contains("libclang") {
        "\n  bindgen needs libclang: install Debian's libclang-dev (scripts/install-deps.sh)."
    } else {
        ""
    };
    Err(SourceError::Generation {
        library: library.name,
        revision: label.to_owned(),
        step: "Rust bindings (bindgen, generate/)",
        detail: format!(
            "It ended with {}; its last lines:\n{tail}{hint}",
            finished.status
        ),
        log,
    })
}

/// The generator crate is excluded from s2n-tls's bindings workspace, so
/// cargo keeps looking upwards for a workspace and, in an export under this
/// workspace's `target/`, finds this workspace and refuses to run ("current
/// package believes it's in a workspace when it's not"). An empty
/// `[workspace]` table makes the generator its own workspace. Only the
/// export's copy of the file is changed.
fn make_own_workspace(manifest: &Path) -> Result<(), SourceError> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|error| SourceError::io("read", manifest, error))?;
    let has_workspace = text
        .parse::<toml::Table>()
        .map(|table| table.contains_key("workspace"))
        .unwrap_or(false);
    if !has_workspace {
        std::fs::write(manifest, format!("{text}\n[workspace]\n"))
            .map_err(|error| SourceError::io("write", manifest, error))?;
    }
    Ok(())
}

/// A new log file under `target/regress-source/logs/`.
pub(crate) fn log_path(dirs: &SourceDirs, what: &str) -> Result<PathBuf, SourceError> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or(0);
    Ok(dirs
        .logs()?
        .join(format!("{what}-{stamp}-{}.log", std::process::id())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A revision that commits `s2n-tls-sys` as a link to a folder outside
    /// (or a link inside it) is refused before anything is removed, copied
    /// or generated: the outside folder keeps every file.
    #[test]
    fn a_link_where_generation_writes_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).expect("mkdir");
        let dirs = SourceDirs::named(&workspace, "regress-source-test").expect("dirs");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(outside.join("lib")).expect("mkdir");
        std::fs::write(outside.join("lib/precious.txt"), "keep").expect("write");
        std::fs::write(outside.join("Cargo.toml"), "keep").expect("write");
        let tree = dir.path().join("tree");
        for (from, _) in S2N_C_TREE {
            std::fs::create_dir_all(tree.join(from)).expect("mkdir");
        }
        let bindings = tree.join(S2N_BINDINGS);
        std::fs::create_dir_all(bindings.join("generate")).expect("mkdir");
        std::os::unix::fs::symlink(&outside, bindings.join("s2n-tls-sys")).expect("link");
        let library = &crate::library::S2N_TLS;
        let error = generate(library, &tree, "HEAD", &dirs, &Options::default()).unwrap_err();
        assert!(error.to_string().contains("is a symlink"), "{error}");
        assert_eq!(
            std::fs::read_to_string(outside.join("lib/precious.txt")).expect("kept"),
            "keep"
        );
        // A link deeper inside: generate/Cargo.toml -> the outside file.
        std::fs::remove_file(bindings.join("s2n-tls-sys")).expect("rm");
        std::fs::create_dir_all(bindings.join("s2n-tls-sys")).expect("mkdir");
        std::os::unix::fs::symlink(
            outside.join("Cargo.toml"),
            bindings.join("generate/Cargo.toml"),
        )
        .expect("link");
        let error = generate(library, &tree, "HEAD", &dirs, &Options::default()).unwrap_err();
        assert!(error.to_string().contains("generate/Cargo.toml"), "{error}");
        assert_eq!(
            std::fs::read_to_string(outside.join("Cargo.toml")).expect("kept"),
            "keep"
        );
    }

    /// What generation copies is exported.
    #[test]
    fn the_c_tree_is_exported() {
        for (from, _) in S2N_C_TREE {
            assert!(crate::library::S2N_TLS.export.contains(from), "{from}");
        }
    }
}
