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
# One target per core at a time: max_total_time is wall time, so each target
# still gets a core for its whole run, and five take three rounds, not five.
fuzz_one() {
    local t=$1 work
    work=$(mktemp -d)
    cp "$RELCTL_ROOT/tests/fuzz/corpus/$t/"* "$work/"
    local status=0
    "$RELCTL_ROOT/build/fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=70000 -print_final_stats=1 -artifact_prefix="$artifacts/$t-" \
        "$work" >"$artifacts/$t.log" 2>&1 || status=$?
    rm -rf "$work"
    return "$status"
}
at_once=$(nproc)
failed=()
for ((i = 0; i < ${#targets[@]}; i += at_once)); do
    round=("${targets[@]:i:at_once}")
    relctl_log "fuzzing ${round[*]} for ${seconds}s"
    pids=()
    for t in "${round[@]}"; do
        fuzz_one "$t" &
        pids+=($!)
    done
    for j in "${!round[@]}"; do
        t=${round[$j]}
        if ! wait "${pids[$j]}"; then
            failed+=("$t")
            continue
        fi
        grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$artifacts/$t.log" | sed "s/^/  $t /" >&2 || true
    done
done
for t in "${failed[@]}"; do
    tail -n 40 "$artifacts/$t.log" >&2
    relctl_log "fuzz target $t failed: see $artifacts/$t.log and the input in $artifacts/"
done
[ ${#failed[@]} -eq 0 ] || exit 1
relctl_log "fuzzing: ${#targets[@]} targets, ${seconds}s each, no crash"
