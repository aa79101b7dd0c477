#!/bin/bash
# timeout: 300
# End to end through ROMIO + ad_ipvfs on a 2 I/O nodes x 2 targets cluster,
# 4 client ranks: shared file pointers (write/read_shared, write/read_ordered,
# one pointer per open, set_view reset) byte-exact; atomic mode (concurrent
# overlapping contiguous and strided writes and reads, each one writer's);
# the locks of a killed process are released.  See test/mpi/e2e_sharedfp.c.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -x "$E2E_PROGS/e2e_sharedfp" ] || { echo "skip: $E2E_PROGS/e2e_sharedfp is not built"; exit 77; }

ipvfs_start_cluster 2 2
e2e_run 240 e2e_sharedfp ipvfs:/e2e/sharedfp || ipvfs_fail "e2e_sharedfp failed"
ipvfs_stop_cluster
echo "PASS t_e2e_sharedfp"
