#!/usr/bin/env bash
# Debian's clang-tidy with the checked-in .clang-tidy over every translation
# unit of the release build (its compile_commands.json, with the moc and uic
# output that build generated), two at a time; any finding fails. It only
# analyses: the clang-tidy preset lints as it compiles, which builds
# everything a second time.
#
#   scripts/tidy.sh [REGEX...]    (default: every file under app/ core/ ui/ bench/ tests/)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_install_deps clang-tidy
# Up to date after the test command: then this only checks.
relctl_build
filters=("$@")
[ ${#filters[@]} -gt 0 ] || filters=("^$RELCTL_ROOT/(app|core|ui|bench|tests)/")
log=$RELCTL_ROOT/build/tidy.log
relctl_log "clang-tidy over build/release/compile_commands.json"
if ! run-clang-tidy-14 -p "$RELCTL_BUILD_DIR" -j 2 -quiet -extra-arg=-Wno-unknown-warning-option \
    "${filters[@]}" >"$log" 2>&1; then
    grep -v -e '^clang-tidy-14 ' -e 'warnings\? generated\.$' "$log" | head -n 80 >&2
    relctl_log "clang-tidy found something (full log: $log)"
    exit 1
fi
relctl_log "clang-tidy: $(grep -c '^clang-tidy-14 ' "$log") files, no finding"
