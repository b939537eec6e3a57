#!/usr/bin/env bash
# The fault campaign: plays every known way to fool or crash the runner
# (hostile records, baselines and reports; missing, hanging and crashing
# Valgrind; full and unwritable output folders; interrupts at each stage of
# run, noise and diff; bad refs; concurrent runs) and checks, for each, the
# exit code, the first line of the message, that no process it started
# survives and that no file outside perf_outputs/ changed.
#
# Usage: scripts/fault-campaign.sh [--only TEXT]
# Writes the table to perf_outputs/fault-campaign.md (docs/results/fault-campaign.md
# is copied from it). Exit code 0 when every case passed.
set -euo pipefail
cd "$(dirname "$0")/.."

# The test profile (the dev profile's settings): after `cargo test`, as in
# CI, the runner and this example are already built in it.
cargo build --locked --quiet --profile test -p regress --bin regress --example fault_campaign
mkdir -p perf_outputs
exec cargo run --locked --quiet --profile test -p regress --example fault_campaign -- \
    --out perf_outputs/fault-campaign.md "$@"
