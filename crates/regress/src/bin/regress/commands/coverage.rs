//! `regress coverage`: what the latest measurements in `perf_outputs/`
//! executed, per library and per file.

use regress::coverage::{self, SourceFinder};

use super::{Context, Outcome};
use crate::cli::{CoverageArgs, CoverageFormat};

pub fn coverage(context: &Context, args: &CoverageArgs) -> anyhow::Result<Outcome> {
    let outputs = context.workspace.perf_outputs_dir();
    // aws-lc's and OpenSSL's sources are found in cargo's registry, in the
    // versions this workspace locks (their debug paths name no version, or
    // a build folder that is gone).
    let lock = std::fs::read_to_string(context.workspace.cargo_lock()).unwrap_or_default();
    let report = coverage::coverage(&outputs, args.library, &SourceFinder::new(&lock))?;
    context.reporter.print(&match args.format {
        CoverageFormat::Text => report.text(),
        CoverageFormat::Markdown => report.markdown(),
        CoverageFormat::Json => report.to_json(),
    });
    Ok(Outcome::Clean)
}
