#!/bin/bash
# timeout: 300
# End to end through ROMIO + ad_ipvfs on a 2 I/O nodes x 2 targets cluster,
# 4 client ranks: contiguous, strided, collective I/O byte-exact, holes,
# EOF, size/resize/preallocate, open modes, delete, striping hints, offsets
# beyond 2^32 and a single read and a single write of more than 2^31 bytes.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require

ipvfs_start_cluster 2 2 
e2e_run 240 e2e_io ipvfs:/e2e/io --nio 2 --large || ipvfs_fail "e2e_io failed"
ipvfs_stop_cluster
echo "PASS t_e2e_io"
