#!/bin/bash
# The metadata rank's crash between opens: every MPI rank creates
# (exclusively), writes, closes, reopens and checks its own files one after
# the other while rank 0 (metadata and I/O node 0) has its serving process
# killed with kill -9, twice; its supervisor restarts it on the same --data and
# the clients reconnect.  Every open, create, write, read and close must
# succeed (an exclusive create in flight during the crash must not come
# back EEXIST), and `ipvfs-ctl ls` must list every file afterwards.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require

ipvfs_start_cluster 2 1 --target-size 64M --no-bind
out=$IPVFS_CLUSTER_DIR/opens.out
marker=$IPVFS_CLUSTER_DIR/restarted
e2e_run 150 e2e_survive opens ipvfs:/m "$marker" >"$out" 2>&1 &
prog=$!
# two crashes, each a few files after the opens (re)started moving, so
# that each most likely finds a request in flight
next=5
for n in 1 2; do
    e2e_wait_output "$out" "^opened $next\$" 60 || ipvfs_fail "no file $next: $(cat "$out")"
    pid=$(e2e_rank_field 0 pid)
    [ -n "$pid" ] || ipvfs_fail "no serving pid of rank 0"
    kill -9 "$pid" || ipvfs_fail "kill -9 $pid (crash $n)"
    echo "crash $n after file $next"
    e2e_wait_restarted 0 "$n" 60 || ipvfs_fail "rank 0 did not restart after crash $n"
    next=$(($(grep -c '^opened [0-9]*$' "$out") + 3))
done
touch "$marker"
wait "$prog"
rc=$?
grep -v '^opened [0-9]*$' "$out"
[ "$rc" = 0 ] || ipvfs_fail "the opens failed (status $rc)"
grep -q "^PASS opens" "$out" || ipvfs_fail "the opens did not pass"
[ "$(e2e_rank_field 0 restarts)" = 2 ] || ipvfs_fail "rank 0 was not restarted twice"
per_rank=$(sed -n 's/^files per rank: //p' "$out")
listed=$(ipvfs-ctl ls /m) || ipvfs_fail "ls /m after the restart: $listed"
[ "$(wc -l <<<"$listed")" = $((per_rank * E2E_NP)) ] ||
    ipvfs_fail "ls /m lists $(wc -l <<<"$listed") files, not $((per_rank * E2E_NP))"
ipvfs_stop_cluster
echo "PASS t_survive_meta"
