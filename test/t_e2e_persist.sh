#!/bin/bash
# timeout: 300
# Data written through MPI-IO survives a clean restart of the cluster;
# data that MPI_File_sync returned for survives kill -9 of the whole server
# job, and so do rewrites that MPI_File_close returned for without a sync
# (the I/O nodes' L1 would hold them dirty for 5 s: the close syncs them).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require

ipvfs_start_cluster 2 2 --target-size 256M
e2e_run 60 e2e_persist write ipvfs:/e2e/persist/clean 2 || ipvfs_fail "write failed"
e2e_run 60 e2e_persist verify ipvfs:/e2e/persist/clean 2 || ipvfs_fail "verify before restart"
ipvfs_restart_cluster
e2e_run 60 e2e_persist verify ipvfs:/e2e/persist/clean 2 || ipvfs_fail "verify after restart"
# odd seed: the program syncs and exits without closing
e2e_run 60 e2e_persist write ipvfs:/e2e/persist/crash 3 || ipvfs_fail "write before crash failed"
ipvfs_kill_cluster
ipvfs_start_cluster 2 2 --target-size 256M
e2e_run 60 e2e_persist verify ipvfs:/e2e/persist/crash 3 || ipvfs_fail "synced data lost in the crash"
e2e_run 60 e2e_persist verify ipvfs:/e2e/persist/clean 2 || ipvfs_fail "older data lost in the crash"
# rewrite the crash file (blocks the L1 keeps dirty until 5 s old), close
# without a sync, and crash at once
e2e_run 60 e2e_persist write-close ipvfs:/e2e/persist/crash 5 || ipvfs_fail "write-close failed"
ipvfs_kill_cluster
ipvfs_start_cluster 2 2 --target-size 256M
e2e_run 60 e2e_persist verify ipvfs:/e2e/persist/crash 5 || ipvfs_fail "data a close returned for lost in the crash"
ipvfs_stop_cluster
echo "PASS t_e2e_persist"
