#!/usr/bin/env bash
# Did my branch make any API path more expensive? Compares the instruction
# counts of two commits with `regress diff`, without touching the work tree.
#
# Usage: scripts/perf-diff.sh [BASE [HEAD]] [regress diff options...]
#
#   BASE  defaults to the merge base of HEAD with origin/main (else main):
#         what a pull request from this branch would change.
#   HEAD  defaults to HEAD. Uncommitted changes are not measured.
#
# Options are passed to `regress diff`, for example:
#   scripts/perf-diff.sh --harness handshake        # only matching harnesses
#   scripts/perf-diff.sh main my-branch --bmf bmf.json
#   scripts/perf-diff.sh --valgrind .tools/valgrind-trixie/bin/valgrind
#
# Results: a table on the terminal; perf_outputs/diff/report.md (Markdown),
# report.json, and <harness>.diff.txt (cg_annotate's per-function diff).
# Exit code: 0 nothing regressed, 1 a harness regressed beyond its threshold,
# 2 an error.
set -euo pipefail
cd "$(dirname "$0")/.."

refs=()
options=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help)
            sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        --)
            shift
            options+=("$@")
            break
            ;;
        # Options of `regress diff` and the global ones that take a value.
        --harness | --shard | --bmf | --target-dir | --valgrind | -j | --jobs)
            if [ $# -lt 2 ]; then
                echo "perf-diff.sh: $1 needs a value" >&2
                exit 2
            fi
            options+=("$1" "$2")
            shift 2
            ;;
        -*)
            options+=("$1")
            shift
            ;;
        *)
            refs+=("$1")
            shift
            ;;
    esac
done
if [ ${#refs[@]} -gt 2 ]; then
    echo "perf-diff.sh: at most two refs (BASE and HEAD), got: ${refs[*]}" >&2
    exit 2
fi

head="${refs[1]:-HEAD}"
if [ ${#refs[@]} -ge 1 ]; then
    base="${refs[0]}"
else
    base=""
    for candidate in origin/main main; do
        if git rev-parse --verify --quiet --end-of-options "$candidate^{commit}" >/dev/null; then
            base="$candidate"
            break
        fi
    done
    if [ -z "$base" ]; then
        echo "perf-diff.sh: neither origin/main nor main exists here; name the base: scripts/perf-diff.sh BASE [HEAD]" >&2
        exit 2
    fi
    # What a pull request from HEAD to $base would change.
    options+=(--merge-base)
fi

exec cargo run --quiet -p regress -- diff ${options[@]+"${options[@]}"} -- "$base" "$head"
