#!/usr/bin/env bash
# What naming blind spots adds to a diff's wall time (issue 22: under 5 %).
#
#   scripts/blind-spots-cost.sh BASE HEAD [DIFF OPTIONS...]
#   scripts/blind-spots-cost.sh --library s2n-tls=CHECKOUT BASE HEAD
#
# Runs `regress diff` with the arguments given, times the whole command, and
# reads the two figures the diff reports for its blind spots:
# - the executed-lines data written while measuring (reading the line costs
#   only that data needs, building and writing each <harness>.lines.json),
#   summed over every measurement of both sides;
# - finding the blind spots: the changed lines of both revisions (git) set
#   against the executed ones.
# Their sum as a share of the wall time is what the blind spots cost; the
# script exits 1 when it is 5 % or more. Summed measurement time is taken
# over the parallel workers, so with -j N the share is an upper bound.
# The diff's own exit code (1: a harness regressed; 2 with the timing
# printed: some harness failed on a side) is not a failure here.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  sed -n '2,5p' "$0" >&2
  exit 2
fi

cargo build --locked -q -p regress --bin regress
log=$(mktemp)
trap 'rm -f "$log"' EXIT

status=0
start=$(date +%s.%N)
target/debug/regress diff "$@" >"$log" 2>&1 || status=$?
end=$(date +%s.%N)
# A diff that measured everything it could and found its blind spots reports
# the timing even when some harness failed (exit 2, "the diff is
# incomplete"): the figure stands, and the failures are shown.
line=$(grep -E "blind spots found in [0-9.]+ s, after [0-9.]+ s" "$log" | tail -n 1 || true)
if [[ -z $line ]]; then
  tail -20 "$log" >&2
  echo "regress diff (exit $status) reported no blind-spot timing: no figure" >&2
  exit 2
fi
if [[ $status -ne 0 && $status -ne 1 ]]; then
  echo "regress diff exited $status; what it could not measure:" >&2
  grep -E "failed under Valgrind" "$log" | sort -u | sed 's/^/    /' >&2 || true
fi
find_s=$(sed -E 's/.*blind spots found in ([0-9.]+) s.*/\1/' <<<"$line")
lines_s=$(sed -E 's/.*after ([0-9.]+) s of executed-lines.*/\1/' <<<"$line")
grep -E "built the|measurements in|blind spots" "$log" | sed 's/^/    /' || true
awk -v start="$start" -v end="$end" -v find="$find_s" -v lines="$lines_s" 'BEGIN {
  wall = end - start
  share = 100 * (find + lines) / wall
  printf "diff wall time %.1f s; executed-lines data %.2f s, finding blind spots %.2f s: %.2f %% of the wall time\n", wall, lines, find, share
  if (share >= 5) { print "over the 5 % budget"; exit 1 }
}'
