#!/bin/bash
# timeout: 240
# The I/O node's L1 cache (--cache-l1, write-back): on a RAID-5 I/O node
# (1 x 3 targets) with an 8 MiB L1, a 4 MiB datafile written in 1 MiB
# requests is read back twice from L1 (ipvfs-ctl stats --json: hits for
# every block), small unaligned overwrites (absorbed read-modify-writes)
# and random reads stay byte-exact against a model, a 24 MiB datafile (3x
# L1) read twice evicts dirty and clean blocks and stays exact; after a
# sync nothing is dirty, write-backs went out gathered and scrub finds
# parity right; unsynced writes
# survive a clean restart (flushed at shutdown); everything survives kill
# -9 and comes back with the cache off (--cache-l1 0: stats say so); the
# --trace file holds every pair served and replays in ipvfs-cachesim;
# malformed and too large sizes are refused at start.  Talks the protocol
# directly (test/ipvfs_proto.py).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

# client MAP MODE: MODE write (writes and checks, then syncs) or check.
client() {
    python3 - "$@" <<'PYEOF'
import os, random, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, mode = sys.argv[1], sys.argv[2]
secret, addr, s = P.io_node(mapfile)
def call(op, body):
    status, rbody = P.call(s, op, body)
    assert status == 0, (op, status, rbody)
    return rbody
def io(handle, pairs):
    return struct.pack("<QII", handle, len(pairs), 0) + b"".join(struct.pack("<QQ", o, l) for o, l in pairs)
def write(handle, model, off, data):
    call(P.OP["WRITE"], io(handle, [(off, len(data))]) + data)
    model[off:off + len(data)] = data
def read(handle, off, n):
    return call(P.OP["READ"], io(handle, [(off, n)]))[24:]  # after struct ipvfs_io_rep
def check_all(handle, model, step):
    for off in range(0, len(model), step):
        n = min(step, len(model) - off)
        assert read(handle, off, n) == bytes(model[off:off + n]), ("differs", handle, off)
assert P.hello(s, secret, 9)[0] == 0
rng = random.Random(13)
models = {77: bytearray(4 << 20), 78: bytearray(24 << 20)}
if mode == "write":
    for h, m in models.items():
        # 64 KiB WRITEs, which the L1 takes (a stream's whole stripes,
        # 128 KiB or more, pass it by: l1cache.h)
        for off in range(0, len(m), 1 << 16):
            write(h, m, off, rng.randbytes(1 << 16))
    print("phase full-reads")
    sys.stdout.flush()
    check_all(77, models[77], 1 << 20)
    check_all(77, models[77], 1 << 20)
    print("phase overwrites")
    sys.stdout.flush()
    for _ in range(200):
        h = rng.choice([77, 78])
        off = rng.randrange(len(models[h]) - 5000)
        write(h, models[h], off, rng.randbytes(rng.randrange(1, 5000)))
    for _ in range(300):
        h = rng.choice([77, 78])
        off, n = rng.randrange(len(models[h]) - 70000), rng.randrange(1, 70000)
        assert read(h, off, n) == bytes(models[h][off:off + n]), ("random read differs", h, off, n)
    check_all(78, models[78], 1 << 20)
    check_all(78, models[78], 1 << 20)
    call(P.OP["DF_SYNC"], struct.pack("<QQ", 0, 0))
    open(os.environ["MODEL"], "wb").write(bytes(models[77]) + bytes(models[78]))
elif mode == "write-nosync":
    # Absorbed by the L1 and left unsynced: a clean shutdown must flush it.
    m = bytearray(1 << 20)
    for _ in range(64):
        off = rng.randrange(len(m) - 3000)
        write(79, m, off, rng.randbytes(rng.randrange(1, 3000)))
    open(os.environ["MODEL"] + ".79", "wb").write(bytes(m))
elif mode == "check-nosync":
    m = bytearray(open(os.environ["MODEL"] + ".79", "rb").read())
    check_all(79, m, 1 << 20)
else:
    saved = open(os.environ["MODEL"], "rb").read()
    models[77][:] = saved[:4 << 20]
    models[78][:] = saved[4 << 20:]
    check_all(77, models[77], 1 << 20)
    check_all(78, models[78], 1 << 20)
PYEOF
}

# l1 FIELD: the I/O node's L1 counter FIELD from ipvfs-ctl stats --json.
l1() {
    ipvfs-ctl stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([r for r in d["ranks"] if "l1" in r][0]["l1"][sys.argv[1]])' "$1"
}

export MODEL=$(mktemp /tmp/ipvfs-l1model.XXXXXX)
trace=$MODEL.trace
ipvfs_test_cleanup() { rm -f "$MODEL" "$MODEL.79" "$trace.io0"; }

ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 8M --trace "$trace"
[ "$(l1 capacity_bytes)" = $((8 << 20)) ] || ipvfs_fail "the L1 is not 8 MiB"
client "$IPVFS_MAP" write || ipvfs_fail "write and read back through the L1"
hits=$(l1 hits) misses=$(l1 misses) ev=$(l1 evictions) upd=$(l1 write_updates)
absorbed=$(l1 writes_absorbed) wb=$(l1 writebacks) wbios=$(l1 writeback_ios)
echo "L1: $hits hits, $misses misses, $ev evictions, $upd write updates, $absorbed absorbed," \
     "$wb blocks written back in $wbios writes"
# The client's last step was a sync: nothing may be left dirty.
[ "$(l1 dirty_bytes)" = 0 ] || ipvfs_fail "$(l1 dirty_bytes) bytes dirty after a sync"
# Write-back: writes absorbed, and written back gathered (runs of blocks).
[ "$absorbed" -gt 0 ] || ipvfs_fail "no write absorbed by the L1"
[ "$wbios" -gt 0 ] && [ "$wbios" -lt "$wb" ] || ipvfs_fail "write-backs not gathered: $wb in $wbios"

# A quarter of the L1 is read-ahead's pool (--readahead on by default),
# holding only prefetched blocks not yet read: 6 to 8 MiB are in use.
ipvfs-ctl stats | grep -E 'L1 cache: [678] of 8 MiB used, .* writes absorbed' ||
    ipvfs_fail "no L1 line in ipvfs-ctl stats"
# The 4 MiB datafile, written in whole blocks, is read twice from L1 (128
# block reads); the 24 MiB one cannot stay (3x L1), so it evicts and misses.
[ "$hits" -ge 128 ] || ipvfs_fail "only $hits L1 hits"
[ "$ev" -gt 0 ] && [ "$misses" -gt 0 ] || ipvfs_fail "no evictions or misses with 3x L1 of data"
[ "$upd" -ge 448 ] || ipvfs_fail "only $upd write updates for 28 MiB written in whole blocks"
# Parity agrees with the data the write-backs put on the RAID-5 members.
ipvfs-ctl scrub || ipvfs_fail "scrub found parity that disagrees after write-backs"
# Unsynced absorbed writes reach the targets on a clean shutdown.
client "$IPVFS_MAP" write-nosync || ipvfs_fail "unsynced writes"
ipvfs_restart_cluster
client "$IPVFS_MAP" check-nosync || ipvfs_fail "unsynced writes lost over a clean shutdown"
ipvfs_kill_cluster
# --trace: every pair the I/O node served, replayable by ipvfs-cachesim.
lines=$(grep -c '^[0-9]' "$trace.io0") || ipvfs_fail "no trace written"
ipvfs-cachesim --trace "$trace.io0" --replay requests --servers 4 --targets 3 --l1 8M --l2 1M \
    --pvfs 8M --json \
    >"$MODEL.sim" || ipvfs_fail "the trace does not replay"
python3 - "$MODEL.sim" "$lines" <<'PY' || ipvfs_fail "replay counts"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["requests"] == int(sys.argv[2]) and d["io_nodes"] == 1, d
assert d["accesses"] >= 2 * 448, d["accesses"]   # 28 MiB written and read at least
print("replayed %d requests, %d block accesses: simulated L1 hit ratio %.3f"
      % (d["requests"], d["accesses"], d["ucache"]["l1"]))
PY
rm -f "$MODEL.sim"
ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 0
client "$IPVFS_MAP" check || ipvfs_fail "synced data lost after kill -9 with the L1 on"
client "$IPVFS_MAP" check-nosync || ipvfs_fail "flushed data lost after kill -9"
[ "$(l1 capacity_bytes)" = 0 ] && [ "$(l1 hits)" = 0 ] || ipvfs_fail "--cache-l1 0 still caches"
ipvfs-ctl stats | grep -q 'L1 cache: off' || ipvfs_fail "stats do not say the L1 is off"
ipvfs_stop_cluster

# Refused at start, with the option named: a malformed size, a size that
# is not whole 64 KiB blocks, and more than half of this machine's memory.
for bad in 12Q 1000 1T; do
    out=$(mpiexec -n 2 "$IPVFS_SERVER_BIN" --io-nodes 1 --targets-per-io 1 --no-bind \
          --data "$IPVFS_CLUSTER_DIR/bad" --cache-l1 "$bad" 2>&1) && ipvfs_fail "--cache-l1 $bad accepted"
    echo "$out" | grep -q -- '--cache-l1' || ipvfs_fail "--cache-l1 $bad: no clear error: $out"
done
echo "t_server_l1cache: ok"
