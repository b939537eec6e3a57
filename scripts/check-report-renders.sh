#!/usr/bin/env bash
# Renders the HTML report (perf_outputs/report/index.html, made by
# `cargo run -p regress -- report`) in headless Chromium and writes a PNG
# screenshot beside it, so a person (or a reviewer's tool) can look at what
# the report shows. Fails when Chromium cannot render the page.
#
# Usage: scripts/check-report-renders.sh [path/to/index.html]
# Needs Debian's `chromium` package (installed when missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
page=${1:-$root/perf_outputs/report/index.html}
[ -f "$page" ] || { echo "no report at $page; run: cargo run -p regress -- report" >&2; exit 2; }

if ! command -v chromium >/dev/null; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
shot="${page%.html}.png"
rm -f "$shot"
# The network stays closed: the page must need none of it.
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --window-size=1000,4400 \
    --screenshot="$shot" "file://$(readlink -f "$page")" >/dev/null 2>&1 || true
if [ ! -s "$shot" ]; then
    echo "Chromium did not render $page" >&2
    exit 1
fi
echo "rendered $page -> $shot"
