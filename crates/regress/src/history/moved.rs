//! What moved in a step of a history: for each harness of both versions,
//! the function whose cost changed most, from the two region profiles
//! with names normalised as the diff normalises them (library-relative
//! files, no version tags, no symbol hashes), so the same function lines
//! up across two versions of a crate.
//!
//! Only the top function is kept per harness: the committed history stays
//! small (a file per version of a few KiB), and the full per-function diff
//! of any step is one `regress diff --library` away.

use std::collections::BTreeMap;
use std::path::Path;

use regress_profile::cachegrind_out;

use super::store::{Moved, Step};
use crate::compare::function_deltas;
use crate::compare::Normalizer;
use crate::harness_name::HarnessName;

/// The step from `from` (profiles in `before`) to the revision whose
/// profiles are in `after`, over the harnesses both have. A harness whose
/// profile cannot be read, or whose functions did not change, has no
/// entry.
pub fn step(
    from: &str,
    before: &Path,
    after: &Path,
    before_names: &[HarnessName],
    after_names: &[HarnessName],
) -> Step {
    let normalizer = Normalizer::default();
    let mut moved = BTreeMap::new();
    for name in after_names
        .iter()
        .filter(|name| before_names.contains(name))
    {
        let read = |dir: &Path| cachegrind_out::read(&name.file_in(dir, ".cachegrind.out")).ok();
        let (Some(base), Some(head)) = (read(before), read(after)) else {
            continue;
        };
        if let Some(top) = function_deltas(&base, &head, &normalizer)
            .into_iter()
            .next()
        {
            moved.insert(
                name.clone(),
                Moved {
                    function: bounded(&top.function),
                    file: bounded(&top.file),
                    delta: top.delta,
                },
            );
        }
    }
    Step {
        from: from.to_owned(),
        moved,
    }
}

/// A name as the history keeps it: at most 500 bytes, no control
/// characters, never empty.
fn bounded(name: &str) -> String {
    let clean: String = name.chars().filter(|c| !c.is_control()).collect();
    match crate::format::at_most(&clean, 500) {
        "" => "???".to_owned(),
        kept => kept.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bounded() {
        assert_eq!(bounded(""), "???");
        assert_eq!(bounded("a\u{7}b"), "ab");
        assert_eq!(bounded(&"é".repeat(400)).len(), 500);
    }
}
