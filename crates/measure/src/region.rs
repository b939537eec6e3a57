//! Valgrind client requests: how the measured process talks to the tool.
//!
//! Valgrind recognises a "magic" instruction sequence that is a no-op on real
//! hardware (the rotations add up to a full turn, the exchange swaps a
//! register with itself) and turns it into a request to the tool. The
//! sequences and request numbers are Valgrind's documented ABI
//! (`valgrind.h`, `cachegrind.h`); writing them as a few lines of inline
//! assembly avoids a bindgen/libclang build dependency.
//!
//! Cachegrind honours start/stop requests from Valgrind 3.22 on, together with
//! `--instr-at-start=no`. Older Cachegrind ignores them (and complains once),
//! which is why the runner only plans them for a Valgrind that has them
//! ([`crate::parts::Plan`]); Callgrind has had its requests for much longer.

/// `VG_USERREQ_TOOL_BASE('C','G')`: the first Cachegrind request.
pub const CG_START_INSTRUMENTATION: usize = ((b'C' as usize) << 24) | ((b'G' as usize) << 16);
/// The request after it.
pub const CG_STOP_INSTRUMENTATION: usize = CG_START_INSTRUMENTATION + 1;
/// `VG_USERREQ_TOOL_BASE('C','T') + 2`: Callgrind's `TOGGLE_COLLECT`
/// (`callgrind.h`).
pub const CALLGRIND_TOGGLE_COLLECT: usize = ((b'C' as usize) << 24) | ((b'T' as usize) << 16) | 2;
/// Callgrind's `DUMP_STATS_AT`: dump the cost since the last dump, with a
/// label (a NUL-terminated string) the dump file carries.
pub const CALLGRIND_DUMP_STATS_AT: usize = ((b'C' as usize) << 24) | ((b'T' as usize) << 16) | 3;
/// Callgrind's `START_INSTRUMENTATION`: with `--instr-atstart=no`,
/// Callgrind runs uninstrumented (as fast as Valgrind's `none` tool) until
/// this request, which re-translates what runs next with instrumentation.
pub const CALLGRIND_START_INSTRUMENTATION: usize =
    ((b'C' as usize) << 24) | ((b'T' as usize) << 16) | 4;
/// `VG_USERREQ__RUNNING_ON_VALGRIND`, a core request without side effects:
/// the no-op a boundary issues when it must not change anything.
pub const RUNNING_ON_VALGRIND: usize = 0x1001;

/// Issues `request` with `arg` as its first argument; what it does is
/// decided by the numbers alone, so every call executes the same
/// instructions (see [`crate::parts`]).
#[inline(always)]
pub fn request(request: usize, arg: usize) {
    client_request(0, request, [arg, 0, 0, 0, 0]);
}

/// True when this process runs under Valgrind (any tool).
pub fn running_on_valgrind() -> bool {
    client_request(0, RUNNING_ON_VALGRIND, [0; 5]) != 0
}

/// Issues a client request and returns Valgrind's answer, or `default` when
/// not running under Valgrind.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn client_request(default: usize, request: usize, args: [usize; 5]) -> usize {
    let block: [usize; 6] = [request, args[0], args[1], args[2], args[3], args[4]];
    let result;
    // SAFETY: the sequence only rotates rdi by 128 bits in total (leaving it
    // unchanged) and exchanges rbx with itself; natively it changes nothing
    // but flags. Under Valgrind it reads `block` and writes the answer to rdx.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") default => result,
            in("rax") block.as_ptr(),
            options(nostack),
        );
    }
    result
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn client_request(default: usize, request: usize, args: [usize; 5]) -> usize {
    let block: [usize; 6] = [request, args[0], args[1], args[2], args[3], args[4]];
    let result;
    // SAFETY: the rotations of x12 add up to a full turn and `orr x10, x10,
    // x10` is a no-op; under Valgrind it reads the block at x4 and answers in x3.
    unsafe {
        core::arch::asm!(
            "ror x12, x12, #3",
            "ror x12, x12, #13",
            "ror x12, x12, #51",
            "ror x12, x12, #61",
            "orr x10, x10, x10",
            inout("x3") default => result,
            in("x4") block.as_ptr(),
            options(nostack),
        );
    }
    result
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn client_request(default: usize, _request: usize, _args: [usize; 5]) -> usize {
    default
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_match_cachegrind_h() {
        assert_eq!(CG_START_INSTRUMENTATION, 0x4347_0000);
        assert_eq!(CG_STOP_INSTRUMENTATION, 0x4347_0001);
        assert_eq!(CALLGRIND_TOGGLE_COLLECT, 0x4354_0002);
        assert_eq!(CALLGRIND_DUMP_STATS_AT, 0x4354_0003);
        assert_eq!(CALLGRIND_START_INSTRUMENTATION, 0x4354_0004);
    }

    #[test]
    fn markers_are_harmless_natively() {
        // Natively the magic sequence must change nothing: the requests
        // return their default and the process carries on.
        if running_on_valgrind() {
            return;
        }
        request(RUNNING_ON_VALGRIND, 0);
        assert_eq!(client_request(42, RUNNING_ON_VALGRIND, [1, 2, 3, 4, 5]), 42);
    }
}
