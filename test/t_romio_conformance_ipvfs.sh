#!/bin/bash
# MPI-IO conformance of libipvfs-romio.so on ipvfs:/, against a cluster of
# 2 I/O nodes x 2 targets: the same harness and tests as
# test/t_romio_conformance.sh (4 ranks).  Passes when no test fails.
# timeout: 900
set -eu

. "$IPVFS_SRCDIR/test/lib.sh"
for f in "$IPVFS_SERVER_BIN" "$IPVFS_CTL_BIN" "$IPVFS_BUILDDIR/adio/libipvfs-romio.so"; do
    [ -e "$f" ] || { echo "skip: $f is not built"; exit 77; }
done

ipvfs_start_cluster 2 2
rc=0
bash "$IPVFS_SRCDIR/test/romio-conformance/run.sh" ipvfs:/romio-conformance 4 || rc=$?
ipvfs_stop_cluster
[ "$rc" -eq 0 ] || ipvfs_fail "conformance on ipvfs:/ failed (harness exit $rc)"
echo "PASS t_romio_conformance_ipvfs"
