#!/usr/bin/env bash
# The Debian packages as a user gets them: builds the package target of the
# release preset (cmake/Packaging.cmake), checks the .debs with lintian,
# desktop-file-validate and appstreamcli, then installs them with
# `apt-get install ./*.deb` into a clean Debian 12 root (mmdebstrap, variant
# minbase: none of the build's packages) and runs them there: relctl --version
# and --help, man -w, bash completion, a whole `relctl run` on the embedded
# database, release-console --version without a display, and a program built
# with find_package(relctl) against librelctl-dev. Prints each package's size
# and each stage's time; a failing step prints its output and fails the script.
#
# The root is cached as a tarball in $RELCTL_CACHE_DIR (default
# ~/.cache/relctl)/chroot-bookworm.tar, made again once 7 days old, and the
# .debs apt downloads into it in chroot-bookworm-apt/, so a second run
# downloads nothing unless Debian published something newer. The mirror is
# Debian's (RELCTL_DEBIAN_MIRROR, RELCTL_DEBIAN_SECURITY_MIRROR override it).
#
# Packages it installs on the build machine: lintian, mmdebstrap,
# desktop-file-utils, appstream, and librsvg2-bin (the console's icons are
# rendered from the SVG when installed: packaging/InstallIcons.cmake).
set -euo pipefail
self=$(readlink -f "$0")
source "$(dirname "$self")/lib.sh"

# Runs "$@" quietly; when it fails, prints what it printed and which step it
# was, and fails. `step NAME CMD...`
step() {
    local name=$1 log
    shift
    log=$(mktemp /tmp/relctl-package-step.XXXXXX)
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        relctl_log "FAILED: $name"
        return 1
    fi
    rm -f "$log"
}

# Fails naming what was expected and what came.
expect() {
    local what=$1 want=$2 got=$3
    if [ "$got" != "$want" ]; then
        relctl_log "FAILED: $what: expected '$want', got '$got'"
        return 1
    fi
}

# --- inside the root: run by the script itself in a mount namespace of its own
# (unshare below). The root is a tmpfs mounted on the empty directory given,
# seen only in this namespace: it and everything mounted in it are gone when
# the namespace ends, even if the trap cannot run, and nothing is left on disk
# to remove (rm -rf of an installed root took 131 s on the 2-core machine).
in_root() {
    root=$1
    # What runs in the root sees root's usual environment, nothing of CI's
    # (no DSN, no PG*, no DISPLAY).
    run=(chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
         LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
    trap cleanup_root EXIT

    local start=$SECONDS
    mount -t tmpfs -o size=8g,mode=755 relctl-root "$root"
    tar -C "$root" -xf "$RELCTL_CHROOT_TARBALL"
    mkdir -p "$root/tmp/debs"
    cp "$RELCTL_PACKAGE_DIR"/*.deb "$root/tmp/debs/"
    cp -r "$RELCTL_ROOT/tests/consumer" "$root/tmp/consumer"
    # PostgreSQL needs /proc and /dev, and its shared memory /dev/shm.
    mount -t proc proc "$root/proc"
    mount --bind /dev "$root/dev"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
    mkdir -p "$RELCTL_CHROOT_APT_CACHE/partial"
    mount --bind "$RELCTL_CHROOT_APT_CACHE" "$root/var/cache/apt/archives"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # Installing postgresql starts no server here: there is no init system.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    relctl_stage_done "root unpacked (in memory)" "$start"

    # The clean install: the three .debs, as the README says, and man-db,
    # which minbase lacks and `man -w` needs (a desktop or server has it).
    # apt installs Recommends: postgresql comes too, and psql with it.
    start=$SECONDS
    step "apt-get update in the root" "${run[@]}" apt-get update
    step "apt-get install ./*.deb man-db" "${run[@]}" sh -c 'cd /tmp/debs && apt-get install -y ./*.deb man-db'
    relctl_stage_done "clean install (apt-get update, the packages, their dependencies)" "$start"
    "${run[@]}" dpkg-query -W -f='    ${Package} ${Version}\n' relctl release-console librelctl-dev \
        postgresql libqt6svg6 >&2
    step "psql (postgresql-client, recommended) is installed" "${run[@]}" sh -c 'command -v psql'

    start=$SECONDS
    expect "relctl --version" "$RELCTL_BUILT_VERSION" "$("${run[@]}" relctl --version)"
    step "relctl --help" "${run[@]}" sh -c 'relctl --help | grep -q "lease"'
    expect "man -w relctl" /usr/share/man/man1/relctl.1.gz "$("${run[@]}" man -w relctl)"
    expect "man -w release-console" /usr/share/man/man1/release-console.1.gz "$("${run[@]}" man -w release-console)"
    step "man relctl renders without warnings" "${run[@]}" sh -c \
        'out=$(MANWIDTH=80 man --warnings relctl 2>&1 >/dev/null); [ -z "$out" ] || { echo "$out"; exit 1; }'
    expect "bash completion of 'relctl lease a'" acquire "$("${run[@]}" bash -c \
        'source /usr/share/bash-completion/completions/relctl
         COMP_WORDS=(relctl lease a); COMP_CWORD=2; _relctl; echo "${COMPREPLY[*]}"')"
    step "zsh completion installed" test -f "$root/usr/share/zsh/vendor-completions/_relctl"

    # A whole run on the embedded default database: as root it lives in
    # /var/lib/relctl and its server runs as the postgres user, which the
    # postgresql package created. The deploy checks what run hands it.
    echo '{"artifact": "pkgtest-r1"}' >"$root/tmp/manifest.json"
    local deploy='test "$RELCTL_ENV" = pkgtest && test -n "$RELCTL_FENCING_TOKEN" && echo deployed > /tmp/deployed'
    step "relctl env add pkgtest (starts the embedded database)" "${run[@]}" relctl env add pkgtest
    step "relctl run" "${run[@]}" relctl run --env pkgtest --job package-test --release r1 --generation 1 \
        --ttl 1m --manifest /tmp/manifest.json -- sh -c "$deploy"
    step "the deploy ran under the lease" test -f "$root/tmp/deployed"
    step "the run published r1" "${run[@]}" sh -c 'relctl manifest show --env pkgtest | grep -q r1'

    # The console answers --help and --version before it needs a display.
    expect "release-console --version (offscreen)" "$RELCTL_CONSOLE_VERSION" \
        "$("${run[@]}" QT_QPA_PLATFORM=offscreen release-console --version)"
    expect "release-console --version (no display at all)" "$RELCTL_CONSOLE_VERSION" \
        "$("${run[@]}" release-console --version)"
    step "release-console --help (no display)" "${run[@]}" sh -c 'release-console --help | grep -q -- --dsn'
    # And the console itself from the packages alone (Qt's plugins, the SVG
    # icon engine), on the embedded database relctl used: rendered offscreen
    # once loaded, saved, exit 0.
    step "release-console --screenshot (offscreen)" "${run[@]}" QT_QPA_PLATFORM=offscreen \
        timeout 120 release-console --screenshot /tmp/console.png
    expect "the console's screenshot" "PNG image data" "$(file -b "$root/tmp/console.png" | cut -d, -f1)"
    cp "$root/tmp/console.png" "$RELCTL_BUILD_DIR/package-test-console.png"
    step "relctl db stop" "${run[@]}" relctl db stop
    relctl_stage_done "the programs in the root" "$start"

    # librelctl-dev as a consumer uses it: tests/consumer configured against
    # /usr with find_package(relctl), built and run. The compiler and CMake
    # are the consumer's, not librelctl-dev's dependencies: installed here.
    start=$SECONDS
    step "apt-get install cmake g++ make" "${run[@]}" apt-get install -y --no-install-recommends cmake g++ make
    relctl_stage_done "the consumer's compiler and CMake" "$start"
    start=$SECONDS
    step "configure tests/consumer against librelctl-dev" "${run[@]}" cmake -S /tmp/consumer -B /tmp/consumer/build \
        -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    step "build tests/consumer" "${run[@]}" cmake --build /tmp/consumer/build
    step "run tests/consumer" "${run[@]}" /tmp/consumer/build/relctl-consumer
    relctl_stage_done "find_package(relctl) from librelctl-dev" "$start"

    # What apt downloaded stays for the next run; what Debian no longer
    # offers goes.
    "${run[@]}" apt-get autoclean >/dev/null 2>&1 || true
}

# The embedded database's server outlives the relctl that started it: stop
# it, then end whatever else still runs in the root (by pid: only processes
# started here have it as their root), then unmount.
cleanup_root() {
    "${run[@]}" sh -c 'command -v relctl >/dev/null && relctl db stop' >/dev/null 2>&1 || true
    local p m
    for p in /proc/[0-9]*; do
        if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ]; then
            kill -KILL "${p#/proc/}" 2>/dev/null || true
        fi
    done
    for m in var/cache/apt/archives dev/shm dev proc ""; do
        if mountpoint -q "$root/$m"; then umount -l "$root/$m"; fi
    done
}

if [ "${1:-}" = --in-root ]; then
    in_root "$2"
    exit 0
fi

# --- on the build machine
total=$SECONDS
relctl_install_deps lintian mmdebstrap desktop-file-utils appstream librsvg2-bin
cd "$RELCTL_ROOT"
build=$RELCTL_BUILD_DIR

# Packages of an earlier version would be installed beside these.
rm -f "$build"/*.deb "$build"/*.ddeb
relctl_build "$RELCTL_PRESET" package
shopt -s nullglob
debs=("$build"/*.deb)
ddebs=("$build"/*.ddeb)
shopt -u nullglob
names=$(for f in "${debs[@]}" "${ddebs[@]}"; do basename "$f"; done | sort)
relctl_log "packages:"
for f in "${debs[@]}" "${ddebs[@]}"; do
    printf '    %-60s %6s KiB\n' "$(basename "$f")" $(($(stat -c %s "$f") / 1024)) >&2
done
for want in relctl_ release-console_ librelctl-dev_ relctl-dbgsym_; do
    grep -q "^$want" <<<"$names" || { relctl_log "FAILED: no ${want}*.deb/.ddeb in $build"; exit 1; }
done

RELCTL_BUILT_VERSION=$("$build/app/relctl" --version)
RELCTL_CONSOLE_VERSION="release-console ${RELCTL_BUILT_VERSION#relctl }"
export RELCTL_BUILT_VERSION RELCTL_CONSOLE_VERSION

# A copy of the packages the checks below and the root read; removed at exit.
work=$(mktemp -d /tmp/relctl-packages.XXXXXX)
root=""
cleanup() {
    rm -rf "$work"
    if [ -n "$root" ]; then rmdir "$root"; fi
}
trap cleanup EXIT
chmod 755 "$work"
mkdir "$work/debs" "$work/unpacked"
cp "${debs[@]}" "${ddebs[@]}" "$work/debs/"
chmod 644 "$work"/debs/*

# Lintian: no error and no warning; where a package needs an override, it
# carries it (packaging/lintian/PACKAGE, one reason each). Info tags are
# shown, not failed on. As root it runs as nobody, as lintian asks: it
# unpacks what it checks.
start=$SECONDS
lintian=(lintian)
if [ "$(id -u)" -eq 0 ]; then lintian=(runuser -u nobody -- env HOME=/tmp lintian); fi
lintian_out=$(mktemp /tmp/relctl-lintian.XXXXXX)
if ! "${lintian[@]}" --display-info --fail-on error,warning "$work"/debs/* >"$lintian_out" 2>&1; then
    cat "$lintian_out" >&2
    rm -f "$lintian_out"
    relctl_log "FAILED: lintian"
    exit 1
fi
if [ -s "$lintian_out" ]; then
    sed 's/^/    /' "$lintian_out" >&2
fi
rm -f "$lintian_out"
relctl_stage_done "lintian (no errors or warnings)" "$start"

# What is in the packages, checked as shipped.
start=$SECONDS
unpacked=$work/unpacked
for f in "${debs[@]}"; do dpkg-deb -x "$f" "$unpacked"; done
step "desktop-file-validate" desktop-file-validate "$unpacked"/usr/share/applications/*.desktop
step "appstreamcli validate" appstreamcli validate --no-net "$unpacked"/usr/share/metainfo/*.metainfo.xml
for size in 16 22 24 32 48 64 128 256; do
    icon=$(echo "$unpacked"/usr/share/icons/hicolor/${size}x${size}/apps/*.png)
    expect "icon ${size}x${size}" "PNG image data, $size x $size" "$(file -b "$icon" | cut -d, -f1-2)"
done
# relctl's debug information is the stripped binary's: the same build id.
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
id=$(build_id "$unpacked/usr/bin/relctl")
step "relctl's debug information is in relctl-dbgsym" sh -c \
    "dpkg-deb -c '$build'/relctl-dbgsym_*.ddeb | grep -q ' ./usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug$'"
step "relctl is stripped" sh -c "! readelf -S '$unpacked/usr/bin/relctl' | grep -q '\.debug_info'"
# release-console(1) is written by hand: every option --help lists is in it.
help=$("$build/app/release-console" --help)
options=$(grep -o -- '--[a-z][a-z-]*' <<<"$help" | sort -u)
expect "release-console --help lists --dsn" --dsn "$(grep -x -- --dsn <<<"$options")"
for option in $options; do
    grep -qF -- "$(sed 's/-/\\-/g' <<<"$option")" "$RELCTL_ROOT/resources/release-console.1" ||
        { relctl_log "FAILED: release-console.1 does not describe $option"; exit 1; }
done
relctl_stage_done "desktop entry, metainfo, icons, debug symbols, manual pages" "$start"

# The clean root: made by mmdebstrap from Debian's archive when there is
# none cached or the cached one is 7 days old; apt then brings it up to date.
cache=${RELCTL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/relctl}
tarball=$cache/chroot-bookworm.tar
export RELCTL_CHROOT_APT_CACHE=$cache/chroot-bookworm-apt
mkdir -p "$cache"
start=$SECONDS
if [ -f "$tarball" ] && [ $(($(date +%s) - $(stat -c %Y "$tarball"))) -lt $((7 * 24 * 3600)) ]; then
    relctl_stage_done "clean Debian 12 root (cached, $(( ($(date +%s) - $(stat -c %Y "$tarball")) / 3600 )) h old)" "$start"
else
    mirror=${RELCTL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    security=${RELCTL_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
    relctl_log "making a clean Debian 12 root with mmdebstrap (minbase) from $mirror"
    rm -f "$tarball.partial"
    step "mmdebstrap" mmdebstrap --variant=minbase --format=tar bookworm "$tarball.partial" \
        "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main"
    mv "$tarball.partial" "$tarball"
    relctl_stage_done "clean Debian 12 root (made, $(($(stat -c %s "$tarball") / 1048576)) MiB)" "$start"
fi

root=$(mktemp -d /tmp/relctl-root.XXXXXX)
export RELCTL_CHROOT_TARBALL=$tarball RELCTL_PACKAGE_DIR=$work/debs
unshare --mount --propagation private -- bash "$self" --in-root "$root"
relctl_log "the console as installed, rendered offscreen: $build/package-test-console.png"
relctl_stage_done "package test" "$total"
