//! The measured program: the process the runner starts under Valgrind.
//!
//! A program that hosts harnesses (the `harnesses` binary, or a test binary
//! with fixture harnesses) hands its list of [`Entry`]s to [`serve`] first
//! thing in `main`. When the runner started the process to measure or to
//! scale a harness, the request is in the environment and `serve` does it;
//! otherwise `serve` returns and the program goes on with its own work.
//!
//! Why a program of its own and not the test binary: whatever is linked into
//! the measured process can move its counts (code and data move when the
//! binary changes). The runner, its reports and the test harness are not
//! linked into it, so an edit to the runner leaves every count as it was.

use std::io::Write;
use std::process::ExitCode;

use crate::child::{self, ChildRequest};
use crate::harness::{run_natively, Harness, HarnessError};
use crate::scale::{self, ScaleRequest};

/// A harness, type-erased so that harnesses of different types can be
/// listed together. Every [`Harness`] that can be shared between threads is
/// one.
pub trait AnyHarness: Send + Sync {
    /// [`run_natively`]: setup, two runs, each checked.
    fn run_natively(&self) -> Result<(), HarnessError>;
    /// The first step of the measurement protocol, on the starting thread
    /// ([`child::announce`]).
    fn announce(&self, name: &str, request: &ChildRequest) -> Result<(), HarnessError>;
    /// The measurement protocol of [`child::run`], on the measuring thread.
    fn measure(&self, request: &ChildRequest) -> Result<(), HarnessError>;
    /// The thread-scaling protocol of [`scale::run`].
    fn scale(&self, name: &str, request: &ScaleRequest) -> Result<(), HarnessError>;
    /// Bytes one run moves, for throughput paths ([`Harness::bytes_per_run`]).
    fn bytes_per_run(&self) -> Option<u64>;
    /// Sets the harness up for timing by a benchmark framework.
    fn timer(&self) -> Result<Box<dyn Timer + '_>, HarnessError>;
}

/// A harness set up once, whose runs a benchmark framework times.
pub trait Timer {
    /// Runs the path `iterations` times, each on a freshly prepared input,
    /// and returns the sum of `clock()` differences across the runs alone
    /// (preparing inputs and dropping outputs are outside the sum).
    fn time_runs(
        &mut self,
        iterations: u64,
        clock: &mut dyn FnMut() -> u64,
    ) -> Result<u64, HarnessError>;
}

impl<H: Harness + Send + Sync> AnyHarness for H {
    fn run_natively(&self) -> Result<(), HarnessError> {
        run_natively(self)
    }

    fn announce(&self, name: &str, request: &ChildRequest) -> Result<(), HarnessError> {
        child::announce(name, self, request)
    }

    fn measure(&self, request: &ChildRequest) -> Result<(), HarnessError> {
        child::run(self, request)
    }

    fn scale(&self, name: &str, request: &ScaleRequest) -> Result<(), HarnessError> {
        scale::run(name, self, request)
    }

    fn bytes_per_run(&self) -> Option<u64> {
        Harness::bytes_per_run(self)
    }

    fn timer(&self) -> Result<Box<dyn Timer + '_>, HarnessError> {
        Ok(Box::new(SetUp {
            harness: self,
            setup: self.setup()?,
        }))
    }
}

struct SetUp<'a, H: Harness> {
    harness: &'a H,
    setup: H::Setup,
}

impl<H: Harness> Timer for SetUp<'_, H> {
    fn time_runs(
        &mut self,
        iterations: u64,
        clock: &mut dyn FnMut() -> u64,
    ) -> Result<u64, HarnessError> {
        let mut total: u64 = 0;
        for _ in 0..iterations {
            let input = self.harness.prepare(&self.setup)?;
            let start = clock();
            let output = self.harness.run(&self.setup, input)?;
            total = total.saturating_add(clock().saturating_sub(start));
            drop(output);
        }
        Ok(total)
    }
}

/// One harness of a program, under its public name `<library>::<path>`.
pub struct Entry {
    pub name: String,
    pub harness: Box<dyn AnyHarness>,
}

impl Entry {
    pub fn new(name: impl Into<String>, harness: impl AnyHarness + 'static) -> Entry {
        Entry {
            name: name.into(),
            harness: Box::new(harness),
        }
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("name", &self.name).finish()
    }
}

/// Exit code of a child whose request could not be served (a bad request,
/// a harness that failed, a name the program does not have). Distinct from
/// a panic's 101, so the runner can tell them apart.
pub const EXIT_CHILD_FAILED: u8 = 3;

/// Serves the runner's request, if the environment holds one, and then ends
/// the process. Returns only when this process is not a measured or scaled
/// child.
///
/// A measured child leaves through `_exit`, without exit handlers or
/// destructors: C libraries' cleanup (OpenSSL frees caches whose size
/// depends on how many runs there were) would otherwise add instructions
/// that differ between the two children of a subtraction.
pub fn serve(entries: &[Entry]) {
    // A fork server's children come back from here with their request in
    // the environment; the server itself never does.
    crate::fork_server::enter();
    match ScaleRequest::from_env() {
        Err(error) => fail(&format!("bad scaling request from the runner: {error}")),
        Ok(Some(request)) => {
            let entry = find(entries, &request.harness);
            if let Err(error) = entry.harness.scale(&entry.name, &request) {
                fail(&format!(
                    "{} failed while being scaled: {error}",
                    entry.name
                ));
            }
            exit_now(0);
        }
        Ok(None) => {}
    }
    match ChildRequest::from_env() {
        Err(error) => fail(&format!("bad measurement request from the runner: {error}")),
        Ok(Some(request)) => {
            // SAFETY: this branch never returns (the measuring thread ends
            // the process, and this thread ends itself without unwinding),
            // so the caller's entries, on its stack and heap, stay where
            // they are for as long as the process lives.
            let entries: &'static [Entry] = unsafe { std::mem::transmute(entries) };
            let entry = find(entries, &request.harness);
            if let Err(error) = entry.harness.announce(&entry.name, &request) {
                fail(&format!(
                    "{} failed while being measured: {error}",
                    entry.name
                ));
            }
            on_measuring_thread(move || {
                if let Err(error) = entry.harness.measure(&request) {
                    fail(&format!(
                        "{} failed while being measured: {error}",
                        entry.name
                    ));
                }
                exit_now(0);
            });
        }
        Ok(None) => {}
    }
}

/// Runs the measurement on a thread of its own, which ends the process;
/// this thread ends at once.
///
/// On the main thread, the counts depended on where the process's heap
/// began. glibc serves the main thread from the `brk` heap, which starts
/// after whatever the process read before `main`; Rust's start-up reads
/// `/proc/self/maps`, whose text holds the program's absolute path. So the
/// path of the scratch folder (and with it the checkout's location and the
/// runner's process id) moved allocations and the cost of copies a little
/// (measured: 24 instructions of `memcpy` on `rustls::session_resumption`),
/// and so did the Valgrind version and tool, which lay out the client's
/// memory differently (measured on a test program: Callgrind and Cachegrind
/// counted a region 74,603 instructions apart on the main thread, 2,346 on
/// a thread). A new thread gets an arena of its own, mapped at an aligned
/// address, and a stack of its own: neither depends on any of that. It is
/// also where a TLS server does its work: on a worker thread.
///
/// The main thread does not wait for it (`join`): a waiting thread's
/// instructions are counted too when Cachegrind counts the whole process
/// (subtraction), and how many it executes depends on timing (measured:
/// `__pthread_clockjoin_ex` and its futex wait took 79 instructions more
/// or fewer from one child to the next when two Valgrinds ran at once, so
/// a subtraction was off by 228). It leaves with the `exit` system call,
/// which ends this thread alone. And the measuring thread first waits for
/// it to be gone: otherwise, when the scheduler let the measuring thread
/// run to its end before the main thread had returned from creating it,
/// the main thread's last hundred instructions were not counted in one
/// child of a subtraction and were in the other (measured: 111 on a
/// fixture).
fn on_measuring_thread(measure: impl FnOnce() + Send + 'static) -> ! {
    let main = MainThread::watch();
    let spawned = std::thread::Builder::new()
        .name("measured".into())
        .spawn(move || {
            main.wait_until_gone();
            // The measurement ends the process; it returns only by
            // panicking, whose message the panic hook has printed.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(measure));
            match outcome {
                Err(_) => fail("the measured harness panicked; its message is above"),
                Ok(()) => fail("the measuring thread returned without ending the process"),
            }
        });
    match spawned {
        Err(error) => fail(&format!("cannot start the measuring thread: {error}")),
        Ok(handle) => {
            // Never joined, never dropped (dropping detaches, which is
            // work this thread does not need to do).
            std::mem::forget(handle);
            exit_this_thread()
        }
    }
}

/// The main thread, watched through the word the kernel clears (and wakes
/// the waiters of) when the thread ends (`set_tid_address`).
struct MainThread {
    tid: i32,
}

static MAIN_THREAD_ALIVE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

impl MainThread {
    /// Makes the kernel clear [`MAIN_THREAD_ALIVE`] when the calling
    /// thread ends.
    fn watch() -> MainThread {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: gettid has no arguments; set_tid_address only records
            // the address of a static that lives as long as the process.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
            MAIN_THREAD_ALIVE.store(tid, std::sync::atomic::Ordering::SeqCst);
            unsafe { libc::syscall(libc::SYS_set_tid_address, MAIN_THREAD_ALIVE.as_ptr()) };
            MainThread { tid }
        }
        #[cfg(not(target_os = "linux"))]
        MainThread { tid: 0 }
    }

    /// Waits until the main thread has ended: one futex wait, which returns
    /// at once when the word is already clear and when the kernel clears
    /// it otherwise, so that the instructions executed here are the same
    /// either way: no loop whose turns depend on timing, and the system
    /// call made directly (glibc's `syscall` takes a branch more to set
    /// `errno` when the wait returns at once: 4 instructions that moved a
    /// subtraction).
    fn wait_until_gone(&self) {
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        // SAFETY: a futex wait on a static word; the result is not needed,
        // and the kernel only clobbers rax, rcx and r11.
        unsafe {
            core::arch::asm!(
                "syscall",
                inlateout("rax") libc::SYS_futex => _,
                in("rdi") MAIN_THREAD_ALIVE.as_ptr(),
                in("rsi") libc::FUTEX_WAIT,
                in("rdx") self.tid,
                in("r10") 0usize,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        #[cfg(all(target_os = "linux", not(target_arch = "x86_64")))]
        // SAFETY: as above, through glibc.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                MAIN_THREAD_ALIVE.as_ptr(),
                libc::FUTEX_WAIT,
                self.tid,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }
}

/// Ends the calling thread only (the `exit` system call, not
/// `exit_group`), without unwinding or running anything of its own.
fn exit_this_thread() -> ! {
    #[cfg(target_os = "linux")]
    // SAFETY: SYS_exit ends this thread; nothing of it runs afterwards, and
    // the memory it leaves (its stack, what it allocated) stays mapped for
    // the threads that still use it.
    unsafe {
        libc::syscall(libc::SYS_exit, 0);
    }
    loop {
        std::thread::park();
    }
}

/// `main` of a program whose only job is hosting harnesses: serves the
/// runner's requests, and otherwise understands `list` (the names, one per
/// line) and `run NAME...` (each named harness natively, checked).
pub fn main(entries: Vec<Entry>) -> ExitCode {
    serve(&entries);
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("list") if args.len() == 1 => {
            let mut out = std::io::stdout().lock();
            for entry in &entries {
                if writeln!(out, "{}", entry.name).is_err() {
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Some("run") if args.len() > 1 => {
            for name in &args[1..] {
                let Some(entry) = entries.iter().find(|entry| &entry.name == name) else {
                    eprintln!("no harness is named {name:?}; `list` shows them all");
                    return ExitCode::from(2);
                };
                if let Err(error) = entry.harness.run_natively() {
                    eprintln!("{name} does not work natively: {error}");
                    return ExitCode::FAILURE;
                }
                println!("{name}: ok");
            }
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "usage: {} list | run NAME...\n\
                 This program hosts the harnesses the `regress` runner measures under \
                 Valgrind; `cargo run -p regress -- --help` is what you want.",
                std::env::args()
                    .next()
                    .unwrap_or_else(|| "harnesses".into())
            );
            ExitCode::from(2)
        }
    }
}

fn find<'a>(entries: &'a [Entry], name: &str) -> &'a Entry {
    entries
        .iter()
        .find(|entry| entry.name == name)
        .unwrap_or_else(|| fail(&format!("this program has no harness named {name:?}")))
}

fn fail(message: &str) -> ! {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{message}");
    drop(stderr);
    exit_now(EXIT_CHILD_FAILED)
}

/// Ends the process at once: `_exit(2)`, no `atexit` handlers, no
/// destructors, after flushing what was printed.
pub fn exit_now(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    // SAFETY: _exit never returns and touches no Rust state.
    unsafe {
        libc::_exit(i32::from(code))
    }
    #[cfg(not(unix))]
    std::process::exit(i32::from(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Sum;

    impl Harness for Sum {
        type Setup = u64;
        type Input = u64;
        type Output = u64;
        fn setup(&self) -> Result<u64, HarnessError> {
            Ok(10)
        }
        fn prepare(&self, setup: &u64) -> Result<u64, HarnessError> {
            Ok(*setup)
        }
        fn run(&self, _: &u64, input: u64) -> Result<u64, HarnessError> {
            Ok((0..input).sum())
        }
        fn check(&self, _: &u64, output: &u64) -> Result<(), HarnessError> {
            if *output == 45 {
                Ok(())
            } else {
                Err(format!("sum is {output}").into())
            }
        }
    }

    #[test]
    fn an_erased_harness_runs_and_times_like_the_typed_one() {
        let entry = Entry::new("demo::sum", Sum);
        entry.harness.run_natively().expect("natively");
        assert_eq!(entry.harness.bytes_per_run(), None);
        let mut timer = entry.harness.timer().expect("timer");
        // A clock that ticks once per reading: each run is read twice, so
        // the sum counts exactly one tick per run, whatever prepare does.
        let mut ticks = 0;
        let mut clock = || {
            ticks += 1;
            ticks
        };
        assert_eq!(timer.time_runs(5, &mut clock).expect("timed"), 5);
        assert_eq!(format!("{entry:?}"), "Entry { name: \"demo::sum\" }");
    }
}
