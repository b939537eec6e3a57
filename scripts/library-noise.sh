#!/usr/bin/env bash
# The run-to-run spread of a program built from a library's own checkout:
# `regress diff --library NAME=PATH REV REV` RUNS times, with the measurement
# cache (target/regress-source/measured/, this project's own folder) emptied
# before each run, so every run measures the from-source program afresh
# (the build itself is kept by cargo). Prints, for every harness the
# library reaches, the number of runs, the smallest and largest count and
# whether any figure (sides, stages, heap) moved; exits 1 when one did.
#
# Usage: scripts/library-noise.sh NAME=PATH [REV] [RUNS] [VALGRIND]
#   NAME=PATH  as for `regress diff --library` (s2n-tls, rustls, aws-lc-rs)
#   REV        the library revision to build (default HEAD)
#   RUNS       measurements per harness (default 10, 2 to 99)
#   VALGRIND   the valgrind program (default: $REGRESS_VALGRIND, else PATH)
# REGRESS_METHOD=cachegrind measures with Cachegrind's method instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

library=${1:?usage: scripts/library-noise.sh NAME=PATH [REV] [RUNS] [VALGRIND]}
revision=${2:-HEAD}
runs=${3:-10}
[[ "$runs" =~ ^[0-9]{1,2}$ ]] && [ "$runs" -ge 2 ] || { echo "RUNS must be 2 to 99, not $runs" >&2; exit 2; }
valgrind_args=()
if [ -n "${4:-}" ]; then
    valgrind_args=(--valgrind "$4")
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cargo build --quiet --locked -p regress
regress="$root/target/debug/regress"

for run in $(seq 1 "$runs"); do
    rm -rf target/regress-source/measured
    status=0
    "$regress" "${valgrind_args[@]}" diff --library "$library" "$revision" "$revision" \
        >"$scratch/run.log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        # The same program on both sides: anything but 0 is a finding or
        # an error, and either is shown.
        cat "$scratch/run.log" >&2
        echo "run $run: regress diff exited $status" >&2
        exit 2
    fi
    cp perf_outputs/diff/report.json "$scratch/report-$run.json"
    echo "run $run of $runs: $(grep -c . "$scratch/run.log") lines, exit 0"
done

python3 - "$scratch" "$runs" <<'EOF'
import json, sys
folder, runs = sys.argv[1], int(sys.argv[2])
counts, figures, method = {}, {}, None
for run in range(1, runs + 1):
    report = json.load(open(f"{folder}/report-{run}.json"))
    method = f"Valgrind {report.get('valgrind')}, method {report.get('method')}"
    for harness in report["harnesses"]:
        name = harness["harness"]
        # Both sides are one program: the head's count is this run's
        # measurement (the base's may be the same one, from the cache).
        if isinstance(harness.get("head"), int):
            counts.setdefault(name, []).append(harness["head"])
        for figure in harness.get("figures", []):
            value = figure.get("head")
            if isinstance(value, int):
                figures.setdefault((name, figure["metric"]), set()).add(value)
moved = 0
print(method)
print(f"{'harness':45} {'counts':>6} {'min':>14} {'max':>14} {'spread':>7}  figures")
for name in sorted(counts):
    values = counts[name]
    spread = max(values) - min(values)
    changed = sorted(m for (n, m), seen in figures.items() if n == name and len(seen) > 1)
    total = sum(1 for (n, _) in figures if n == name)
    moved += spread != 0 or bool(changed)
    print(f"{name:45} {len(values):>6} {min(values):>14,} {max(values):>14,} {spread:>7,}  "
          f"{'moved: ' + ', '.join(changed) if changed else f'{total} figures, spread 0'}")
print(f"{len(counts)} harnesses, {runs} runs: " + (f"{moved} moved" if moved else "spread 0 on every count and figure"))
sys.exit(1 if moved else 0)
EOF
