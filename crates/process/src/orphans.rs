//! Descendants that leave their process group.
//!
//! Killing a child's group reaches every process that stayed in it, but a
//! descendant can leave: `setsid` (a daemon a Valgrind wrapper starts), or
//! `setpgid`. Such a process is re-parented when its parent dies, by
//! default to init, where the runner loses sight of it. As a *child
//! subreaper* (`PR_SET_CHILD_SUBREAPER`, Linux 3.4+), `regress` gets them
//! instead: every orphaned descendant becomes its child, and
//! [`kill_adopted`], called when the command ends, kills and reaps every
//! child still there.
//!
//! What this cannot do: when `regress` itself is killed outright
//! (SIGKILL), its direct children die with it (`PR_SET_PDEATHSIG`), but a
//! descendant that left its group and whose parent is still alive is
//! re-parented to the next subreaper or init and keeps running; nothing
//! in the dead process can act any more. That is the sentinel's part
//! ([`crate::Sentinel`]), a process of its own.

/// Makes this process the subreaper of its descendants. Linux only; a
/// no-op elsewhere.
pub fn adopt_orphans() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with an integer option and value.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Kills (SIGKILL) and reaps every child of this process that is still
/// there: when the command ends, none is wanted, so each is a descendant
/// that escaped its group and was adopted. Returns how many were killed.
/// Repeats while killing one orphans more (a daemon's own children).
pub fn kill_adopted() -> usize {
    let me = std::process::id();
    let mut killed = 0;
    for _ in 0..16 {
        let children = children_of(me);
        if children.is_empty() {
            break;
        }
        for pid in &children {
            // SAFETY: kill only sends a signal; the pid is our child and
            // unreaped, so it cannot have been reused.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        for pid in &children {
            let mut status = 0;
            // SAFETY: waitpid on our own child.
            unsafe {
                libc::waitpid(*pid, &mut status, 0);
            }
        }
        killed += children.len();
    }
    killed
}

/// The processes whose parent is `parent` (zombies included).
fn children_of(parent: u32) -> Vec<i32> {
    crate::procfs::processes()
        .into_iter()
        .filter(|&pid| crate::procfs::stat_field(pid, 1) == Some(u64::from(parent)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grandchild that left its group with `setsid` outlives its parent;
    /// adopted, it is killed and reaped.
    #[test]
    fn a_daemon_that_left_its_group_is_adopted_and_killed() {
        adopt_orphans().expect("subreaper");
        let mut shell = std::process::Command::new("sh")
            .args([
                "-c",
                "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let mut out = String::new();
        use std::io::Read;
        shell
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("read");
        shell.wait().expect("wait");
        let daemon: i32 = out.trim().parse().expect("pid");
        // The daemon's parent is now this process.
        let mut adopted = false;
        for _ in 0..100 {
            if children_of(std::process::id()).contains(&daemon) {
                adopted = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Killed here by its id, not by `kill_adopted`, which would kill
        // the children of the tests running beside this one (the campaign
        // checks it, through the `regress` binary).
        // SAFETY: kill and waitpid on our own, unreaped child.
        unsafe {
            libc::kill(daemon, libc::SIGKILL);
            libc::waitpid(daemon, std::ptr::null_mut(), 0);
        }
        assert!(adopted, "the daemon was not adopted");
        assert!(!children_of(std::process::id()).contains(&daemon));
    }
}
