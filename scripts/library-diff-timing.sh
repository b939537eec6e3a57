#!/usr/bin/env bash
# Times `regress diff --library` of the 13 s2n-tls harnesses between two
# revisions of an s2n-tls repository (the end-to-end test's fixture: the
# release this workspace locks, and a commit that adds a loop on s2n_send's
# path), then the edit loop: the same BASE against an uncommitted edit.
#
#   scripts/library-diff-timing.sh            # with the Valgrind on PATH
#   REGRESS_VALGRIND=.tools/valgrind-trixie/bin/valgrind scripts/library-diff-timing.sh
#
# "Warm dependency cache": the workspace's dependencies (aws-lc, OpenSSL's
# bindings) are built first and not timed; s2n-tls, the harnesses and every
# measurement are, as a library maintainer's first diff of a branch would.
# A nonce in both commits makes s2n-tls's sources new, so nothing of an
# earlier run is reused. Prints the wall-clock seconds of each run and
# leaves the reports in perf_outputs/diff/ (the last run's).
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cargo build --locked -q -p regress --bin regress
regress=target/debug/regress
repo=$(cargo run --locked -q -p regress --example library_fixture -- "$scratch" "timing $(date +%s%N)")

# Warm the dependencies (not timed): this workspace's own build of the
# harnesses, in the target folder the diffs below share with it.
cargo test --locked -q --no-run -p harnesses --test perf
target=(--target-dir "$PWD/target")

seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

start=$(date +%s.%N)
status=0
"$regress" diff --library "s2n-tls=$repo" "${target[@]}" HEAD~1 HEAD >"$scratch/first.txt" 2>&1 || status=$?
end=$(date +%s.%N)
echo "first diff (both sides built and measured): $(seconds "$start" "$end") s, exit $status"

# The edit loop: an uncommitted edit of the head, against the unchanged BASE.
sed -i 's/mov \$10000, %%ecx/mov $20000, %%ecx/' "$repo/tls/s2n_send.c"
start=$(date +%s.%N)
status=0
"$regress" diff --library "s2n-tls=$repo" "${target[@]}" HEAD~1 >"$scratch/edit.txt" 2>&1 || status=$?
end=$(date +%s.%N)
echo "edit loop (BASE reused, the working tree built and measured): $(seconds "$start" "$end") s, exit $status"
grep -E "^(base|head|s2n-tls:)|regressed|improved|unchanged" "$scratch/edit.txt" | tail -20
