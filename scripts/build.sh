#!/bin/bash
# Configure, build and install iPVFS (servers, tools, libipvfs-romio.so and
# the test programs) from a fresh checkout.
#
#   scripts/build.sh [BUILDDIR [PREFIX]]     defaults: _build, _install
#
# Installs missing Debian packages first (scripts/setup-deps.sh).
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-$srcdir/_build}
prefix=${2:-$srcdir/_install}
jobs=$(nproc 2>/dev/null || echo 2)

"$srcdir/scripts/setup-deps.sh"

if [ ! -x "$srcdir/configure" ] || [ "$srcdir/configure.ac" -nt "$srcdir/configure" ]; then
    echo "build: autoreconf"
    (cd "$srcdir" && autoreconf -fi)
fi
mkdir -p "$builddir"
cd "$builddir"
if [ ! -f config.status ] || [ "$srcdir/configure" -nt config.status ]; then
    echo "build: configure --prefix=$prefix"
    "$srcdir/configure" -q --prefix="$prefix"
fi
echo "build: make (-j$jobs)"
make -s -j"$jobs"
make -s -j"$jobs" check TESTS=
make -s install
echo "build: installed under $prefix"
