#!/bin/bash
# Shared file pointers and byte-range locks across a crash of the metadata
# rank: they live in its serving process, so a restart loses them; the
# client must be told, never lose them silently.  An MPI program opens a
# file, writes through the shared pointer and in atomic mode, then rank 0's
# serving process is killed (kill -9) and restarted by its supervisor; the
# next shared-pointer write and the next atomic write fail on every rank
# with "the metadata rank restarted since this file was opened" (SHFP,
# LOCK and UNLOCK carry the metadata rank's verifier of the open: ESTALE
# on another), and both work again after a reopen.
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require

ipvfs_start_cluster 2 1 --target-size 64M --no-bind
out=$IPVFS_CLUSTER_DIR/stale.out
marker=$IPVFS_CLUSTER_DIR/restarted
e2e_run 100 e2e_survive stale ipvfs:/locks/f "$marker" >"$out" 2>&1 &
prog=$!
e2e_wait_output "$out" '^opened$' 60 || ipvfs_fail "the program did not open: $(cat "$out")"
pid=$(e2e_rank_field 0 pid)
[ -n "$pid" ] || ipvfs_fail "no serving pid of rank 0"
kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
e2e_wait_restarted 0 1 60 || ipvfs_fail "rank 0 did not restart"
echo "rank 0's serving process $pid killed and restarted"
touch "$marker"
wait "$prog"
rc=$?
cat "$out"
[ "$rc" = 0 ] || ipvfs_fail "the program failed (status $rc)"
grep -q "^PASS stale" "$out" || ipvfs_fail "the program did not pass"
# the metadata rank logged the refusal too
ipvfs_wait_log 'op 40 .*restarted since this file was opened: its shared file pointer is lost' ||
    ipvfs_fail "the metadata rank did not refuse the stale shared pointer"
ipvfs_logs | grep -m1 'its shared file pointer is lost'
ipvfs_stop_cluster
echo "PASS"
