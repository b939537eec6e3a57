//! `regress list`: the harness names, one a line.

use regress::discover;

use super::{Context, Outcome};

pub fn list(context: &Context) -> anyhow::Result<Outcome> {
    let binary = discover::build(&context.workspace)?;
    let mut text = String::new();
    for name in discover::list(&binary)? {
        text.push_str(&name);
        text.push('\n');
    }
    context.reporter.print(&text);
    Ok(Outcome::Clean)
}
