//! `regress list`: the harness names, one a line.

use regress::program;

use super::{Context, Outcome};

pub fn list(context: &Context) -> anyhow::Result<Outcome> {
    let binary = program::build(&context.workspace)?;
    let mut text = String::new();
    for name in program::list(&binary)? {
        text.push_str(&name);
        text.push('\n');
    }
    context.reporter.print(&text);
    Ok(Outcome::Clean)
}
