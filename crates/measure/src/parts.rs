//! Whose code runs when: the parts of a counted run, and the boundaries
//! between them.
//!
//! A handshake run alternates between the client's calls into its library,
//! the server's, and the harness's own code between them (the driver loop,
//! the stage bookkeeping): the **glue**. Each side's calls fall into two
//! stages, split where the side first sends (see [`Part`]). A harness marks
//! every boundary with [`enter`] (usually through a side helper of the
//! harnesses crate); the measuring child decides what a boundary does.
//!
//! # One instruction stream for every child
//!
//! A boundary issues one Valgrind client request whose *number* is read
//! from a table ([`Plan`]), never chosen by a branch: a child that counts
//! only the client's calls, one that counts the whole run, and one that
//! counts nothing execute exactly the same instructions, with different
//! numbers in the table. So the parts measured by different children of
//! the same harness partition the run: with Cachegrind (3.22+), the start
//! and stop requests open and close the counted parts and a no-op request
//! ([`region::RUNNING_ON_VALGRIND`]) fills the other boundaries; with
//! Callgrind (any version), the first boundary of the run turns collection
//! on and every later one dumps the cost of the segment it closes, named
//! after its part.
//!
//! Outside the counted run (setup, `prepare`, the warm-up runs), every
//! boundary issues the no-op request: the table is only armed between the
//! two [`between_runs`] boundaries around the counted run.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::region;

/// Where the measured thread is, as far as counting is concerned.
///
/// The stages of a handshake, for every library and TLS version: a side is
/// in its first stage until the call in which it first sends (that call
/// included), in its second after. So the client's first stage writes the
/// ClientHello, the server's first stage reads it and writes the server's
/// first flight (TLS 1.3: ServerHello to Finished; TLS 1.2: ServerHello to
/// ServerHelloDone), the client's second stage processes that flight and
/// sends its last flight (with mTLS its Certificate and CertificateVerify;
/// in TLS 1.2 it also reads the server's ChangeCipherSpec and Finished),
/// and the server's second stage processes the client's last flight (in
/// TLS 1.2 it also sends its ChangeCipherSpec and Finished).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Part {
    /// Not in the counted run.
    Outside = 0,
    /// In the counted run, in the harness's own code.
    Glue = 1,
    /// The client's first stage: up to and including sending the
    /// ClientHello.
    ClientHello = 2,
    /// The server's first stage: answering the ClientHello, up to and
    /// including its first flight. What any client, authenticated or not,
    /// can make a server spend.
    ServerFlight = 3,
    /// The client's second stage: processing the server's flight and
    /// finishing.
    ClientFinish = 4,
    /// The server's second stage: processing the client's last flight.
    ServerFinish = 5,
    /// Creating the client's connection, outside the counted run (`prepare`):
    /// never counted, but what the connection allocates here is part of what
    /// it holds.
    ClientNew = 6,
    /// Creating the server's connection, outside the counted run.
    ServerNew = 7,
    /// The last warm-up run, before the counted one: outside the count, but
    /// where Callgrind's instrumentation is turned on (see
    /// [`Plan::requests`]).
    Warm = 8,
}

/// How many [`Part`]s there are.
pub const PARTS: usize = 9;

impl Part {
    /// Every part, in numbering order.
    pub const ALL: [Part; PARTS] = [
        Part::Outside,
        Part::Glue,
        Part::ClientHello,
        Part::ServerFlight,
        Part::ClientFinish,
        Part::ServerFinish,
        Part::ClientNew,
        Part::ServerNew,
        Part::Warm,
    ];

    /// The parts that make up a counted run, and so its count.
    pub const IN_RUN: [Part; 5] = [
        Part::Glue,
        Part::ClientHello,
        Part::ServerFlight,
        Part::ClientFinish,
        Part::ServerFinish,
    ];

    /// The part numbered `index`.
    pub fn from_index(index: usize) -> Option<Part> {
        Part::ALL.get(index).copied()
    }

    /// Whether this part is inside the counted run.
    pub fn in_run(self) -> bool {
        Part::IN_RUN.contains(&self)
    }

    /// The side whose library runs in this part, if any.
    pub fn side(self) -> Option<Side> {
        match self {
            Part::ClientHello | Part::ClientFinish | Part::ClientNew => Some(Side::Client),
            Part::ServerFlight | Part::ServerFinish | Part::ServerNew => Some(Side::Server),
            Part::Outside | Part::Glue | Part::Warm => None,
        }
    }

    /// The part of `side`'s calls: its first stage until it has sent, its
    /// second after.
    pub fn stage(side: Side, sent: bool) -> Part {
        match (side, sent) {
            (Side::Client, false) => Part::ClientHello,
            (Side::Client, true) => Part::ClientFinish,
            (Side::Server, false) => Part::ServerFlight,
            (Side::Server, true) => Part::ServerFinish,
        }
    }

    /// The name used in records, reports and Callgrind dump labels.
    pub fn name(self) -> &'static str {
        match self {
            Part::Outside => "outside",
            Part::Glue => "glue",
            Part::ClientHello => "client_hello",
            Part::ServerFlight => "server_flight",
            Part::ClientFinish => "client_finish",
            Part::ServerFinish => "server_finish",
            Part::ClientNew => "client_new",
            Part::ServerNew => "server_new",
            Part::Warm => "warm",
        }
    }

    /// The part named `name` ([`Part::name`]).
    pub fn from_name(name: &str) -> Option<Part> {
        Part::ALL.into_iter().find(|part| part.name() == name)
    }

    /// The NUL-terminated name, for a Callgrind dump label.
    fn c_name(self) -> &'static [u8] {
        match self {
            Part::Outside => b"outside\0",
            Part::Glue => b"glue\0",
            Part::ClientHello => b"client_hello\0",
            Part::ServerFlight => b"server_flight\0",
            Part::ClientFinish => b"client_finish\0",
            Part::ServerFinish => b"server_finish\0",
            Part::ClientNew => b"client_new\0",
            Part::ServerNew => b"server_new\0",
            Part::Warm => b"warm\0",
        }
    }
}

/// One end of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Client, Side::Server];

    pub fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    /// The part of creating this side's connection.
    pub fn creation(self) -> Part {
        match self {
            Side::Client => Part::ClientNew,
            Side::Server => Part::ServerNew,
        }
    }
}

/// A set of parts, as a bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PartSet(u16);

impl PartSet {
    pub const EMPTY: PartSet = PartSet(0);

    /// Every part of the counted run.
    pub fn run() -> PartSet {
        Part::IN_RUN.into_iter().collect()
    }

    pub fn contains(self, part: Part) -> bool {
        self.0 & (1 << part as u16) != 0
    }

    pub fn with(self, part: Part) -> PartSet {
        PartSet(self.0 | 1 << part as u16)
    }

    pub fn iter(self) -> impl Iterator<Item = Part> {
        Part::ALL
            .into_iter()
            .filter(move |part| self.contains(*part))
    }
}

impl FromIterator<Part> for PartSet {
    fn from_iter<I: IntoIterator<Item = Part>>(parts: I) -> PartSet {
        parts.into_iter().fold(PartSet::EMPTY, PartSet::with)
    }
}

/// What the boundaries of the counted run do in this child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Nothing: every boundary is the no-op request (a child that counts
    /// the whole process, or one that counts no instructions at all).
    Nothing,
    /// Cachegrind 3.22+ (`--instr-at-start=no`): counting is on exactly
    /// while the thread is in one of these parts.
    Cachegrind(PartSet),
    /// Callgrind (`--instr-atstart=no --collect-atstart=no`): the last
    /// warm-up's first boundary turns instrumentation on, the run's first
    /// boundary collection; every later boundary, the run's end included,
    /// dumps the segment it closes, labelled with the segment's part.
    Callgrind,
}

/// A client request: its number and its first argument.
pub type Request = (usize, usize);

/// The request that does nothing.
const NOTHING: Request = (region::RUNNING_ON_VALGRIND, 0);

impl Plan {
    /// The request a boundary from `from` to `to` issues inside the counted
    /// run (and at the two boundaries around it).
    ///
    /// Callgrind runs uninstrumented (`--instr-atstart=no`) until the last
    /// warm-up run begins ([`Part::Warm`]): setup, preparation and the
    /// first warm-up go at the speed of Valgrind's `none` tool. (Turned on
    /// at the counted run's own first boundary, instrumentation cost it 18
    /// instructions of the run: Callgrind does not count all of the code
    /// that returns into frames entered before it instrumented them.)
    ///
    /// Both tools count the same instructions, though Callgrind charges a
    /// block when it leaves it: the block that ends with the request that
    /// starts collecting is counted, the one that ends with the last dump is
    /// not. Both are the same instructions of [`enter`] (one request per
    /// boundary, read from one table slot), so what Callgrind counts more at
    /// the start it counts less at the end, and its run adds up to
    /// Cachegrind's to the instruction; inside the run, the boundary's code
    /// up to the dump goes to the part it leads into.
    pub fn request(self, from: Part, to: Part) -> Request {
        if from == to {
            return NOTHING;
        }
        match self {
            Plan::Nothing => NOTHING,
            Plan::Cachegrind(counted) => match (counted.contains(from), counted.contains(to)) {
                (false, true) => (region::CG_START_INSTRUMENTATION, 0),
                (true, false) => (region::CG_STOP_INSTRUMENTATION, 0),
                _ => NOTHING,
            },
            Plan::Callgrind => match (from.in_run(), to.in_run()) {
                (false, false) if to == Part::Warm => (region::CALLGRIND_START_INSTRUMENTATION, 0),
                (false, true) => (region::CALLGRIND_TOGGLE_COLLECT, 0),
                (true, _) => (
                    region::CALLGRIND_DUMP_STATS_AT,
                    from.c_name().as_ptr() as usize,
                ),
                (false, false) => NOTHING,
            },
        }
    }

    /// The plan a child request names: `nothing`, `callgrind`, or
    /// `cachegrind:` and the counted parts, comma-separated.
    pub fn parse(text: &str) -> Option<Plan> {
        match text {
            "nothing" => Some(Plan::Nothing),
            "callgrind" => Some(Plan::Callgrind),
            _ => {
                let parts = text.strip_prefix("cachegrind:")?;
                let mut set = PartSet::EMPTY;
                for name in parts.split(',') {
                    let part = Part::from_name(name).filter(|part| part.in_run())?;
                    set = set.with(part);
                }
                (set != PartSet::EMPTY).then_some(Plan::Cachegrind(set))
            }
        }
    }

    /// The text [`Plan::parse`] reads.
    pub fn to_text(self) -> String {
        match self {
            Plan::Nothing => "nothing".to_owned(),
            Plan::Callgrind => "callgrind".to_owned(),
            Plan::Cachegrind(set) => {
                let names: Vec<&str> = set.iter().map(Part::name).collect();
                format!("cachegrind:{}", names.join(","))
            }
        }
    }
}

thread_local! {
    /// The part this thread is in. Per thread: only the measured thread's
    /// counts, and the tests' handshakes on other threads must not move it.
    static CURRENT: Cell<u8> = const { Cell::new(Part::Outside as u8) };
}
/// Which table boundaries read: 0 outside the counted run, 1 inside.
static ARMED: AtomicUsize = AtomicUsize::new(0);

type Table = [[[AtomicUsize; 2]; PARTS]; PARTS];

/// The request and argument of every transition, for the disarmed (0) and
/// the armed (1) state. The armed table is filled by [`prepare`].
static TABLES: [Table; 2] = [const {
    [const { [const { [AtomicUsize::new(NOTHING.0), AtomicUsize::new(NOTHING.1)] }; PARTS] }; PARTS]
}; 2];

/// Crosses a boundary: the thread now runs `to`'s code. Returns the part it
/// left, for [`enter`]ing it again afterwards.
///
/// Never inlined, so that every boundary is the same instructions wherever
/// it is called from; which request it issues is data.
#[inline(never)]
pub fn enter(to: Part) -> Part {
    let from = CURRENT.with(|current| current.replace(to as u8));
    let cell = &TABLES[ARMED.load(Ordering::Relaxed)][usize::from(from)][to as usize];
    region::request(
        cell[0].load(Ordering::Relaxed),
        cell[1].load(Ordering::Relaxed),
    );
    Part::from_index(usize::from(from)).unwrap_or(Part::Outside)
}

/// Runs `call` in `part`, then returns to the part it was called from.
#[inline(always)]
pub fn within<R>(part: Part, call: impl FnOnce() -> R) -> R {
    let previous = enter(part);
    let result = call();
    enter(previous);
    result
}

/// The part the measured thread is in now.
pub fn current() -> Part {
    Part::from_index(usize::from(CURRENT.with(Cell::get))).unwrap_or(Part::Outside)
}

/// What the boundary before run `index` does ([`between_runs`]): whether
/// the table is armed while crossing it, the part it enters, and whether
/// the table is armed after it.
static SLOTS: [[AtomicUsize; 3]; MAX_SLOTS] =
    [const { [const { AtomicUsize::new(0) }; 3] }; MAX_SLOTS];

/// Boundaries of a child's loop: one before each of at most
/// `MAX_SLOTS - 1` runs, and one after the last.
pub const MAX_SLOTS: usize = 8;

/// Fills the tables: what every boundary of the counted run does under
/// `plan`, and which of the loop's boundaries start and end the counted
/// run, the last of `runs` runs. Called once, before setup; afterwards the
/// tables are only read.
pub fn prepare(plan: Plan, runs: usize) {
    for from in Part::ALL {
        for to in Part::ALL {
            let (request, arg) = plan.request(from, to);
            let cell = &TABLES[1][from as usize][to as usize];
            cell[0].store(request, Ordering::Relaxed);
            cell[1].store(arg, Ordering::Relaxed);
        }
    }
    // The slots are filled without a branch on `runs` per slot: a child of
    // 3 runs and one of 2 must execute the same instructions here, or the
    // subtraction method counts the difference (with one condition per
    // slot, it counted 5 instructions of this function).
    for slot in &SLOTS {
        store(slot, (0, Part::Outside, 0));
    }
    if let Some(slot) = runs.checked_sub(2).and_then(|index| SLOTS.get(index)) {
        store(slot, (1, Part::Warm, 0));
    }
    if let Some(slot) = runs.checked_sub(1).and_then(|index| SLOTS.get(index)) {
        store(slot, (1, Part::Glue, 1));
    }
    if let Some(slot) = SLOTS.get(runs) {
        store(slot, (1, Part::Outside, 0));
    }
}

/// Writes one slot of [`SLOTS`]: armed while crossing, the part entered,
/// armed after.
fn store(slot: &[AtomicUsize; 3], (during, part, after): (usize, Part, usize)) {
    slot[0].store(during, Ordering::Relaxed);
    slot[1].store(part as usize, Ordering::Relaxed);
    slot[2].store(after, Ordering::Relaxed);
}

/// The one boundary at the top of each iteration of a child's loop: before
/// run `index` (from 0), and once more after the last run (`index ==
/// runs`). The one before the last warm-up run enters [`Part::Warm`]
/// (Callgrind starts instrumenting); the one before the last run starts the
/// counted run (it enters the glue through the armed table: Cachegrind
/// starts, Callgrind starts collecting); the one after it ends it
/// (Cachegrind stops, Callgrind dumps the last segment); the others do
/// nothing. Which is data ([`prepare`]), so every call executes the same
/// instructions.
///
/// That makes the counted region exactly one iteration of the loop, one
/// boundary call included: the instructions a child of `runs` runs executes
/// and a child of `runs - 1` does not. So the markers method (the region
/// between the two requests) and the subtraction method (the difference of
/// the two children) count the very same instructions, and Callgrind's
/// parts add up to either.
#[inline(never)]
pub fn between_runs(index: usize) {
    let slot = &SLOTS[index.min(MAX_SLOTS - 1)];
    ARMED.store(slot[0].load(Ordering::Relaxed), Ordering::Relaxed);
    let part = Part::from_index(slot[1].load(Ordering::Relaxed)).unwrap_or(Part::Outside);
    enter(part);
    ARMED.store(slot[2].load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Whether the counted run is going on (its boundaries are armed).
pub fn in_counted_run() -> bool {
    ARMED.load(Ordering::Relaxed) == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for part in Part::ALL {
            assert_eq!(Part::from_name(part.name()), Some(part));
            assert_eq!(Part::from_index(part as usize), Some(part));
            let c = part.c_name();
            assert_eq!(&c[..c.len() - 1], part.name().as_bytes());
        }
        for plan in [
            Plan::Nothing,
            Plan::Callgrind,
            Plan::Cachegrind(PartSet::run()),
            Plan::Cachegrind(PartSet::EMPTY.with(Part::ServerFlight)),
        ] {
            assert_eq!(Plan::parse(&plan.to_text()), Some(plan));
        }
        for bad in [
            "",
            "cachegrind:",
            "cachegrind:outside",
            "cachegrind:glue,x",
            "massif",
        ] {
            assert_eq!(Plan::parse(bad), None, "{bad}");
        }
    }

    /// Cachegrind's requests open and close exactly the counted parts: in
    /// any walk through the parts, counting is on in a counted part and off
    /// elsewhere.
    #[test]
    fn cachegrind_plans_count_exactly_their_parts() {
        let counted = PartSet::EMPTY
            .with(Part::ClientHello)
            .with(Part::ClientFinish);
        let plan = Plan::Cachegrind(counted);
        let walk = [
            Part::Outside,
            Part::Warm,
            Part::Glue,
            Part::ClientHello,
            Part::Glue,
            Part::ServerFlight,
            Part::ClientFinish,
            Part::ClientHello,
            Part::Glue,
            Part::Outside,
        ];
        let mut on = false;
        for pair in walk.windows(2) {
            match plan.request(pair[0], pair[1]).0 {
                region::CG_START_INSTRUMENTATION => {
                    assert!(!on);
                    on = true;
                }
                region::CG_STOP_INSTRUMENTATION => {
                    assert!(on);
                    on = false;
                }
                other => assert_eq!(other, region::RUNNING_ON_VALGRIND),
            }
            assert_eq!(on, counted.contains(pair[1]), "{pair:?}");
        }
    }

    /// Callgrind instruments from the last warm-up, collects from the run,
    /// and dumps each segment under the name of the part it closes.
    #[test]
    fn callgrind_plans_dump_every_segment_under_its_part() {
        let plan = Plan::Callgrind;
        let request = |from, to| plan.request(from, to).0;
        assert_eq!(
            request(Part::Outside, Part::Warm),
            region::CALLGRIND_START_INSTRUMENTATION
        );
        assert_eq!(
            request(Part::Warm, Part::Glue),
            region::CALLGRIND_TOGGLE_COLLECT
        );
        let (dump, label) = plan.request(Part::ServerFlight, Part::Glue);
        assert_eq!(dump, region::CALLGRIND_DUMP_STATS_AT);
        assert_eq!(label, Part::ServerFlight.c_name().as_ptr() as usize);
        assert_eq!(
            request(Part::Glue, Part::Outside),
            region::CALLGRIND_DUMP_STATS_AT
        );
        assert_eq!(request(Part::Outside, Part::ClientNew), NOTHING.0);
        // The warm-up's own marks go through the disarmed table; leaving
        // it does nothing.
        assert_eq!(request(Part::Warm, Part::Outside), NOTHING.0);
        assert_eq!(request(Part::Glue, Part::Glue), NOTHING.0);
    }

    #[test]
    fn within_returns_to_the_part_it_left() {
        assert_eq!(current(), Part::Outside);
        let inner = within(Part::ServerNew, current);
        assert_eq!(inner, Part::ServerNew);
        assert_eq!(current(), Part::Outside);
    }
}
