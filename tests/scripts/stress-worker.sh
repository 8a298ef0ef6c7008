#!/usr/bin/env bash
# One worker of the multi-process stress test (tests/test_stress.cpp).
#
#   stress-worker.sh WORKER ROUNDS SEED ENV...
#
# Each round picks an environment and a generation at random, acquires a lease
# (retrying a bounded number of times while the environment is busy), holds it
# for a random time (about one round in five longer than the 2 s TTL, so that
# leases expire and get superseded), publishes and releases.
#
# relctl's refusals are the point of the test, not failures of the worker: every
# relctl call is reported as one line on stdout, and the test checks those
# lines against the database. The worker itself exits non-zero only when it
# was called wrongly. Lines are space-separated key=value fields after a kind:
#
#   acquire worker=W round=R env=E op=OP gen=G attempt=N rc=RC
#   publish worker=W round=R env=E op=OP token=T held_ms=MS rc=RC reason=REASON
#   release worker=W round=R env=E token=T rc=RC
#   round   worker=W round=R env=E gen=G result=published|refused|stale|busy|error
#
# relctl's own stderr is kept out of the pipe (the test drains it only when the
# worker has finished, and a full pipe would stall the worker); it is shown only
# for exit codes the protocol does not allow.
set -u

if [ $# -lt 4 ] || [ -z "${RELCTL:-}" ]; then
    echo "usage: RELCTL=relctl stress-worker.sh WORKER ROUNDS SEED ENV..." >&2
    exit 2
fi
worker=$1
rounds=$2
RANDOM=$3 # seeded by the test, so a run's choices can be reproduced
shift 3
envs=("$@")

ttl=2s
# Bounds a round's wait for a busy environment at about 15 * (call + 0.4 s).
max_busy_attempts=15

errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT

# Runs relctl with stderr captured in $errfile; sets $out and $rc.
call() {
    out=$("$RELCTL" "$@" 2>"$errfile")
    rc=$?
}

# Sleeps for $1 milliseconds.
sleep_ms() {
    sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"
}

# Shows relctl's complaint on the worker's stderr, for unexpected exit codes.
complain() {
    echo "worker $worker: relctl $1 exited $rc: $(head -c 500 "$errfile")" >&2
}

held_long=0
for ((round = 0; round < rounds; round++)); do
    env=${envs[RANDOM % ${#envs[@]}]}
    # Mostly rising with the round, so later rounds tend to be fresh and
    # workers that fall behind produce stale candidates; one in eight fully
    # random, so that stale candidates also appear early.
    if ((RANDOM % 8 == 0)); then
        gen=$((1 + RANDOM % ((rounds + 1) * 100)))
    else
        gen=$(((round + 1) * 100 + RANDOM % 100))
    fi
    job="stress-w$worker-r$round"
    acquire_op="acq-$worker-$round"
    publish_op="pub-$worker-$round"

    # Busy is transient and not remembered under the op id, so retrying with
    # the same op id is the protocol's intended use. Waiters sleep until the
    # holder's lease runs out (so they race each other at that moment), but
    # at most a few hundred ms, since most holders release early. Polling
    # faster only burns the CPU that the holders need to publish in time:
    # on two cores the relctl processes themselves are the bottleneck.
    handle=
    result=busy
    for ((attempt = 1; attempt <= max_busy_attempts; attempt++)); do
        call --json lease acquire --env "$env" --job "$job" --release "rel-$worker-$round" \
            --generation "$gen" --ttl "$ttl" --op-id "$acquire_op"
        echo "acquire worker=$worker round=$round env=$env op=$acquire_op gen=$gen attempt=$attempt rc=$rc"
        case $rc in
            0)
                [[ $out =~ \"handle\":\"([^\"]+)\" ]] && handle=${BASH_REMATCH[1]}
                if [ -z "$handle" ]; then
                    complain "acquire (no handle in $out)"
                    result=error
                fi
                break
                ;;
            3)
                wait_ms=$((150 + RANDOM % 250))
                if [[ $out =~ \"remaining_ms\":([0-9]+) ]] && ((BASH_REMATCH[1] < wait_ms)); then
                    wait_ms=$((BASH_REMATCH[1] + RANDOM % 20))
                fi
                sleep_ms "$wait_ms"
                ;;
            4) result=stale; break ;;
            *) complain acquire; result=error; break ;;
        esac
    done
    if [ -z "$handle" ]; then
        echo "round worker=$worker round=$round env=$env gen=$gen result=$result"
        continue
    fi
    token=${handle#*:} # ENV:TOKEN:LEASE_ID
    token=${token%%:*}

    # Worker 0 holds its first lease past the TTL whatever the dice say: at
    # 1 in 5 alone, a run whose few publishes all came early (most rounds
    # end stale at acquire) refused none, about once in 50 runs, and proved
    # nothing about refusals (TestStress::workloadWasNotVacuous).
    if ((RANDOM % 5 == 0)) || ((worker == 0 && !held_long)); then
        held_long=1
        # Past the TTL: another worker may take the environment meanwhile,
        # and may even publish a newer generation before this one tries.
        held_ms=$((2300 + RANDOM % 700))
    else
        held_ms=$((RANDOM % 250))
    fi
    sleep_ms "$held_ms"

    RELCTL_LEASE="$handle" call --json publish --op-id "$publish_op"
    reason=-
    if [[ $out =~ \"error\":\"([A-Za-z_]+)\" ]]; then
        reason=${BASH_REMATCH[1]}
    fi
    echo "publish worker=$worker round=$round env=$env op=$publish_op token=$token held_ms=$held_ms rc=$rc reason=$reason"
    case $rc in
        0) result=published ;;
        4 | 5) result=refused ;;
        *) complain publish; result=error ;;
    esac

    # Releasing an ended lease succeeds and changes nothing, so this is
    # expected to exit 0 whatever happened to the lease meanwhile.
    RELCTL_LEASE="$handle" call lease release
    echo "release worker=$worker round=$round env=$env token=$token rc=$rc"
    [ "$rc" -eq 0 ] || complain release
    echo "round worker=$worker round=$round env=$env gen=$gen result=$result"
done
exit 0
