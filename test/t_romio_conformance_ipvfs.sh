#!/bin/bash
# MPI-IO conformance of libipvfs-romio.so on ipvfs:/: the same harness run
# as test/t_romio_conformance.sh (4 processes), against a cluster of
# 2 I/O nodes x 2 targets.  Accepted failures are listed below with their
# reasons; any other failure fails the test.
# timeout: 900
set -eu

. "$IPVFS_SRCDIR/test/lib.sh"
for f in "$IPVFS_SERVER_BIN" "$IPVFS_CTL_BIN" "$IPVFS_BUILDDIR/adio/libipvfs-romio.so"; do
    [ -e "$f" ] || { echo "skip: $f is not built"; exit 77; }
done
if [ ! -f "$IPVFS_SRCDIR/../shared/tools/romio-conformance.sh" ]; then
    echo "skip: no conformance harness beside the checkout"
    exit 77
fi

# Failures accepted on ipvfs:, "name|symptom|reason" lines (see
# t_romio_conformance.sh).  Shared file pointers and atomic mode are served
# by the metadata rank (SHFP, LOCK/UNLOCK in common/proto.h), so only one
# remains:
# - romio/file_info learns the default striping_factor only on ufs: (its
#   defaults table is NULL elsewhere, so it takes 0), deletes the file,
#   creates it again with the hint striping_factor=0 and expects
#   MPI_File_get_info to echo 0.  For us 0 means "all I/O nodes", and
#   DESIGN.md asks get_info to report the striping in effect, so we report
#   the real factor (2 here).
exceptions='romio/file_info|striping_factor is [0-9]+; should be 0|get_info reports the striping in effect (2 I/O nodes), not the hint 0'

ipvfs_start_cluster 2 2
rc=0
IPVFS_ROMIO_PREFIX=ipvfs:/romio-conformance IPVFS_ROMIO_EXCEPTIONS=$exceptions \
    bash "$IPVFS_SRCDIR/test/t_romio_conformance.sh" || rc=$?
ipvfs_stop_cluster
[ "$rc" -eq 0 ] || ipvfs_fail "conformance on ipvfs:/ failed (exit $rc)"
echo "PASS t_romio_conformance_ipvfs"
