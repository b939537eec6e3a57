//! `regress compare`: the latest measurements, path by library.

use anyhow::bail;
use regress::report::compare::Comparison;
use regress::report::cpu_matrix::CpuMatrix;

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

/// `regress --cpu all compare`: every harness's count under each CPU
/// profile, against the default's, from each profile's latest records.
pub fn cpu_matrix(context: &Context, args: &CompareArgs) -> anyhow::Result<Outcome> {
    let matrix = CpuMatrix::from_records(&context.workspace)?;
    if matrix.profiles.len() < 2 {
        bail!(
            "fewer than two CPU profiles have measurements under {}; run \
             `cargo run -p regress -- --cpu all run` first",
            context
                .workspace
                .display_path(&context.workspace.clone().perf_outputs_dir())
        );
    }
    let table = matrix.table(None);
    let mut text = table.to_text();
    text.push_str(&format!(
        "\nInstructions of one run ({}).\n",
        matrix.measured_with.join("; ")
    ));
    context.reporter.print(&text);
    if let Some(path) = &args.markdown {
        write_file(context.reporter, path, &table.to_markdown())?;
    }
    if let Some(path) = &args.json {
        write_file(context.reporter, path, &matrix.to_json()?)?;
    }
    Ok(Outcome::Clean)
}
