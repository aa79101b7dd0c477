"""A minimal client of the iPVFS wire protocol for the integration tests.

Constants come from common/proto.h itself, so the tests follow the header
(a version bump there needs no edit here).  Import it from a test's inline
Python with:  sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
"""
import hashlib
import hmac
import os
import re
import socket
import struct

_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common", "proto.h")


def _defines(path):
    text = open(path).read()
    vals = {m.group(1): int(m.group(2), 0)
            for m in re.finditer(r"#define\s+(IPVFS_\w+)\s+\(?(0x[0-9a-fA-F]+|\d+)u?\)?\s", text)}
    vals.update({m.group(1): int(m.group(2), 0)
                 for m in re.finditer(r"\b(IPVFS_(?:OP|AUTH)_\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)", text)})
    return vals


D = _defines(_HEADER)
MAGIC, VERSION, REPLY = D["IPVFS_PROTO_MAGIC"], D["IPVFS_PROTO_VERSION"], D["IPVFS_OP_REPLY"]
OP = {k[len("IPVFS_OP_"):]: v for k, v in D.items() if k.startswith("IPVFS_OP_")}
HDR = struct.Struct("<IHHIIQQ")


def read_map(path):
    """(secret bytes, {rank: (host, port, role, io_index)}) of a server map;
    the secret is the key file's the map names (None when unreadable)."""
    secret, ranks = None, {}
    for line in open(path):
        w = line.split()
        if w and w[0] == "secret":
            secret = bytes.fromhex(w[1])
        elif w and w[0] == "key":
            try:
                secret = open(w[1], "rb").read()
            except OSError:
                secret = None
        elif w and w[0] == "rank":
            ranks[int(w[1])] = (w[5], int(w[6]), int(w[2]), int(w[3]))
    return secret, ranks


def recv_exact(s, n):
    """n bytes, or None when the peer closed first."""
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def send(s, op, body=b"", flags=0, magic=MAGIC, version=VERSION, body_len=None, req_id=7):
    s.sendall(HDR.pack(magic, version, op, 0, flags, req_id,
                       len(body) if body_len is None else body_len) + body)


def reply(s):
    """(op, status, req_id, body) of the next reply, or None at EOF."""
    h = recv_exact(s, HDR.size)
    if h is None:
        return None
    _magic, _version, op, status, _flags, req_id, blen = HDR.unpack(h)
    body = recv_exact(s, blen) if blen else b""
    return op, status, req_id, body


PROGRESS = OP["PROGRESS"] | REPLY


def call(s, op, body=b"", flags=0):
    """(status, body) of one request; keepalives (sent while a request
    waits IPVFS_PROGRESS_MS or more, common/proto.h) are skipped, as
    clients do.  reply() returns them, for tests that look for them."""
    send(s, op, body, flags)
    while True:
        r = reply(s)
        assert r is not None, "connection closed by the server"
        if not (r[0] == PROGRESS and not r[3]):
            return r[1], r[3]


def call_ok(s, op, body=b""):
    """The body of the reply to one request that must succeed."""
    status, rbody = call(s, op, body)
    assert status == 0, (op, status, rbody)
    return rbody


def server_proof(key, nonce_c, nonce_s):
    return hmac.new(key, b"iPVFS server" + nonce_c + nonce_s, hashlib.sha256).digest()


def client_proof(key, nonce_s, nonce_c, client_id):
    return hmac.new(key, b"iPVFS client" + nonce_s + nonce_c + struct.pack("<I", client_id),
                    hashlib.sha256).digest()


def hello(s, secret, client_id=4242, nonce_c=None):
    """HELLO and AUTH (common/auth.h) with the key secret: (status, body) of
    HELLO's reply when both succeed, else of the first that failed.  The
    server must prove the key in its reply."""
    nonce_c = nonce_c or os.urandom(16)
    status, body = call(s, OP["HELLO"], struct.pack("<II", client_id, 0) + nonce_c)
    if status != 0:
        return status, body
    nonce_s, proof = body[32:48], body[48:80]
    assert hmac.compare_digest(proof, server_proof(secret, nonce_c, nonce_s)), \
        "the server does not prove the cluster key"
    status, abody = call(s, OP["AUTH"], auth_body(D["IPVFS_AUTH_KEY"],
                                                  client_proof(secret, nonce_s, nonce_c, client_id)))
    return (status, abody) if status else (0, body)


def auth_body(method, proof=bytes(32), cred=b""):
    """AUTH's body (struct ipvfs_auth_req, then the credential)."""
    return proof + struct.pack("<II", method, len(cred)) + cred


CAP = struct.Struct("<QIIqQ32s")   # struct ipvfs_cap


def cap_mac(key, handle, rights, uid, expires_ms):
    """auth_cap_mac: HMAC-SHA256 over the label and the fields before mac."""
    return hmac.new(key, b"iPVFS capability" + CAP.pack(handle, rights, uid, expires_ms, 0,
                                                         bytes(32))[:32], hashlib.sha256).digest()


def connect(addr, timeout=10):
    return socket.create_connection(addr, timeout=timeout)


def io_node(mapfile, timeout=30):
    """(secret, addr, socket) of a connection to the map's first I/O node
    (no HELLO sent yet)."""
    secret, ranks = read_map(mapfile)
    addr = [r[:2] for r in ranks.values() if r[2] & 2][0]
    return secret, addr, connect(addr, timeout=timeout)
