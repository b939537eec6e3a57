//! Heap figures of a counted run, from inside the measured process.
//!
//! The runner starts a heap child with a small preloaded library (the
//! *hooks*, `LD_PRELOAD`) that defines `malloc`, `free`, `calloc`,
//! `realloc` and the aligned allocators, forwards each to glibc, and reports
//! every block to the callbacks here. Symbol interposition sees every
//! allocation of the process through one mechanism: Rust's (the `System`
//! allocator calls `malloc`), aws-lc's and s2n-tls's (linked into the
//! program), and the system OpenSSL's (`libcrypto` calls `malloc` through
//! its PLT), glibc's own included. Without the hooks (every instruction
//! child), [`attach`] finds nothing and nothing here runs.
//!
//! What is recorded, all in requested bytes (what the program asked for,
//! not what glibc rounded it up to):
//!
//! - for the counted run: allocations and bytes allocated, by the
//!   [`Part`] that made them, and the peak of live bytes of the blocks the
//!   run allocated (a block the run frees again counts only while it
//!   lives);
//! - for a handshake: the bytes each side's connection holds, i.e. the
//!   blocks still live that were allocated while that side's code ran for
//!   this connection (creating it in `prepare`, its calls in the run, and
//!   after the run its first record), at two points: right after the
//!   handshake and after the first application record.
//!
//! A `realloc` counts as freeing the old block and allocating the new one.
//! Only the measured thread is watched (the hooks check the thread); the
//! process's other threads do not allocate while it runs.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::parts::{self, Part, Side, PARTS};

/// The symbol the hooks export: `int regress_heap_attach(on_alloc, on_free,
/// on_realloc)`, which makes the calling thread the watched one.
pub const ATTACH_SYMBOL: &[u8] = b"regress_heap_attach\0";

/// Version of the figures' format, in the child's heap report.
pub const HEAP_SCHEMA: u32 = 1;

/// Blocks the table can track at once; more is reported as an overflow
/// rather than guessed around (the largest path here keeps a few thousand).
const CAPACITY: usize = 1 << 20;

/// Input tags the table can tell apart (0: setup, 1..: inputs).
const TAGS: usize = 8;

type AllocFn = extern "C" fn(*mut u8, usize);
type FreeFn = extern "C" fn(*mut u8);
type ReallocFn = extern "C" fn(*mut u8, *mut u8, usize);
type AttachFn = unsafe extern "C" fn(AllocFn, FreeFn, ReallocFn) -> i32;

static ATTACHED: AtomicBool = AtomicBool::new(false);
/// The input being prepared or run (see [`set_input`]).
static INPUT: AtomicU8 = AtomicU8::new(0);

/// Allocations and bytes of one part of the counted run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allocated {
    pub allocations: u64,
    pub bytes: u64,
}

/// Live blocks and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Held {
    pub blocks: u64,
    pub bytes: u64,
}

/// What each side's connection holds at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SidesHeld {
    pub client: Held,
    pub server: Held,
}

/// The heap figures a heap child reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeapReport {
    pub schema: u32,
    /// Allocations of the counted run by part name (`glue`,
    /// `client_hello`, ...); parts that allocated nothing are left out.
    pub run: std::collections::BTreeMap<String, Allocated>,
    /// The largest number of bytes the run's own blocks held at once.
    pub peak_live_bytes: u64,
    /// Bytes of the run's blocks still live when it ended.
    pub live_bytes_at_end: u64,
    /// For a handshake: what each side holds right after it.
    pub held_after_handshake: Option<SidesHeld>,
    /// For a handshake: what each side holds after the first application
    /// record (see `Harness::first_record`).
    pub held_after_first_record: Option<SidesHeld>,
    /// For a path on a peer's flight: what the paying side read
    /// ([`crate::Harness::received`]). Absent from a program before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<crate::Received>,
}

/// One tracked block.
#[derive(Clone, Copy)]
struct Slot {
    /// The block's address; 0 for an empty slot.
    address: usize,
    size: usize,
    part: u8,
    tag: u8,
    /// Allocated during the counted run.
    in_run: bool,
}

struct State {
    slots: &'static mut [Slot],
    used: usize,
    overflow: bool,
    run: [Allocated; PARTS],
    run_live: u64,
    run_peak: u64,
    /// Live bytes and blocks by the part and input that allocated them.
    live: [[Held; TAGS]; PARTS],
}

/// The bookkeeping. Locked by the callbacks inside `malloc`, so nothing may
/// allocate while holding it (the lock is not re-entrant).
static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Why heap figures could not be taken.
#[derive(Debug)]
pub struct HeapError(pub String);

impl std::fmt::Display for HeapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HeapError {}

/// Finds the preloaded hooks and starts watching this thread's
/// allocations. An error when the hooks are not there: a heap child
/// started without them would report nothing, silently.
pub fn attach() -> Result<(), HeapError> {
    // SAFETY: `dlsym` with RTLD_DEFAULT and a NUL-terminated name only
    // looks the symbol up.
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, ATTACH_SYMBOL.as_ptr().cast()) };
    if symbol.is_null() {
        return Err(HeapError(
            "the heap hooks are not loaded (LD_PRELOAD of the hooks library): \
             this program cannot take heap figures on its own"
                .to_owned(),
        ));
    }
    let slots = table()?;
    *lock() = Some(State {
        slots,
        used: 0,
        overflow: false,
        run: [Allocated::default(); PARTS],
        run_live: 0,
        run_peak: 0,
        live: [[Held::default(); TAGS]; PARTS],
    });
    // SAFETY: the symbol is the hooks' attach function, of this signature
    // (the hooks and this module are one protocol, `ATTACH_SYMBOL`).
    let attach: AttachFn = unsafe { std::mem::transmute(symbol) };
    // SAFETY: the callbacks are plain functions that never allocate.
    if unsafe { attach(on_alloc, on_free, on_realloc) } != 1 {
        return Err(HeapError("the heap hooks refused to attach".to_owned()));
    }
    ATTACHED.store(true, Ordering::SeqCst);
    Ok(())
}

/// Whether [`attach`] succeeded in this process.
pub fn attached() -> bool {
    ATTACHED.load(Ordering::Relaxed)
}

/// Tags what is allocated from now on as belonging to input `input` (1..),
/// while it is prepared and while it runs. Cheap and harmless without the
/// hooks.
pub fn set_input(input: usize) {
    INPUT.store(input.min(TAGS - 1) as u8, Ordering::Relaxed);
}

/// What each side's connections of input `input` hold now: the live blocks
/// allocated while that side's code ran for it.
pub fn held(input: usize) -> Option<SidesHeld> {
    let guard = lock();
    let state = guard.as_ref()?;
    Some(state.held(input.min(TAGS - 1)))
}

/// The counted run's figures; an error if the table overflowed.
pub fn run_report() -> Result<HeapReport, HeapError> {
    // Copied out first: building the report allocates, and an allocation
    // while the state is locked would wait for itself.
    let (overflow, run, peak_live_bytes, live_bytes_at_end) = {
        let guard = lock();
        let state = guard
            .as_ref()
            .ok_or_else(|| HeapError("heap figures were asked for without attach".to_owned()))?;
        (state.overflow, state.run, state.run_peak, state.run_live)
    };
    if overflow {
        return Err(HeapError(format!(
            "more than {CAPACITY} blocks were live at once; the heap table cannot track them"
        )));
    }
    let run = Part::ALL
        .into_iter()
        .filter(|part| run[*part as usize] != Allocated::default())
        .map(|part| (part.name().to_owned(), run[part as usize]))
        .collect();
    Ok(HeapReport {
        schema: HEAP_SCHEMA,
        run,
        peak_live_bytes,
        live_bytes_at_end,
        held_after_handshake: None,
        held_after_first_record: None,
        received: None,
    })
}

fn lock() -> std::sync::MutexGuard<'static, Option<State>> {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The table's memory, mapped once and only touched where used.
fn table() -> Result<&'static mut [Slot], HeapError> {
    let bytes = CAPACITY * std::mem::size_of::<Slot>();
    // SAFETY: an anonymous private mapping; zeroed memory is a table of
    // empty slots.
    let memory = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if memory == libc::MAP_FAILED {
        return Err(HeapError(format!(
            "cannot map {bytes} bytes for the heap table: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: the mapping is ours, sized for CAPACITY slots, and never
    // unmapped; all-zero bytes are valid slots.
    Ok(unsafe { std::slice::from_raw_parts_mut(memory.cast::<Slot>(), CAPACITY) })
}

impl State {
    fn index(address: usize) -> usize {
        // Fibonacci hashing of the address (blocks are 16-byte aligned).
        (address >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CAPACITY.trailing_zeros())
    }

    fn held(&self, tag: usize) -> SidesHeld {
        let of = |side: Side| {
            Part::ALL
                .into_iter()
                .filter(|part| part.side() == Some(side))
                .fold(Held::default(), |sum, part| {
                    let held = self.live[part as usize][tag];
                    Held {
                        blocks: sum.blocks + held.blocks,
                        bytes: sum.bytes + held.bytes,
                    }
                })
        };
        SidesHeld {
            client: of(Side::Client),
            server: of(Side::Server),
        }
    }

    /// Records a block of `size` bytes at `address`, allocated in `part` for
    /// input `tag`, during the counted run or not.
    fn allocated(&mut self, address: usize, size: usize, part: Part, tag: u8, in_run: bool) {
        if address == 0 {
            return;
        }
        if self.used * 4 >= CAPACITY * 3 {
            self.overflow = true;
            return;
        }
        let mut index = State::index(address);
        while self.slots[index].address != 0 && self.slots[index].address != address {
            index = (index + 1) % CAPACITY;
        }
        if self.slots[index].address == 0 {
            self.used += 1;
        } else {
            // An address handed out again without a free we saw: forget
            // the old block first.
            let old = self.slots[index];
            self.forget(old);
        }
        let in_run = in_run && part.in_run();
        self.slots[index] = Slot {
            address,
            size,
            part: part as u8,
            tag,
            in_run,
        };
        let live = &mut self.live[part as usize][usize::from(tag)];
        live.blocks += 1;
        live.bytes += size as u64;
        if in_run {
            let run = &mut self.run[part as usize];
            run.allocations += 1;
            run.bytes += size as u64;
            self.run_live += size as u64;
            self.run_peak = self.run_peak.max(self.run_live);
        }
    }

    /// Takes a block's bytes off the live figures.
    fn forget(&mut self, slot: Slot) {
        let live = &mut self.live[usize::from(slot.part)][usize::from(slot.tag)];
        live.blocks = live.blocks.saturating_sub(1);
        live.bytes = live.bytes.saturating_sub(slot.size as u64);
        if slot.in_run {
            self.run_live = self.run_live.saturating_sub(slot.size as u64);
        }
    }

    fn freed(&mut self, address: usize) {
        if address == 0 {
            return;
        }
        let mut index = State::index(address);
        loop {
            let slot = self.slots[index];
            if slot.address == 0 {
                return; // not ours: allocated before attach
            }
            if slot.address == address {
                break;
            }
            index = (index + 1) % CAPACITY;
        }
        let slot = self.slots[index];
        self.forget(slot);
        self.remove_at(index);
    }

    /// Linear probing's deletion: later slots of the same run of probes
    /// move back, so no lookup stops early at the hole.
    fn remove_at(&mut self, mut hole: usize) {
        self.slots[hole].address = 0;
        self.used -= 1;
        let mut next = (hole + 1) % CAPACITY;
        while self.slots[next].address != 0 {
            let home = State::index(self.slots[next].address);
            // Move the slot back when its home is not between the hole
            // (exclusive) and its position (inclusive), cyclically.
            let stays = if hole <= next {
                hole < home && home <= next
            } else {
                hole < home || home <= next
            };
            if !stays {
                self.slots[hole] = self.slots[next];
                self.slots[next].address = 0;
                hole = next;
            }
            next = (next + 1) % CAPACITY;
        }
    }
}

/// The part and input a block allocated now belongs to, and whether the
/// counted run is going on.
fn owner() -> (Part, u8, bool) {
    (
        parts::current(),
        INPUT.load(Ordering::Relaxed),
        parts::in_counted_run(),
    )
}

extern "C" fn on_alloc(address: *mut u8, size: usize) {
    if let Some(state) = lock().as_mut() {
        let (part, tag, in_run) = owner();
        state.allocated(address as usize, size, part, tag, in_run);
    }
}

extern "C" fn on_free(address: *mut u8) {
    if let Some(state) = lock().as_mut() {
        state.freed(address as usize);
    }
}

extern "C" fn on_realloc(old: *mut u8, new: *mut u8, size: usize) {
    if let Some(state) = lock().as_mut() {
        state.freed(old as usize);
        let (part, tag, in_run) = owner();
        state.allocated(new as usize, size, part, tag, in_run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            slots: table().expect("table"),
            used: 0,
            overflow: false,
            run: [Allocated::default(); PARTS],
            run_live: 0,
            run_peak: 0,
            live: [[Held::default(); TAGS]; PARTS],
        }
    }

    /// Blocks come and go through colliding slots and the table still finds
    /// every live one: nothing is lost by the backward shift.
    #[test]
    fn the_table_keeps_every_live_block_through_collisions() {
        let mut state = state();
        // Addresses one table-size apart share their home slot.
        let stride = CAPACITY << 4;
        let addresses: Vec<usize> = (1..=50).map(|k| k * stride).collect();
        for &address in &addresses {
            state.allocated(address, 10, Part::Outside, 0, false);
        }
        assert_eq!(state.used, 50);
        for &address in addresses.iter().step_by(2) {
            state.freed(address);
        }
        assert_eq!(state.used, 25);
        assert_eq!(
            state.live[0][0],
            Held {
                blocks: 25,
                bytes: 250
            }
        );
        for &address in addresses.iter().skip(1).step_by(2) {
            state.freed(address);
        }
        assert_eq!(state.used, 0);
        assert_eq!(state.live[0][0], Held::default());
        // A free of a block the table never saw changes nothing.
        state.freed(12345 << 4);
        assert_eq!(state.used, 0);
    }

    /// Only the counted input's blocks made in the run count for the run;
    /// its peak is of those blocks alone.
    #[test]
    fn the_run_counts_its_own_blocks_and_their_peak() {
        let mut state = state();
        state.allocated(0x1000, 100, Part::ClientNew, 3, false); // prepare
        state.allocated(0x2000, 40, Part::Glue, 3, true);
        state.allocated(0x3000, 60, Part::ClientHello, 3, true);
        state.allocated(0x5000, 1000, Part::ClientHello, 2, false); // a warm-up
        state.freed(0x2000);
        state.freed(0x1000);
        state.allocated(0x4000, 10, Part::ClientHello, 3, true);
        assert_eq!(
            state.run[Part::ClientHello as usize],
            Allocated {
                allocations: 2,
                bytes: 70
            }
        );
        assert_eq!(
            state.run[Part::Glue as usize],
            Allocated {
                allocations: 1,
                bytes: 40
            }
        );
        assert_eq!(state.run_peak, 100);
        assert_eq!(state.run_live, 70);
        // What the client holds: its blocks of input 3, creation included
        // (freed here), the other input's not.
        state.allocated(0x6000, 5, Part::ClientNew, 3, false);
        state.allocated(0x7000, 7, Part::ServerFinish, 3, true);
        let held = state.held(3);
        assert_eq!(
            held.client,
            Held {
                blocks: 3,
                bytes: 75
            }
        );
        assert_eq!(
            held.server,
            Held {
                blocks: 1,
                bytes: 7
            }
        );
    }
}
