#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and opens the release
# console on the demo: a week of history in a cluster of its own beside the
# embedded database (seeded on first use, reused afterwards). Without a
# display it renders the console offscreen into build/release/console.png
# instead. Extra arguments go to release-console.
# It builds only relctl and release-console (and the libraries they link):
# the tests and the benchmarks are built by scripts/test.sh and bench.sh.
# Each stage prints its time.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

setup=$SECONDS
relctl_install_deps
relctl_build "$RELCTL_PRESET" relctl release-console

# --demo opens only its own demo cluster (as root /var/lib/relctl-demo, which
# the server's postgres account can reach) and refuses when anything points
# elsewhere.
unset RELCTL_DSN PGHOST PGSERVICE PGDATABASE
console="$RELCTL_BUILD_DIR/app/release-console"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    relctl_stage_done "set-up" "$setup" "opening the console"
    exec "$console" --demo "$@"
fi
shot="$RELCTL_BUILD_DIR/console.png"
relctl_log "no display: rendering the console offscreen to $shot"
start=$SECONDS
QT_QPA_PLATFORM=offscreen "$console" --demo --screenshot "$shot" "$@"
relctl_stage_done "demo database and console" "$start"
relctl_stage_done "total" "$setup"
relctl_log "wrote $shot (the demo's database stays running in /var/lib/relctl-demo or ~/.local/share/relctl-demo)"
