#!/usr/bin/env bash
# Runs the benchmarks against a throwaway PostgreSQL configured as a server
# would be (fsync on, room for 700 connections), prints every goal against the
# reference measured in the same run, and writes the results as JSON to
# build/release/bench-results/ (results.json: all goals). Installs what is
# missing and builds first, like the test command. Exits 3 when a goal is not
# met. Takes about 15 minutes on 2 cores (the console part about 7, seeding
# three organisations). PgBouncer (session mode) runs in
# front of the cluster, so that whole relctl processes are timed through a
# pooler as well as directly.
#
#   bash scripts/bench.sh                 every benchmark
#   bash scripts/bench.sh PART [ARGS...]  one of: throughput, queue, audit, console, state, flood
#                                         (ARGS go to that part's program)
#   bash scripts/bench.sh console --burst-seconds 10   the console part with a shorter burst
#                                         (the minute of 100 events/s is the default)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_install_deps
relctl_build
RELCTL_PG_OPTIONS="-c fsync=on -c synchronous_commit=on -c max_connections=700 -c shared_buffers=256MB" relctl_pg_start
trap relctl_pg_stop EXIT
relctl_pooler_start
trap 'relctl_pooler_stop; relctl_pg_stop' EXIT
export RELCTL_DSN=$RELCTL_PG_DSN
"$RELCTL_BUILD_DIR/app/relctl" migrate >/dev/null

bin=$RELCTL_BUILD_DIR/bench
out=$RELCTL_BUILD_DIR/bench-results
mkdir -p "$out"
part=${1:-all}
[[ $# -gt 0 ]] && shift

run_part() {
    local name=$1 program=$2
    shift 2
    relctl_log "benchmark: $name"
    rm -f "$out/$name.json"
    "$bin/$program" --dsn "$RELCTL_DSN" --json "$out/$name.json" "$@" || relctl_log "$name: exit $?"
}

case $part in
    throughput) run_part throughput relctl-throughput-bench --pooled-dsn "$RELCTL_POOLER_DSN" "$@" ;;
    queue) run_part queue relctl-queue-bench "$@" ;;
    audit) run_part audit relctl-audit-bench "$@" ;;
    console) run_part console relctl-console-bench --burst-seconds 60 --pooled-dsn "$RELCTL_POOLER_DSN" "$@" ;;
    state) run_part state relctl-state-bench "$@" ;;
    flood) run_part flood relctl-flood-bench "$@" ;;
    all)
        run_part throughput relctl-throughput-bench --pooled-dsn "$RELCTL_POOLER_DSN"
        run_part queue relctl-queue-bench
        run_part audit relctl-audit-bench
        run_part console relctl-console-bench --burst-seconds 60 --pooled-dsn "$RELCTL_POOLER_DSN"
        run_part state relctl-state-bench
        run_part flood relctl-flood-bench
        ;;
    *) echo "usage: bash scripts/bench.sh [throughput|queue|audit|console|state|flood [ARGS...]]" >&2; exit 2 ;;
esac

results=()
for name in throughput queue audit console state flood; do
    if [[ $part == all || $part == "$name" ]]; then results+=("$out/$name.json"); fi
done
"$bin/relctl-bench-report" --json "$out/results.json" "${results[@]}"
