#!/bin/bash
# timeout: 240
# QoS at the I/O nodes (issue 30, doc/qos.md), on 1 I/O node x 2 targets
# with --qos two-level and 200 ms windows:
# - ipvfs-ctl qos set makes a class with its SLO, qos status --json lists
#   it by name with "default"; malformed SLOs (negative, zero, NaN,
#   absurd values, wrong units) are refused with a message naming what is
#   wrong, and nothing is made;
# - on the wire (test/ipvfs_proto.py): QOS_CLASS with a bad name (empty,
#   a space, 64 bytes) gets EINVAL and the connection goes on; QOS_SET
#   from a connection without the key or root gets EPERM, with a body
#   that disagrees with its name length EINVAL, with a zero rate EINVAL;
#   the WRITEs of a connection that named a class count for it, those of
#   one naming an unknown class for "default";
# - --qos-slo FILE sets its classes at start, --qos-internal shows the
#   class "internal" with its least rate; nobody sets it or names it (a
#   connection naming it counts for "default");
# - ipvfs_proto.call skips a keepalive header before the reply;
# - the hints ipvfs_qos_rate/ipvfs_qos_latency give a class without an
#   SLO one (not a class that has one); malformed values (negative, other
#   units, one without the other, out of range) fail the open naming the
#   hint; on the wire an SLO tail of the wrong size is EINVAL;
# - an MPI program (ipvfs-ior through ROMIO) with IPVFS_QOS_CLASS=app1
#   counts for app1; with the hint ipvfs_qos_class=app2 (ROMIO_HINTS) for
#   app2; a bad
#   IPVFS_QOS_CLASS fails the client with a message naming it.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }
IOR=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$IOR" ] || { echo "skip: $IOR is not built"; exit 77; }

# requests CLASS: the requests the I/O node completed for CLASS ("none"
# when it lists no such class).
requests() {
    ipvfs-ctl qos status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["io_nodes"][0]
c = [x for x in d["classes"] if x["name"] == sys.argv[1]]
print(c[0]["requests"] if c else "none")' "$1" || ipvfs_fail "qos status --json"
}

# refused WHAT ARGS...: ipvfs-ctl qos set ARGS fails, saying WHAT.
refused() {
    local what=$1 out
    shift
    out=$(ipvfs-ctl qos set "$@" 2>&1) && ipvfs_fail "qos set $* was accepted"
    echo "$out" | grep -q -- "$what" || ipvfs_fail "qos set $*: '$out' does not say '$what'"
}

slo=$(mktemp) || ipvfs_fail "mktemp"
printf '# SLOs read at start\nfromfile 12MB/s 250ms\n' >"$slo"
ipvfs_start_cluster 1 2 --target-size 256M --no-bind --qos two-level --qos-window 200 \
    --qos-slo "$slo" --qos-internal 2:20
rm -f "$slo"
ipvfs_wait_log 'QoS two-level, windows of 200 ms' || ipvfs_fail "the I/O node names no QoS policy"
ipvfs-ctl qos status --json | python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(sys.stdin)["io_nodes"][0]["classes"]}
assert c["fromfile"]["rate_mbps"] == 12 and c["fromfile"]["latency_ms"] == 250, c
assert c["internal"]["rate_mbps"] == 2 and c["internal"]["max_mbps"] == 20, c
assert c["fromfile"]["max_mbps"] is None, c' || ipvfs_fail "the SLO file or --qos-internal not in qos status"
ipvfs-ctl qos status | grep -Eq '^  internal +2:20 +- ' ||
    ipvfs_fail "qos status does not show --qos-internal's MIN:MAX"
refused "is the servers' rebuild and scrub" internal --rate 10 --latency 100

ipvfs-ctl qos set app1 --rate 40 --latency 100 | grep -q 'class app1: 40 MB/s' ||
    ipvfs_fail "qos set app1"
ipvfs-ctl qos set app2 --rate 20MB/s --latency 300ms >/dev/null || ipvfs_fail "qos set with units"
refused "must be more than 0" bad --rate -5 --latency 100
refused "must be more than 0" bad --rate 0 --latency 100
refused "not a number" bad --rate nan --latency 100
refused "unknown unit 'GB/s'" bad --rate 40GB/s --latency 100
refused "unknown unit 's'" bad --rate 40 --latency 100s
refused "at most 1000000 MB/s" bad --rate 1e9 --latency 100
refused "between 0.1 and 3600000 ms" bad --rate 40 --latency 0.01
refused "printable bytes without spaces" "a b" --rate 40 --latency 100
out=$(ipvfs-ctl qos set bad --rate 40 2>&1); [ $? -eq 2 ] || ipvfs_fail "qos set without --latency: $out"
[ "$(requests bad)" = none ] || ipvfs_fail "a refused SLO made a class"
[ "$(requests default)" != none ] || ipvfs_fail "qos status lists no default class"
ipvfs-ctl qos status | grep -q 'two-level, window 200 ms, EDF depth' || ipvfs_fail "qos status text"

python3 - "$IPVFS_MAP" <<'PYEOF' || ipvfs_fail "QoS on the wire"
import errno, json, os, struct, subprocess, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
secret, addr, s = P.io_node(sys.argv[1])
assert P.hello(s, secret, 7)[0] == 0
def call(sock, op, body, want):
    status, rbody = P.call(sock, P.OP[op], body)
    assert status == want, (op, body[:80], status, rbody)
    return rbody
for bad in (b"", b"a b", b"x" * 64, b"tab\tname"):
    assert b"QoS class name" in call(s, "QOS_CLASS", bad, errno.EINVAL)
def qset(sock, name, kbps, us, want, name_len=None):
    body = struct.pack("<QQII", kbps, us, len(name) if name_len is None else name_len, 0) + name
    return call(sock, "QOS_SET", body, want)
qset(s, b"app3", 10000, 50000, 0)
qset(s, b"app3", 10000, 50000, errno.EINVAL, name_len=3)
assert b"rate 0 MB/s" in qset(s, b"app4", 0, 50000, errno.EINVAL)
assert b"latency" in qset(s, b"app4", 1000, 7200 * 10**6, errno.EINVAL)
# writes of a class, then of an unknown class (which counts for default)
def write(sock, handle, n):
    for i in range(n):
        data = bytes([i]) * 65536
        call(sock, "WRITE", struct.pack("<QII", handle, 1, 0) + struct.pack("<QQ", i * 65536, 65536) + data, 0)
def status():
    b = call(s, "QOS_STATUS", b"", 0)
    n = struct.unpack_from("<I", b, 4)[0]
    out = {}
    for i in range(n):
        rec = b[56 + 144 * i: 56 + 144 * (i + 1)]
        name = rec[:64].rstrip(b"\0").decode()
        out[name] = struct.unpack_from("<Q", rec, 64 + 8 * 5 + 8 + 16)[0]
    return out
before = status()
call(s, "QOS_CLASS", b"app3", 0)
write(s, 301, 5)
after = status()
assert after["app3"] == before["app3"] + 5, (before, after)
call(s, "QOS_CLASS", b"nosuchclass", 0)
write(s, 302, 3)
again = status()
assert "nosuchclass" not in again and again["default"] == after["default"] + 3, (after, again)
# nobody (AUTH NONE) may name its class and read the status, not set SLOs
t = P.connect(addr)
st, body = P.call(t, P.OP["HELLO"], struct.pack("<II", 8, 0) + os.urandom(16))
assert st == 0
call(t, "AUTH", P.auth_body(P.D["IPVFS_AUTH_NONE"]), 0)
call(t, "QOS_CLASS", b"app3", 0)
call(t, "QOS_STATUS", b"", 0)
st, body = P.call(t, P.OP["QOS_SET"], struct.pack("<QQII", 1000, 1000, 4, 0) + b"evil")
assert st in (errno.EPERM, errno.EACCES), (st, body)
# a class name with an SLO after a NUL (the hints): a tail of another
# size, an SLO out of range, or the internal class are refused
slo = lambda kbps, us: struct.pack("<QQ", kbps, us)
assert b"not an SLO" in call(s, "QOS_CLASS", b"app7\0" + slo(1000, 1000)[:15], errno.EINVAL)
assert b"rate 0 MB/s" in call(s, "QOS_CLASS", b"app7\0" + slo(0, 1000), errno.EINVAL)
assert b"rebuild and scrub" in call(s, "QOS_CLASS", b"internal\0" + slo(1000, 1000000), errno.EINVAL)
call(s, "QOS_CLASS", b"app7\0" + slo(7000, 70000), 0)
# a client naming the internal class counts for default
call(s, "QOS_CLASS", b"internal", 0)
write(s, 303, 2)
last = status()
assert last["default"] == again["default"] + 2 and last["internal"] == 0, (again, last)
# P.call skips keepalives (a request waiting 2 s or more gets PROGRESS
# headers before its reply), as clients do
a, b = __import__("socket").socketpair()
b.sendall(P.HDR.pack(P.MAGIC, P.VERSION, P.PROGRESS, 0, 0, 7, 0) +
          P.HDR.pack(P.MAGIC, P.VERSION, P.OP["QOS_STATUS"] | P.REPLY, errno.ENOENT, 0, 7, 2) + b"ok")
assert P.call(a, P.OP["QOS_STATUS"]) == (errno.ENOENT, b"ok")
print("wire checks passed")
PYEOF

ior() {
    timeout -k 5 120 mpiexec -n 2 env LD_PRELOAD="$E2E_ROMIO_LIB" "$@" >/dev/null 2>"$IPVFS_CLUSTER_DIR/ior.err"
}
a0=$(requests app1)
IPVFS_QOS_CLASS=app1 ior "$IOR" -f ipvfs:/qos/a -b 4m -t 1m -w -e -k || ipvfs_fail "ipvfs-ior as app1"
a1=$(requests app1)
[ "$a1" -ge $((a0 + 8)) ] || ipvfs_fail "app1 served $a0 then $a1 requests: the job's 8 MiB in 1 MiB writes did not count for it"
b0=$(requests app2)
echo "ipvfs_qos_class app2" >"$IPVFS_CLUSTER_DIR/hints"
IPVFS_QOS_CLASS=app1 ROMIO_HINTS=$IPVFS_CLUSTER_DIR/hints ior "$IOR" -f ipvfs:/qos/b -b 4m -t 1m -w -e -k ||
    ipvfs_fail "ipvfs-ior with the hint"
b1=$(requests app2)
[ "$b1" -ge $((b0 + 8)) ] || ipvfs_fail "app2 served $b0 then $b1: the hint ipvfs_qos_class did not apply"
# SLO hints: a new class takes the hints' SLO; a class with one keeps it;
# malformed or out-of-range values fail the open naming the hint
slo_of() {
    ipvfs-ctl qos status --json | python3 -c '
import json, sys
c = [x for x in json.load(sys.stdin)["io_nodes"][0]["classes"] if x["name"] == sys.argv[1]]
print("%g %g" % (c[0]["rate_mbps"], c[0]["latency_ms"]) if c else "none")' "$1"
}
printf 'ipvfs_qos_class app5\nipvfs_qos_rate 30MB/s\nipvfs_qos_latency 200ms\n' >"$IPVFS_CLUSTER_DIR/hints"
ROMIO_HINTS=$IPVFS_CLUSTER_DIR/hints ior "$IOR" -f ipvfs:/qos/c -b 1m -t 1m -w -e -k ||
    ipvfs_fail "ipvfs-ior with SLO hints: $(cat "$IPVFS_CLUSTER_DIR/ior.err")"
[ "$(slo_of app5)" = "30 200" ] || ipvfs_fail "the hints' SLO: app5 has $(slo_of app5)"
printf 'ipvfs_qos_class app1\nipvfs_qos_rate 5\nipvfs_qos_latency 1000\n' >"$IPVFS_CLUSTER_DIR/hints"
ROMIO_HINTS=$IPVFS_CLUSTER_DIR/hints ior "$IOR" -f ipvfs:/qos/d -b 1m -t 1m -w -e -k ||
    ipvfs_fail "ipvfs-ior with SLO hints for app1"
[ "$(slo_of app1)" = "40 100" ] || ipvfs_fail "a hint changed the SLO set by qos set: $(slo_of app1)"
bad_hints() {
    local what=$1
    shift
    printf '%s\n' "$@" >"$IPVFS_CLUSTER_DIR/hints"
    ROMIO_HINTS=$IPVFS_CLUSTER_DIR/hints ior "$IOR" -f ipvfs:/qos/e -b 1m -t 1m -w -e -k &&
        ipvfs_fail "bad hints accepted: $*"
    grep -q -- "$what" "$IPVFS_CLUSTER_DIR/ior.err" ||
        ipvfs_fail "bad hints $*: '$(head -c 400 "$IPVFS_CLUSTER_DIR/ior.err")' does not say '$what'"
}
bad_hints "hint ipvfs_qos_rate '-5' must be more than 0" "ipvfs_qos_class app6" "ipvfs_qos_rate -5" "ipvfs_qos_latency 100"
bad_hints "unknown unit 'GB/s'" "ipvfs_qos_class app6" "ipvfs_qos_rate 4GB/s" "ipvfs_qos_latency 100"
bad_hints "ipvfs_qos_rate without ipvfs_qos_latency" "ipvfs_qos_class app6" "ipvfs_qos_rate 4"
bad_hints "latency 0.01 ms" "ipvfs_qos_class app6" "ipvfs_qos_rate 4" "ipvfs_qos_latency 0.01"
[ "$(slo_of app6)" = none ] || ipvfs_fail "refused hints made a class: $(slo_of app6)"
out=$(IPVFS_QOS_CLASS="a b" ipvfs-ctl qos status 2>&1) && ipvfs_fail "a bad IPVFS_QOS_CLASS was accepted"
echo "$out" | grep -q IPVFS_QOS_CLASS || ipvfs_fail "bad IPVFS_QOS_CLASS: '$out' does not name it"
ipvfs-ctl qos status
ipvfs_stop_cluster
echo "t_qos_basic: passed"
