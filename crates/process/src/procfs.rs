//! Other processes, read from `/proc` (Linux): who is there, and the fields
//! of their `stat` lines. What the subreaper (`orphans`) and the sentinel
//! both look up.

/// Every process id in `/proc`.
pub(crate) fn processes() -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect()
}

/// The `index`-th field of `/proc/PID/stat` after the command name: 0 is
/// the state, 1 the parent's id, 19 the start time in clock ticks after
/// boot (fields 3, 4 and 22 of proc(5)). The command name is in
/// parentheses and may hold spaces and `)`, so fields are counted from the
/// last `)`.
pub(crate) fn stat_field(pid: i32, index: usize) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(index)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_listed_with_its_parent() {
        let me = std::process::id() as i32;
        assert!(processes().contains(&me));
        let parent = stat_field(me, 1).expect("parent field");
        assert_eq!(parent, u64::from(std::os::unix::process::parent_id()));
        assert!(stat_field(me, 19).is_some(), "start time");
        assert_eq!(stat_field(-1, 1), None);
    }
}
