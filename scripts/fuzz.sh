#!/usr/bin/env bash
# Builds the fuzz preset (clang, libFuzzer, ASan + UBSan) and runs every fuzz
# target for a bounded time, starting from its corpus (tests/fuzz/corpus/NAME,
# copied: the checked-in corpus is not changed). A crash or a broken property
# fails the run and leaves the input in build/fuzz/artifacts/; add it to the
# target's corpus, where the normal suite replays it (ctest fuzz_corpus_NAME).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30, all five)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(duration handle names manifest commandline)

relctl_install_deps clang libclang-rt-14-dev
relctl_build fuzz
artifacts=$RELCTL_ROOT/build/fuzz/artifacts
mkdir -p "$artifacts"
for t in "${targets[@]}"; do
    work=$(mktemp -d)
    cp "$RELCTL_ROOT/tests/fuzz/corpus/$t/"* "$work/"
    relctl_log "fuzzing $t for ${seconds}s"
    if ! "$RELCTL_ROOT/build/fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=70000 -print_final_stats=1 -artifact_prefix="$artifacts/$t-" \
        "$work" >"$artifacts/$t.log" 2>&1; then
        tail -n 40 "$artifacts/$t.log" >&2
        relctl_log "fuzz target $t failed: see $artifacts/$t.log and the input in $artifacts/"
        rm -rf "$work"
        exit 1
    fi
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$artifacts/$t.log" | sed "s/^/  $t /" >&2 || true
    rm -rf "$work"
done
relctl_log "fuzzing: ${#targets[@]} targets, ${seconds}s each, no crash"
