//! A program and its arguments, working folder and environment changes,
//! kept as data so that messages can show the command line and nothing
//! ever goes through a shell.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A command to run: [`crate::run`] or [`crate::Streaming::spawn`].
#[derive(Debug, Clone)]
pub struct Program {
    program: OsString,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    set: Vec<(OsString, OsString)>,
    remove: Vec<OsString>,
}

impl Program {
    pub fn new(program: impl Into<OsString>) -> Program {
        Program {
            program: program.into(),
            args: Vec::new(),
            dir: None,
            set: Vec::new(),
            remove: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Program {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Program
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Program {
        self.dir = Some(dir.into());
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Program {
        self.set.push((key.into(), value.into()));
        self
    }

    pub fn env_remove(mut self, key: impl Into<OsString>) -> Program {
        self.remove.push(key.into());
        self
    }

    /// The command line, for messages (not for a shell): `git ls-tree -r …
    /// (in /repo)`.
    pub fn display(&self) -> String {
        let mut text = String::new();
        text.push_str(
            &Path::new(&self.program)
                .file_name()
                .unwrap_or(&self.program)
                .to_string_lossy(),
        );
        for arg in &self.args {
            text.push(' ');
            text.push_str(&arg.to_string_lossy());
        }
        if let Some(dir) = &self.dir {
            text.push_str(&format!(" (in {})", dir.display()));
        }
        text
    }

    /// How errors name it: the command line in backquotes.
    pub(crate) fn label(&self) -> String {
        format!("`{}`", self.display())
    }

    /// The `std` command, standard input closed.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).stdin(Stdio::null());
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        for key in &self.remove {
            command.env_remove(key);
        }
        for (key, value) in &self.set {
            command.env(key, value);
        }
        command
    }
}
