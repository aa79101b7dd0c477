#!/bin/bash
# MPI-IO conformance of libipvfs-romio.so on ufs:, in a temporary
# directory: ROMIO's and MPICH's MPI-IO test programs, 4 ranks, through
# the project's harness test/romio-conformance/run.sh (which prints a line
# per test and a summary).  Passes when no test fails; the only skips are
# the large tests, named with their reason: they cost minutes, so they are
# opt-in (IPVFS_ROMIO_LARGE=1 runs them, see test/romio-conformance/tests.txt).
# test/t_romio_conformance_ipvfs.sh runs the same harness on ipvfs:.
# timeout: 900
set -eu

: "${IPVFS_SRCDIR:?run through test/run-suite.sh (IPVFS_SRCDIR unset)}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_romio_conformance.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rc=0
bash "$IPVFS_SRCDIR/test/romio-conformance/run.sh" "ufs:$tmp/files" 4 || rc=$?
[ "$rc" -eq 0 ] || { echo "t_romio_conformance: FAIL (harness exit $rc)" >&2; exit 1; }
echo "PASS t_romio_conformance"
