#!/bin/bash
# timeout: 60
# The I/O node's place time, which benchmarks/model-calibrate.sh turns
# into the model's t_place_ms: at stop each I/O node logs how many READs
# held a place in its store and for how long on average.  On 1 x 2
# targets with the emulated disk and no L1, random 64 KiB reads at a low
# rate (benchmarks/ipvfs-openload, open loop) must all be counted, and
# their mean place time must hold the disk's logged mean service time
# (a place lasts through the target's disk) but not 50 ms more (nothing
# queues at this rate); the I/O node's time from a READ's request to its
# reply (benchmarks/model-places.sh reads it) must count every READ and
# hold the place time.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
IOR=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
OPENLOAD=$IPVFS_BUILDDIR/benchmarks/ipvfs-openload
for p in "$IOR" "$OPENLOAD"; do
    [ -x "$p" ] || { echo "skip: $p is not built"; exit 77; }
done
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

ipvfs_start_cluster 1 2 --target-size 64M --emulate-disk st318452lw --cache-l1 0
timeout -k 5 60 mpiexec -n 1 env LD_PRELOAD="$E2E_ROMIO_LIB" "$IOR" -f ipvfs:/mp/f -b 16m -t 1m \
    -w -e -k >/dev/null || ipvfs_fail "writing the file"
# again, so that the disks' counters at stop are the reads' alone
ipvfs_stop_cluster
ipvfs_start_cluster 1 2 --target-size 64M --emulate-disk st318452lw --cache-l1 0
res=$(timeout -k 5 60 mpiexec -n 1 env LD_PRELOAD="$E2E_ROMIO_LIB" "$OPENLOAD" -f ipvfs:/mp/f \
    -s 64K -r 40 -t 3 -W 1 2>&1 | grep '^RESULT') || ipvfs_fail "ipvfs-openload"
echo "$res"
ipvfs_stop_cluster
# each rank's log holds both runs: its last line of each kind is the reads'
last() {   # PATTERN: the last matching line of every rank's log
    local f
    for f in "$IPVFS_CLUSTER_DIR"/log/rank-*.log; do
        grep -h "$1" "$f" | tail -1
    done
}
place=$(last 'READs held a place in the store for')
[ -n "$place" ] || ipvfs_fail "the I/O node logged no place time at stop"
disk=$(last 'emulated disk st318452lw: [0-9]* ios, service mean')
answered=$(last 'READs were answered')
[ -n "$answered" ] || ipvfs_fail "the I/O node logged no request-to-reply time at stop"
echo "$place"
echo "$disk"
echo "$answered"
python3 - "$res" "$place" "$disk" "$answered" <<'PY' || ipvfs_fail "the place time is off (above)"
import re, sys
reqs = int(re.search(r" requests=(\d+)", sys.argv[1]).group(1))
m = re.search(r"(\d+) READs held a place in the store for ([\d.]+) ms", sys.argv[2])
n, place = int(m.group(1)), float(m.group(2))
ios = [(int(a), float(b)) for a, b in re.findall(r"(\d+) ios, service mean ([\d.]+) ms", sys.argv[3])]
assert len(ios) == 2, ios
disk = sum(a * b for a, b in ios) / sum(a for a, _ in ios)
# read-ahead is off for random reads: every READ of the load is one place
assert n >= reqs, "%d READs counted, %d made" % (n, reqs)
assert disk <= place < disk + 50, "place %.3f ms, disk %.3f ms" % (place, disk)
m = re.search(r"(\d+) READs were answered ([\d.]+) ms after", sys.argv[4])
na, reply = int(m.group(1)), float(m.group(2))
assert na == n, "%d READs answered, %d held a place" % (na, n)
assert place <= reply < place + 50, "request to reply %.3f ms, place %.3f ms" % (reply, place)
PY
echo "PASS"
