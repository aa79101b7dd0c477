#!/bin/bash
# The L1's write-back makes whole RAID-5 stripes: on one I/O node over 3
# targets (RAID-5, sparse LUNs on a disk with room for all of them) with a
# 16 MiB L1, a new 4 MiB datafile written in sequential 64 KiB requests is
# held in the L1 (its first writes into new blocks included: the log says
# the targets have room) and, after a sync, reached the members as whole
# stripes: ipvfs-ctl stats --json counts them (iraid.full_stripe_writes)
# and at most one partial stripe per flush round (a background commit may
# cut the stream once a second), where writing through would have read old
# data or parity for every request.  The data read back after a kill -9
# of the I/O node (the sync made it durable) and scrub finds parity right.
# Unsynced writes (a close without sync) are written back without a
# sync: first writes at the next background commit (their block map must
# be committed), rewrites once 5 s old.
# Talks the protocol directly (test/ipvfs_proto.py).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

# client MAP MODE HANDLE: write (64 KiB requests, then a sync), write-nosync,
# rewrite (3 blocks, no sync) or check.
client() {
    python3 - "$@" <<'PYEOF'
import os, random, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, mode, handle = sys.argv[1], sys.argv[2], int(sys.argv[3])
secret, addr, s = P.io_node(mapfile)
def call(op, body):
    status, rbody = P.call(s, op, body)
    assert status == 0, (op, status, rbody)
    return rbody
def io(off, n):
    return struct.pack("<QII", handle, 1, 0) + struct.pack("<QQ", off, n)
assert P.hello(s, secret, 9)[0] == 0
data = random.Random(handle).randbytes(4 << 20)
if mode == "rewrite":
    # 3 of a unit's 32 blocks rewritten, no sync: held until their age
    new = random.Random(handle + 1000).randbytes(3 << 16)
    call(P.OP["WRITE"], io(0, len(new)) + new)
    assert call(P.OP["READ"], io(0, len(new)))[24:] == new, "rewrite reads back wrong"
elif mode.startswith("write"):
    for off in range(0, len(data), 64 << 10):
        call(P.OP["WRITE"], io(off, 64 << 10) + data[off:off + (64 << 10)])
    if mode == "write":
        call(P.OP["DF_SYNC"], struct.pack("<QQ", 0, 0))
else:
    for off in range(0, len(data), 1 << 20):
        got = call(P.OP["READ"], io(off, 1 << 20))[24:]  # after struct ipvfs_io_rep
        assert got == data[off:off + (1 << 20)], ("differs at", off)
PYEOF
}

# ctr SECTION FIELD: a counter of the I/O node from ipvfs-ctl stats --json.
ctr() {
    ipvfs-ctl stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([r for r in d["ranks"] if "l1" in r][0][sys.argv[1]][sys.argv[2]])' "$1" "$2"
}

ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 16M
ipvfs_wait_log "L1 keeps first writes into new blocks" 10 ||
    ipvfs_fail "the L1 does not keep first writes although the targets have room"
client "$IPVFS_MAP" write 91 || ipvfs_fail "64 KiB writes and a sync"
full=$(ctr iraid full_stripe_writes) rmw=$(ctr iraid rmw_writes)
rcw=$(ctr iraid reconstruct_writes) rounds=$(ctr l1 flushes)
absorbed=$(ctr l1 writes_absorbed) dirty=$(ctr l1 dirty_bytes)
echo "RAID-5 stripe writes: $full full, $rmw read-modify-write, $rcw reconstruct-write;" \
     "$absorbed of 64 writes absorbed, $rounds flush rounds"
ipvfs-ctl stats | grep -q "RAID-5 stripe writes: $full full" ||
    ipvfs_fail "no RAID-5 line in ipvfs-ctl stats"
[ "$dirty" = 0 ] || ipvfs_fail "$dirty bytes dirty after a sync"
[ "$absorbed" -ge 60 ] || ipvfs_fail "only $absorbed of 64 first writes absorbed by the L1"
# 4 MiB over 2 data chunks of 64 KiB: 32 stripes, whole but for the cuts.
[ $((rmw + rcw)) -le "$rounds" ] ||
    ipvfs_fail "$((rmw + rcw)) partial-stripe writes for a sequential stream ($rounds rounds)"
[ "$full" -ge $((32 - 2 * rounds)) ] || ipvfs_fail "only $full full-stripe writes of 32"
ipvfs-ctl scrub || ipvfs_fail "scrub found parity that disagrees after write-backs"
# Unsynced: written back by age, without a sync.
client "$IPVFS_MAP" write-nosync 92 || ipvfs_fail "unsynced 64 KiB writes"
for ((i = 0; i < 100; i++)); do
    [ "$(ctr l1 dirty_bytes)" = 0 ] && break
    sleep 0.1
done
[ "$(ctr l1 dirty_bytes)" = 0 ] || ipvfs_fail "unsynced dirty blocks not written back within 10 s"
client "$IPVFS_MAP" check 92 || ipvfs_fail "data written back by age reads back wrong"
# Rewrites of blocks already mapped change no metadata: they wait in the
# L1 until they are 5 s old (a stripe still being filled goes out whole
# later), then go out without a sync.
client "$IPVFS_MAP" write 93 || ipvfs_fail "64 KiB writes and a sync (93)"
client "$IPVFS_MAP" rewrite 93 || ipvfs_fail "rewrite of 3 blocks"
t0=$(date +%s%N)
[ "$(ctr l1 dirty_bytes)" = $((3 << 16)) ] || ipvfs_fail "the 3 rewritten blocks are not dirty"
for ((i = 0; i < 150; i++)); do
    [ "$(ctr l1 dirty_bytes)" = 0 ] && break
    sleep 0.1
done
held=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$(ctr l1 dirty_bytes)" = 0 ] || ipvfs_fail "rewritten blocks still dirty after 15 s"
echo "rewritten blocks written back after $held ms without a sync"
[ "$held" -ge 3500 ] || ipvfs_fail "rewritten blocks written back after $held ms, before their age"
ipvfs_kill_cluster
ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 0
client "$IPVFS_MAP" check 91 || ipvfs_fail "synced data lost over a kill -9"
ipvfs_stop_cluster
echo "full-stripe write-back: ok"
