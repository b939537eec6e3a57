//! `regress readme`: rewrite (or check) the generated tables of the results
//! pages (`docs/results/*.md`) from `baselines/`.

use regress::report::readme;

use super::{Context, Outcome};
use crate::cli::ReadmeArgs;

pub fn readme(context: &Context, args: &ReadmeArgs) -> anyhow::Result<Outcome> {
    let pages = readme::regenerate(
        context.workspace.root(),
        &context.workspace.baselines_dir(),
        &|baselines, text| Ok(regress::history::table::readme_sections(baselines, text)?),
    )?;
    let mut outcome = Outcome::Clean;
    for page in pages {
        let shown = context.workspace.display_path(&page.path);
        if page.is_current() {
            context
                .reporter
                .note(&format!("{shown}: the tables agree with baselines/"));
        } else if args.check {
            context.reporter.note(&format!(
                "{shown}: the tables disagree with baselines/; run `{}`",
                readme::COMMAND
            ));
            outcome = Outcome::Regressed;
        } else {
            regress::atomic_file::write(&page.path, page.updated.as_bytes())?;
            context
                .reporter
                .note(&format!("{shown}: tables regenerated from baselines/"));
        }
    }
    Ok(outcome)
}
