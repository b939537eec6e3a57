//! What the unit tests share: a shell child and a look at a process.

use std::path::Path;
use std::process::Command;

pub fn shell(script: &str) -> Command {
    let mut command = Command::new("/bin/sh");
    command.args(["-c", script]);
    command
}

/// The pid a script wrote into `path`.
pub fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .expect("pid")
        .trim()
        .parse()
        .expect("number")
}

/// Whether `pid` runs (a zombie is dead for this purpose).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

/// Waits up to five seconds for `pid` to be gone.
pub fn gone(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !alive(pid)
}
