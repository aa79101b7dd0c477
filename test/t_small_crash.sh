#!/bin/bash
# Small partial-block writes absorbed by the I/O nodes' L1 (issue 27)
# across a kill -9 of an I/O node, and overlapping writes of two clients
# (test/mpi/e2e_small.c; 2 I/O nodes x 1 target, default L1):
# - between the writes and the sync: the L1 of I/O node 1 holds dirty
#   bytes of the pieces (ipvfs-ctl stats; the previous L1 sent such writes
#   around it, holding none), it is killed and restarted, and the sync
#   fails on every rank with the write verifier's error naming it; written
#   again and synced, the file reads back exact;
# - after the sync: killed and restarted, the file reads back exact;
# - two clients' overlapping writes inside blocks: the later one's bytes
#   where they overlap, before and after a sync.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -x "$E2E_PROGS/e2e_small" ] || { echo "skip: e2e_small is not built"; exit 77; }

# dirty: the L1 bytes dirty now at rank $1 (ipvfs-ctl stats --json).
dirty() {
    ipvfs_ctl stats --json | python3 -c '
import json, sys
r = [x for x in json.load(sys.stdin)["ranks"] if x["rank"] == int(sys.argv[1])][0]
print(r.get("l1", {}).get("dirty_bytes", 0))' "$1"
}

ipvfs_start_cluster 2 1 --target-size 64M --no-bind
io1=2    # 2 I/O nodes x 1 target: rank 2 is I/O node 1
out=$IPVFS_CLUSTER_DIR/lost.out
marker=$IPVFS_CLUSTER_DIR/restarted
e2e_run 120 e2e_small lost ipvfs:/small/lost "$marker" \
    "server rank $io1 restarted; writes acknowledged since the last sync may be lost" \
    >"$out" 2>&1 &
prog=$!
e2e_wait_output "$out" '^written$' 60 || ipvfs_fail "the program did not write: $(cat "$out")"
held=$(dirty "$io1")
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
echo "dirty L1 bytes at rank $io1 before the kill: $held"
[ "${held:-0}" -gt 0 ] || ipvfs_fail "the L1 held none of the pieces before the kill"

e2e_run 120 e2e_small synced ipvfs:/small/synced || ipvfs_fail "synced"
pid=$(e2e_rank_field "$io1" pid)
kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
e2e_wait_restarted "$io1" 2 60 || ipvfs_fail "rank $io1 did not restart a second time"
e2e_run 120 e2e_small check ipvfs:/small/synced || ipvfs_fail "the synced pieces after the kill"

E2E_NP=2 e2e_run 120 e2e_small overlap ipvfs:/small/overlap || ipvfs_fail "overlapping writes"
ipvfs_stop_cluster
echo "PASS t_small_crash"
