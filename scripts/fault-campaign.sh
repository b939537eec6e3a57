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

# The test profile and the whole workspace's features, as `cargo test
# --workspace` builds them: after it (as in CI) the runner and this example
# are already built. `-p regress` alone would unify fewer features (serde's
# and bitflags' differ) and compile the runner and its dependencies again
# (81 s of CI).
cargo build --locked --quiet --profile test --workspace --bins --examples
mkdir -p perf_outputs
exec "${CARGO_TARGET_DIR:-target}/debug/examples/fault_campaign" \
    --out perf_outputs/fault-campaign.md "$@"
