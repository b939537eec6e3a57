//! Allocation sites of a run, with their call stacks, from Valgrind's DHAT.
//!
//! The heap figures come from the runner's heap hooks: exact,
//! per run, per side. When a diff finds that they changed, it asks *where*:
//! DHAT records every allocation site (a call stack) of a process with the
//! bytes and blocks allocated there. It counts the whole process, so the
//! run's sites are the difference of two children, 3 runs minus 2, as the
//! subtraction method does for instructions; on every path measured, DHAT's
//! totals of that difference equal the hooks' figures to the byte and
//! block.

use std::collections::BTreeMap;

use serde::Deserialize;

/// Bytes and blocks allocated at each site, keyed by the site's call stack
/// (innermost frame first, each `function (file)`, addresses and line
/// numbers left out so that the same site lines up across two builds).
pub type Sites = BTreeMap<Vec<String>, Allocated>;

/// What one site allocated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allocated {
    pub bytes: i64,
    pub blocks: i64,
}

/// The most sites a profile may have (the largest path has a few hundred).
const MAX_SITES: usize = 1 << 20;

#[derive(Deserialize)]
struct File {
    #[serde(rename = "dhatFileVersion")]
    version: u32,
    mode: String,
    pps: Vec<ProgramPoint>,
    ftbl: Vec<String>,
}

#[derive(Deserialize)]
struct ProgramPoint {
    tb: u64,
    tbk: u64,
    fs: Vec<usize>,
}

/// Why a DHAT output file cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DhatError {
    #[error("not DHAT's JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error(
        "DHAT file version {version} in mode {mode:?}; this runner reads version 2, heap mode"
    )]
    Version { version: u32, mode: String },
    #[error("more than {MAX_SITES} allocation sites")]
    TooManySites,
    #[error("frame {0} is not in the frame table")]
    NoFrame(usize),
    #[error("a {0} count beyond i64")]
    Overflow(&'static str),
}

/// The sites of a DHAT output file's text.
pub fn parse(text: &str) -> Result<Sites, DhatError> {
    let file: File = serde_json::from_str(text).map_err(DhatError::NotJson)?;
    if file.version != 2 || file.mode != "heap" {
        return Err(DhatError::Version {
            version: file.version,
            mode: file.mode,
        });
    }
    if file.pps.len() > MAX_SITES {
        return Err(DhatError::TooManySites);
    }
    let mut sites = Sites::new();
    for point in file.pps {
        let stack = point
            .fs
            .iter()
            .map(|index| {
                file.ftbl
                    .get(*index)
                    .map(|frame| frame_name(frame))
                    .ok_or(DhatError::NoFrame(*index))
            })
            .collect::<Result<Vec<String>, DhatError>>()?;
        let site = sites.entry(stack).or_default();
        site.bytes += i64::try_from(point.tb).map_err(|_| DhatError::Overflow("byte"))?;
        site.blocks += i64::try_from(point.tbk).map_err(|_| DhatError::Overflow("block"))?;
    }
    Ok(sites)
}

/// `0x4E231FA: __fopen_internal (iofopen.c:65)` as `__fopen_internal
/// (iofopen.c)`; `0x48417B4: malloc (in /usr/lib/x.so)` as `malloc (in
/// x.so)`.
fn frame_name(frame: &str) -> String {
    let frame = frame
        .split_once(": ")
        .filter(|(address, _)| address.starts_with("0x"))
        .map_or(frame, |(_, rest)| rest);
    let Some((function, place)) = frame.rsplit_once(" (") else {
        return frame.to_owned();
    };
    let place = place.trim_end_matches(')');
    let place = match place.strip_prefix("in ") {
        Some(object) => format!("in {}", object.rsplit('/').next().unwrap_or(object)),
        None => place
            .rsplit_once(':')
            .filter(|(_, line)| line.chars().all(|c| c.is_ascii_digit()))
            .map_or(place, |(file, _)| file)
            .to_owned(),
    };
    format!("{function} ({place})")
}

/// `after` minus `before`, site by site; sites that cancel out are left out.
pub fn subtract(after: &Sites, before: &Sites) -> Sites {
    let mut sites = after.clone();
    for (stack, allocated) in before {
        let site = sites.entry(stack.clone()).or_default();
        site.bytes -= allocated.bytes;
        site.blocks -= allocated.blocks;
    }
    sites.retain(|_, allocated| *allocated != Allocated::default());
    sites
}

/// The bytes and blocks of all sites.
pub fn total(sites: &Sites) -> Allocated {
    sites
        .values()
        .fold(Allocated::default(), |sum, site| Allocated {
            bytes: sum.bytes + site.bytes,
            blocks: sum.blocks + site.blocks,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"dhatFileVersion":2,"mode":"heap","verb":"Allocated","bklt":true,
        "bkacc":true,"tu":"instrs","Mtu":"Minstr","tuth":500,"cmd":"./harness","pid":1,
        "te":100,"tg":50,
        "pps":[{"tb":472,"tbk":1,"tl":1,"mb":1,"mbk":1,"gb":0,"gbk":0,"eb":0,"ebk":0,
                "rb":0,"wb":0,"fs":[1,2]},
               {"tb":28,"tbk":2,"tl":1,"mb":1,"mbk":1,"gb":0,"gbk":0,"eb":0,"ebk":0,
                "rb":0,"wb":0,"fs":[1,3]}],
        "ftbl":["[root]",
                "0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_dhat-amd64-linux.so)",
                "0x4E231FA: __fopen_internal (iofopen.c:65)",
                "0x63130D: s2n_alloc (s2n_mem.c:372)"]}"#;

    #[test]
    fn sites_are_keyed_by_their_stack_without_addresses_or_lines() {
        let sites = parse(SAMPLE).expect("sites");
        let stack = vec![
            "malloc (in vgpreload_dhat-amd64-linux.so)".to_owned(),
            "__fopen_internal (iofopen.c)".to_owned(),
        ];
        assert_eq!(
            sites[&stack],
            Allocated {
                bytes: 472,
                blocks: 1
            }
        );
        assert_eq!(
            total(&sites),
            Allocated {
                bytes: 500,
                blocks: 3
            }
        );
    }

    #[test]
    fn the_run_is_three_runs_minus_two() {
        let three = parse(SAMPLE).expect("sites");
        let two =
            parse(&SAMPLE.replace("\"tb\":28,\"tbk\":2", "\"tb\":14,\"tbk\":1")).expect("sites");
        let run = subtract(&three, &two);
        assert_eq!(run.len(), 1, "the unchanged site cancels out");
        assert_eq!(
            total(&run),
            Allocated {
                bytes: 14,
                blocks: 1
            }
        );
    }

    #[test]
    fn other_files_are_refused() {
        assert!(parse("{}").is_err());
        assert!(parse(&SAMPLE.replace("\"heap\"", "\"copy\"")).is_err());
        assert!(parse(&SAMPLE.replace("[1,3]", "[1,99]")).is_err());
    }
}
