#!/usr/bin/env bash
# A simulated CI release job, run as its own OS process by the tests:
#   release-job.sh ENV JOB RELEASE GENERATION START_DELAY DEPLOY_SECONDS TTL OP_ID
# Waits START_DELAY, acquires the environment's lease (retrying while busy),
# "deploys" for DEPLOY_SECONDS, publishes, releases. Prints key=value lines
# (acquire=, handle=, publish=, replayed=) and exits with the exit code of the
# step that decided its fate. Uses $RELCTL and $RELCTL_DSN.
set -u
env=$1 job=$2 release=$3 generation=$4 delay=$5 deploy=$6 ttl=$7 op=$8

sleep "$delay"
deadline=$((SECONDS + 60))
while :; do
    handle=$("$RELCTL" lease acquire --env "$env" --job "$job" --release "$release" \
        --generation "$generation" --ttl "$ttl" --op-id "$op")
    rc=$?
    # Busy is not an outcome: the same op id may be tried again.
    [ "$rc" -eq 3 ] && [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.05
done
echo "acquire=$rc"
[ "$rc" -eq 0 ] || exit "$rc"
echo "handle=$handle"

sleep "$deploy"
reply=$(RELCTL_LEASE="$handle" "$RELCTL" --json publish --op-id "$op.publish")
rc=$?
echo "publish=$rc"
case "$reply" in *'"replayed":true'*) echo "replayed=true" ;; *) echo "replayed=false" ;; esac
RELCTL_LEASE="$handle" "$RELCTL" lease release >/dev/null
exit "$rc"
