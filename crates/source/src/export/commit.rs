//! Writing a commit's tree into an export, straight from git's objects.
//!
//! `git ls-tree -r` lists the tree and one `git cat-file --batch` streams
//! the blobs, so the user's repository is only read: no worktree is added,
//! no index or ref is written. Unlike `git archive`, this ignores
//! `export-ignore` and `export-subst` attributes, so the export is the
//! commit's content byte for byte.
//!
//! A submodule the library needs (aws-lc-rs's `aws-lc-sys/aws-lc`) is
//! exported the same way from the submodule's own repository under the
//! checkout's `.git/modules/`, at the commit the superproject records for
//! it. Other submodules become empty folders, as in a checkout that did not
//! initialise them.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::SourceError;
use crate::git::{is_object_name, Git};
use crate::library::Library;
use crate::paths::{RelativePath, TreeWriter};
use crate::process::Streaming;

/// The longest symlink target accepted (Linux's PATH_MAX).
const MAX_LINK_BYTES: u64 = 4096;

/// One entry of `git ls-tree -r`.
#[derive(Debug)]
struct Entry {
    mode: u32,
    oid: String,
    path: RelativePath,
}

/// Where a commit is read from and written to.
pub(crate) struct CommitSource<'a> {
    pub library: &'static Library,
    /// The repository holding the commit.
    pub git: Git,
    /// Its own folder: submodules are under `modules/` there.
    pub git_dir: PathBuf,
    /// Its work tree, when it has one (for old-style submodules whose
    /// repository is inside the work tree).
    pub work_tree: Option<PathBuf>,
    /// The user's checkout, for messages.
    pub checkout: &'a Path,
}

/// Writes the entries of `commit`'s tree under `paths` (each a file or a
/// folder, matched literally; every entry when empty) under `prefix` (the
/// repository root when `None`).
pub(crate) fn write_commit(
    source: &CommitSource<'_>,
    commit: &str,
    paths: &[&str],
    prefix: Option<&RelativePath>,
    writer: &mut TreeWriter,
) -> Result<(), SourceError> {
    // `ls-tree` matches its path arguments literally, component by
    // component (`rustls` is not `rustls-aws-lc-rs`, `*` is no glob).
    let mut args = vec![
        "ls-tree",
        "-r",
        "-z",
        "--full-tree",
        "--end-of-options",
        commit,
    ];
    if !paths.is_empty() {
        args.push("--");
        args.extend(paths);
    }
    let listing = source.git.run(args)?;
    let entries = parse_ls_tree(&listing, source)?;
    let place = |path: &RelativePath| match prefix {
        Some(prefix) => prefix.join(path),
        None => path.clone(),
    };
    let (gitlinks, blobs): (Vec<&Entry>, Vec<&Entry>) =
        entries.iter().partition(|entry| entry.mode == 0o160000);
    stream_blobs(source, &blobs, &place, writer)?;
    for link in gitlinks {
        let path = place(&link.path);
        if source
            .library
            .submodules
            .iter()
            .any(|needed| needed.as_bytes() == path.as_bytes())
        {
            let submodule = open_submodule(source, commit, &link.path, &link.oid, &path)?;
            writer.folder(&path).map_err(|error| {
                SourceError::io("create", writer.root().join(path.as_path()), error)
            })?;
            write_commit(&submodule, &link.oid, &[], Some(&path), writer)?;
        } else {
            writer.folder(&path).map_err(|error| {
                SourceError::io("create", writer.root().join(path.as_path()), error)
            })?;
        }
    }
    Ok(())
}

fn parse_ls_tree(listing: &[u8], source: &CommitSource<'_>) -> Result<Vec<Entry>, SourceError> {
    let unexpected = |reason: String| SourceError::Unexpected {
        command: "git ls-tree -r -z".to_owned(),
        reason,
    };
    let mut entries = Vec::new();
    for record in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let tab = record
            .iter()
            .position(|&b| b == b'\t')
            .ok_or_else(|| unexpected("a record without a tab".to_owned()))?;
        let header = std::str::from_utf8(&record[..tab])
            .map_err(|_| unexpected("a header that is not text".to_owned()))?;
        let mut fields = header.split(' ');
        let (Some(mode), Some(_kind), Some(oid), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(unexpected(format!("header {header:?}")));
        };
        let mode =
            u32::from_str_radix(mode, 8).map_err(|_| unexpected(format!("mode {mode:?}")))?;
        if !is_object_name(oid) {
            return Err(unexpected(format!("object name {oid:?}")));
        }
        let path = RelativePath::from_bytes(&record[tab + 1..]).map_err(|reason| {
            SourceError::UnsafePath {
                repo: source.checkout.to_path_buf(),
                reason,
            }
        })?;
        entries.push(Entry {
            mode,
            oid: oid.to_owned(),
            path,
        });
    }
    Ok(entries)
}

/// Streams every blob through one `git cat-file --batch` into the export.
fn stream_blobs(
    source: &CommitSource<'_>,
    blobs: &[&Entry],
    place: &dyn Fn(&RelativePath) -> RelativePath,
    writer: &mut TreeWriter,
) -> Result<(), SourceError> {
    if blobs.is_empty() {
        return Ok(());
    }
    let program = source.git.program(["cat-file", "--batch"]);
    let mut child = Streaming::spawn(&program, source.git.limits())?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let requests: Vec<u8> = blobs
        .iter()
        .flat_map(|entry| format!("{}\n", entry.oid).into_bytes())
        .collect();
    // A thread feeds the requests so neither side blocks on a full pipe.
    let feeder = std::thread::spawn(move || stdin.write_all(&requests));
    let mut stdout = BufReader::with_capacity(256 * 1024, &mut child.stdout);
    let result = (|| -> Result<(), SourceError> {
        for entry in blobs {
            read_one(&mut stdout, entry, &place(&entry.path), writer, source)?;
        }
        Ok(())
    })();
    drop(stdout);
    if result.is_err() {
        // cat-file may be blocked writing what nobody reads any more, and
        // the feeder blocked behind it: stop it before waiting for either.
        child.abort();
    }
    let fed = feeder.join();
    if let Some(stopped) = child.stop_reason() {
        return Err(stopped.into());
    }
    let (status, stderr) = child.finish()?;
    result?;
    if !matches!(fed, Ok(Ok(()))) || !status.success() {
        return Err(SourceError::Git {
            command: program.display(),
            status: status.to_string(),
            stderr,
        });
    }
    Ok(())
}

fn read_one(
    stdout: &mut impl BufRead,
    entry: &Entry,
    path: &RelativePath,
    writer: &mut TreeWriter,
    source: &CommitSource<'_>,
) -> Result<(), SourceError> {
    let command = "git cat-file --batch";
    let unexpected = |reason: String| SourceError::Unexpected {
        command: command.to_owned(),
        reason,
    };
    let mut header = String::new();
    stdout
        .read_line(&mut header)
        .map_err(|error| unexpected(format!("cannot read: {error}")))?;
    let fields: Vec<&str> = header.trim_end().split(' ').collect();
    let size = match fields.as_slice() {
        [oid, "blob", size] if *oid == entry.oid => size
            .parse::<u64>()
            .map_err(|_| unexpected(format!("size {size:?}")))?,
        [_, "missing"] => {
            return Err(SourceError::Git {
                command: command.to_owned(),
                status: "object missing".to_owned(),
                stderr: format!(
                    "{} ({}) is not in {} (a partial or shallow clone?)",
                    entry.oid,
                    entry.path,
                    source.git.place().display()
                ),
            })
        }
        _ => return Err(unexpected(format!("header {:?}", header.trim_end()))),
    };
    let full = writer.root().join(path.as_path());
    let mut content = Read::take(&mut *stdout, size);
    match entry.mode {
        0o120000 => {
            if size > MAX_LINK_BYTES {
                return Err(SourceError::UnsafeContent {
                    what: "a symlink",
                    repo: source.checkout.to_path_buf(),
                    reason: format!("{} points at a target of {size} bytes", entry.path),
                });
            }
            let mut target = Vec::new();
            content
                .read_to_end(&mut target)
                .map_err(|error| unexpected(error.to_string()))?;
            writer
                .symlink(path, OsStr::from_bytes(&target))
                .map_err(|error| SourceError::io("create the symlink", &full, error))?;
        }
        mode => {
            let written = writer
                .file(path, &mut content, mode & 0o111 != 0)
                .map_err(|error| SourceError::io("write", &full, error))?;
            if written != size {
                return Err(unexpected(format!(
                    "{} ended after {written} of {size} bytes",
                    entry.path
                )));
            }
        }
    }
    let mut newline = [0u8; 1];
    stdout
        .read_exact(&mut newline)
        .map_err(|error| unexpected(error.to_string()))?;
    Ok(())
}

/// The repository of the submodule at `path` (relative to `source`'s root),
/// checked to hold `commit`.
fn open_submodule<'a>(
    source: &CommitSource<'a>,
    superproject_commit: &str,
    path: &RelativePath,
    commit: &str,
    shown_path: &RelativePath,
) -> Result<CommitSource<'a>, SourceError> {
    let missing = |detail: String| SourceError::SubmoduleMissing {
        library: source.library.name,
        path: shown_path.to_string(),
        commit: commit.to_owned(),
        repo: source.checkout.to_path_buf(),
        detail,
    };
    let name = submodule_name(source, superproject_commit, path)?;
    let mut candidates = vec![source.git_dir.join("modules").join(&name)];
    if let Some(work_tree) = &source.work_tree {
        candidates.push(work_tree.join(path.as_path()).join(".git"));
    }
    let Some(git_dir) = candidates
        .into_iter()
        .find(|dir| dir.join("objects").is_dir())
    else {
        return Err(missing(" (it was never initialised)".to_owned()));
    };
    let git = Git::git_dir(&git_dir, *source.git.limits());
    let has_commit = git
        .try_run([
            "cat-file",
            "-e",
            "--end-of-options",
            &format!("{commit}^{{commit}}"),
        ])?
        .success();
    if !has_commit {
        return Err(missing(format!(
            " ({} does not have that commit; fetch it in the submodule)",
            git_dir.display()
        )));
    }
    let work_tree = source
        .work_tree
        .as_ref()
        .map(|tree| tree.join(path.as_path()));
    Ok(CommitSource {
        library: source.library,
        git,
        git_dir,
        work_tree,
        checkout: source.checkout,
    })
}

/// The name `.gitmodules` (at the superproject's commit) gives the
/// submodule at `path`: its repository is `.git/modules/<name>`. Falls back
/// to the path, which is what `git submodule add` uses.
fn submodule_name(
    source: &CommitSource<'_>,
    commit: &str,
    path: &RelativePath,
) -> Result<String, SourceError> {
    let finished = source.git.try_run([
        "config",
        "-z",
        "--blob",
        &format!("{commit}:.gitmodules"),
        "--get-regexp",
        r"^submodule\..*\.path$",
    ])?;
    for record in finished.stdout.split(|&b| b == 0) {
        let Some(newline) = record.iter().position(|&b| b == b'\n') else {
            continue;
        };
        let (key, value) = (&record[..newline], &record[newline + 1..]);
        if value == path.as_bytes() {
            let key = String::from_utf8_lossy(key);
            if let Some(name) = key
                .strip_prefix("submodule.")
                .and_then(|rest| rest.strip_suffix(".path"))
            {
                // The name becomes a path under .git/modules: check it too.
                if RelativePath::new(name).is_ok() {
                    return Ok(name.to_owned());
                }
            }
        }
    }
    Ok(path.to_string())
}
