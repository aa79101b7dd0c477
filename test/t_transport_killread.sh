#!/bin/bash
# timeout: 300
# Pipelined reads meet a dying target (issue 14): rounds of 64 MiB reads,
# one MPI call each (the client cuts it into pieces, several in flight per
# connection, and the I/O node serves them concurrently), while a target's
# serving process is killed with kill -9 after the first round (its
# supervisor restarts it).  --cache-l1 0, so the reads reach the targets.
# - RAID-5 (1 I/O node x 3 targets): every round reads the right bytes
#   (the dead member's rows come from the other two);
# - RAID-0 (1 x 2): every round reads the right bytes or fails with an
#   error, never wrong bytes; once the target is back, reads work.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
ior_bin=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$ior_bin" ] || { echo "skip: $ior_bin is not built"; exit 77; }

# ior ARGS...: one rank of ipvfs-ior on ipvfs:/k, 4 calls of 64 MiB.
ior() {
    timeout -k 5 120 mpiexec -n 1 env LD_PRELOAD="$E2E_ROMIO_LIB" "$ior_bin" \
        -f ipvfs:/k -b 64m -t 64m -s 4 -v -k "$@" 2>&1
}

# read_rounds N: N read rounds, a line each: ok, error (with the message)
# or WRONG (ipvfs-ior's pattern check found other bytes).
read_rounds() {
    local i out
    for ((i = 0; i < $1; i++)); do
        if out=$(ior -r); then
            echo "round $i ok"
        elif grep -q "data mismatch" <<<"$out"; then
            echo "round $i WRONG: $(grep -m1 "data mismatch" <<<"$out")"
        else
            echo "round $i error: $(tail -2 <<<"$out" | tr '\n' ' ')"
        fi
    done
}

read_ok() { read_rounds 1 | grep -q " ok$"; }

# phase LEVEL NT: write 256 MiB, read it in rounds, kill target rank 2
# after the first round; prints the rounds.
phase() {
    local level=$1 nt=$2 log pid loop t
    log=$(mktemp /tmp/ipvfs-killread.XXXXXX)
    ipvfs_start_cluster 1 "$nt" --target-size 320M --no-bind --raid "$level" --cache-l1 0
    ior -w -e >/dev/null || ipvfs_fail "RAID-$level: writing the file failed"
    read_rounds 6 >"$log" &
    loop=$!
    e2e_wait_output "$log" '^round 0 ' 120 || ipvfs_fail "RAID-$level: no first round"
    pid=$(e2e_rank_field 2 pid)
    [ -n "$pid" ] || ipvfs_fail "no serving pid of rank 2"
    kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
    wait "$loop"
    sed "s/^/RAID-$level: /" "$log"
    grep -q WRONG "$log" && ipvfs_fail "RAID-$level: a read returned wrong bytes"
    # the kill reached the volume (member 1 is target rank 2)
    ipvfs_wait_log 'member 1 .*-> (down|reconnecting)' ||
        ipvfs_fail "RAID-$level: the I/O node never saw member 1 go"
    [ "$level" = 5 ] && grep -q error "$log" && ipvfs_fail "RAID-5: a read failed with a member down"
    e2e_wait_restarted 2 1 60 || ipvfs_fail "RAID-$level: target rank 2 did not restart"
    # the member reconnects within seconds: poll, 60 s at most
    for ((t = 0; t < 60; t++)); do
        read_ok && break
        sleep 1
    done
    [ "$t" -lt 60 ] || ipvfs_fail "RAID-$level: reads do not work after the restart"
    rm -f "$log"
    ipvfs_stop_cluster
    rm -rf "$IPVFS_CLUSTER_DIR"
    unset IPVFS_CLUSTER_DIR
}

phase 5 3
phase 0 2
echo "t_transport_killread: ok"
