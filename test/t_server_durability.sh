#!/bin/bash
# timeout: 180
# What the server acknowledges survives: data written to an I/O node and
# acknowledged by DF_SYNC survives kill -9 of the whole cluster, and data
# written without a sync survives a clean shutdown (which syncs), each
# across a restart on the same directory.  Talks the protocol directly.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"

# client.py MAP write|check HANDLE SEED [sync]: writes or checks 3 pairs of
# pseudo-random data on I/O node 1 (the second group).
client() {
    python3 - "$@" <<'PYEOF'
import os, random, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, mode, handle, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
secret, ranks = P.read_map(mapfile)
addr = [r[:2] for r in ranks.values() if r[2] & 2 and r[3] == 1][0]   # I/O node 1
s = P.connect(addr, timeout=30)
def call(op, body):
    status, rbody = P.call(s, op, body)
    assert status == 0, (op, status, rbody)
    return rbody
assert P.hello(s, secret, 7)[0] == 0
rng = random.Random(seed)
pairs = [(0, 70000), (1 << 20, 4096), (5 << 20, 123457)]
data = bytes(rng.getrandbits(8) for _ in range(sum(l for _, l in pairs)))
io = struct.pack("<QII", handle, len(pairs), 0) + b"".join(struct.pack("<QQ", o, l) for o, l in pairs)
if mode == "write":
    call(21, io + data)
    if len(sys.argv) > 5:
        call(24, struct.pack("<QQ", handle, 0))
else:
    got = call(20, io)[24:]
    size = struct.unpack("<QQ", call(22, struct.pack("<QQ", handle, 0)))[0]
    assert got == data, "data differs after the restart"
    assert size == (5 << 20) + 123457, size
PYEOF
}

ipvfs_start_cluster 2 1 --target-size 128M --no-bind
client "$IPVFS_MAP" write 1001 1 sync || ipvfs_fail "write + DF_SYNC"
ipvfs_kill_cluster
ipvfs_start_cluster 2 1 --target-size 128M --no-bind
client "$IPVFS_MAP" check 1001 1 || ipvfs_fail "synced data lost by a crash of the cluster"
client "$IPVFS_MAP" write 1002 2 || ipvfs_fail "write without sync"
ipvfs_restart_cluster
client "$IPVFS_MAP" check 1002 2 || ipvfs_fail "data lost over a clean shutdown"
client "$IPVFS_MAP" check 1001 1 || ipvfs_fail "synced data lost over a clean restart"
ipvfs_stop_cluster
echo "t_server_durability: ok"
