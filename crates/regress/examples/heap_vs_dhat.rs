//! Cross-checks the heap hooks against DHAT: for each harness named on the
//! command line (a filter, as `regress run --harness`), the heap child's
//! allocations and bytes allocated of the counted run against DHAT's
//! whole-process figures of 3 runs minus 2. Exits 1 on any difference.
//!
//! `cargo run -p regress --example heap_vs_dhat -- handshake_ecdsa config_build`
//! (Valgrind from `REGRESS_VALGRIND`, else `PATH`).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use regress::measure::metrics::Metric;
use regress::measure::valgrind::Valgrind;
use regress::workspace::Workspace;
use regress::{program, Runner};
use regress_profile::dhat;

fn main() -> anyhow::Result<ExitCode> {
    let filters: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::env::current_dir().context("current directory")?;
    let workspace = Workspace::find_from(&dir).context("no workspace here")?;
    let binary = program::build(&workspace)?;
    let names = program::select(program::list(&binary)?, &filters);
    let valgrind = Valgrind::from_env()?;
    println!("Valgrind {} ({})", valgrind.version, valgrind.method);
    let runner = Runner::new(workspace, valgrind, Duration::from_secs(600))?;
    let mut differences = 0;
    for name in &names {
        let measurement = runner.measure(name, &binary)?;
        let sites = runner.allocation_sites(name, &binary)?;
        let dhat = dhat::total(&sites);
        let hooks = (
            measurement.metrics.get(&Metric::Allocations).copied(),
            measurement.metrics.get(&Metric::BytesAllocated).copied(),
        );
        // Checked: a negative DHAT figure (a broken subtraction) is a
        // difference, not a wrapped number.
        let dhat_figures = (
            u64::try_from(dhat.blocks).ok(),
            u64::try_from(dhat.bytes).ok(),
        );
        let same = hooks.0.is_some() && hooks == dhat_figures;
        if !same {
            differences += 1;
        }
        println!(
            "{name}: hooks {:?} allocations, {:?} bytes; DHAT {} blocks, {} bytes: {}",
            hooks.0,
            hooks.1,
            dhat.blocks,
            dhat.bytes,
            if same { "same" } else { "DIFFERENT" }
        );
    }
    println!("{} harnesses, {differences} differences", names.len());
    Ok(if differences == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
