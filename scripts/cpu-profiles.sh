#!/usr/bin/env bash
# The CPU-profile matrix: every harness under every CPU profile
# (`regress --cpu all run`), timed as a whole, then each profile's
# run-to-run spread (`regress --cpu PROFILE noise --runs RUNS`, which fails
# when any count or figure moved). Prints the wall seconds of the matrix
# and of each noise run, and the noise tables.
#
# Usage: scripts/cpu-profiles.sh [RUNS] [VALGRIND]
#   RUNS      measurements per harness for the noise runs (default 10, 2 to
#             99; 0 skips them)
#   VALGRIND  the valgrind program (default: $REGRESS_VALGRIND, else PATH)
# The matrix's exit code 1 (a count without a matching baseline, or
# regressed) is reported, not fatal: the question here is time and spread.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runs=${1:-10}
[[ "$runs" =~ ^[0-9]{1,2}$ ]] && { [ "$runs" -eq 0 ] || [ "$runs" -ge 2 ]; } ||
    { echo "RUNS must be 0 or 2 to 99, not $runs" >&2; exit 2; }
valgrind_args=()
if [ -n "${2:-}" ]; then
    valgrind_args=(--valgrind "$2")
fi

cargo build --quiet --locked -p regress
cargo test --quiet --locked --no-run -p harnesses --test perf 2>/dev/null
regress="$root/target/debug/regress"
echo "valgrind: $("${2:-${REGRESS_VALGRIND:-valgrind}}" --version); cores: $(nproc)"

seconds_since() {
    awk -v start="$1" -v end="$(date +%s.%N)" 'BEGIN { printf "%.1f", end - start }'
}

start=$(date +%s.%N)
status=0
"$regress" "${valgrind_args[@]}" --cpu all run >/dev/null 2>&1 || status=$?
[ "$status" -le 1 ] || { echo "the matrix failed (exit $status)" >&2; exit "$status"; }
echo "matrix: every harness under every profile in $(seconds_since "$start") s (exit $status)"

[ "$runs" -eq 0 ] && exit 0
failed=0
for profile in default no-avx no-aesni baseline; do
    start=$(date +%s.%N)
    status=0
    "$regress" "${valgrind_args[@]}" --cpu "$profile" noise --runs "$runs" || status=$?
    echo "noise, profile $profile: $runs runs per harness in $(seconds_since "$start") s (exit $status)"
    [ "$status" -eq 0 ] || failed=1
done
exit "$failed"
