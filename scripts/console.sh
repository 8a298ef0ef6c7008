#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and opens the release
# console on the embedded default database with a demo history (seeded only
# into an empty database). Without a display it renders the console offscreen
# into build/release/console.png instead. Extra arguments go to release-console.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_install_deps
relctl_build

# --demo seeds only the embedded database (as root /var/lib/relctl, which the
# server's postgres account can reach): nothing may point elsewhere.
unset RELCTL_DSN PGHOST PGSERVICE PGDATABASE
console="$RELCTL_BUILD_DIR/app/release-console"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    exec "$console" --demo "$@"
fi
shot="$RELCTL_BUILD_DIR/console.png"
relctl_log "no display: rendering the console offscreen to $shot"
QT_QPA_PLATFORM=offscreen "$console" --demo --screenshot "$shot" "$@"
relctl_log "wrote $shot (the embedded database stays running: $RELCTL_BUILD_DIR/app/relctl db stop)"
