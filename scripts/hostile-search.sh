#!/usr/bin/env bash
# Looks for hostile flights that cost a default server more instructions per
# byte than the hostile paths do (issue 26; docs/harnesses.md, "What a peer
# can make a server pay"). For each library, `harnesses search LIBRARY`
# serves every candidate of its grid (harnesses/src/tls/hostile/search.rs:
# the one group and its key share, a server name or none, one signature
# scheme or nine, the hello whole or in one-byte records) to a server of the
# library's defaults, warm, each counted by Callgrind on its own; this
# script ranks them by the server's instructions per byte of the flight and
# prints a Markdown table, the worst first, then each library's worst.
#
# Usage: scripts/hostile-search.sh [LIBRARY...]
#   LIBRARY  s2n_tls, rustls, openssl (default: all three)
# The valgrind program: $REGRESS_VALGRIND, else the one on PATH. Writes
# only a scratch folder under target/, removed on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
libraries=("$@")
[ ${#libraries[@]} -gt 0 ] || libraries=(s2n_tls rustls openssl)
valgrind=${REGRESS_VALGRIND:-$(command -v valgrind || true)}
[ -n "$valgrind" ] && [ -x "$valgrind" ] || {
    echo "no valgrind: install it (scripts/install-deps.sh) or set REGRESS_VALGRIND" >&2
    exit 2
}
cargo build --quiet --locked --profile test -p harnesses --bin harnesses
mkdir -p target
scratch=$(mktemp -d "$root/target/hostile-search.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
rows="$scratch/rows.tsv"
: > "$rows"
for library in "${libraries[@]}"; do
    case $library in
        s2n_tls | rustls | openssl) ;;
        *) echo "unknown library $library: s2n_tls, rustls or openssl" >&2; exit 2 ;;
    esac
    started=$SECONDS
    if ! "$valgrind" --tool=callgrind --instr-atstart=no --collect-atstart=no \
        --callgrind-out-file="$scratch/$library.%p" \
        target/debug/harnesses search "$library" > "$scratch/$library.tsv" 2> "$scratch/$library.log"; then
        echo "the search of $library failed:" >&2
        tail -20 "$scratch/$library.log" >&2
        exit 1
    fi
    candidates=0
    while IFS=$'\t' read -r index bytes label answer; do
        # Dump number index + 1 holds candidate `index`; its description
        # names it, which is checked rather than assumed.
        dump=$(compgen -G "$scratch/$library.*.$((index + 1))" | head -1 || true)
        [ -n "$dump" ] && grep -qx "desc: Trigger: Client Request: candidate $index" "$dump" || {
            echo "$library: no Callgrind dump for candidate $index" >&2
            exit 1
        }
        instructions=$(awk '/^totals:/ { print $2 }' "$dump")
        [[ $instructions =~ ^[0-9]+$ ]] && [[ $bytes =~ ^[0-9]+$ ]] && [ "$bytes" -gt 0 ] || {
            echo "$library: candidate $index: unreadable count or size" >&2
            exit 1
        }
        per_byte=$((instructions / bytes))
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$per_byte" "$library" "$label" "$bytes" \
            "$instructions" "$answer" >> "$rows"
        candidates=$((candidates + 1))
    done < "$scratch/$library.tsv"
    echo "$library: $candidates candidates counted in $((SECONDS - started)) s" >&2
done
echo "| library | candidate | flight bytes | server instructions | per byte | the server answered |"
echo "| --- | --- | ---: | ---: | ---: | --- |"
sort -t$'\t' -k1,1nr "$rows" | while IFS=$'\t' read -r per_byte library label bytes instructions answer; do
    printf '| %s | %s | %s | %s | %s | %s |\n' "$library" "$label" "$bytes" "$instructions" \
        "$per_byte" "${answer//|/\\|}"
done
echo
echo "The worst per byte of each library:"
# awk reads every row (no early `exit`): a reader that leaves first makes
# `sort` die of SIGPIPE, which `pipefail` turns into this script's end.
for library in "${libraries[@]}"; do
    sort -t$'\t' -k1,1nr "$rows" | awk -F'\t' -v lib="$library" \
        '$2 == lib && !shown { printf "- %s: %s, %s instructions per byte (%s bytes, %s instructions)\n", lib, $3, $1, $4, $5; shown = 1 }'
done
