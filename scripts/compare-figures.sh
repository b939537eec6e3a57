#!/usr/bin/env bash
# Measures every harness five ways and fails unless all five give the same
# count and the same per-side, per-stage and heap figures, to the unit:
#   1. Callgrind's method (the default) with the system Valgrind (3.19 here);
#   2. Cachegrind's method of that version (subtraction below 3.22), with a
#      Callgrind child for the split: REGRESS_METHOD=cachegrind;
#   3. Callgrind's method with Valgrind 3.22+;
#   4. Cachegrind's method of that version (markers);
#   5. as 1, with the heap children under Valgrind's `none` tool instead of
#      natively with the CPU features Valgrind lacks hidden:
#      REGRESS_HEAP_CHILD=none.
#
# Usage: scripts/compare-figures.sh [PATH-TO-VALGRIND-3.22+] [-- HARNESS-FILTER...]
# Without a path it uses .tools/valgrind-trixie (fetching it if needed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

system=$(command -v valgrind) || { echo "no valgrind on PATH; run scripts/install-deps.sh" >&2; exit 2; }
newer=$root/.tools/valgrind-trixie/bin/valgrind
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    newer=$1
    shift
fi
[ "${1:-}" = "--" ] && shift
filters=()
for filter in "$@"; do
    filters+=(--harness "$filter")
done
if [ ! -x "$newer" ]; then
    scripts/fetch-valgrind.sh
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

measure() { # NAME VALGRIND [VAR=VALUE...]
    local name=$1 valgrind=$2
    shift 2
    mkdir -p "$scratch/$name"
    rm -f perf_outputs/*.json
    local status=0 started=$SECONDS
    env REGRESS_UNMATCHED=warn "$@" cargo run --quiet --locked -p regress -- \
        --valgrind "$valgrind" run "${filters[@]}" >"$scratch/$name.txt" 2>&1 || status=$?
    if [ "$status" -ge 2 ]; then
        cat "$scratch/$name.txt" >&2
        echo "measuring $name failed" >&2
        exit "$status"
    fi
    echo "$name: $(grep -o '[0-9]* measurements in [0-9.]* s' "$scratch/$name.txt") ($((SECONDS - started)) s with the build)"
    cp perf_outputs/*.json "$scratch/$name/"
}

measure callgrind-system "$system"
measure cachegrind-system "$system" REGRESS_METHOD=cachegrind
measure callgrind-newer "$newer"
measure cachegrind-newer "$newer" REGRESS_METHOD=cachegrind
measure heap-under-none "$system" REGRESS_HEAP_CHILD=none

python3 - "$scratch" <<'PY'
import json, pathlib, sys

root = pathlib.Path(sys.argv[1])
names = ["callgrind-system", "cachegrind-system", "callgrind-newer", "cachegrind-newer", "heap-under-none"]
reference = root / names[0]
differences = 0
harnesses = 0
figures = 0
for path in sorted(reference.glob("*.json")):
    first = json.loads(path.read_text())
    harnesses += 1
    figures += 1 + len(first.get("metrics", {}))
    for name in names[1:]:
        other_path = root / name / path.name
        if not other_path.exists():
            print(f"{first['harness']}: missing from {name}")
            differences += 1
            continue
        other = json.loads(other_path.read_text())
        if other["instructions"] != first["instructions"]:
            print(f"{first['harness']}: count {first['instructions']:,} ({names[0]}) vs {other['instructions']:,} ({name})")
            differences += 1
        metrics = first.get("metrics", {})
        others = other.get("metrics", {})
        for key in sorted(set(metrics) | set(others)):
            if metrics.get(key) != others.get(key):
                print(f"{first['harness']}: {key} {metrics.get(key)} ({names[0]}) vs {others.get(key)} ({name})")
                differences += 1
methods = [json.loads(next((root / n).glob("*.json")).read_text())["fingerprint"] for n in names]
print("compared: " + ", ".join(f"{n} (Valgrind {m['valgrind']}, {m['method']})" for n, m in zip(names, methods)))
print(f"{harnesses} harnesses, {figures} figures each way: {differences} differences")
sys.exit(1 if differences else 0)
PY
