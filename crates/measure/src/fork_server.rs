//! The measured program as a fork server: started once under Valgrind, it
//! forks one child per request, and each child serves its request as a
//! freshly started program would.
//!
//! Why: Valgrind's own start-up (reading the program's line tables and
//! symbols, loading its tools, translating the program's start) took about
//! 0.45 s of each child's 0.96 s on a handshake, repeated for every harness
//! of every run. A child forked from a server inherits all of that.
//!
//! Why the counts do not depend on which requests came before: the server
//! itself does nothing between two forks but wait for its child and write
//! eight bytes from its stack. It allocates nothing, so every child starts
//! from the same memory (heap, stack, mappings) as the one before it; the
//! request is read by the child, after the fork. With Callgrind's
//! instrumentation off until the counted run (`--instr-atstart=no`), the
//! server's own instructions are never counted, and Callgrind names each
//! child's dumps after the child's process id (`--callgrind-out-file=…%p`).
//!
//! The protocol, on the server's standard input and output:
//!
//! 1. the server writes [`HELLO`] (a program from before the fork server
//!    ignores [`ENV_FORK_SERVER_PROTOCOL`] and writes nothing, so the runner starts
//!    it once per child instead);
//! 2. for each request, the runner writes its length (4 bytes, little
//!    endian, at most [`MAX_REQUEST`]) and then `NAME=VALUE` lines: the
//!    variables of a child's request ([`crate::child::ChildRequest::to_env`],
//!    names starting with `REGRESS_CHILD_`), and the child's working folder
//!    ([`KEY_FOLDER`]), where its standard output and error go
//!    ([`KEY_STDOUT`], [`KEY_STDERR`], names in that folder);
//! 3. the server answers with the child's process id and its wait status
//!    (4 bytes each, little endian);
//! 4. the end of its input ends the server.

use std::io::Read;

use crate::child::ChildRequestError;

/// `1` in the server's environment makes the program a fork server that
/// speaks this protocol.
pub const ENV_FORK_SERVER_PROTOCOL: &str = "REGRESS_FORK_SERVER_PROTOCOL";

/// What a fork server writes first.
pub const HELLO: [u8; 8] = *b"RGFORK01";

/// The longest request accepted, in bytes.
pub const MAX_REQUEST: u32 = 64 * 1024;

/// The child's working folder: its report and heap report are named
/// relative to it, as for a child the runner starts itself.
pub const KEY_FOLDER: &str = "folder";
/// The file in the folder that takes the child's standard output.
pub const KEY_STDOUT: &str = "stdout";
/// The file in the folder that takes the child's standard error.
pub const KEY_STDERR: &str = "stderr";

/// The prefix of every variable a request may set.
pub const VARIABLE_PREFIX: &str = "REGRESS_CHILD_";

/// A child's exit code when the server's input has ended: no more
/// requests, the server ends too.
const EXIT_NO_MORE_REQUESTS: i32 = 4;
/// A child's exit code when its request could not be read or applied.
const EXIT_BAD_REQUEST: i32 = 5;

/// The bytes of one request: `lines` (`NAME=VALUE`) with their length
/// before them.
pub fn frame(lines: &[(String, String)]) -> Result<Vec<u8>, ChildRequestError> {
    let mut body = String::new();
    for (name, value) in lines {
        if name.contains(['=', '\n', '\0']) || value.contains(['\n', '\0']) {
            return Err(ChildRequestError::new(format!(
                "request line {name:?} holds a separator"
            )));
        }
        body.push_str(name);
        body.push('=');
        body.push_str(value);
        body.push('\n');
    }
    let length = u32::try_from(body.len())
        .ok()
        .filter(|length| *length <= MAX_REQUEST)
        .ok_or_else(|| {
            ChildRequestError::new(format!(
                "a request of {} bytes is over {MAX_REQUEST}",
                body.len()
            ))
        })?;
    let mut bytes = length.to_le_bytes().to_vec();
    bytes.extend_from_slice(body.as_bytes());
    Ok(bytes)
}

/// A request as the child reads it.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    folder: String,
    stdout: String,
    stderr: String,
    variables: Vec<(String, String)>,
}

fn parse(body: &str) -> Result<Request, ChildRequestError> {
    let (mut folder, mut stdout, mut stderr) = (None, None, None);
    let mut variables = Vec::new();
    for line in body.lines() {
        let (name, value) = line.split_once('=').ok_or_else(|| {
            ChildRequestError::new(format!("request line {line:?} is not NAME=VALUE"))
        })?;
        let slot = match name {
            KEY_FOLDER => &mut folder,
            KEY_STDOUT => &mut stdout,
            KEY_STDERR => &mut stderr,
            _ if name.starts_with(VARIABLE_PREFIX) => {
                variables.push((name.to_owned(), value.to_owned()));
                continue;
            }
            _ => {
                return Err(ChildRequestError::new(format!(
                    "request line {name:?} is not a request variable"
                )))
            }
        };
        if slot.replace(value.to_owned()).is_some() {
            return Err(ChildRequestError::new(format!(
                "request names {name} twice"
            )));
        }
    }
    let plain = |name: &str, value: Option<String>| {
        value
            .filter(|file| !file.is_empty() && !file.contains('/') && file != ".." && file != ".")
            .ok_or_else(|| {
                ChildRequestError::new(format!("request has no plain file name for {name}"))
            })
    };
    Ok(Request {
        folder: folder
            .filter(|folder| folder.starts_with('/'))
            .ok_or_else(|| {
                ChildRequestError::new(format!("request has no absolute {KEY_FOLDER}"))
            })?,
        stdout: plain(KEY_STDOUT, stdout)?,
        stderr: plain(KEY_STDERR, stderr)?,
        variables,
    })
}

/// Becomes a fork server when the environment asks for one; returns at once
/// otherwise. The server itself never returns: it ends when its input does.
/// Each child returns from here with its request in its environment, its
/// working folder and standard streams set, so the caller serves it as it
/// serves a program the runner started.
pub fn enter() {
    if std::env::var_os(ENV_FORK_SERVER_PROTOCOL).as_deref() != Some(std::ffi::OsStr::new("1")) {
        return;
    }
    #[cfg(target_os = "linux")]
    serve_forks();
    #[cfg(not(target_os = "linux"))]
    crate::program::exit_now(2);
}

#[cfg(target_os = "linux")]
fn serve_forks() {
    // The variable is for this process, not for its children's harnesses.
    std::env::remove_var(ENV_FORK_SERVER_PROTOCOL);
    if !write_all(1, &HELLO) {
        exit(0);
    }
    loop {
        // SAFETY: this process has one thread (the server starts first
        // thing in `main`), so the child may go on running Rust code.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            exit(1);
        }
        if pid == 0 {
            become_the_child();
            return;
        }
        let mut status: libc::c_int = 0;
        loop {
            // SAFETY: waits for the child just forked.
            let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
            if waited == pid {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                exit(1);
            }
        }
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == EXIT_NO_MORE_REQUESTS {
            exit(0);
        }
        let mut answer = [0u8; 8];
        answer[..4].copy_from_slice(&pid.to_le_bytes());
        answer[4..].copy_from_slice(&status.to_le_bytes());
        if !write_all(1, &answer) {
            exit(0);
        }
    }
}

/// In the child: reads the request, takes its folder and streams, and
/// sets its variables.
#[cfg(target_os = "linux")]
fn become_the_child() {
    let mut stdin = std::io::stdin().lock();
    let mut length = [0u8; 4];
    match stdin.read(&mut length[..1]) {
        Ok(0) => exit(EXIT_NO_MORE_REQUESTS),
        Ok(_) => {}
        Err(_) => exit(EXIT_BAD_REQUEST),
    }
    if stdin.read_exact(&mut length[1..]).is_err() {
        exit(EXIT_BAD_REQUEST);
    }
    let length = u32::from_le_bytes(length);
    if length > MAX_REQUEST {
        exit(EXIT_BAD_REQUEST);
    }
    let mut body = vec![0u8; length as usize];
    if stdin.read_exact(&mut body).is_err() {
        exit(EXIT_BAD_REQUEST);
    }
    drop(stdin);
    let Ok(request) = std::str::from_utf8(&body).map_err(|error| error.to_string()) else {
        exit(EXIT_BAD_REQUEST);
    };
    let Ok(request) = parse(request) else {
        exit(EXIT_BAD_REQUEST);
    };
    if std::env::set_current_dir(&request.folder).is_err() {
        exit(EXIT_BAD_REQUEST);
    }
    for (file, fd) in [(&request.stdout, 1), (&request.stderr, 2)] {
        let Ok(opened) = std::fs::File::create(file) else {
            exit(EXIT_BAD_REQUEST);
        };
        use std::os::fd::AsRawFd;
        // SAFETY: duplicates an open file onto a standard stream.
        if unsafe { libc::dup2(opened.as_raw_fd(), fd) } < 0 {
            exit(EXIT_BAD_REQUEST);
        }
    }
    // The runner's pipe is the server's, not the harness's.
    if let Ok(null) = std::fs::File::open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: as above.
        unsafe { libc::dup2(null.as_raw_fd(), 0) };
    }
    for (name, value) in request.variables {
        std::env::set_var(name, value);
    }
}

#[cfg(target_os = "linux")]
fn write_all(fd: libc::c_int, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if written < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return false;
        }
        bytes = &bytes[written as usize..];
    }
    true
}

#[cfg(target_os = "linux")]
fn exit(code: i32) -> ! {
    // SAFETY: ends the process without running anything of it.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn a_framed_request_reads_back() {
        let request = lines(&[
            (KEY_FOLDER, "/tmp/scratch"),
            (KEY_STDOUT, "out.txt"),
            (KEY_STDERR, "err.txt"),
            ("REGRESS_CHILD_HARNESS", "s2n_tls::handshake"),
            ("REGRESS_CHILD_RUNS", "3"),
        ]);
        let bytes = frame(&request).expect("frame");
        let length = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
        assert_eq!(length as usize, bytes.len() - 4);
        let parsed = parse(std::str::from_utf8(&bytes[4..]).expect("utf-8")).expect("parse");
        assert_eq!(parsed.folder, "/tmp/scratch");
        assert_eq!(parsed.stdout, "out.txt");
        assert_eq!(
            parsed.variables,
            lines(&[
                ("REGRESS_CHILD_HARNESS", "s2n_tls::handshake"),
                ("REGRESS_CHILD_RUNS", "3")
            ])
        );
    }

    #[test]
    fn bad_requests_are_refused() {
        assert!(frame(&lines(&[("A=B", "c")])).is_err());
        assert!(frame(&lines(&[("A", "c\nD=e")])).is_err());
        let long = "x".repeat(MAX_REQUEST as usize);
        assert!(frame(&lines(&[("A", &long)])).is_err());
        let base = "folder=/tmp\nstdout=o\nstderr=e\n";
        assert!(parse(base).is_ok());
        for bad in [
            "stdout=o\nstderr=e\n",
            "folder=relative\nstdout=o\nstderr=e\n",
            "folder=/tmp\nstdout=../o\nstderr=e\n",
            "folder=/tmp\nstdout=o\nstderr=e\nPATH=/bin\n",
            "folder=/tmp\nfolder=/x\nstdout=o\nstderr=e\n",
            "folder=/tmp\nstdout=o\nstderr=e\nno equals sign\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
