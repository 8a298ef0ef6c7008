#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs the whole test suite
# against a real, throwaway PostgreSQL: installs missing packages, builds,
# starts the cluster, runs ctest, stops the cluster.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_prepare

# Tests create their own databases on this cluster, one per test, and drop them.
export RELCTL_TEST_DSN=$RELCTL_PG_DSN
# Request secrets of the op ids the tests use stay with the throwaway cluster.
export RELCTL_STATE_DIR=$RELCTL_PG_DIR/state
unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE RELCTL_DSN RELCTL_LEASE RELCTL_OP_KEY
cd "$RELCTL_BUILD_DIR"
ctest --output-on-failure --no-tests=error -j "$(nproc)" "$@"
