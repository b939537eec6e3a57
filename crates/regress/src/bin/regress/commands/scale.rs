//! `regress scale`: wall-clock operations per second of a path on 1..N
//! threads, natively (no Valgrind).

use std::time::Duration;

use anyhow::bail;
use regress::measure::scale::{self, Scaling, DEFAULT_PATHS};
use regress::program;
use regress::report::events::{Event, Listener};
use regress::HarnessName;

use super::{selected, write_file, Context, Outcome};
use crate::cli::ScaleArgs;

pub fn scale(context: &Context, args: &ScaleArgs) -> anyhow::Result<Outcome> {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        bail!("--seconds must be a positive number");
    }
    let reporter = context.reporter;
    let threads = regress::parallel::workers(args.threads);
    let binary = program::build(&context.workspace)?;
    let all = program::list(&binary)?;
    let names: Vec<HarnessName> = if args.filters.harnesses.is_empty() {
        all.into_iter()
            .filter(|name| DEFAULT_PATHS.iter().any(|path| name.ends_with(path)))
            .collect()
    } else {
        selected(all, &args.filters.harnesses)?
    };
    let outputs = context.workspace.perf_outputs_dir().join("scale");
    let mut results: Vec<Scaling> = Vec::new();
    let mut markdown = String::new();
    for (index, name) in names.iter().enumerate() {
        reporter.event(Event::Scaling {
            index: index + 1,
            total: names.len(),
            harness: name,
            threads,
            seconds: args.seconds,
        });
        let scaling = scale::scale(
            &binary,
            name,
            threads,
            Duration::from_secs_f64(args.seconds),
            &outputs.join(".scratch"),
        )?;
        reporter.print(&format!(
            "{name}\n{}",
            regress::report::scaling_table(&scaling).to_text()
        ));
        markdown.push_str(&format!(
            "### {name}\n\n{}\n",
            regress::report::scaling_table(&scaling).to_markdown()
        ));
        regress::atomic_file::write(
            &name.file_in(&outputs, ".json"),
            serde_json::to_string_pretty(&scaling)?.as_bytes(),
        )?;
        results.push(scaling);
    }
    if let Some(path) = &args.markdown {
        write_file(reporter, path, &markdown)?;
    }
    if let Some(path) = &args.json {
        write_file(reporter, path, &serde_json::to_string_pretty(&results)?)?;
    }
    Ok(Outcome::Clean)
}
