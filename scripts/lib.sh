# Shared by scripts/*.sh and .ci/run: install what is missing, build a preset,
# and run a throwaway PostgreSQL cluster. Source it; do not run it.

RELCTL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# CMakePresets.json is the one build configuration: the scripts build the
# `release` preset, whose binary directory this is.
RELCTL_PRESET=release
RELCTL_BUILD_DIR=$RELCTL_ROOT/build/release

relctl_log() { printf '==> %s\n' "$*" >&2; }

# Progress: `relctl_stage_done NAME START [NOTE]` prints "==> NAME: N s" with
# the seconds since START (a $SECONDS value), so a slow set-up shows where its
# time went.
relctl_stage_done() {
    relctl_log "$1: $((SECONDS - $2)) s${3:+ ($3)}"
}

relctl_as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Debian 12 packages the build, the tests and the throwaway database need.
RELCTL_PACKAGES=(
    build-essential cmake pkg-config
    libpqxx-dev libpq-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libssl-dev
    qt6-base-dev libgl-dev
    libqt6svg6
    postgresql postgresql-client
    faketime
    pgbouncer
    man-db
    ccache
    python3
)

# Installs what is missing of RELCTL_PACKAGES and of the extra packages given.
relctl_install_deps() {
    local missing=() start=$SECONDS
    for p in "${RELCTL_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        relctl_stage_done packages "$start" "all installed"
        return 0
    fi
    relctl_log "installing ${missing[*]}"
    relctl_as_root apt-get update -qq
    relctl_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    relctl_stage_done packages "$start" "${#missing[@]} installed"
}

# Configures a preset of CMakePresets.json (default: release) and builds it:
# the build preset's targets, or only the TARGETs given (and what they link).
# Quiet unless it fails; the log stays in build/PRESET.log. Prints the time of
# each step.
relctl_build() {
    local preset=${1:-$RELCTL_PRESET}
    shift || true
    local targets=("$@")
    local log=$RELCTL_ROOT/build/$preset.log start=$SECONDS
    mkdir -p "$RELCTL_ROOT/build"
    local launcher=()
    if command -v ccache >/dev/null; then
        relctl_ccache_env
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    fi
    if ! (cd "$RELCTL_ROOT" && cmake --preset "$preset" "${launcher[@]}") >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        relctl_log "configure failed (full log: $log)"
        return 1
    fi
    relctl_stage_done "configure ($preset)" "$start"
    start=$SECONDS
    local what=${targets[*]:-every target of the build preset}
    relctl_log "building $preset: $what"
    if ! (cd "$RELCTL_ROOT" && cmake --build --preset "$preset" ${targets[@]:+--target "${targets[@]}"}) >>"$log" 2>&1; then
        tail -n 60 "$log" >&2
        relctl_log "build failed (full log: $log)"
        return 1
    fi
    relctl_stage_done "build ($preset)" "$start" "$(relctl_ccache_summary)"
}

# A compiler cache that every checkout on this machine shares (the session's
# tree and CI's fresh clone alike): an object is reused only when ccache finds
# the same compiler, flags and preprocessed source, so a clean machine builds
# the same binaries, only slower. Paths under the checkout are hashed relative
# to it (base_dir) and the build directory is left out of the hash (hash_dir),
# so a clone in another folder hits; the one difference is the compile
# directory recorded in the debug information. RELCTL_CACHE_DIR moves it.
relctl_ccache_env() {
    export RELCTL_CACHE_DIR=${RELCTL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/relctl}
    export CCACHE_DIR=$RELCTL_CACHE_DIR/ccache CCACHE_BASEDIR=$RELCTL_ROOT CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
    mkdir -p "$CCACHE_DIR"
    ccache --zero-stats >/dev/null
}

# "ccache: N of M compilations reused", or nothing without ccache.
relctl_ccache_summary() {
    command -v ccache >/dev/null && [ -n "${CCACHE_DIR:-}" ] || return 0
    ccache --print-stats 2>/dev/null | awk -F'\t' '
        $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hit += $2 }
        $1 == "cache_miss" { miss += $2 }
        END { if (hit + miss > 0) printf "ccache: %d of %d compilations reused", hit, hit + miss }'
}

relctl_pg_bindir() {
    local dir
    dir=$(pg_config --bindir 2>/dev/null)
    if [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
    done
    echo "no PostgreSQL server binaries found (install postgresql)" >&2
    return 1
}

# Starts a private cluster in a new temporary directory, on a unix socket only.
# Sets RELCTL_PG_DIR and RELCTL_PG_DSN. initdb and postgres refuse to run as
# root, so as root the cluster runs as the postgres system user.
relctl_pg_start() {
    local bin run=()
    bin=$(relctl_pg_bindir) || return 1
    RELCTL_PG_DIR=$(mktemp -d /tmp/relctl-pg.XXXXXX)
    chmod 755 "$RELCTL_PG_DIR"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$RELCTL_PG_DIR"
        run=(runuser -u postgres --)
    fi
    local user
    user=$([ "$(id -u)" -eq 0 ] && echo postgres || id -un)
    relctl_log "starting PostgreSQL in $RELCTL_PG_DIR"
    "${run[@]}" "$bin/initdb" -D "$RELCTL_PG_DIR/data" -U "$user" -A trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
    # plpgsql preloaded, as docs/operations.md advises for
    # relctl's server: every relctl session calls PL/pgSQL, and a backend
    # that loads the library itself pays for it on its first call.
    "${run[@]}" "$bin/pg_ctl" -D "$RELCTL_PG_DIR/data" -l "$RELCTL_PG_DIR/log" -w \
        -o "-c listen_addresses='' -k $RELCTL_PG_DIR -c fsync=off -c max_connections=200 -c shared_preload_libraries=plpgsql ${RELCTL_PG_OPTIONS:-}" \
        start >/dev/null
    RELCTL_PG_DSN="host=$RELCTL_PG_DIR user=$user dbname=postgres"
    RELCTL_PG_RUN=("${run[@]}")
    RELCTL_PG_BIN=$bin
    export RELCTL_PG_DIR RELCTL_PG_DSN
}

relctl_pg_stop() {
    if [ -n "${RELCTL_PG_DIR:-}" ] && [ -d "$RELCTL_PG_DIR/data" ]; then
        "${RELCTL_PG_RUN[@]}" "$RELCTL_PG_BIN/pg_ctl" -D "$RELCTL_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$RELCTL_PG_DIR"
    fi
}

# PgBouncer in session mode in front of the cluster relctl_pg_start started,
# on a unix socket of its own, resetting each server session between clients
# (DISCARD ALL), as docs/operations.md deploys it. Clients that
# send extra_float_digits at startup (Go's lib/pq: terraform's pg backend) are
# let in, as a pooler serving them is configured. Sets
# RELCTL_POOLER_DIR and RELCTL_POOLER_DSN; relctl_pooler_stop ends it.
relctl_pooler_start() {
    local user i
    user=$([ "$(id -u)" -eq 0 ] && echo postgres || id -un)
    RELCTL_POOLER_DIR=$(mktemp -d /tmp/relctl-pgbouncer.XXXXXX)
    # Any other database name is passed on as it is ("*"): the benchmarks'
    # scratch databases are reached through the pooler too.
    printf '%s\n' "[databases]" "postgres = host=$RELCTL_PG_DIR dbname=postgres" "* = host=$RELCTL_PG_DIR" \
        "[pgbouncer]" \
        "listen_addr =" "unix_socket_dir = $RELCTL_POOLER_DIR" "listen_port = 6432" "auth_type = trust" \
        "auth_file = $RELCTL_POOLER_DIR/users.txt" "pool_mode = session" "server_reset_query = DISCARD ALL" \
        "ignore_startup_parameters = extra_float_digits" \
        "default_pool_size = 20" "max_client_conn = 1000" "logfile = $RELCTL_POOLER_DIR/pgbouncer.log" \
        "pidfile = $RELCTL_POOLER_DIR/pgbouncer.pid" >"$RELCTL_POOLER_DIR/pgbouncer.ini"
    printf '"%s" ""\n' "$user" >"$RELCTL_POOLER_DIR/users.txt"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$RELCTL_POOLER_DIR"; fi
    relctl_log "starting PgBouncer in $RELCTL_POOLER_DIR"
    "${RELCTL_PG_RUN[@]}" /usr/sbin/pgbouncer -d "$RELCTL_POOLER_DIR/pgbouncer.ini" >/dev/null
    for i in $(seq 100); do
        [ -S "$RELCTL_POOLER_DIR/.s.PGSQL.6432" ] && break
        sleep 0.05
    done
    if [ ! -S "$RELCTL_POOLER_DIR/.s.PGSQL.6432" ]; then
        echo "PgBouncer is not listening after 5 s; its log:" >&2
        cat "$RELCTL_POOLER_DIR/pgbouncer.log" >&2 || true
        return 1
    fi
    RELCTL_POOLER_DSN="host=$RELCTL_POOLER_DIR port=6432 user=$user dbname=postgres"
    export RELCTL_POOLER_DIR RELCTL_POOLER_DSN
}

relctl_pooler_stop() {
    if [ -n "${RELCTL_POOLER_DIR:-}" ] && [ -d "$RELCTL_POOLER_DIR" ]; then
        if [ -f "$RELCTL_POOLER_DIR/pgbouncer.pid" ]; then
            kill "$(cat "$RELCTL_POOLER_DIR/pgbouncer.pid")" 2>/dev/null || true
        fi
        rm -rf "$RELCTL_POOLER_DIR"
    fi
}

# The environment of a test run against the cluster relctl_pg_start started.
relctl_test_env() {
    # Tests create their own databases on this cluster, one per test, and drop them.
    export RELCTL_TEST_DSN=$RELCTL_PG_DSN
    # Request secrets of the op ids the tests use stay with the throwaway cluster.
    export RELCTL_STATE_DIR=$RELCTL_PG_DIR/state
    unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE RELCTL_DSN RELCTL_LEASE RELCTL_OP_KEY
}

# Everything a script needs before it runs relctl: packages, a build (of the
# TARGETs given, else of everything), and a throwaway cluster removed when the
# script exits.
relctl_prepare() {
    relctl_install_deps
    relctl_build "$RELCTL_PRESET" "$@"
    local start=$SECONDS
    relctl_pg_start
    trap relctl_pg_stop EXIT
    relctl_stage_done cluster "$start"
}
