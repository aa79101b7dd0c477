#!/bin/bash
# `ipvfs-ctl rebuild IO MEMBER URL` checks the replacement LUN without
# blocking the I/O node (1 I/O node x 3 targets, RAID-5, the plain launch of
# doc/launching.md).  The URL names a "blackhole": a socket that accepts the connect
# and never answers, so the check runs into its deadline (the I/O node's
# iSCSI timeout, 5 s).  Meanwhile a client reads from the I/O node in a
# loop: no read waits more than 1 s (a check that blocked the event loop
# would hold every read for the whole 5 s).  The rebuild is refused with
# a clear error and no member is taken out; a URL whose port nobody
# listens on is refused at once, naming the refused connection.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
blackhole_pid=
reader_pid=
ipvfs_test_cleanup() {
    [ -n "$blackhole_pid" ] && kill "$blackhole_pid" 2>/dev/null
    [ -n "$reader_pid" ] && kill "$reader_pid" 2>/dev/null
    blackhole_pid=
    reader_pid=
}

ipvfs_start_cluster 1 3 --raid 5 --target-size 64M --no-bind
dir=$IPVFS_CLUSTER_DIR

# The blackhole: accepts, holds the connections, never sends a byte.
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
' >"$dir/blackhole.port" &
blackhole_pid=$!
for ((i = 0; i < 100; i++)); do [ -s "$dir/blackhole.port" ] && break; sleep 0.1; done
port=$(cat "$dir/blackhole.port")
[ -n "$port" ] || ipvfs_fail "the blackhole listener did not start"

# The reader: writes 1 MiB, then reads it back until the file "stop"
# appears; prints the reads done and the longest one (seconds).
python3 - "$IPVFS_MAP" "$dir" >"$dir/reader.out" 2>&1 <<'PYEOF' &
import os, struct, sys, time
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, d = sys.argv[1], sys.argv[2]
secret, ranks = P.read_map(mapfile)
s = P.connect([r[:2] for r in ranks.values() if r[2] & 2][0], timeout=30)
def call(op, body):
    status, rbody = P.call(s, op, body)
    assert status == 0, (op, status, rbody)
    return rbody
io = struct.pack("<QII", 77, 1, 0) + struct.pack("<QQ", 0, 1 << 20)
assert P.hello(s, secret, 9)[0] == 0
data = os.urandom(1 << 20)
call(P.OP["WRITE"], io + data)
open(d + "/reader.ready", "w").close()
n, worst = 0, 0.0
while not os.path.exists(d + "/stop"):
    t = time.monotonic()
    assert call(P.OP["READ"], io)[24:] == data, "read differs"
    worst = max(worst, time.monotonic() - t)
    n += 1
print(n, "%.3f" % worst)
PYEOF
reader_pid=$!
for ((i = 0; i < 100; i++)); do [ -e "$dir/reader.ready" ] && break; sleep 0.1; done
[ -e "$dir/reader.ready" ] || ipvfs_fail "the reader did not start: $(cat "$dir/reader.out")"

url="iscsi://127.0.0.1:$port/iqn.2026-01.org.example:blackhole/0"
start=$(date +%s%N)
if ipvfs-ctl rebuild 0 1 "$url" 2>"$dir/err"; then
    ipvfs_fail "a rebuild onto a LUN that never answers was accepted"
fi
took=$((($(date +%s%N) - start) / 1000000))
touch "$dir/stop"
wait "$reader_pid" || ipvfs_fail "the reader failed: $(cat "$dir/reader.out")"
reader_pid=
read -r reads worst <"$dir/reader.out"
echo "rebuild onto the blackhole refused after $took ms: $(cat "$dir/err")"
echo "meanwhile $reads reads of 1 MiB, the longest $worst s"
python3 -c "import sys; sys.exit(0 if float('$worst') < 1.0 and int('$reads') >= 10 else 1)" ||
    ipvfs_fail "reads were held during the check: $reads reads, the longest $worst s"
grep -q "cannot log in to $url or read its capacity: .*within 5000 ms" "$dir/err" ||
    ipvfs_fail "unclear refusal: $(cat "$dir/err")"
[ "$took" -ge 4000 ] || ipvfs_fail "the check ended after $took ms, before its deadline"

# A port nobody listens on: refused at once, naming the cause.
kill "$blackhole_pid"
wait "$blackhole_pid" 2>/dev/null
blackhole_pid=
start=$(date +%s%N)
if ipvfs-ctl rebuild 0 1 "$url" 2>"$dir/err"; then
    ipvfs_fail "a rebuild onto a closed port was accepted"
fi
took=$((($(date +%s%N) - start) / 1000000))
echo "rebuild onto a closed port refused after $took ms: $(cat "$dir/err")"
grep -qi "cannot log in to $url or read its capacity: .*refused" "$dir/err" ||
    ipvfs_fail "unclear refusal: $(cat "$dir/err")"
[ "$took" -lt 3000 ] || ipvfs_fail "a refused connect took $took ms"

ipvfs-ctl status --json | python3 -c '
import json, sys
vol = json.load(sys.stdin)["ranks"][0]["volume"]
assert vol["missing"] == 0 and all(m["state"] == "up" for m in vol["members"]), vol' ||
    ipvfs_fail "a refused rebuild took a member out"
ipvfs_stop_cluster
echo "t_survive_rebuild_probe: ok"
