#!/usr/bin/env bash
# The share of each harness's counted instructions that lie in named
# functions, from the region profiles `regress run` writes:
#
#   scripts/named-share.sh                      # perf_outputs/openssl.*.cachegrind.out
#   scripts/named-share.sh perf_outputs/s2n_tls.*.cachegrind.out
#
# Each `<harness>.cachegrind.out` holds the same costs as the
# `<harness>.annotated.txt` beside it, but every function, however small
# (the annotated text leaves out those under cg_annotate's threshold): a
# function Valgrind could not name is `???` (Cachegrind) or its address,
# `0x...` (Callgrind): code without symbols, such as the system's libssl. Prints one line per profile (instructions, of them
# named, share) and exits 1 when a profile is missing or has no cost.
set -euo pipefail

if [ $# -eq 0 ]; then
    shopt -s nullglob
    set -- perf_outputs/openssl.*.cachegrind.out
    if [ $# -eq 0 ]; then
        echo "named-share: no perf_outputs/openssl.*.cachegrind.out; run \`cargo run -p regress -- run --harness openssl\` first" >&2
        exit 1
    fi
fi

printf '%-45s %15s %15s %9s\n' profile instructions named share
status=0
for profile in "$@"; do
    if [ ! -f "$profile" ]; then
        echo "named-share: $profile: no such file" >&2
        status=1
        continue
    fi
    # Cost lines are "<line> <Ir> ..." under the last `fn=`; in Callgrind's
    # format the line after `calls=` is a call's inclusive cost, not the
    # function's own, and is skipped.
    if ! awk -v name="$(basename "$profile" .cachegrind.out)" '
        /^fn=/ { fn = substr($0, 4); next }
        /^calls=/ { skip = 1; next }
        /^[0-9+-]/ {
            if (skip) { skip = 0; next }
            total += $2
            if (fn !~ /^\?\?\?/ && fn !~ /^0x[0-9a-fA-F]+$/) named += $2
            next
        }
        END {
            if (total <= 0) { printf "%s: no cost\n", name > "/dev/stderr"; exit 1 }
            printf "%-45s %15d %15d %9.4f%%\n", name, total, named, 100 * named / total
        }
    ' "$profile"; then
        status=1
    fi
done
exit "$status"
