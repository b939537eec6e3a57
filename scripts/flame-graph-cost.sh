#!/usr/bin/env bash
# What flame graphs add to a diff's wall time: `regress diff --library` of
# the 13 s2n-tls harnesses, both sides measured every time, alternately
# with REGRESS_FLAME_GRAPHS=off and with flame graphs (call paths kept and
# drawn per measurement, one differential picture per harness).
#
#   scripts/flame-graph-cost.sh          # 3 pairs
#   PAIRS=5 scripts/flame-graph-cost.sh
#
# The repository is the end-to-end tests' s2n-tls fixture (HEAD~1 against
# HEAD, a loop added on s2n_send's path). Both sides are built once first,
# not timed; before each timed diff the measurement cache
# (target/regress-source/measured/) is emptied so that both sides are
# measured. Prints each run's seconds, the medians and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${PAIRS:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cargo build --locked -q -p regress --bin regress
regress=target/debug/regress
repo=$(cargo run --locked -q -p regress --example library_fixture -- "$scratch" "flame cost $(date +%s%N)")
diff=("$regress" diff --library "s2n-tls=$repo" --target-dir "$PWD/target" HEAD~1 HEAD)

status=0
"${diff[@]}" >"$scratch/warm.txt" 2>&1 || status=$?
if [[ $status -eq 2 ]]; then
  tail -20 "$scratch/warm.txt" >&2
  exit 2
fi

declare -A times
for pair in $(seq "$pairs"); do
  for setting in off on; do
    rm -rf target/regress-source/measured
    start=$(date +%s.%N)
    status=0
    REGRESS_FLAME_GRAPHS=$setting "${diff[@]}" >"$scratch/$setting.txt" 2>&1 || status=$?
    end=$(date +%s.%N)
    if [[ $status -eq 2 ]]; then
      tail -20 "$scratch/$setting.txt" >&2
      exit 2
    fi
    seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    times[$setting]+="$seconds "
    pictures=$(ls perf_outputs/diff/*.flame.diff.svg 2>/dev/null | wc -l)
    echo "pair $pair, flame graphs $setting: $seconds s ($pictures differential pictures)"
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
off=$(median <<<"${times[off]}")
on=$(median <<<"${times[on]}")
awk -v off="$off" -v on="$on" 'BEGIN { printf "median without %.1f s, with %.1f s: flame graphs add %+.1f %%\n", off, on, (on / off - 1) * 100 }'
