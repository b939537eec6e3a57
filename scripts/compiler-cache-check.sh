#!/usr/bin/env bash
# Checks that the compiler cache changes nothing that is measured: the
# measured program of a library revision, built three times, is the same
# file byte for byte
#
#   1. without the cache (REGRESS_COMPILER_CACHE=off),
#   2. through the cache, every object compiled afresh (CCACHE_RECACHE=1),
#   3. through the cache, every object handed back from it,
#
# and says how many objects the third build took from the cache.
#
#   scripts/compiler-cache-check.sh            # the end-to-end tests' s2n-tls fixture
#   scripts/compiler-cache-check.sh CHECKOUT   # HEAD of a real s2n-tls checkout (read only)
#
# Between builds one C file of the export is touched, so s2n-tls-sys's build
# script compiles all of s2n-tls again (through the cache or not) and
# everything above it is compiled and linked again. Exit 0 when the three
# programs are identical, 1 when they differ.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v ccache >/dev/null || {
  echo "ccache is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if [[ -n "${1:-}" ]]; then
  repo=$1
else
  repo=$(cargo run --locked -q -p regress --example library_fixture -- "$scratch" "cache check $(date +%s%N)")
fi
commit=$(git -C "$repo" rev-parse HEAD)
cargo build --locked -q -p regress-source --example source_build
build=(target/debug/examples/source_build "s2n-tls=$repo" "$commit")
tree=target/regress-source/exports/s2n-tls/$commit/tree
store=target/regress-source/ccache/store

# The export first, so that every build below compiles s2n-tls's C files.
"${build[@]}" --no-build 2>"$scratch/export.log" || {
  tail -20 "$scratch/export.log" >&2
  exit 2
}

# program LABEL [ENV...]: builds, copies the program aside, prints its hash.
program() {
  local label=$1 path start end
  shift
  touch "$tree/bindings/rust/extended/s2n-tls-sys/lib/tls/s2n_send.c"
  start=$(date +%s.%N)
  path=$(env "$@" "${build[@]}" 2>"$scratch/$label.log" | sed -n 's/^program //p')
  end=$(date +%s.%N)
  [[ -n "$path" ]] || {
    tail -20 "$scratch/$label.log" >&2
    exit 2
  }
  cp "$path" "$scratch/$label"
  printf '%-28s %s  %.1f s\n' "$label" "$(sha256sum <"$scratch/$label" | cut -c1-64)" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
}

program without-cache REGRESS_COMPILER_CACHE=off
program cache-compiled CCACHE_RECACHE=1
before=$(CCACHE_DIR=$store ccache --print-stats | awk -F'\t' '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { s += $2 } END { print s + 0 }')
program cache-hits
after=$(CCACHE_DIR=$store ccache --print-stats | awk -F'\t' '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { s += $2 } END { print s + 0 }')
echo "objects the last build took from the cache: $((after - before))"

if cmp -s "$scratch/without-cache" "$scratch/cache-compiled" &&
  cmp -s "$scratch/without-cache" "$scratch/cache-hits"; then
  echo "identical: the measured program is the same with and without the compiler cache"
else
  echo "DIFFERENT: the compiler cache changed the measured program" >&2
  exit 1
fi
