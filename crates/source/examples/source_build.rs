//! Builds this workspace's harnesses against one revision of a library
//! checkout, printing each step and its time: what phase B's
//! `regress diff --library NAME=PATH` will do per side.
//!
//! ```sh
//! cargo run -p regress-source --example source_build -- s2n-tls=/path/to/s2n-tls [REV]
//! ```
//!
//! Without REV, the checkout's working tree as it is. `--no-build` stops
//! after the patch set is resolved. The measured program's path is printed
//! on standard output (`program PATH`), the steps on standard error.

use std::path::PathBuf;
use std::time::Instant;

use regress_source::{
    build_harnesses, export, Checkout, Library, Options, PatchSet, Revision, ScratchWorkspace,
    Side, SourceDirs, SourceError,
};

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), SourceError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let build = !args.iter().any(|arg| arg == "--no-build");
    let positional: Vec<&String> = args.iter().filter(|arg| *arg != "--no-build").collect();
    let Some((name, path)) = positional.first().and_then(|spec| spec.split_once('=')) else {
        eprintln!("usage: source_build LIBRARY=PATH [REVISION] [--no-build]");
        std::process::exit(2);
    };
    let options = Options {
        echo: true,
        ..Options::default()
    };
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dirs = SourceDirs::new(&workspace)?;
    let started = Instant::now();
    let step = |what: &str| eprintln!("[{:>7.1} s] {what}", started.elapsed().as_secs_f64());

    let checkout = Checkout::open(Library::named(name)?, &PathBuf::from(path), &options)?;
    let revision = match positional.get(1) {
        Some(reference) => checkout.resolve(Side::Head, reference)?,
        None => Revision::WorkingTree,
    };
    step(&format!("resolved {}", revision.label()));
    let exported = export(&checkout, &revision, &dirs, &options)?;
    step(&format!(
        "exported {} to {} ({})",
        exported.label,
        exported.tree.display(),
        if exported.created { "new" } else { "reused" }
    ));
    let set = PatchSet::from_export(&exported)?;
    for krate in &set.crates {
        step(&format!("provides {} {}", krate.name, krate.version));
    }
    let scratch = ScratchWorkspace::prepare(&dirs, std::slice::from_ref(&set), &options)?;
    for update in &scratch.lock_updates {
        step(&format!(
            "scratch lock: {} {} -> {}",
            update.krate, update.from, update.to
        ));
    }
    step(&format!(
        "patch set resolves in {}",
        scratch.root().display()
    ));
    if build {
        let built = build_harnesses(&scratch, &dirs, &dirs.build_target(), &[], &options)?;
        for executable in &built.executables {
            step(&format!("built {}", executable.display()));
        }
        println!("program {}", built.program.display());
    }
    Ok(())
}
