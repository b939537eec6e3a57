//! The search itself, apart from git, cargo and Valgrind: which revision of
//! the line to measure next, and what the answers so far prove.
//!
//! The line is `0..n`: position 0 is GOOD, position `n - 1` is BAD, and a
//! revision has *moved* when its count differs from GOOD's beyond the
//! allowance. The answer is the first moved position, or none. Position
//! `n` stands for "no step": BAD is not assumed to have moved, it is one
//! candidate like the others, so the `n - 1` revisions after GOOD and "no
//! step" are `n` outcomes, told apart with at most `ceil(log2(n))`
//! measurements besides GOOD's. Measuring BAD first, as `git bisect` does,
//! would cost one more on every search, to fail early only in the rare case
//! of a range without a step.
//!
//! A revision that does not build is skipped, like `git bisect skip`: the
//! next probe is the untested revision nearest the middle of what is still
//! open, and when only skipped revisions are left between the last
//! revision known to count like GOOD and the first known to differ, the
//! step is in one of them and the outcome says which they are.

use std::collections::BTreeSet;

/// What measuring one position said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Its count is within the allowance of GOOD's.
    Same,
    /// Its count differs from GOOD's beyond the allowance.
    Moved,
    /// It could not be built (or has no such harness).
    Skipped,
}

/// The state of a search over a line of `n` positions.
#[derive(Debug, Clone)]
pub struct Search {
    n: usize,
    /// The last position known to count like GOOD (0: GOOD itself).
    same: usize,
    /// The first position known to have moved; `n`: none known.
    moved: usize,
    skipped: BTreeSet<usize>,
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The first moved position; the one before it counts like GOOD.
    Found(usize),
    /// Every revision up to BAD counts like GOOD (BAD was measured).
    NoStep,
    /// The step is at one of these positions (the skipped ones and, when
    /// `moved` is known, that one), or, with `moved` unknown, there may be
    /// none: nothing buildable is left to tell.
    Undecided {
        candidates: Vec<usize>,
        moved_known: bool,
    },
}

impl Search {
    /// A search over positions `0..n`, `n >= 2` (GOOD and BAD at least).
    pub fn new(n: usize) -> Search {
        assert!(n >= 2, "a line has GOOD and BAD");
        Search {
            n,
            same: 0,
            moved: n,
            skipped: BTreeSet::new(),
        }
    }

    /// The next position to measure, or `None` when the search is over.
    pub fn next(&self) -> Option<usize> {
        let open: Vec<usize> = (self.same + 1..self.moved.min(self.n))
            .filter(|position| !self.skipped.contains(position))
            .collect();
        // The middle of the interval of outcomes, (same, moved]: the
        // nearest untested position to it, the earlier one on a tie.
        let middle = self.same + (self.moved - self.same).div_ceil(2);
        open.into_iter()
            .min_by_key(|position| (position.abs_diff(middle), *position))
    }

    /// Records what measuring `position` said.
    pub fn record(&mut self, position: usize, answer: Answer) {
        assert!(
            position > self.same && position < self.moved.min(self.n),
            "position {position} is outside the open interval"
        );
        match answer {
            Answer::Same => self.same = position,
            Answer::Moved => self.moved = position,
            Answer::Skipped => {
                self.skipped.insert(position);
            }
        }
    }

    /// How the search ended; `None` while [`Search::next`] has a position.
    pub fn outcome(&self) -> Option<Outcome> {
        if self.next().is_some() {
            return None;
        }
        let between: Vec<usize> = (self.same + 1..self.moved.min(self.n)).collect();
        Some(match (self.moved < self.n, between.is_empty()) {
            (true, true) => Outcome::Found(self.moved),
            (false, true) => Outcome::NoStep,
            (moved_known, false) => Outcome::Undecided {
                candidates: between
                    .into_iter()
                    .chain(moved_known.then_some(self.moved))
                    .collect(),
                moved_known,
            },
        })
    }

    /// The last position known to count like GOOD.
    pub fn last_same(&self) -> usize {
        self.same
    }
}

/// The most measurements a search of a line of `n` positions makes,
/// GOOD's included, when every revision builds: `ceil(log2(n)) + 1`.
pub fn most_measurements(n: usize) -> usize {
    let mut probes = 0;
    while (1usize << probes) < n {
        probes += 1;
    }
    probes + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search over `n` positions whose first moved one is `step`
    /// (`None`: none), where `unbuildable` positions are skipped; returns
    /// the outcome and the positions measured (GOOD counted).
    fn run(n: usize, step: Option<usize>, unbuildable: &[usize]) -> (Outcome, usize) {
        let mut search = Search::new(n);
        let mut measured = 1;
        while let Some(position) = search.next() {
            let answer = if unbuildable.contains(&position) {
                Answer::Skipped
            } else {
                measured += 1;
                if step.is_some_and(|step| position >= step) {
                    Answer::Moved
                } else {
                    Answer::Same
                }
            };
            search.record(position, answer);
        }
        (search.outcome().expect("over"), measured)
    }

    #[test]
    fn every_step_is_found_within_the_bound() {
        for n in 2..=130 {
            let bound = most_measurements(n);
            for step in 1..n {
                let (outcome, measured) = run(n, Some(step), &[]);
                assert_eq!(outcome, Outcome::Found(step), "n {n}, step {step}");
                assert!(
                    measured <= bound,
                    "n {n}, step {step}: {measured} > {bound}"
                );
            }
            let (outcome, measured) = run(n, None, &[]);
            assert_eq!(outcome, Outcome::NoStep, "n {n}");
            assert!(measured <= bound);
        }
        assert_eq!(most_measurements(64), 7);
        assert_eq!(most_measurements(8), 4);
        assert_eq!(most_measurements(6), 4);
        assert_eq!(most_measurements(2), 2);
    }

    #[test]
    fn skipped_revisions_are_stepped_around() {
        // The step at 5, 3 does not build: found all the same.
        let (outcome, _) = run(8, Some(5), &[3]);
        assert_eq!(outcome, Outcome::Found(5));
        // The step at 5 and 4 before it does not build: 4 or 5.
        let (outcome, _) = run(8, Some(5), &[4]);
        assert_eq!(
            outcome,
            Outcome::Undecided {
                candidates: vec![4, 5],
                moved_known: true
            }
        );
        // The step at 5 and 5 does not build: 5 or 6.
        let (outcome, _) = run(8, Some(5), &[5]);
        assert_eq!(
            outcome,
            Outcome::Undecided {
                candidates: vec![5, 6],
                moved_known: true
            }
        );
        // Nothing after GOOD builds.
        let (outcome, measured) = run(6, Some(3), &[1, 2, 3, 4, 5]);
        assert_eq!(
            outcome,
            Outcome::Undecided {
                candidates: vec![1, 2, 3, 4, 5],
                moved_known: false
            }
        );
        assert_eq!(measured, 1);
    }

    #[test]
    fn the_first_probe_is_the_middle() {
        let search = Search::new(64);
        assert_eq!(search.next(), Some(32));
        let mut search = Search::new(8);
        search.record(4, Answer::Skipped);
        assert_eq!(search.next(), Some(3));
    }
}
