#!/usr/bin/env bash
# Measures every harness with both of Cachegrind's counting methods
# (REGRESS_METHOD=cachegrind; the default Callgrind method is compared with
# them by scripts/compare-figures.sh) and shows how closely they agree:
#   - subtraction, with the system Valgrind (< 3.22: whole-process counts of
#     3 runs minus 2 runs);
#   - markers, with Valgrind 3.22+ (Cachegrind start/stop requests).
# Fails when a harness differs by more than 20 instructions or one part per
# million of its count, whichever is larger: both methods count the same
# (third) run of the same process, so they may differ only by the few
# instructions around the region that one counts and the other does not,
# and by what glibc's allocator does a little differently in the two
# children (measured: 0-7 on most paths, 27 on rustls's RSA handshake, all
# in `_int_free`, with Valgrind 3.24 running both methods, until the child's
# loop executed the same instructions in every iteration; since then 0 on
# all 69).
#
# Usage: scripts/compare-methods.sh [PATH-TO-VALGRIND-3.22+]
# Without an argument it uses .tools/valgrind-trixie (fetching it if needed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

system=$(command -v valgrind) || { echo "no valgrind on PATH; run scripts/install-deps.sh" >&2; exit 2; }
newer=${1:-$root/.tools/valgrind-trixie/bin/valgrind}
if [ ! -x "$newer" ]; then
    scripts/fetch-valgrind.sh
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

measure() { # VALGRIND OUT-DIR
    mkdir -p "$2"
    # Exit code 1 means "regressed or unmatched against baselines"; that is
    # not this script's question. 2 is an error and stops it.
    local status=0
    REGRESS_METHOD=cachegrind cargo run --quiet --locked -p regress -- --valgrind "$1" run >/dev/null || status=$?
    if [ "$status" -ge 2 ]; then
        echo "measuring with $1 failed" >&2
        exit "$status"
    fi
    cp perf_outputs/*.json "$2/"
}

measure "$system" "$scratch/system"
measure "$newer" "$scratch/newer"

python3 - "$scratch/system" "$scratch/newer" <<'PY'
import json, pathlib, sys

a_dir, b_dir = map(pathlib.Path, sys.argv[1:3])
worst = 0.0
largest = 0
failing = []
rows = []
for a_path in sorted(a_dir.glob("*.json")):
    b_path = b_dir / a_path.name
    if not b_path.exists():
        continue
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    diff = b["instructions"] - a["instructions"]
    percent = abs(diff) / a["instructions"] * 100
    worst = max(worst, percent)
    largest = max(largest, abs(diff))
    if abs(diff) > max(20, a["instructions"] // 1_000_000):
        failing.append(a["harness"])
    rows.append((a["harness"], a["instructions"], b["instructions"], diff, percent))
fa, fb = (json.loads(next(d.glob("*.json")).read_text())["fingerprint"] for d in (a_dir, b_dir))
print(f"| harness | {fa['method']} (Valgrind {fa['valgrind']}) | {fb['method']} (Valgrind {fb['valgrind']}) | difference | % |")
print("|---|---:|---:|---:|---:|")
for name, x, y, d, p in rows:
    print(f"| {name} | {x:,} | {y:,} | {d:+,} | {p:.5f} |")
print(f"\nlargest difference: {largest:,} instructions; largest relative: {worst:.5f} %")
if failing:
    print("over max(20, 1 ppm) instructions: " + ", ".join(failing))
sys.exit(1 if failing else 0)
PY
