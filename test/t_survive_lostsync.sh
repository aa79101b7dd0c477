#!/bin/bash
# The write verifier: an I/O node acknowledges a write once its data is on
# the volume, before the datafile store commits the block map that makes
# it reachable (DF_SYNC or the background commit), so a crash in between
# may lose it.  The MPI program writes without a sync; the I/O node 1's
# serving process is killed with kill -9 and restarted by its supervisor;
# the program's MPI_File_sync of one file and MPI_File_close (no sync) of
# another must then fail on every rank naming that rank, never report
# success, and a new write and sync must work after it.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require

ipvfs_start_cluster 2 1 --target-size 64M --no-bind
io1=2    # 2 I/O nodes x 1 target: rank 2 is I/O node 1
out=$IPVFS_CLUSTER_DIR/lost.out
marker=$IPVFS_CLUSTER_DIR/restarted
e2e_run 120 e2e_survive lost ipvfs:/s/lost "$marker" \
    "server rank $io1 restarted; writes acknowledged since the last sync may be lost" \
    >"$out" 2>&1 &
prog=$!
e2e_wait_output "$out" '^written$' 60 || ipvfs_fail "the program did not write: $(cat "$out")"
pid=$(e2e_rank_field "$io1" pid)
[ -n "$pid" ] || ipvfs_fail "no serving pid of rank $io1"
kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
e2e_wait_restarted "$io1" 1 60 || ipvfs_fail "rank $io1 did not restart"
touch "$marker"
wait "$prog"
rc=$?
cat "$out"
[ "$rc" = 0 ] || ipvfs_fail "the program failed (status $rc)"
grep -q "^PASS lost" "$out" || ipvfs_fail "the program did not pass"
ipvfs_stop_cluster
echo "PASS t_survive_lostsync"
