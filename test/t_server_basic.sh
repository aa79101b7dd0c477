#!/bin/bash
# timeout: 240
# ipvfs-server and ipvfs-ctl end to end: a 2 I/O nodes x 2 targets cluster
# starts, reports its roles and counters, serves mkdir/ls/rm, shuts down
# cleanly, and after a restart on the same directory still has its
# namespace; bad start options fail clearly and quickly.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"

# -- option errors: every rank exits non-zero, rank 0 says why, nothing hangs
bad=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-bad.XXXXXX")
ipvfs_test_cleanup() { rm -rf "$bad"; }
out=$(timeout 60 mpiexec -n 3 "$IPVFS_SERVER_BIN" --data "$bad" --raid 7 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || ipvfs_fail "--raid 7: status $rc"
grep -q -- "--raid" <<<"$out" || ipvfs_fail "--raid 7: no clear message: $out"
out=$(timeout 60 mpiexec -n 4 "$IPVFS_SERVER_BIN" --data "$bad" --io-nodes 2 --targets-per-io 2 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || ipvfs_fail "wrong N: status $rc"
grep -q "needs 6" <<<"$out" || ipvfs_fail "wrong N: no clear message: $out"
rm -rf "$bad"

ipvfs_start_cluster 2 2 --target-size 256M
# the map is public and holds no key: it names the key file, which is private
[ "$(stat -c %a "$IPVFS_MAP")" = 644 ] || ipvfs_fail "map mode is $(stat -c %a "$IPVFS_MAP")"
grep -q "^secret" "$IPVFS_MAP" && ipvfs_fail "the map holds the secret"
grep -qx "key $(readlink -f "$IPVFS_CLUSTER_DIR")/secret" "$IPVFS_MAP" || ipvfs_fail "the map does not name the key file"
[ "$(stat -c %a "$IPVFS_CLUSTER_DIR/secret")" = 600 ] || ipvfs_fail "secret is not 0600"
ipvfs_wait_log "cluster ready" || ipvfs_fail "no 'cluster ready' line"
ipvfs_wait_log "topology: .* core\(s\)" || ipvfs_fail "no topology line"

# -- status --json: six ranks, right roles.  Rank 0 writes the map when it
# learns that every rank started; the others learn it each on its own a
# moment later and say "starting" until then: wait for all to serve.
for ((i = 0; i < 100; i++)); do
    ipvfs-ctl status --json >"$IPVFS_CLUSTER_DIR/status.json" || ipvfs_fail "status --json failed"
    python3 -c 'import json, sys
sys.exit(any(r["state"] != "serving" for r in json.load(open(sys.argv[1]))["ranks"]))' \
        "$IPVFS_CLUSTER_DIR/status.json" && break
    sleep 0.2
done
python3 - "$IPVFS_CLUSTER_DIR/status.json" <<'EOF' || ipvfs_fail "status --json is wrong"
import json, sys
st = json.load(open(sys.argv[1]))
ranks = st["ranks"]
assert len(ranks) == 6, ranks
roles = [r["role"] for r in ranks]
assert roles == ["metadata", "target", "target", "io", "target", "target"], roles
assert ranks[0]["services"] == ["metadata", "io"], ranks[0]
assert all(r["state"] == "serving" and r["pid"] > 0 and r["host"] for r in ranks), ranks
EOF

# -- hwloc: each rank runs on the PUs its "bound rank" line names, and the
# node-local ranks spread over the cores (rank i on core i % ncores)
python3 - "$IPVFS_CLUSTER_DIR/status.json" <(ipvfs_logs) <<'EOF' ||
import json, re, sys
ranks = json.load(open(sys.argv[1]))["ranks"]
lines = re.findall(r"bound rank (\d+) \(node-local rank (\d+)\) to core (\d+) of (\d+) "
                   r"\(package \d+, PUs ([0-9,-]+)\)", open(sys.argv[2]).read())
assert len(lines) == len(ranks), lines
for rank, local, core, ncores, pus in lines:
    assert int(core) == int(local) % int(ncores), (rank, local, core, ncores)
    pid = ranks[int(rank)]["pid"]
    allowed = re.search(r"^Cpus_allowed_list:\s*(\S+)", open(f"/proc/{pid}/status").read(), re.M)
    assert allowed.group(1) == pus, (rank, allowed.group(1), pus)
EOF
    ipvfs_fail "ranks are not bound as their log lines say"
ipvfs-ctl status | grep -q "metadata+io" || ipvfs_fail "plain status lacks rank 0's roles"

# -- namespace through ipvfs-ctl
ipvfs-ctl mkdir /a/b || ipvfs_fail "mkdir /a/b"
ipvfs-ctl mkdir /a/c || ipvfs_fail "mkdir /a/c"
ipvfs-ctl mkdir /a/b 2>"$IPVFS_CLUSTER_DIR/err" && ipvfs_fail "mkdir of an existing dir succeeded"
grep -q "exists" "$IPVFS_CLUSTER_DIR/err" || ipvfs_fail "mkdir existing: $(cat "$IPVFS_CLUSTER_DIR/err")"
[ "$(ipvfs-ctl ls /a | sort | tr '\n' ' ')" = "b/ c/ " ] || ipvfs_fail "ls /a: $(ipvfs-ctl ls /a)"
ipvfs-ctl rm /a 2>/dev/null && ipvfs_fail "rm of a non-empty directory succeeded"
ipvfs-ctl rm /a/c || ipvfs_fail "rm /a/c"
ipvfs-ctl ls /nope 2>/dev/null && ipvfs_fail "ls of a missing directory succeeded"
ipvfs-ctl mkdir relative 2>/dev/null && ipvfs_fail "mkdir of a relative path succeeded"
[ "$(ipvfs-ctl ls /a)" = "b/" ] || ipvfs_fail "ls /a after rm: $(ipvfs-ctl ls /a)"
# a file made through the protocol (LOOKUP|CREATE), then removed with its datafiles
python3 - "$IPVFS_MAP" <<'PYEOF' || ipvfs_fail "LOOKUP|CREATE of /a/file"
import os, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
secret, ranks = P.read_map(sys.argv[1])
s = P.connect(ranks[0][:2])
def call(op, body):
    return P.call(s, op, body)
assert P.hello(s, secret)[0] == 0
st, e = call(10, struct.pack("<IIQIIII", 1, 2, 0, 7, 0o644, 0, 0) + b"/a/file")
handle, unit, factor, first, typ, created = struct.unpack("<QQIIII", e[:32])
assert st == 0 and typ == 1 and created == 1 and factor == 2 and unit == 65536, (st, e)
PYEOF

# -- orphans: a client that dies between REMOVE and DF_REMOVE leaves a
# removed file with data; the next rm deletes that data too
orphan() {
    python3 - "$IPVFS_MAP" "$1" <<'PYEOF'
import os, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
secret, ranks = P.read_map(sys.argv[1])
def session(addr):
    s = P.connect(addr)
    assert P.hello(s, secret)[0] == 0
    return s
meta = session(ranks[0][:2])
orphans = lambda: P.call(meta, P.OP["ORPHANS"], struct.pack("<QII", 0, 8, 0))
if sys.argv[2] == "make":
    st, e = P.call(meta, P.OP["LOOKUP"], struct.pack("<IIQIIII", 1, 1, 0, 9, 0o644, 0, 0) + b"/a/orphan")
    handle, unit, factor, first, typ, created = struct.unpack("<QQIIII", e[:32])
    io = session([r[:2] for r in ranks.values() if r[2] & 2 and r[3] == first][0])
    st, _ = P.call(io, P.OP["WRITE"], struct.pack("<QIIQQ", handle, 1, 0, 0, 4096) + b"\x5a" * 4096)
    assert st == 0, st
    st, _ = P.call(meta, P.OP["REMOVE"], struct.pack("<II", 9, 0) + b"/a/orphan")
    assert st == 0, st      # ...and the client "dies": no DF_REMOVE
    open(os.environ["IPVFS_CLUSTER_DIR"] + "/orphan", "w").write("%d %d" % (handle, first))
    st, body = orphans()
    n = struct.unpack("<I", body[:4])[0]
    assert st == 0 and n == 1 and struct.unpack("<Q", body[8:16])[0] == handle, (st, body[:24])
else:
    handle, first = map(int, open(os.environ["IPVFS_CLUSTER_DIR"] + "/orphan").read().split())
    st, body = orphans()
    assert st == 0 and struct.unpack("<I", body[:4])[0] == 0, ("orphans left", body[:24])
    io = session([r[:2] for r in ranks.values() if r[2] & 2 and r[3] == first][0])
    st, rep = P.call(io, P.OP["READ"], struct.pack("<QIIQQ", handle, 1, 0, 0, 4096))
    assert st == 0 and rep[24:] == bytes(4096), "the orphan's data is still there"
PYEOF
}
orphan make || ipvfs_fail "making an orphan"
[ "$(ipvfs-ctl ls /a | sort | tr '\n' ' ')" = "b/ file " ] || ipvfs_fail "ls /a: $(ipvfs-ctl ls /a)"
ipvfs-ctl rm /a/file || ipvfs_fail "rm /a/file"
[ "$(ipvfs-ctl ls /a)" = "b/" ] || ipvfs_fail "ls /a after rm /a/file: $(ipvfs-ctl ls /a)"
orphan check || ipvfs_fail "rm did not delete the orphan's datafiles"
[ "$(ipvfs-ctl gc)" = "no removed file has datafiles left" ] || ipvfs_fail "gc: $(ipvfs-ctl gc)"

# -- stats: counters move
ipvfs-ctl stats --json >"$IPVFS_CLUSTER_DIR/stats.json" || ipvfs_fail "stats --json failed"
python3 - "$IPVFS_CLUSTER_DIR/stats.json" <<'EOF' || ipvfs_fail "stats --json is wrong"
import json, sys
st = json.load(open(sys.argv[1]))
assert len(st["ranks"]) == 6
r0 = st["ranks"][0]
assert r0["requests"] >= 10, r0           # the mkdir/ls/rm above, with their HELLOs
assert "bytes_in" in r0 and "bytes_out" in r0 and r0["clients"], r0
assert st["total"]["requests"] >= r0["requests"]
# targets count the iSCSI traffic of their I/O node (the volume read its
# metadata from every member at start)
for r in st["ranks"]:
    if r["role"] == "target":
        assert r["requests"] > 0 and r["bytes_out"] > 0, r
EOF

# -- clean shutdown, restart on the same directory, namespace still there
ipvfs_restart_cluster
[ "$(ipvfs-ctl ls /a)" = "b/" ] || ipvfs_fail "namespace lost over a restart: $(ipvfs-ctl ls /a)"
ipvfs-ctl status >/dev/null || ipvfs_fail "status after restart"
ipvfs_stop_cluster
ipvfs_logs | grep -q "cluster stopped" || ipvfs_fail "no 'cluster stopped' line"

# -- SIGTERM to every rank: each stops cleanly, the job exits 0
ipvfs_start_cluster 2 2 --target-size 256M
kill -TERM $(awk '$1 == "rank" { print $9 }' "$IPVFS_MAP")
ipvfs_wait_cluster 60 || ipvfs_fail "the job did not stop cleanly on SIGTERM (status $?)"
[ "$(ipvfs_logs | grep -c "rank [0-9] stopped")" -ge 6 ] ||
    ipvfs_fail "not every rank reported its stop"

# -- a start that cannot finish (map directory missing) fails on every rank, quickly
out=$(timeout 60 mpiexec -n 3 "$IPVFS_SERVER_BIN" --data "$IPVFS_CLUSTER_DIR/other" \
      --target-size 64M --map /nonexistent/dir/map 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || ipvfs_fail "unwritable map: status $rc"
grep -q "cannot write the server map" <<<"$out" || ipvfs_fail "unwritable map: no clear message"

# -- an unreachable cluster is reported, quickly
start=$(date +%s)
ipvfs-ctl status >/dev/null 2>&1 && ipvfs_fail "status of a stopped cluster succeeded"
[ $(($(date +%s) - start)) -le 10 ] || ipvfs_fail "status of a stopped cluster took too long"
echo "t_server_basic: ok"
