//! `regress compare`: the latest measurements, path by library.

use anyhow::bail;
use regress::report::compare::Comparison;

use super::{write_file, Context, Outcome};
use crate::cli::CompareArgs;

pub fn compare(context: &Context, args: &CompareArgs) -> anyhow::Result<Outcome> {
    let workspace = &context.workspace;
    let comparison = Comparison::from_records(workspace)?;
    if comparison.paths.is_empty() {
        bail!(
            "no library measurements in {}; run `cargo run -p regress -- run` first",
            workspace.display_path(&workspace.perf_outputs_dir())
        );
    }
    context.reporter.print(&comparison.to_text());
    if let Some(path) = &args.markdown {
        write_file(context.reporter, path, &comparison.to_markdown())?;
    }
    if let Some(path) = &args.json {
        write_file(context.reporter, path, &comparison.to_json()?)?;
    }
    Ok(Outcome::Clean)
}
