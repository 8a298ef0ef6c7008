#!/usr/bin/env bash
# Debian's clang-tidy with the checked-in .clang-tidy over every translation
# unit of the release build (its compile_commands.json, with the moc and uic
# output that build generated), file by file, two at a time; any finding
# fails. It only analyses: the clang-tidy preset lints as it compiles, which
# builds everything a second time. A file found clean is not analysed again
# while its preprocessed input, its command, the checks and clang-tidy are the
# same (scripts/tidy.py; the cache is in RELCTL_CACHE_DIR, shared by every
# checkout on the machine, and a clean machine analyses every file).
#
#   scripts/tidy.sh [REGEX...]    (default: every file under app/ core/ ui/ bench/ tests/)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_install_deps clang-tidy clang
# Up to date after the test command: then this only checks.
relctl_build
export RELCTL_CACHE_DIR=${RELCTL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/relctl}
relctl_log "clang-tidy over build/release/compile_commands.json, file by file"
python3 "$RELCTL_ROOT/scripts/tidy.py" "$RELCTL_ROOT" "$RELCTL_BUILD_DIR/compile_commands.json" \
    "$RELCTL_CACHE_DIR/clang-tidy" "$RELCTL_ROOT/build/tidy.log" "$@"
