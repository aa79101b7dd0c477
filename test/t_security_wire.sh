#!/bin/bash
# No secret on the wire: every connection proves the cluster key by
# challenge and response (common/auth.h), so a capture of the loopback
# traffic (tcpdump -i lo) while MPI-IO clients write and read, ipvfs-ctl
# lists, and the ranks talk to each other (a shutdown) holds neither the
# bytes of the key file DATA/secret nor their hex form, in either case.
# The capture must hold the traffic itself (the file's name and a run of
# its data), or it proves nothing.  The replayed-AUTH and wrong-key cases
# are t_server_badinput's.  Skips without root or tcpdump.
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ "$(id -u)" = 0 ] || { echo "skip: capturing needs root"; exit 77; }
command -v tcpdump >/dev/null || { echo "skip: no tcpdump (scripts/setup-deps.sh installs it)"; exit 77; }
export E2E_NP=2
dump_pid=
ipvfs_test_cleanup() {
    [ -n "$dump_pid" ] && kill "$dump_pid" 2>/dev/null
    dump_pid=
}

ipvfs_start_cluster 1 2 --target-size 64M --no-bind
cap=$IPVFS_CLUSTER_DIR/lo.pcap
tcpdump -i lo -U -s 0 -w "$cap" >"$IPVFS_CLUSTER_DIR/tcpdump.out" 2>&1 &
dump_pid=$!
for ((i = 0; i < 100; i++)); do
    grep -q "listening on lo" "$IPVFS_CLUSTER_DIR/tcpdump.out" && break
    sleep 0.1
done
grep -q "listening on lo" "$IPVFS_CLUSTER_DIR/tcpdump.out" || ipvfs_fail "tcpdump did not start"

e2e_run 60 e2e_persist write ipvfs:/sec/capture-me 7 >/dev/null || ipvfs_fail "write"
e2e_run 60 e2e_persist verify ipvfs:/sec/capture-me 7 >/dev/null || ipvfs_fail "verify"
ipvfs-ctl ls /sec >/dev/null || ipvfs_fail "ls"
ipvfs-ctl status >/dev/null || ipvfs_fail "status"
ipvfs_stop_cluster
kill -INT "$dump_pid"
wait "$dump_pid"
dump_pid=

python3 - "$cap" "$IPVFS_CLUSTER_DIR/secret" <<'PYEOF' || ipvfs_fail "the capture holds the key"
import sys
cap = open(sys.argv[1], "rb").read()
key = open(sys.argv[2], "rb").read()
assert len(key) == 32, len(key)
print("capture: %d bytes" % len(cap))
# the capture saw the traffic: the file's name, and its MPI-IO data
assert b"/sec/capture-me" in cap, "the capture misses the file's name"
assert len(cap) > 4 << 20, "the capture misses the data (%d bytes)" % len(cap)
for what, needle in (("raw", key), ("hex", key.hex().encode()), ("HEX", key.hex().upper().encode())):
    assert needle not in cap, "the key's %s form is in the capture" % what
    print("ok   the key's %s form is not in the capture" % what)
PYEOF
echo "PASS"
