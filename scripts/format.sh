#!/usr/bin/env bash
# clang-format (Debian's, with the checked-in .clang-format) over every C++
# file git tracks. CI runs it with --check, which changes nothing and fails
# on the first file that deviates, naming it.
#
#   scripts/format.sh           format the tree in place
#   scripts/format.sh --check   fail if any file deviates
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_install_deps clang-format
cd "$RELCTL_ROOT"
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [ "${1:-}" = --check ]; then
    deviating=()
    for f in "${files[@]}"; do
        clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || deviating+=("$f")
    done
    if [ ${#deviating[@]} -gt 0 ]; then
        printf '  %s\n' "${deviating[@]}" >&2
        relctl_log "${#deviating[@]} of ${#files[@]} files deviate from .clang-format: run scripts/format.sh"
        exit 1
    fi
    relctl_log "format: ${#files[@]} files as .clang-format says"
else
    clang-format -i "${files[@]}"
    relctl_log "formatted ${#files[@]} files"
fi
