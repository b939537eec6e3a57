//! `regress readme`: rewrite (or check) the README's generated tables from
//! `baselines/`.

use regress::report::readme;

use super::{Context, Outcome};
use crate::cli::ReadmeArgs;

pub fn readme(context: &Context, args: &ReadmeArgs) -> anyhow::Result<Outcome> {
    let path = context.workspace.root().join(&args.file);
    let (text, updated) = readme::regenerate(&path, &context.workspace.baselines_dir())?;
    let shown = context.workspace.display_path(&path);
    if text == updated {
        context
            .reporter
            .note(&format!("{shown}: the tables agree with baselines/"));
        return Ok(Outcome::Clean);
    }
    if args.check {
        context.reporter.note(&format!(
            "{shown}: the tables disagree with baselines/; run `{}`",
            readme::COMMAND
        ));
        return Ok(Outcome::Regressed);
    }
    regress::atomic_file::write(&path, updated.as_bytes())?;
    context
        .reporter
        .note(&format!("{shown}: tables regenerated from baselines/"));
    Ok(Outcome::Clean)
}
