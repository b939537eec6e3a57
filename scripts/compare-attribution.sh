#!/usr/bin/env bash
# Checks that the default method (Callgrind) charges each instruction to the
# same function as Cachegrind does: measures the harnesses with Callgrind's
# method and with Cachegrind's markers (Valgrind 3.22+, the same counted
# run), sums each region profile (`perf_outputs/<harness>.cachegrind.out`)
# by function, and lists every function whose figures differ.
#
# Callgrind keeps code a function falls or jumps into in that function's
# context (aws-lc's `mul4x_internal` running on into `__bn_post4x_internal`);
# the runner reads its dumps with instruction addresses and the measured
# program's symbols to charge each cost where Cachegrind charges it
# (`crates/regress/src/measure/symbols.rs`), and code in no symbol to
# `???`, as Cachegrind does. Two differences are left, by design:
#   - a call into glibc goes through one of the program's PLT stubs (a
#     `jmp`, in no symbol): Cachegrind names it `???`, Callgrind charges it
#     to the function that made the call (`--skip-plt`, its default), and
#     so does the runner: the caller pays for calling through the PLT;
#   - glibc, a shared library, keeps Callgrind's names: its functions
#     (files `./…`) may differ where one runs into another
#     (`__strcasecmp_l_avx2` into `__strcasecmp_avx2`).
# Fails unless the named functions' excess over Cachegrind's equals what
# Cachegrind calls `???` (give or take glibc's moves, whose code in no
# symbol is `???` to it as well) and nothing else differs outside glibc, to
# max(20, 1 ppm of the harness's count) in all.
#
# Usage: scripts/compare-attribution.sh [--harness FILTER]...
#        (default: --harness s2n_tls::handshake_rsa4096, the seed's path)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

newer=$root/.tools/valgrind-trixie/bin/valgrind
[ -x "$newer" ] || scripts/fetch-valgrind.sh
filters=("$@")
[ ${#filters[@]} -gt 0 ] || filters=(--harness s2n_tls::handshake_rsa4096)

cargo build --locked --quiet -p regress
regress=$root/target/debug/regress
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

measure() { # OUT-DIR [ENV...]
    local out=$1
    shift
    mkdir -p "$out"
    local status=0
    env "$@" "$regress" --valgrind "$newer" run "${filters[@]}" >/dev/null || status=$?
    if [ "$status" -ge 2 ]; then
        echo "measuring failed ($*)" >&2
        exit "$status"
    fi
    cp perf_outputs/*.cachegrind.out perf_outputs/*.json "$out/"
}

measure "$scratch/callgrind" REGRESS_METHOD=callgrind
measure "$scratch/markers" REGRESS_METHOD=cachegrind

python3 - "$scratch/callgrind" "$scratch/markers" "${filters[@]}" <<'PY'
import json, pathlib, sys

a_dir, b_dir = map(pathlib.Path, sys.argv[1:3])
filters = [f for f in sys.argv[3:] if f != "--harness"]

glibc = set()

def by_function(path):
    totals, function, file = {}, None, ""
    for line in path.read_text().splitlines():
        if line.startswith("fl="):
            file = line[3:]
        elif line.startswith("fn="):
            function = line[3:]
            if file.startswith("./"):
                glibc.add(function)
        elif line[:1].isdigit() and function is not None:
            fields = line.split()
            if len(fields) >= 2:
                totals[function] = totals.get(function, 0) + int(fields[1])
    return totals

failing = 0
for record in sorted(a_dir.glob("*.json")):
    harness = json.loads(record.read_text())["harness"]
    if filters and not any(f in harness for f in filters):
        continue
    stem = record.name[: -len(".json")]
    a_path, b_path = a_dir / f"{stem}.cachegrind.out", b_dir / f"{stem}.cachegrind.out"
    if not b_path.exists():
        continue
    a, b = by_function(a_path), by_function(b_path)
    total = sum(a.values())
    allowed = max(20, total // 1_000_000)
    rows = sorted(
        ((f, a.get(f, 0), b.get(f, 0)) for f in set(a) | set(b) if a.get(f, 0) != b.get(f, 0)),
        key=lambda row: -abs(row[1] - row[2]),
    )
    in_glibc = sum(abs(x - y) for f, x, y in rows if f in glibc)
    # The PLT stubs: Cachegrind's `???`, held by the callers here.
    stubs = b.get("???", 0) - a.get("???", 0)
    named = [(f, x, y) for f, x, y in rows if f not in glibc and f != "???"]
    held = sum(x - y for f, x, y in named if x > y)
    # Glibc's own code in no symbol is `???` to Cachegrind too, and with
    # one of glibc's functions in Callgrind: part of glibc's moves.
    off = max(0, abs(stubs - held) - in_glibc) + sum(y - x for f, x, y in named if x < y)
    failing += off > allowed
    print(f"{harness}: {total:,} instructions, {len(a)} functions; {len(rows)} differ: "
          f"the callers hold {held:,} of the {stubs:,} PLT instructions Cachegrind calls `???`, "
          f"{in_glibc:,} move inside glibc, {off:,} otherwise (allowed {allowed})")
    for f, x, y in rows[:10]:
        print(f"  {f}: Callgrind's method {x:,}, Cachegrind's markers {y:,} ({x - y:+,})")
    for name in ("mul4x_internal", "__bn_post4x_internal", "bn_sqr8x_internal", "__bn_sqr8x_reduction"):
        key = next((f for f in a if f.endswith(name)), None)
        if key:
            print(f"  {key}: {a[key]:,} (Cachegrind's markers {b.get(key, 0):,})")
sys.exit(1 if failing else 0)
PY
