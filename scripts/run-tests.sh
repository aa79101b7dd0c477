#!/bin/bash
# The whole iPVFS test suite, from a fresh Debian 12 machine: installs what
# is missing, builds, then runs every unit, integration and conformance
# test.  The last line is "N passed, M failed".
#
#   scripts/run-tests.sh [PATTERN]     PATTERN: run only tests whose name has it
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${IPVFS_TEST_BUILDDIR:-$srcdir/_build}

if ! "$srcdir/scripts/build.sh" "$builddir" "${IPVFS_PREFIX:-$srcdir/_install}"; then
    echo "build failed"
    echo "0 passed, 1 failed"
    exit 1
fi
exec "$srcdir/test/run-suite.sh" "$builddir" "${1:-}"
