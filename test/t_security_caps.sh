#!/bin/bash
# timeout: 180
# The protocol's own defences, tried as a hostile user would with a raw
# socket (python3, test/ipvfs_proto.py), run as a user made here
# (useradd) on a 2 I/O node x 1 target cluster started by root:
# - a forged owner (another uid or gid in LOOKUP's create or MKDIR) is
#   refused with EPERM;
# - AUTH KERNEL without a claim, a claim of an unknown nonce and a second
#   claim of one nonce are refused;
# - an I/O node refuses READ and WRITE without a capability, with one that
#   lacks the right, with a tampered one, with one signed by another key
#   and with an expired one;
# - a MUNGE credential (a private munged) proves the user; the same
#   credential replayed on another connection is refused;
# - a capability that expires while its file is open is renewed;
# and A's file is byte for byte what A wrote; the refusals are logged.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/security_lib.sh"
sec_require
A=ipvfs-sa B=ipvfs-sb
work=$(mktemp -d "${TMPDIR:-/tmp}/t_security_caps.XXXXXX") || ipvfs_fail "no scratch directory"
chmod 755 "$work"
SEC_HOME=$work
ipvfs_test_cleanup() {
    sec_munged_stop
    rm -rf "$work"
    sec_users_remove
}
sec_users_make "$A" "$B"
cd "$work" && mkdir -m 777 out || ipvfs_fail "cannot enter $work"
as() { sec_as "$@"; }

# a private munged (as every Slurm node runs one), its socket open to users
munge_args=()
if command -v munged >/dev/null && command -v munge >/dev/null; then
    sec_munged_start "$work"
    munge_args=(--munge-socket "$SEC_MUNGE_SOCK")
fi

# capabilities live 10 s here, so that one can expire within the test
ipvfs_start_cluster 2 1 --cap-lifetime 10 "${munge_args[@]}"
chmod 755 "$IPVFS_CLUSTER_DIR"
head -c 150000 /dev/urandom >a.bin && chown "$A" a.bin && chmod 600 a.bin
head -c 70000 /dev/urandom >pub.bin && chown "$A" pub.bin && chmod 644 pub.bin
as "$A" "$IPVFS_CTL_BIN" cp a.bin ipvfs:/a.bin || ipvfs_fail "$A: cp in"
as "$A" "$IPVFS_CTL_BIN" cp pub.bin ipvfs:/pub.bin || ipvfs_fail "$A: cp in"
handle=$("$IPVFS_CTL_BIN" stat /a.bin | sed -n 's/.*handle \([0-9]*\).*/\1/p')
[ -n "$handle" ] || ipvfs_fail "no handle for /a.bin"
# root, who holds the key, signs what B could not: an expired capability
# for A's file, and one for it signed by another key
caps=$(python3 - "$IPVFS_MAP" "$handle" <<'PYEOF'
import os, sys, time
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
key, _ = P.read_map(sys.argv[1])
h = int(sys.argv[2])
old = int(time.time() * 1000) - 60000
soon = int(time.time() * 1000) + 600000
expired = P.CAP.pack(h, 1, 0, old, 0, P.cap_mac(key, h, 1, 0, old))
otherkey = P.CAP.pack(h, 3, 0, soon, 0, P.cap_mac(os.urandom(32), h, 3, 0, soon))
print(expired.hex(), otherkey.hex())
PYEOF
) || ipvfs_fail "cannot sign the test capabilities"

cat >checks.py <<'PYEOF'
import errno, os, socket, struct, subprocess, sys, tempfile
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P

mapfile, handle, expired, otherkey, munge_sock, uid_a = sys.argv[1:7]
handle, uid_a = int(handle), int(uid_a)
expired, otherkey = bytes.fromhex(expired), bytes.fromhex(otherkey)
_, ranks = P.read_map(mapfile)
meta = ranks[0][:2]
io = [r[:2] for k, r in ranks.items() if r[2] & 2 and not r[2] & 1][0]
failures = []

def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)

def hello(addr):
    s = P.connect(addr)
    st, body = P.call(s, P.OP["HELLO"], struct.pack("<II", 7, 0) + os.urandom(16))
    assert st == 0, (st, body)
    return s, body[32:48]

def claim(port, nonce):
    u = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    u.connect(b"\0ipvfs-cred:%d" % port)
    u.send(nonce)
    return struct.unpack("<I", u.recv(4))[0]

def auth(s, method, cred=b""):
    return P.call(s, P.OP["AUTH"], P.auth_body(P.D["IPVFS_AUTH_" + method], cred=cred))

def user_conn():
    s, nonce = hello(meta)
    assert claim(meta[1], nonce) == 0
    assert auth(s, "KERNEL")[0] == 0
    return s

def lookup(s, path, flags, uid, gid, mode=0o644):
    return P.call(s, P.OP["LOOKUP"], struct.pack("<IIQIIII", flags, 0, 0, len(path), mode, uid,
                                                 gid) + path)

# -- who the user is
s, nonce = hello(meta)
st, _ = auth(s, "KERNEL")
check(st == errno.EACCES, "AUTH KERNEL without a claim -> EACCES")
check(claim(meta[1], os.urandom(16)) == errno.ENOENT, "a claim of an unknown nonce -> ENOENT")
idle = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
idle.connect(b"\0ipvfs-cred:%d" % meta[1])
idle.settimeout(10)
try:
    dropped = idle.recv(4) == b""
except OSError:
    dropped = False
check(dropped, "a claim that says nothing is dropped (within 10 s)")
s, nonce = hello(meta)
check(claim(meta[1], nonce) == 0, "a claim of this connection's nonce -> 0")
check(claim(meta[1], nonce) == errno.EEXIST, "the same nonce claimed again -> EEXIST")
check(auth(s, "KERNEL")[0] == 0, "AUTH KERNEL after the claim -> 0")
me, mygid = os.getuid(), os.getgid()
st, _ = lookup(s, b"/forged.bin", 1, uid_a, mygid)
check(st == errno.EPERM, "LOOKUP create as another uid -> EPERM")
st, _ = lookup(s, b"/forged.bin", 1, me, 0)
check(st == errno.EPERM, "LOOKUP create with a group not mine -> EPERM")
st, _ = P.call(s, P.OP["MKDIR"], struct.pack("<IIII", 8, 0o755, 0, 0) + b"/rootdir")
check(st == errno.EPERM, "MKDIR as root -> EPERM")
st, _ = lookup(s, b"/a.bin", P.D["IPVFS_LOOKUP_READ"], me, mygid)
check(st == errno.EACCES, "LOOKUP READ of A's 0600 file -> EACCES")
st, body = lookup(s, b"/pub.bin", P.D["IPVFS_LOOKUP_READ"], me, mygid)
check(st == 0 and len(body) == 32 + 64, "LOOKUP READ of A's 0644 file -> entry + capability")
pub_handle = struct.unpack("<Q", body[:8])[0]
pubcap = body[32:96]

# -- an I/O node, as nobody: capabilities only
def io_conn():
    s, _ = hello(io)
    assert auth(s, "NONE")[0] == 0
    return s

def read(s, h, n=4096):
    return P.call(s, P.OP["READ"], struct.pack("<QII", h, 1, 0) + struct.pack("<QQ", 0, n))

def write(s, h, data):
    return P.call(s, P.OP["WRITE"], struct.pack("<QII", h, 1, 0) +
                  struct.pack("<QQ", 0, len(data)) + data)

d = io_conn()
check(read(d, handle)[0] == errno.EACCES, "READ of A's file without a capability -> EACCES")
check(write(d, handle, b"x" * 512)[0] == errno.EACCES, "WRITE without a capability -> EACCES")
st, _ = P.call(d, P.OP["LOOKUP"], struct.pack("<IIQIIII", 0, 0, 0, 2, 0, 0, 0) + b"/x")
check(st == errno.EACCES, "a metadata op as nobody -> EACCES")
check(P.call(d, P.OP["CAP"], pubcap)[0] == 0, "CAP of the granted read capability -> 0")
check(read(d, pub_handle)[0] == 0, "READ with it -> 0")
check(write(d, pub_handle, b"x" * 512)[0] == errno.EACCES, "WRITE with a read capability -> EACCES")
h, rights, uid, exp, res, mac = P.CAP.unpack(pubcap)
tampered = P.CAP.pack(h, rights | 2, uid, exp, res, mac)
check(P.call(d, P.OP["CAP"], tampered)[0] == errno.EACCES, "CAP with rights tampered -> EACCES")
tampered = P.CAP.pack(handle, rights, uid, exp, res, mac)
check(P.call(d, P.OP["CAP"], tampered)[0] == errno.EACCES, "CAP with the handle tampered -> EACCES")
check(P.call(d, P.OP["CAP"], otherkey)[0] == errno.EACCES, "CAP signed by another key -> EACCES")
check(P.call(d, P.OP["CAP"], expired)[0] == errno.EKEYEXPIRED, "an expired CAP -> EKEYEXPIRED")
check(write(d, pub_handle, b"x" * 512)[0] == errno.EACCES and read(d, handle)[0] == errno.EACCES,
      "after the refused CAPs: still no write, still no read of A's file")
st, _ = P.call(d, P.OP["SHUTDOWN"])
check(st == errno.EPERM, "SHUTDOWN as nobody -> EPERM")

# -- MUNGE: proves the user; a credential replayed elsewhere is refused
if munge_sock:
    def munge_cred(payload):
        with tempfile.NamedTemporaryFile() as f:
            f.write(payload)
            f.flush()
            return subprocess.run(["munge", "-S", munge_sock, "-i", f.name], check=True,
                                  capture_output=True).stdout.strip()
    s, body = P.connect(meta), None
    nonce_c = os.urandom(16)
    st, body = P.call(s, P.OP["HELLO"], struct.pack("<II", 7, 0) + nonce_c)
    cred = munge_cred(body[32:48] + nonce_c)
    check(auth(s, "MUNGE", cred)[0] == 0, "AUTH MUNGE with this connection's nonces -> 0")
    st, _ = lookup(s, b"/a.bin", P.D["IPVFS_LOOKUP_READ"], me, mygid)
    check(st == errno.EACCES, "as the MUNGE-proven user: A's 0600 file -> EACCES")
    s2 = P.connect(meta)
    st, body = P.call(s2, P.OP["HELLO"], struct.pack("<II", 7, 0) + nonce_c)
    check(auth(s2, "MUNGE", cred)[0] == errno.EACCES, "a MUNGE credential replayed -> EACCES")
else:
    print("note: no munged here; MUNGE not tried")
sys.exit(1 if failures else 0)
PYEOF
chmod 644 checks.py
read -r expired otherkey <<<"$caps"
as "$B" python3 checks.py "$IPVFS_MAP" "$handle" "$expired" "$otherkey" \
    "${munge_args[1]:-}" "$(id -u "$A")" || ipvfs_fail "protocol checks failed"
# the CLI proves B by MUNGE too, when asked to
if [ ${#munge_args[@]} -gt 0 ]; then
    as "$B" env IPVFS_AUTH=munge IPVFS_MUNGE_SOCKET="${munge_args[1]}" "$IPVFS_CTL_BIN" \
        cp ipvfs:/pub.bin out/got.bin 2>&1 || ipvfs_fail "ipvfs-ctl with IPVFS_AUTH=munge failed"
    cmp pub.bin out/got.bin || ipvfs_fail "MUNGE: other bytes"
    ipvfs_logs | grep -q "uid $(id -u "$B") (munge)" || ipvfs_fail "no MUNGE-proven request logged"
fi
# a writer slower than the capability's life: the client renews it (a
# second LOOKUP) instead of failing with EKEYEXPIRED at the I/O nodes
head -c 300000 /dev/urandom >slow.bin && chmod 644 slow.bin
{ head -c 100000 slow.bin; sleep 12; tail -c +100001 slow.bin; } |
    as "$B" "$IPVFS_CTL_BIN" cp - ipvfs:/slow.bin || ipvfs_fail "a write after the capability expired failed"
"$IPVFS_CTL_BIN" cp ipvfs:/slow.bin slow.back && cmp slow.bin slow.back || ipvfs_fail "slow.bin differs"
echo "ok   a capability that expired while the file was open was renewed"
"$IPVFS_CTL_BIN" cp ipvfs:/a.bin final.bin && cmp a.bin final.bin || ipvfs_fail "A's file changed"
"$IPVFS_CTL_BIN" cp ipvfs:/pub.bin final2.bin && cmp pub.bin final2.bin || ipvfs_fail "pub.bin changed"
n=$(ipvfs_logs | grep -c "refused: ")
[ "$n" -ge 12 ] || ipvfs_fail "only $n refusals logged"
ipvfs_stop_cluster
echo "t_security_caps: ok ($n refusals logged)"
