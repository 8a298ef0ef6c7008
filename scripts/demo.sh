#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and shows the protocol at
# work through relctl, on a throwaway PostgreSQL: two release jobs race, the
# older one outlives its lease, and its late publish is refused and traced.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

relctl_prepare

export RELCTL_DSN=$RELCTL_PG_DSN
unset RELCTL_LEASE
relctl() { "$RELCTL_BUILD_DIR/app/relctl" "$@"; }
step() { printf '\n\033[1m## %s\033[0m\n' "$*"; }
show() { printf '$ relctl %s\n' "$*"; relctl "$@"; }

step "Install the schema and declare the environment"
show migrate
show env add prod --default-ttl 2s --max-ttl 1m

step "Job A (release r8, generation 8) takes the lease and starts a slow deploy"
r8=$(relctl --job-url https://ci.example/pipelines/8 lease acquire --env prod --job deploy-r8 --release r8 --generation 8 --ttl 2s)
echo "handle: $r8"

step "Job B (release r9, generation 9) finds the environment busy"
show lease acquire --env prod --job deploy-r9 --release r9 --generation 9 || echo "(exit $?: busy)"

step "Job A stalls past its 2 s lease; job B takes over and publishes r9"
sleep 2.2
r9=$(relctl lease acquire --env prod --job deploy-r9 --release r9 --generation 9 --op-id pipeline-9-acquire)
echo "handle: $r9"
echo '{"image": "registry.example/app:r9"}' >"$RELCTL_PG_DIR/manifest-r9.json"
RELCTL_LEASE="$r9" relctl publish --manifest "$RELCTL_PG_DIR/manifest-r9.json" --op-id pipeline-9-publish
RELCTL_LEASE="$r9" relctl lease release

step "Job A wakes up and tries to mark r8 current: refused"
RELCTL_LEASE="$r8" relctl --job-url https://ci.example/pipelines/8 publish || echo "(exit $?: the write was refused)"
RELCTL_LEASE="$r8" relctl lease release

step "Job B's publish is retried with the same op id: answered from the record, applied once"
RELCTL_LEASE="$r9" show publish --manifest "$RELCTL_PG_DIR/manifest-r9.json" --op-id pipeline-9-publish

step "What is current, and the audit trail"
show manifest show --env prod
show audit --env prod

step "An incident reviewer traces the refused write back to its job"
show trace --job deploy-r8
