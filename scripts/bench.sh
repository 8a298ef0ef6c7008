#!/usr/bin/env bash
# Runs the benchmarks against a throwaway PostgreSQL: installs what is
# missing, builds, starts the cluster, runs them, stops it.
#
#   bash scripts/bench.sh [--rounds N]     handover latency and `relctl run`
#   bash scripts/bench.sh audit [ARGS...]  audit pages and export on 1,000,000
#                                          events against their goals (ARGS:
#                                          --events N --reps R --json FILE)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_prepare

if [[ ${1:-} == audit ]]; then
    shift
    "$RELCTL_BUILD_DIR/bench/relctl-audit-bench" --dsn "$RELCTL_PG_DSN" "$@"
    exit
fi
export RELCTL_DSN=$RELCTL_PG_DSN
"$RELCTL_BUILD_DIR/app/relctl" migrate >/dev/null
"$RELCTL_BUILD_DIR/bench/relctl-bench" "$@"
