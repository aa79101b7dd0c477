#!/bin/sh
# Install every Debian package iPVFS needs to build, test and benchmark.
# Idempotent: packages already present are left alone, so a second run costs
# one dpkg query.  Needs root (or sudo) only when something is missing.
set -eu

PKGS="build-essential autoconf automake libtool pkg-config
 mpich libmpich-dev libiscsi-dev libiscsi-bin libhwloc-dev
 liblmdb-dev liburing-dev libcmocka-dev libisal-dev nettle-dev libmunge-dev
 tgt clang libclang-rt-14-dev valgrind python3 dpkg-dev gnuplot-nox
 libfuse3-dev fuse3 libhdf5-mpich-dev hdf5-tools
 fio iperf3 iproute2 stress-ng linux-perf slurm-wlm munge tcpdump pandoc man-db"

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# ROMIO's source ships in the mpich source package: it needs a deb-src entry.
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
   ! grep -qs '^deb-src' /etc/apt/sources.list; then
    $SUDO sh -c 'cat > /etc/apt/sources.list.d/ipvfs-deb-src.sources' <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    need_update=1
fi

if [ -n "$missing" ] || [ "${need_update:-0}" = 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
fi
if [ -n "$missing" ]; then
    echo "setup-deps: installing:$missing"
    # shellcheck disable=SC2086
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi
echo "setup-deps: all packages present"
