#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs the whole test suite
# against a real, throwaway PostgreSQL: installs missing packages, builds the
# release preset, starts the cluster, runs ctest's release preset, stops the
# cluster. Extra arguments go to ctest (e.g. -L unit, -R protocol).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_prepare
relctl_test_env
cd "$RELCTL_ROOT"
ctest --preset "$RELCTL_PRESET" "$@"
