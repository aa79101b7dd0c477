#!/bin/bash
# Freed datafile blocks go back to the targets: a 64 MiB file written
# through ipvfs: (1 I/O node x 3 targets, the plain launch of doc/launching.md; RAID-5,
# then RAID-1 and RAID-0 with 32 MiB)
# is removed with `ipvfs-ctl rm`; once the I/O node has committed the
# removal it UNMAPs the freed stripes through iRAID on every member, so
# the targets' sparse backing files (lun0.img) shrink by most of the 64
# MiB of data (and its parity or mirrors).  Scrub stays clean (parity of the unmapped
# stripes is consistent), the files written before are byte-exact, and a
# file written afterwards into the discarded space reads back right.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
IOR=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$IOR" ] || { echo "skip: $IOR is not built"; exit 77; }
export E2E_NP=2

# Bytes the targets' backing files hold on disk (st_blocks), all of them.
allocated() {
    find "$IPVFS_CLUSTER_DIR" -name lun0.img -printf '%b\n' | awk '{ s += $1 * 512 } END { print s + 0 }'
}

ior() {
    timeout -k 5 120 mpiexec -n 2 env LD_PRELOAD="$E2E_ROMIO_LIB" "$IOR" "$@" >/dev/null ||
        ipvfs_fail "ipvfs-ior $*"
}

# Parity (RAID-5) or mirrors (RAID-1) agree everywhere; RAID-0 has none.
scrub_clean() {
    local out
    [ "$level" = 0 ] && return 0
    out=$(ipvfs-ctl scrub) || ipvfs_fail "RAID-$level: scrub $1: $out"
    [ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] ||
        ipvfs_fail "RAID-$level: scrub $1 said: $out"
}

run_level() {
    ipvfs_start_cluster 1 3 --raid "$level" --target-size 256M --no-bind
    [ "$(find "$IPVFS_CLUSTER_DIR" -name lun0.img | wc -l)" = 3 ] || ipvfs_fail "no 3 backing files"
    for n in 1 2; do
        e2e_run 60 e2e_persist write "ipvfs:/keep/$n" "$n" >/dev/null || ipvfs_fail "write /keep/$n"
    done
    before=$(allocated)
    ior -f ipvfs:/big -b "$((mib / 2))m" -t 4m -w -e -k
    full=$(allocated)
    grown=$((full - before))
    echo "RAID-$level: backing files: $before bytes allocated, $full after writing $mib MiB"
    [ "$grown" -ge $((mib << 20)) ] || ipvfs_fail "writing $mib MiB allocated only $grown bytes"

    ipvfs-ctl rm /big || ipvfs_fail "rm /big"
    # The removal commits within about a second; the discards follow it.
    want=$((full - (mib << 20) * 9 / 10))
    for ((i = 0; i < 300; i++)); do
        now=$(allocated)
        [ "$now" -le "$want" ] && break
        sleep 0.1
    done
    echo "after rm: $now bytes allocated (freed $((full - now)) of $grown)"
    [ "$now" -le "$want" ] || ipvfs_fail "the backing files did not shrink by 90% of $mib MiB within 30 s"
    ! ipvfs_logs | grep -E "discarding volume blocks|cannot discard|unmap failed" ||
        ipvfs_fail "a discard failed"

    scrub_clean "after the discards"
    for n in 1 2; do
        e2e_run 60 e2e_persist verify "ipvfs:/keep/$n" "$n" >/dev/null || ipvfs_fail "/keep/$n differs"
    done
    # The discarded space is used again: written and read back (-v checks).
    ior -f ipvfs:/again -b 16m -t 4m -w -r -v -e -k
    scrub_clean "after reuse"
    ipvfs_stop_cluster
    rm -rf "${IPVFS_CLUSTER_DIR:?}"/*
}

# RAID-5 with the 64 MiB file; the other levels with 32 MiB (RAID-1 writes
# it three times), so that the test stays short on a busy machine.
for level in 5 1 0; do
    mib=$([ "$level" = 5 ] && echo 64 || echo 32)
    run_level
done
echo "t_survive_unmap: ok"
