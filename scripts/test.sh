#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs the whole test suite
# against a real, throwaway PostgreSQL: installs missing packages, builds every
# target of the release preset (the tests and the benchmarks too), starts the
# cluster, runs ctest's release preset, stops the cluster. Each stage prints
# its time. Extra arguments go to ctest (e.g. -L unit, -R protocol).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

setup=$SECONDS
relctl_prepare
relctl_test_env
cd "$RELCTL_ROOT"
start=$SECONDS
status=0
ctest --preset "$RELCTL_PRESET" "$@" || status=$?
relctl_stage_done tests "$start"
relctl_stage_done total "$setup"
exit "$status"
