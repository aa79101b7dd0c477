#!/bin/bash
# timeout: 180
# Malformed and hostile requests get an error reply and/or a closed
# connection, never a crash or a hang: the server keeps serving the other
# connections and `ipvfs-ctl status` still works afterwards.  Uses a small
# cluster (1 I/O node x 1 target) and a raw-socket client in python3.
#
# With IPVFS_BADINPUT_MAP=FILE it only runs the client against that running
# cluster (t_server_asan.sh does so under AddressSanitizer).
set -u

badinput_checks() {
    python3 - "$1" <<'PYEOF'
import errno, os, socket, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
from ipvfs_proto import MAGIC, VERSION, REPLY, HDR, send, reply

globals().update({k: v for k, v in P.OP.items() if k != "REPLY"})   # HELLO, LOOKUP, ...
EACCES, EINVAL, EPROTO, EMSGSIZE, EOPNOTSUPP, EPROTONOSUPPORT = 13, 22, 71, 90, 95, 93

secret, ranks = P.read_map(sys.argv[1])
failures = []

def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)

def connect(rank=0):
    return P.connect(ranks[rank][:2])

def is_closed(s):
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, socket.timeout):
        return False

def hello(s, sec=None, client_id=4242, nonce_c=None, keep=None):
    """HELLO and AUTH with key sec: the reply of HELLO if it failed, else
    AUTH's.  keep (a dict) receives the nonces and AUTH's body."""
    nonce_c = nonce_c or os.urandom(16)
    send(s, HELLO, struct.pack("<II", client_id, 0) + nonce_c)
    r = reply(s)
    if r is None or r[1] != 0:
        return r
    nonce_s = r[3][32:48]
    proof = P.client_proof(sec or secret, nonce_s, nonce_c, client_id)
    if keep is not None:
        keep.update(nonce_c=nonce_c, nonce_s=nonce_s, proof=proof)
    send(s, AUTH, P.auth_body(P.D["IPVFS_AUTH_KEY"], proof))
    return reply(s)

def authed(rank=0):
    s = connect(rank)
    r = hello(s)
    assert r and r[1] == 0, r
    return s

def path_req(path):
    return struct.pack("<II", len(path), 0) + path

def mkdir_req(path, mode=0o755):
    return struct.pack("<IIII", len(path), mode, 0, 0) + path

def lookup_req(path, flags=1, factor=0, unit=0, path_len=None, mode=0o644):
    return struct.pack("<IIQIIII", flags, factor, unit,
                       len(path) if path_len is None else path_len, mode, 0, 0) + path

# -- framing errors: an error reply, then the connection closes
s = connect(); send(s, STATUS, magic=0x12345678); r = reply(s)
check(r is not None and r[1] == EPROTO and is_closed(s), "wrong magic -> EPROTO + close")
# another version: refused in a reply of that version, with a message
s = connect(); send(s, STATUS, version=VERSION - 1); r = reply(s)
check(r is not None and r[1] == EPROTONOSUPPORT and is_closed(s) and
      b"protocol version %d" % (VERSION - 1) in r[3], "older version -> EPROTONOSUPPORT + close")
s = authed(); send(s, 999); r = reply(s)
check(r is not None and r[1] == EPROTO and is_closed(s), "unknown op -> EPROTO + close")
s = authed(); send(s, STATUS | REPLY); r = reply(s)
check(r is not None and r[1] == EPROTO and is_closed(s), "reply op from a client -> EPROTO + close")
s = authed(); send(s, WRITE, body_len=1 << 40); r = reply(s)
check(r is not None and r[1] == EMSGSIZE and is_closed(s), "huge body_len -> EMSGSIZE + close")

# -- a truncated body: the peer vanishes mid-request; a stalled one stays open meanwhile
s = authed(); send(s, WRITE, body=b"x" * 10, body_len=100); s.close()
stalled = authed(); send(stalled, WRITE, body=b"x" * 10, body_len=100)

# -- authentication
s = connect(); send(s, LOOKUP, lookup_req(b"/f", flags=0)); r = reply(s)
check(r is not None and r[1] == EACCES and is_closed(s), "request before HELLO -> EACCES + close")
s = connect(); send(s, STATUS); r = reply(s)
check(r is not None and r[1] == 0, "STATUS before HELLO -> 0 (status is open to all)")
s = connect(); r = hello(s, sec=bytes(32))
check(r is not None and r[1] == EACCES and is_closed(s), "wrong key -> EACCES at AUTH + close")
s = connect(); send(s, HELLO, secret); r = reply(s)
check(r is not None and r[1] == EINVAL and is_closed(s), "HELLO of the old form -> EINVAL + close")
s = connect(); send(s, AUTH, P.auth_body(P.D["IPVFS_AUTH_KEY"])); r = reply(s)
check(r is not None and r[1] == EPROTO and is_closed(s), "AUTH before HELLO -> EPROTO + close")
s = connect(); send(s, HELLO, struct.pack("<II", 1, 0) + bytes(16)); r = reply(s)
send(s, LOOKUP, lookup_req(b"/f", flags=0)); r = reply(s)
check(r is not None and r[1] == EACCES and is_closed(s), "a request between HELLO and AUTH -> EACCES + close")
s = connect(); send(s, HELLO, struct.pack("<II", 1, 0) + bytes(16)); r = reply(s)
send(s, HELLO, struct.pack("<II", 1, 0) + bytes(16)); r = reply(s)
check(r is not None and r[1] == EPROTO and is_closed(s), "a second HELLO -> EPROTO + close")
# a replayed AUTH: a client's exchange captured, played again on a new
# connection with the same client nonce; the server's nonce is new
seen = {}
s = connect(); r = hello(s, keep=seen)
check(r is not None and r[1] == 0, "HELLO and AUTH with the key -> 0")
s.close()
s = connect(); send(s, HELLO, struct.pack("<II", 4242, 0) + seen["nonce_c"]); r = reply(s)
check(r is not None and r[1] == 0 and r[3][32:48] != seen["nonce_s"], "a new server nonce per connection")
send(s, AUTH, P.auth_body(P.D["IPVFS_AUTH_KEY"], seen["proof"])); r = reply(s)
check(r is not None and r[1] == EACCES and is_closed(s), "replayed AUTH -> EACCES + close")
s = connect(); s.sendall(os.urandom(64)); r = reply(s)
check(r is None or r[1] == EPROTO, "random bytes -> EPROTO or close")

# -- body errors: EINVAL, and the connection goes on
s = authed()
def einval(op, body, what, expect=EINVAL):
    send(s, op, body); r = reply(s)
    check(r is not None and r[1] == expect, what + " -> %d (got %s)" % (expect, r and r[1]))
einval(LOOKUP, lookup_req(b"noslash"), "path without '/'")
einval(LOOKUP, lookup_req(b"/a/../b"), "path with '..'")
einval(LOOKUP, lookup_req(b"/a\0b"), "path with a NUL")
einval(LOOKUP, lookup_req(b"/a//b"), "path with an empty component")
einval(LOOKUP, lookup_req(b"/abc", path_len=400), "path_len beyond the body")
einval(LOOKUP, lookup_req(b"/f", factor=99), "stripe factor over the I/O node count")
einval(LOOKUP, lookup_req(b"/f", unit=(1 << 30) + 1), "stripe unit over 1 GiB")
einval(LOOKUP, b"\1\2", "LOOKUP body shorter than its header")
einval(MKDIR, mkdir_req(b"/x")[:-1], "MKDIR path_len disagrees")
einval(MKDIR, mkdir_req(b"/x", mode=0o170000), "MKDIR mode beyond 07777")
einval(LOOKUP, lookup_req(b"/f", mode=0o100644), "LOOKUP mode beyond 07777")
einval(SETATTR, struct.pack("<IIIIqqII", 0x1000, 0, 0, 0, 0, 0, 2, 0) + b"/f", "SETATTR unknown field")
einval(SETATTR, struct.pack("<IIIIqqII", 1, 0, 0, 0, 0, 0, 9, 0) + b"/f", "SETATTR path_len disagrees")
einval(RENAME, struct.pack("<IIII", 0, 2, 9, 0) + b"/a/b", "RENAME lengths disagree")
einval(RENAME, struct.pack("<IIII", 0x10, 2, 2, 0) + b"/a/b", "RENAME unknown flag")
einval(GETATTR, path_req(b"/x")[:-1], "GETATTR path_len disagrees")
einval(READ, struct.pack("<QII", 5, 1000, 0) + struct.pack("<QQ", 0, 10), "READ lying npairs")
einval(READ, struct.pack("<QII", 5, 1, 0) + struct.pack("<QQ", 0, 1 << 40), "READ pair too long")
einval(READ, struct.pack("<QII", 5, 20000, 0), "READ too many pairs")
einval(READ, struct.pack("<QII", 0, 1, 0) + struct.pack("<QQ", 0, 10), "READ of handle 0")
einval(WRITE, struct.pack("<QII", 5, 1, 0) + struct.pack("<QQ", 0, 10) + b"short",
       "WRITE data shorter than its pairs")
einval(DF_GETSIZE, struct.pack("<Q", 5), "DF body too short")
einval(DF_GETSIZE, struct.pack("<QQ", 0, 0), "DF_GETSIZE of handle 0")
send(s, MKDIR, mkdir_req(b"/bad/dir")); r = reply(s)
check(r is not None and r[1] in (0, 17), "MKDIR /bad/dir")
einval(11, path_req(b"/bad/dir"), "REMOVE of a directory without IPVFS_REMOVE_DIR", expect=21)
einval(11, struct.pack("<II", 8, 0x40) + b"/bad/dir", "REMOVE with an unknown flag")
send(s, SHUTDOWN, flags=0x80); r = reply(s)
check(r is not None and r[1] == EINVAL, "SHUTDOWN with an unknown flag -> EINVAL")
send(s, STATUS, b"junk"); r = reply(s)
check(r is not None and r[1] == EINVAL, "STATUS with a body -> EINVAL")
send(s, STATUS); r = reply(s)
check(r is not None and r[1] == 0 and len(r[3]) >= 128, "STATUS on the same connection works")

# -- pipelined requests are answered in order
s.sendall(HDR.pack(MAGIC, VERSION, STATUS, 0, 0, 101, 0) + HDR.pack(MAGIC, VERSION, STATUS, 0, 0, 102, 0))
r1, r2 = reply(s), reply(s)
check(r1 and r2 and (r1[2], r2[2]) == (101, 102), "pipelined requests answered in order")

# -- the data path of the I/O node: write, read back, holes read as zeros
h = 0x5eed0001
data = b"hello" + b"abc"
send(s, WRITE, struct.pack("<QII", h, 2, 0) + struct.pack("<QQQQ", 0, 5, 4096, 3) + data)
r = reply(s)
ok = r is not None and r[1] == 0 and struct.unpack("<QQ", r[3][:16]) == (8, 4099)
check(ok, "WRITE two pairs -> 8 bytes, df_size 4099 (got %r)" % ((r[1], r[3][:16]) if r else None,))
send(s, READ, struct.pack("<QII", h, 3, 0) + struct.pack("<QQQQQQ", 0, 5, 4096, 3, 8000, 10))
r = reply(s)
check(r is not None and r[1] == 0 and r[3][24:] == data + bytes(10), "READ back, past EOF zero-filled")
send(s, DF_SYNC, struct.pack("<QQ", h, 0)); r = reply(s)
check(r is not None and r[1] == 0, "DF_SYNC")
send(s, DF_GETSIZE, struct.pack("<QQ", h, 0)); r = reply(s)
check(r is not None and r[1] == 0 and struct.unpack("<QQ", r[3])[0] == 4099, "DF_GETSIZE")
send(s, DF_REMOVE, struct.pack("<QQ", h, 0)); r = reply(s)
check(r is not None and r[1] == 0, "DF_REMOVE")

# -- the largest request: 8 MiB in two pairs, written and read back whole
big = os.urandom(8 << 20)
pairs = struct.pack("<QQQQ", 0, 3 << 20, 16 << 20, 5 << 20)
send(s, WRITE, struct.pack("<QII", h + 1, 2, 0) + pairs + big); r = reply(s)
check(r is not None and r[1] == 0 and struct.unpack("<QQ", r[3][:16]) == (8 << 20, 21 << 20),
      "8 MiB WRITE")
send(s, READ, struct.pack("<QII", h + 1, 2, 0) + pairs); r = reply(s)
check(r is not None and r[1] == 0 and r[3][24:] == big, "8 MiB READ back")
send(s, READ, struct.pack("<QII", h + 1, 1, 0) + struct.pack("<QQ", 0, (8 << 20) + 1)); r = reply(s)
check(r is not None and r[1] == EINVAL, "READ over 8 MiB -> EINVAL")
send(s, DF_REMOVE, struct.pack("<QQ", h + 1, 0)); r = reply(s)
check(r is not None and r[1] == 0, "DF_REMOVE of the big datafile")

# -- an op this rank does not serve: EOPNOTSUPP, connection stays
t = authed(1)
send(t, LOOKUP, lookup_req(b"/x")); r = reply(t)
check(r is not None and r[1] == EOPNOTSUPP, "LOOKUP to a target -> EOPNOTSUPP")
send(t, SHUTDOWN); r = reply(t)
check(r is not None and r[1] == EINVAL, "cluster SHUTDOWN to a non-zero rank -> EINVAL")
send(t, STATUS); r = reply(t)
check(r is not None and r[1] == 0, "target still answers STATUS")

stalled.close()
s = authed(); send(s, STATUS); r = reply(s)
check(r is not None and r[1] == 0, "a fresh connection still works")
sys.exit(1 if failures else 0)
PYEOF
}

if [ -n "${IPVFS_BADINPUT_MAP:-}" ]; then
    badinput_checks "$IPVFS_BADINPUT_MAP"
    exit
fi

. "$IPVFS_SRCDIR/test/lib.sh"
ipvfs_start_cluster 1 1 --target-size 64M --no-bind
badinput_checks "$IPVFS_MAP" || ipvfs_fail "bad-input checks failed"
ipvfs-ctl status >/dev/null || ipvfs_fail "status failed after the bad input"
ipvfs-ctl mkdir /still/alive || ipvfs_fail "metadata service failed after the bad input"
ipvfs_stop_cluster
if ipvfs_logs | grep -E "AddressSanitizer|Segmentation|SIGSEGV|core dumped"; then
    ipvfs_fail "the server crashed"
fi
echo "t_server_badinput: ok"
