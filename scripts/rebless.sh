#!/usr/bin/env bash
# Re-blesses every baseline entry CI gates, after a change that moves counts
# (code linked into the measured program, a library version, a compiler):
# on each Valgrind, the default method and every CPU profile (Callgrind's
# method), then Cachegrind's own method (subtraction on 3.19, markers on
# 3.22+). Each step measures every harness, then blesses what it measured;
# a measurement that fails stops the script before its bless.
#
# Usage: scripts/rebless.sh [VALGRIND...]
#   VALGRIND  valgrind programs to bless for (default: the system's and
#             .tools/valgrind-trixie/bin/valgrind, the two CI gates)
# Prints each step's wall time, then runs the constant-flow check on each
# Valgrind (a re-layout can show there first). Review `git diff baselines/`
# before committing: say which counts moved and why.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

valgrinds=("$@")
if [ ${#valgrinds[@]} -eq 0 ]; then
    valgrinds=("$(command -v valgrind)" "$root/.tools/valgrind-trixie/bin/valgrind")
fi
for valgrind in "${valgrinds[@]}"; do
    [ -x "$valgrind" ] || { echo "no valgrind at $valgrind (scripts/fetch-valgrind.sh fetches 3.24)" >&2; exit 2; }
done

cargo build --quiet --locked -p regress
regress="$root/target/debug/regress"

step() { # NAME COMMAND...
    local name=$1 started=$SECONDS
    shift
    echo "== $name"
    # Exit 1 is "regressed or no baseline": expected before a bless.
    "$@" || [ $? -eq 1 ]
    echo "-- $((SECONDS - started)) s: $name"
}

for valgrind in "${valgrinds[@]}"; do
    version=$("$valgrind" --version)
    step "$version: every CPU profile, Callgrind's method" "$regress" --valgrind "$valgrind" --cpu all run
    "$regress" --valgrind "$valgrind" --cpu all bless
    step "$version: Cachegrind's method" env REGRESS_METHOD=cachegrind "$regress" --valgrind "$valgrind" run
    REGRESS_METHOD=cachegrind "$regress" --valgrind "$valgrind" bless
done

# A re-layout can move address-dependent code paths that the constant-flow
# check compares between secrets (docs/constant-flow.md): run it on each
# Valgrind as CI does, so a new difference shows here and not in CI.
for valgrind in "${valgrinds[@]}"; do
    version=$("$valgrind" --version)
    started=$SECONDS
    echo "== $version: the constant-flow check"
    REGRESS_VALGRIND="$valgrind" ENABLE_VALGRIND=true \
        cargo test --quiet --locked -p harnesses --test constant_flow
    echo "-- $((SECONDS - started)) s: $version: the constant-flow check"
done
