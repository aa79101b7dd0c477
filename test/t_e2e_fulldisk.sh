#!/bin/bash
# timeout: 240
# A full backing disk: the target's sparse LUN file sits on a 48 MiB tmpfs
# while the LUN is 256 MiB.  Writing 128 MiB must fail within the client's
# limits with "No space left on device" on every rank that hits it (no
# hang, no crash), the servers keep serving, and removing the file makes
# room again: the datafile store reuses the freed volume blocks, which the
# target already holds, so a later write fits and reads back intact.
# Needs root (mount); skips otherwise.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
prog=$IPVFS_BUILDDIR/benchmarks/ipvfs-patterns
[ -x "$prog" ] || { echo "skip: $prog is not built"; exit 77; }

small=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-full.XXXXXX") || ipvfs_fail "mktemp"
mounted=
ipvfs_test_cleanup() {
    # the target holds its LUN file open: stop a cluster left running first
    if [ -n "$_ipvfs_pid" ]; then
        ipvfs_kill_cluster
        wait "$_ipvfs_pid" 2>/dev/null
        _ipvfs_pid=
    fi
    [ -z "$mounted" ] || umount "$small" || echo "cleanup: cannot unmount $small" >&2
    rmdir "$small" 2>/dev/null
}
mount -t tmpfs -o size=48m tmpfs "$small" 2>/dev/null || {
    echo "skip: cannot mount a tmpfs (needs root)"
    exit 77
}
mounted=1

# The cluster directory (logs, map, metadata) stays on the real disk: only
# the target rank's directory, with its LUN file, lives on the small one.
IPVFS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-test.XXXXXX") || ipvfs_fail "mktemp"
mkdir "$small/rank-1" && ln -s "$small/rank-1" "$IPVFS_CLUSTER_DIR/rank-1" ||
    ipvfs_fail "cannot place the target's directory on the small disk"
ipvfs_start_cluster 1 1 --target-size 256M
# 48 MiB of disk cannot hold the 256 MiB LUN: the L1 must not hold back
# first writes into new blocks (their ENOSPC would come at a later sync).
ipvfs_wait_log "L1 writes through first writes into new blocks" 10 ||
    ipvfs_fail "the L1 keeps first writes although the target's disk is too small"

# patterns MIB_PER_RANK FILE: the Clusterfile program (write, sync, read,
# check) on 4 ranks; its output on stdout.
patterns() {
    timeout -k 5 60 mpiexec -n 4 env LD_PRELOAD="$E2E_ROMIO_LIB" "$prog" sched "$2" "$1" 2>&1
}

out=$(patterns 32 ipvfs:/full/big)
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 137 ] || ipvfs_fail "the write into a full disk hung"
[ $rc -ne 0 ] || ipvfs_fail "128 MiB fit on a 48 MiB disk"
# the ranks print their MPI error before MPI_Abort; an abort that wins the
# race can swallow that line, so the replies the I/O node sent count too
grep -q "write of /full/big failed: No space left on device" <<<"$out" ||
    ipvfs_logs | grep -q "WRITE of handle [0-9]* failed: No space left on device" || {
    echo "$out" | tail -n 5
    ipvfs_fail "no clear ENOSPC error for the client"
}
echo "full disk: the client got: $(grep -m1 -o 'write of /full/big failed: [^(]*' <<<"$out")"
ipvfs-ctl status | grep -q "member 0 up" || ipvfs_fail "the volume's member is not up after ENOSPC"
[ "$(ipvfs-ctl status | grep -c serving)" -eq 2 ] || ipvfs_fail "a rank stopped serving"

ipvfs-ctl rm /full/big || ipvfs_fail "rm failed"
# The freed blocks become reusable once the removal is committed (a
# commit round runs within a second): the write is tried again until it
# fits, for 20 s at most.
deadline=$(($(date +%s) + 20))
until out=$(patterns 4 ipvfs:/full/small); do
    [ "$(date +%s)" -lt "$deadline" ] && continue
    echo "$out" | tail -n 5
    ipvfs_fail "16 MiB did not fit after removing the file that filled the disk"
done
grep -q "op=read" <<<"$out" || ipvfs_fail "no checked read-back"
ipvfs_stop_cluster
echo "PASS t_e2e_fulldisk"
