#!/bin/bash
# timeout: 120
# Write hole: the whole RAID-5 server job (1 I/O node x 4 targets) is
# killed with kill -9 while clients write; after a restart on the same
# directory the volume resyncs what its write-intent bitmap marked, scrub
# reports 0 mismatches, and every file whose writer had finished its
# MPI_File_sync reads back byte-exact.  Twice, so that the second crash
# hits a volume that has a superblock (no "fresh volume" shortcut).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
export E2E_NP=2

writer_pid=
ipvfs_test_cleanup() {
    [ -n "$writer_pid" ] && kill -9 -- "-$writer_pid" 2>/dev/null
    writer_pid=
}

# writer ROUND: writes /crash/ROUND-N for N = 1, 2, ... until killed; each
# file whose e2e_persist exited 0 (synced) is listed in synced-ROUND.
writer() {
    local round=$1 n
    for ((n = 1; ; n++)); do
        e2e_run 30 e2e_persist write "ipvfs:/crash/$round-$n" "$n" >/dev/null 2>&1 &&
            echo "$round-$n $n" >>"$IPVFS_CLUSTER_DIR/synced-$round"
    done
}

crash_round() {
    local round=$1 i
    : >"$IPVFS_CLUSTER_DIR/synced-$round"
    setsid bash -c "$(declare -f writer e2e_run); $(declare -p E2E_NP E2E_ROMIO_LIB E2E_PROGS IPVFS_CLUSTER_DIR); export IPVFS_MAP=$IPVFS_MAP; writer $round" &
    writer_pid=$!
    # crash once some files are synced and another write is under way
    for ((i = 0; i < 300; i++)); do
        [ "$(wc -l <"$IPVFS_CLUSTER_DIR/synced-$round")" -ge 3 ] && break
        sleep 0.1
    done
    [ "$i" -lt 300 ] || ipvfs_fail "round $round: the writer synced too little in 30 s"
    sleep 0.3
    ipvfs_kill_cluster
    ipvfs_test_cleanup
    wait 2>/dev/null
}

verify_round() {
    local round=$1 name seed out
    while read -r name seed; do
        e2e_run 60 e2e_persist verify "ipvfs:/crash/$name" "$seed" >/dev/null ||
            ipvfs_fail "synced file /crash/$name is damaged after the crash"
    done <"$IPVFS_CLUSTER_DIR/synced-$round"
    out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after crash $round: $out"
    [ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub said: $out"
    echo "round $round: $(wc -l <"$IPVFS_CLUSTER_DIR/synced-$round") synced files intact, scrub clean"
}

ipvfs_start_cluster 1 4 --target-size 64M --no-bind
crash_round 1
ipvfs_start_cluster 1 4 --target-size 64M --no-bind
[ "$(ipvfs_logs | grep -c "assumed clean")" = 1 ] ||
    ipvfs_fail "a crashed volume was assumed clean"
verify_round 1
crash_round 2
ipvfs_start_cluster 1 4 --target-size 64M --no-bind
[ "$(ipvfs_logs | grep -c "assumed clean")" = 1 ] ||
    ipvfs_fail "a volume with a superblock was assumed clean"
verify_round 1
verify_round 2
ipvfs_logs | grep -E "resyncing [0-9]+ dirty" | sed 's/^/    /'
ipvfs_stop_cluster
echo "t_raid_crash: ok"
