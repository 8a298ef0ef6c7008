#!/usr/bin/env bash
# Measures handover latency (release and expiry) and `relctl run -- true`
# against a throwaway PostgreSQL: installs what is missing, builds, runs
# bench/relctl-bench, stops the cluster. Extra arguments go to the benchmark
# (e.g. --rounds 100).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_prepare

export RELCTL_DSN=$RELCTL_PG_DSN
"$RELCTL_BUILD_DIR/app/relctl" migrate >/dev/null
"$RELCTL_BUILD_DIR/bench/relctl-bench" "$@"
