#!/usr/bin/env bash
# Times `regress bisect --library` over 64 revisions of an s2n-tls
# repository (the end-to-end test's fixture, 64 commits long, commit 41
# adding a loop on s2n_send's path, every other commit a comment in a C
# file), for one harness, and prints how many revisions were built and
# measured. ceil(log2(64)) + 1 = 7 is the most a bisect of 64 revisions
# measures when all build.
#
#   scripts/bisect-timing.sh            # with the Valgrind on PATH
#   REGRESS_VALGRIND=.tools/valgrind-trixie/bin/valgrind scripts/bisect-timing.sh
#   COMMITS=32 STEP=9 scripts/bisect-timing.sh
#
# "Warm dependency cache", as scripts/library-diff-timing.sh: the
# workspace's dependencies (aws-lc, OpenSSL's bindings) are built first and
# not timed; every probed revision's s2n-tls, the harnesses and the
# measurements are. A nonce in every commit makes s2n-tls's sources new, so
# nothing of an earlier run is reused (the bisect's caches are keyed by
# commit).
set -euo pipefail
cd "$(dirname "$0")/.."

commits=${COMMITS:-64}
step=${STEP:-41}
harness=${HARNESS:-s2n_tls::record_aes128gcm_16k}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cargo build --locked -q -p regress --bin regress
regress=target/debug/regress
repo=$(cargo run --locked -q -p regress --example bisect_fixture -- "$scratch" "timing $(date +%s%N)" "$commits" "$step")
good=$(git -C "$repo" rev-list --max-parents=0 HEAD)
culprit=$(git -C "$repo" rev-list --reverse HEAD | sed -n "${step}p")

cargo test --locked -q --no-run -p harnesses --test perf

start=$(date +%s.%N)
status=0
"$regress" bisect "$good" HEAD --harness "$harness" --library "s2n-tls=$repo" \
    --target-dir "$PWD/target" >"$scratch/out.txt" 2>"$scratch/err.txt" || status=$?
end=$(date +%s.%N)
grep -E "^\[|^first revision|^  commit|^[0-9]+ revisions" "$scratch/err.txt" "$scratch/out.txt" | sed 's/^[^:]*://' || true
python3 - "$PWD/perf_outputs/bisect/result.json" "$culprit" "$commits" "$start" "$end" "$status" <<'PY'
import json, sys
path, culprit, commits, start, end, status = sys.argv[1:]
result = json.load(open(path))
found = (result.get("culprit") or {}).get("commit")
print(f"bisect over {commits} revisions: exit {status}, {result['measured']} measured, "
      f"{result['builds']} built, {float(end) - float(start):.0f} s wall; "
      f"culprit {'found' if found == culprit else 'WRONG: ' + str(found)}")
PY
