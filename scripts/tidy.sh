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
# The checkout's path as a regular expression (run-clang-tidy matches with Python's re).
root=$(printf '%s' "$RELCTL_ROOT" | sed 's/[][\\.*^$+?(){}|]/\\&/g')
[ ${#filters[@]} -gt 0 ] || filters=("^$root/(app|core|ui|bench|tests)/")
log=$RELCTL_ROOT/build/tidy.log
# The commands as each file compiles on its own: each unity batch of the
# release build (ui/CMakeLists.txt) split back into its files, so that every
# file is analysed, and with only its own #includes.
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$RELCTL_BUILD_DIR/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = []
for e in json.load(open(sys.argv[1])):
    command = e["command"]
    files = [e["file"]]
    if re.search(r"/Unity/unity_\d+_cxx\.cxx$", e["file"]):
        files = re.findall(r'^#include "(.*)"$', open(e["file"]).read(), re.M)
    for f in files:
        entries.append(dict(e, file=f, command=command.replace(e["file"], f)))
json.dump(entries, open(sys.argv[2], "w"), indent=1)
PY
relctl_log "clang-tidy over build/release/compile_commands.json, file by file"
if ! run-clang-tidy-14 -p "$db" -j 2 -quiet -extra-arg=-Wno-unknown-warning-option \
    "${filters[@]}" >"$log" 2>&1; then
    # Without the invocations, the counts of suppressed warnings and the colours.
    grep -v -e '^clang-tidy-14 ' -e 'warnings\? generated\.$' "$log" | sed 's/\x1b\[[0-9;]*m//g' | head -n 80 >&2
    relctl_log "clang-tidy found something (full log: $log)"
    exit 1
fi
relctl_log "clang-tidy: $(grep -c '^clang-tidy-14 ' "$log") files, no finding"
