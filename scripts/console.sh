#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and opens the release
# console on the embedded default database with a demo history (seeded only
# into an empty database). Without a display it renders the console offscreen
# into build/release/console.png instead. Extra arguments go to release-console.
# It builds only relctl and release-console (and the libraries they link):
# the tests and the benchmarks are built by scripts/test.sh and bench.sh.
# Each stage prints its time.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

setup=$SECONDS
relctl_install_deps
relctl_build "$RELCTL_PRESET" relctl release-console

# --demo seeds only the embedded database (as root /var/lib/relctl, which the
# server's postgres account can reach): nothing may point elsewhere.
unset RELCTL_DSN PGHOST PGSERVICE PGDATABASE
# Started here, not by the console, so that its time shows on its own line
# (the console finds it running).
start=$SECONDS
"$RELCTL_BUILD_DIR/app/relctl" db start >/dev/null
relctl_stage_done "database start" "$start"
console="$RELCTL_BUILD_DIR/app/release-console"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    relctl_stage_done "set-up" "$setup" "opening the console"
    exec "$console" --demo "$@"
fi
shot="$RELCTL_BUILD_DIR/console.png"
relctl_log "no display: rendering the console offscreen to $shot"
start=$SECONDS
QT_QPA_PLATFORM=offscreen "$console" --demo --screenshot "$shot" "$@"
relctl_stage_done "seed and open" "$start"
relctl_stage_done "total" "$setup"
relctl_log "wrote $shot (the embedded database stays running: $RELCTL_BUILD_DIR/app/relctl db stop)"
