#!/usr/bin/env bash
# Times `regress diff --library` of the 13 s2n-tls harnesses: a first diff
# of two revisions, then the edit loop (an uncommitted edit of a .c file,
# HEAD = the working tree, against an unchanged BASE whose build and
# measurements are reused).
#
#   scripts/library-diff-timing.sh            # the end-to-end test's fixture
#   scripts/library-diff-timing.sh CHECKOUT   # a real s2n-tls checkout
#   REGRESS_VALGRIND=.tools/valgrind-trixie/bin/valgrind scripts/library-diff-timing.sh
#
# The fixture: a repository in s2n-tls's layout with the release this
# workspace locks, and a commit that adds a loop on s2n_send's path. A
# nonce in both commits makes s2n-tls's sources new, so nothing of an
# earlier run is reused. The first diff is HEAD~1 against HEAD; the edit
# loop doubles the loop's count, uncommitted, against HEAD~1.
#
# A real checkout (aws/s2n-tls, bindings 0.3.42 or later) is cloned into a
# scratch folder first, so the checkout itself is never edited. The first
# diff is its HEAD against the clean working tree (both built and measured);
# the edit loop then adds a loop to tls/s2n_send.c (uncommitted) and diffs
# HEAD against it, twice (a second edit changes the loop's count), as a
# maintainer editing and measuring would.
#
# "Warm dependency cache": the workspace's dependencies (aws-lc, OpenSSL's
# bindings) are built first and not timed; s2n-tls, the harnesses and every
# measurement are. Prints the wall-clock seconds of each run and leaves the
# reports in perf_outputs/diff/ (the last run's).
set -euo pipefail
cd "$(dirname "$0")/.."

checkout=${1:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cargo build --locked -q -p regress --bin regress
regress=target/debug/regress

# Warm the dependencies (not timed): this workspace's own build of the
# harnesses, in the target folder the diffs below share with it.
cargo test --locked -q --no-run -p harnesses --test perf
target=(--target-dir "$PWD/target")

seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# timed LABEL OUTPUT ARGS...: runs regress diff --library ARGS, prints the time.
timed() {
  local label=$1 output=$2 start end status=0
  shift 2
  start=$(date +%s.%N)
  "$regress" diff "$@" "${target[@]}" >"$output" 2>&1 || status=$?
  end=$(date +%s.%N)
  echo "$label: $(seconds "$start" "$end") s, exit $status"
  # Where the time went: each side's build, as regress reports it.
  grep -E "built the|measurements in" "$output" | sed 's/^/    /' || true
  if [[ $status -eq 2 ]]; then
    tail -20 "$output" >&2
  fi
}

# The diff's header, its table (one row per harness) and its last line.
summary() { grep -E "^(base|head|s2n-tls:)|^s2n_tls::[a-z0-9_]+ +[0-9,]+ |^[0-9]+ (regressed|improved|within|unchanged)" "$1"; }

if [[ -z "$checkout" ]]; then
  repo=$(cargo run --locked -q -p regress --example library_fixture -- "$scratch" "timing $(date +%s%N)")
  timed "first diff (both sides built and measured)" "$scratch/first.txt" \
    --library "s2n-tls=$repo" HEAD~1 HEAD
  # The edit loop: an uncommitted edit of the head, against the unchanged BASE.
  # The first edit fills the checkout's live folder and the compiler cache
  # for it; the second is the loop a maintainer is in from then on.
  sed -i 's/mov \$10000, %%ecx/mov $20000, %%ecx/' "$repo/tls/s2n_send.c"
  timed "edit loop 1 (BASE reused, the working tree built and measured)" "$scratch/edit1.txt" \
    --library "s2n-tls=$repo" HEAD~1
  summary "$scratch/edit1.txt"
  sed -i 's/mov \$20000, %%ecx/mov $30000, %%ecx/' "$repo/tls/s2n_send.c"
  timed "edit loop 2 (another edit of the same file)" "$scratch/edit2.txt" \
    --library "s2n-tls=$repo" HEAD~1
  summary "$scratch/edit2.txt"
  exit 0
fi

repo=$scratch/s2n-tls
git clone -q -- "$checkout" "$repo"
echo "s2n-tls at $(git -C "$repo" log -1 --format='%h %cs %s')"
send=$repo/tls/s2n_send.c
grep -q '^ssize_t s2n_sendv_with_offset(struct s2n_connection \*conn,' "$send" || {
  echo "$send has no s2n_sendv_with_offset to edit" >&2
  exit 2
}

timed "first diff (HEAD and the clean working tree, both built and measured)" \
  "$scratch/first.txt" --library "s2n-tls=$repo" HEAD
summary "$scratch/first.txt"

# edit COUNT: a noinline loop of COUNT iterations called at the top of
# s2n_sendv_with_offset (on s2n_send's path only), as an uncommitted edit.
edit() {
  git -C "$repo" checkout -q -- tls/s2n_send.c
  COUNT=$1 perl -0pi -e '
    s{^(ssize_t s2n_sendv_with_offset\(struct s2n_connection \*conn,.*?\n\{\n)}
     {__attribute__((noinline)) void s2n_timing_spin(void)\n{\n    __asm__ volatile("mov \$$ENV{COUNT}, %%ecx\\n1:\\n nop\\n dec %%ecx\\n jnz 1b\\n" ::: "ecx", "cc");\n}\n\n$1    s2n_timing_spin();\n}ms
      or die "s2n_sendv_with_offset not found\n";
  ' "$send"
}

edit 10000
timed "edit loop 1 (BASE reused, the edited working tree built and measured)" \
  "$scratch/edit1.txt" --library "s2n-tls=$repo" HEAD
summary "$scratch/edit1.txt"
edit 20000
timed "edit loop 2 (another edit of the same file)" \
  "$scratch/edit2.txt" --library "s2n-tls=$repo" HEAD
summary "$scratch/edit2.txt"
