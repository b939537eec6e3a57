#!/usr/bin/env bash
# Times `regress history --versions` of one library (default: s2n-tls over
# 0.3.40..=0.3.47, the last eight published versions; the harnesses cover
# 0.3.42 and later, so two are skipped without a build) and prints how many
# versions were built and measured.
#
#   scripts/history-timing.sh                 # with the Valgrind on PATH
#   REGRESS_VALGRIND=.tools/valgrind-trixie/bin/valgrind scripts/history-timing.sh
#   LIBRARY=rustls RANGE=0.23.40..=0.24.0-dev.1 scripts/history-timing.sh
#
# "Warm dependency cache", as scripts/bisect-timing.sh: this workspace's
# own build of the harnesses (aws-lc, OpenSSL's bindings, the locked
# version of the library) is made first and not timed; every other
# version's build and every measurement are. The history is written to a
# scratch folder (`--dir`), so nothing stored in baselines/history/ is skipped and
# nothing there is changed. Builds and measurements this workspace kept
# from an earlier run (target/regress-revisions/, target/regress-source/)
# ARE reused: for a cold timing run the script in a fresh copy,
#   git clone --shared . /tmp/copy && /tmp/copy/scripts/history-timing.sh
# KEEP=DIR keeps the measured history in DIR instead of a scratch folder.
set -euo pipefail
cd "$(dirname "$0")/.."

library=${LIBRARY:-s2n-tls}
range=${RANGE:-0.3.40..=0.3.47}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
dir=${KEEP:-$scratch/history}
mkdir -p "$dir"

if [ -n "$(ls -A target/regress-revisions/programs 2>/dev/null)" ]; then
    echo "note: target/regress-revisions/programs/ holds kept builds; versions built before are not built again" >&2
fi

cargo build --locked -q -p regress --bin regress
regress=$PWD/target/debug/regress
cargo test --locked -q --no-run -p harnesses --test perf

start=$(date +%s.%N)
status=0
"$regress" history --library "$library" --versions "$range" --dir "$dir" \
    --target-dir "$PWD/target" >"$scratch/out.txt" 2>"$scratch/err.txt" || status=$?
end=$(date +%s.%N)
grep -E "revisions in the range|skipped" "$scratch/err.txt" || true
awk -v a="$start" -v b="$end" -v s="$status" -v l="$library" -v r="$range" \
    'BEGIN { printf "history of %s over %s: exit %d, %.0f s wall\n", l, r, s, b - a }'
if [ "$status" -ne 0 ]; then
    tail -20 "$scratch/err.txt" >&2
fi
exit "$status"
