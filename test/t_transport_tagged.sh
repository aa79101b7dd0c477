#!/bin/bash
# Several requests in flight on one connection, tagged replies (protocol
# 5, common/proto.h), at a real I/O node (1 x 2 targets, RAID-0), talking
# the protocol directly (test/ipvfs_proto.py):
# - HELLO's reply states the window (8 requests, 8 MiB, IPVFS_MAX_BODY);
# - with both targets stopped (SIGSTOP), a WRITE of new blocks cannot
#   finish, yet a READ sent after it on the same connection is answered
#   first, under its own tag; the WRITE's reply follows once the targets
#   go on; a 1 MiB file read back as 4 pipelined pieces matches by tag;
# - the server reads no more than 8 requests of a connection at once: the
#   9th request's reply does not come while the first 8 are stuck;
# - 8 READs of one connection from client id 0xffffffff wait for the I/O
#   node's READ places and are all answered (no division by zero);
# - with 8 connections holding 64 MiB (the server's bound on WRITE data)
#   in stuck WRITEs, a 9th connection's WRITE is not read until they
#   finish, while another connection's STATUS is served meanwhile;
# - a request body over the stated bound closes that connection with a
#   logged reason, and the server goes on serving another connection;
# - a version-4 HELLO is refused with EPROTONOSUPPORT naming both versions.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

# --cache-l1 0: a WRITE must reach the (stopped) targets to complete; with
# the L1 on, first writes are absorbed and nothing would be stuck
ipvfs_start_cluster 1 2 --target-size 64M --no-bind --raid 0 --cache-l1 0
read -r -a pids <<<"$(ipvfs_serving_pids)" || ipvfs_fail "no serving pids"
[ "${#pids[@]}" -eq 3 ] || ipvfs_fail "expected 3 ranks, got ${pids[*]}"

python3 - "$IPVFS_MAP" "${pids[1]}" "${pids[2]}" <<'PYEOF' || ipvfs_fail "tagged-reply checks failed"
import errno, os, select, signal, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, targets = sys.argv[1], [int(p) for p in sys.argv[2:]]
secret, ranks = P.read_map(mapfile)
addr = [r[:2] for r in ranks.values() if r[2] & 2][0]
PROGRESS = P.OP["PROGRESS"] | P.REPLY
MAX_BODY = (8 << 20) + 16384 * 16 + 4096

def reply(s):
    """The next reply, keepalives skipped."""
    while True:
        r = P.reply(s)
        if r is None or r[0] != PROGRESS:
            return r

def quiet(s, secs):
    """True when nothing but keepalives arrives within secs."""
    while True:
        ready, _, _ = select.select([s], [], [], secs)
        if not ready:
            return True
        h = P.recv_exact(s, P.HDR.size)
        if h is None or P.HDR.unpack(h)[2] != PROGRESS:
            return False

def io(handle, pairs):
    return struct.pack("<QII", handle, len(pairs), 0) + b"".join(struct.pack("<QQ", o, l) for o, l in pairs)

def pattern(off, n):
    return bytes(((off + i) * 7 + (off + i) // 65536) & 0xFF for i in range(n))

def authed():
    s = P.connect(addr, timeout=30)
    status, body = P.hello(s, secret)
    assert status == 0 and len(body) == 88, ("HELLO", status, len(body))
    return s, body

def closed(s):
    """True when the server closed s (a reset counts: unread bytes were left)."""
    try:
        return P.recv_exact(s, 1) is None
    except ConnectionResetError:
        return True

def stop(sig):
    for p in targets:
        os.kill(p, sig)

s, hello = authed()
rank, role, inflight, _, window, max_body = struct.unpack("<IIIIQQ", hello[:32])
assert (inflight, window, max_body) == (8, 8 << 20, MAX_BODY), (inflight, window, max_body)
print("ok   HELLO states the window: %d requests, %d bytes, body up to %d" % (inflight, window, max_body))

# a WRITE stuck on stopped targets does not hold back a later READ
stop(signal.SIGSTOP)
try:
    P.send(s, P.OP["WRITE"], io(0x51, [(0, 65536)]) + pattern(0, 65536), req_id=100)
    P.send(s, P.OP["READ"], io(0x52, [(0, 4096)]), req_id=101)
    r = reply(s)
    assert r is not None and r[2] == 101 and r[1] in (0, errno.ENOENT), ("first reply", r and r[:3])
    print("ok   the later READ is answered first (tag 101) while the WRITE waits for the targets")
finally:
    stop(signal.SIGCONT)
r = reply(s)
assert r is not None and r[2] == 100 and r[1] == 0, ("WRITE reply", r and r[:3])
print("ok   the WRITE's reply follows under its own tag (100)")

# a 1 MiB file written and read back as 4 pipelined pieces, matched by tag
piece = 256 << 10
for k in range(4):
    P.send(s, P.OP["WRITE"], io(0x53, [(k * piece, piece)]) + pattern(k * piece, piece), req_id=200 + k)
got = {}
for _ in range(4):
    r = reply(s)
    assert r is not None and r[1] == 0, ("piece WRITE", r and r[:3])
    got[r[2]] = 1
assert sorted(got) == [200, 201, 202, 203], sorted(got)
for k in range(4):
    P.send(s, P.OP["READ"], io(0x53, [(k * piece, piece)]), req_id=300 + k)
order = []
for _ in range(4):
    r = reply(s)
    assert r is not None and r[1] == 0, ("piece READ", r and r[:3])
    k = r[2] - 300
    assert 0 <= k < 4 and r[3][24:] == pattern(k * piece, piece), ("piece %d differs" % k)
    order.append(k)
assert sorted(order) == [0, 1, 2, 3], order
print("ok   4 pipelined pieces match by tag (replies came as %s)" % order)

# the window: a 9th request is not read while 8 are stuck
stop(signal.SIGSTOP)
try:
    for k in range(8):
        P.send(s, P.OP["WRITE"], io(0x60 + k, [(0, 4096)]) + pattern(0, 4096), req_id=400 + k)
    P.send(s, P.OP["READ"], io(0x52, [(0, 4096)]), req_id=408)
    assert quiet(s, 1.5), "a reply came while 8 requests were stuck"
    print("ok   the 9th request waits while 8 are in flight")
finally:
    stop(signal.SIGCONT)
tags = sorted(reply(s)[2] for _ in range(9))
assert tags == list(range(400, 409)), tags
print("ok   all 9 answered once the targets go on")

# READs of one connection waiting for the I/O node's READ places (NT of
# them) must not trip its read ordering, even from the largest client id
# (ipvfs-ctl's, once a division by zero)
big = P.connect(addr, timeout=30)
assert P.hello(big, secret, client_id=0xFFFFFFFF)[0] == 0
stop(signal.SIGSTOP)
try:
    for k in range(6):
        P.send(big, P.OP["READ"], io(0x70 + k, [(0, 65536)]), req_id=600 + k)
    P.send(big, P.OP["READ"], io(0x53, [(0, piece)]), req_id=606)
    P.send(big, P.OP["READ"], io(0x53, [(piece, piece)]), req_id=607)
finally:
    stop(signal.SIGCONT)
tags = sorted(reply(big)[2] for _ in range(8))
assert tags == list(range(600, 608)), tags
print("ok   8 READs waiting for places from client id 0xffffffff all answered")

# the server's bound on WRITE data over all connections (64 MiB): with 8
# WRITEs of 8 MiB on 8 connections stuck, a 9th connection's WRITE is not
# read, but a request that holds no WRITE data is (the other pool: stuck
# writes hold back nothing that does not need them, reqorder_pool)
writers = [authed()[0] for _ in range(8)]
late, _ = authed()
other, _ = authed()
data = pattern(0, 65536) * 128
stop(signal.SIGSTOP)
try:
    for k, w in enumerate(writers):
        P.send(w, P.OP["WRITE"], io(0x80 + k, [(0, len(data))]) + data, req_id=700 + k)
    P.send(late, P.OP["WRITE"], io(0x90, [(0, 4096)]) + pattern(0, 4096), req_id=710)
    assert quiet(late, 1.5), "a 9th connection's WRITE was served past the server's bound"
    P.send(other, P.OP["STATUS"], req_id=720)   # needs no store and no WRITE room
    r = reply(other)
    assert r is not None and r[2] == 720 and r[1] == 0, ("STATUS behind stuck writes", r and r[:3])
    print("ok   at 64 MiB of WRITEs in flight a 9th WRITE waits, a STATUS is served")
finally:
    stop(signal.SIGCONT)
for k, w in enumerate(writers):
    r = reply(w)
    assert r is not None and r[2] == 700 + k and r[1] == 0, ("big WRITE", r and r[:3])
r = reply(late)
assert r is not None and r[2] == 710 and r[1] == 0, r and r[:3]
print("ok   all answered once the targets go on")

# a body over the bound closes that connection; others go on
bad, _ = authed()
P.send(bad, P.OP["WRITE"], body_len=MAX_BODY + 1, req_id=500)
r = reply(bad)
assert r is not None and r[1] == errno.EMSGSIZE and b"over the bound" in r[3], r
assert closed(bad), "connection left open"
status, body = P.call(s, P.OP["STATUS"])
assert status == 0, status
print("ok   a body over the bound: EMSGSIZE, closed; the other connection still served")

# an older client is refused clearly
old = P.connect(addr, timeout=30)
P.send(old, P.OP["HELLO"], secret + struct.pack("<II", 1, 0), version=4)
r = P.reply(old)
assert r is not None and r[1] == errno.EPROTONOSUPPORT, r
assert b"protocol version 4" in r[3] and b"version %d" % P.VERSION in r[3], r[3]
assert closed(old), "connection left open"
print("ok   version-4 HELLO refused: %s" % r[3].rstrip(b"\0").decode())
PYEOF
ipvfs_wait_log "request body of [0-9]+ bytes exceeds the bound" ||
    ipvfs_fail "the closed connection's reason is not in the log"
echo "ok   the reason is logged"
ipvfs_stop_cluster
echo "PASS"
