#!/usr/bin/env bash
# One worker of the failover test (tests/test_failover.cpp).
#
#   failover-worker.sh WORKER ROUNDS ENV
#
# Each round acquires ENV (queueing), publishes and releases, every call under
# an op id of its own. A call that finds no primary (exit 9: the primary was
# killed, the standby not yet promoted) is retried with the same op id, so
# nothing is applied twice. Each acknowledged call is one line on stdout:
#
#   acquired  worker=W round=R gen=G token=T op=OP
#   published worker=W round=R gen=G token=T op=OP
#   refused   worker=W round=R gen=G rc=RC reason=REASON
#
# and any exit code the protocol does not allow goes to stderr.
set -u

if [ $# -ne 3 ] || [ -z "${RELCTL:-}" ]; then
    echo "usage: RELCTL=relctl failover-worker.sh WORKER ROUNDS ENV" >&2
    exit 2
fi
worker=$1
rounds=$2
env=$3
errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT

# Runs relctl until it answers (exit 9 is retried for up to about 60 s);
# sets $out and $rc.
call() {
    local tries=0
    while :; do
        out=$("$RELCTL" "$@" 2>"$errfile")
        rc=$?
        if [ "$rc" -ne 9 ] || [ "$tries" -ge 120 ]; then
            return
        fi
        tries=$((tries + 1))
        sleep 0.5
    done
}

for ((round = 0; round < rounds; round++)); do
    # Interleaved across workers, rising with the round: later rounds are
    # fresh, and a worker that falls behind is refused as stale.
    gen=$(((round + 1) * 10 + worker))
    job="failover-w$worker-r$round"
    call --json lease acquire --env "$env" --job "$job" --release "rel-$gen" --generation "$gen" \
        --ttl 5s --wait 60s --op-id "acq-$worker-$round"
    if [ "$rc" -ne 0 ]; then
        reason=-
        [[ $out =~ \"error\":\"([A-Za-z_]+)\" ]] && reason=${BASH_REMATCH[1]}
        echo "refused worker=$worker round=$round gen=$gen rc=$rc reason=$reason"
        case $rc in 3 | 4 | 5) ;; *) echo "worker $worker: acquire exited $rc: $(head -c 400 "$errfile")" >&2 ;; esac
        continue
    fi
    [[ $out =~ \"handle\":\"([^\"]+)\" ]] && handle=${BASH_REMATCH[1]}
    token=${handle#*:}
    token=${token%%:*}
    echo "acquired worker=$worker round=$round gen=$gen token=$token op=acq-$worker-$round"
    RELCTL_LEASE="$handle" call --json publish --op-id "pub-$worker-$round"
    if [ "$rc" -eq 0 ]; then
        echo "published worker=$worker round=$round gen=$gen token=$token op=pub-$worker-$round"
    else
        reason=-
        [[ $out =~ \"error\":\"([A-Za-z_]+)\" ]] && reason=${BASH_REMATCH[1]}
        echo "refused worker=$worker round=$round gen=$gen rc=$rc reason=$reason"
        case $rc in 4 | 5) ;; *) echo "worker $worker: publish exited $rc: $(head -c 400 "$errfile")" >&2 ;; esac
    fi
    RELCTL_LEASE="$handle" call lease release
done
exit 0
