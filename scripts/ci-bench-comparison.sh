#!/usr/bin/env bash
# Times this project's whole suite (`regress run`: every harness, with sides,
# stages and heap) against rustls's ci-bench `run-all` (client and server
# instruction counts under Callgrind plus a DHAT heap pass), side by side on
# the same machine and Valgrind: one discarded warm-up of each, then PAIRS
# alternating pairs (ours, ci-bench, ours, ci-bench, ...), medians and the
# median of the per-pair ratios. Alternating keeps the ratio meaningful when
# the machine's speed drifts.
#
# Usage: scripts/ci-bench-comparison.sh RUSTLS-CHECKOUT [PAIRS] [VALGRIND]
#   RUSTLS-CHECKOUT  a checkout of rustls's repository (with ci-bench/); it is
#                    only read: ci-bench builds into target/ci-bench here, with
#                    --locked so cargo writes nothing into the checkout.
#   PAIRS            alternating pairs to time (default 3)
#   VALGRIND         the valgrind program both use (default: the one on PATH)
# ci-bench builds aws-lc-sys, which needs cmake and libclang
# (scripts/install-deps.sh installs both).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

checkout=${1:?usage: scripts/ci-bench-comparison.sh RUSTLS-CHECKOUT [PAIRS] [VALGRIND]}
pairs=${2:-3}
valgrind=${3:-$(command -v valgrind || true)}
[ -f "$checkout/ci-bench/Cargo.toml" ] || { echo "$checkout has no ci-bench/: not a rustls checkout" >&2; exit 2; }
[[ "$pairs" =~ ^[1-9][0-9]?$ ]] || { echo "PAIRS must be 1 to 99, not $pairs" >&2; exit 2; }
[ -x "$valgrind" ] || { echo "no valgrind program at '$valgrind'" >&2; exit 2; }
valgrind=$(cd "$(dirname "$valgrind")" && pwd)/$(basename "$valgrind")
valgrind_dir=$(dirname "$valgrind")

echo "valgrind: $("$valgrind" --version) ($valgrind)"
echo "rustls: $(git -C "$checkout" log -1 --format='%h %s' 2>/dev/null || echo "$checkout")"

target="$root/target/ci-bench"
echo "== building ci-bench (release) into $target"
CARGO_TARGET_DIR="$target" cargo build --quiet --release --locked \
    --manifest-path "$checkout/Cargo.toml" -p rustls-ci-bench
ci_bench="$target/release/rustls-ci-bench"
echo "== building this project's measured program"
cargo build --quiet --locked -p regress
cargo test --quiet --locked --no-run -p harnesses --test perf 2>/dev/null

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

ours() {
    # 1 means "regressed or unmatched against the baselines": not this
    # script's question; 2 is an error.
    local status=0
    cargo run --quiet --locked -p regress -- --valgrind "$valgrind" run >"$scratch/ours.log" 2>&1 || status=$?
    if [ "$status" -ge 2 ]; then
        cat "$scratch/ours.log" >&2
        exit "$status"
    fi
}
theirs() {
    rm -rf "$scratch/ci-bench"
    mkdir -p "$scratch/ci-bench"
    PATH="$valgrind_dir:$PATH" "$ci_bench" run-all --output-dir "$scratch/ci-bench" >"$scratch/theirs.log" 2>&1 || {
        tail -20 "$scratch/theirs.log" >&2
        exit 2
    }
}
seconds() { # COMMAND: prints its wall seconds
    local start end
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    awk -v end="$end" -v start="$start" 'BEGIN { printf "%.3f\n", end - start }'
}

echo "== warm-up (not counted)"
seconds ours >/dev/null
seconds theirs >/dev/null

: >"$scratch/times"
for pair in $(seq 1 "$pairs"); do
    a=$(seconds ours)
    b=$(seconds theirs)
    rows=$(($(wc -l <"$scratch/ci-bench/icounts.csv") + $(wc -l <"$scratch/ci-bench/memory.csv")))
    echo "$a $b" >>"$scratch/times"
    printf 'pair %d: regress run %.1f s, ci-bench run-all %.1f s (%d rows), ratio %.3f\n' \
        "$pair" "$a" "$b" "$rows" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')"
done

# Medians of each column and of the per-pair ratios (sort -g, then the
# middle value, or the mean of the two middle ones).
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ours_median=$(awk '{ print $1 }' "$scratch/times" | median)
theirs_median=$(awk '{ print $2 }' "$scratch/times" | median)
ratio_median=$(awk '{ print $1 / $2 }' "$scratch/times" | median)
printf 'median: regress run %.1f s, ci-bench run-all %.1f s, median ratio %.3f (%d pairs)\n' \
    "$ours_median" "$theirs_median" "$ratio_median" "$pairs"
