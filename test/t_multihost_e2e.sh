#!/bin/bash
# Servers and clients on four hosts (network namespaces of this machine,
# test/hosts_lib.sh), started as doc/launching.md says, through Hydra's ssh
# launch (test/hosts/netns-ssh stands in for ssh):
#
#   node1: rank 0 (metadata + I/O node 0) and its two targets
#   node2: I/O node 1 and its two targets
#   node3, node4: the MPI clients (2 ranks each)
#
# Checks that --listen auto puts every rank on its host's address (never
# 127.0.0.1) and the map says so; that status names each rank's host and
# the core hwloc bound it to, node-local ranks on different cores; that
# the end-to-end program (independent, collective, list I/O, hints) and
# IOR-like file-per-process and shared-file traffic run byte-exact across
# the hosts, with the map from the shared file and from the metadata rank
# (IPVFS_MAP=HOST:PORT, IPVFS_KEY); that a client given HOST:PORT without
# the key, or a port where nothing listens, gets a clear error; and that
# the cluster stops cleanly.
# timeout: 300
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/multihost_lib.sh"
e2e_require
hosts_require
IOR=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$IOR" ] || { echo "skip: $IOR is not built"; exit 77; }

hosts_up 4
mh_servers_on node1 node1:3,node2:3
mh_clients_on node3 node3:2,node4:2
ipvfs_start_cluster 2 2 --target-size 256M --meta-port "$MH_META_PORT"

# Where each rank listens and what status says of it.
status_check '
want = {0: "node1", 1: "node1", 2: "node1", 3: "node2", 4: "node2", 5: "node2"}
for r in ranks:
    node = want[r["rank"]]
    assert r["state"] == "serving", r
    assert r["node"] == node, (r["rank"], r["node"], node)
    assert r["host"] == "198.18.0." + node[4:], (r["rank"], r["host"])
for io in (0, 3):
    for m in ranks[io]["volume"]["members"]:
        assert m["url"].startswith("iscsi://198.18.0.%d:" % (1 + io // 3)), m
# hwloc: the node-local ranks 0 and 1 of each host sit on different cores
for first in (0, 3):
    a, b = ranks[first]["cpus"], ranks[first + 1]["cpus"]
    assert a != "" and b != "" and a != b, (first, a, b)
' || ipvfs_fail "status across hosts is wrong: $(cat "$IPVFS_CLUSTER_DIR/status.json")"
grep -q '127\.0\.0\.1' "$IPVFS_MAP" && ipvfs_fail "the map names 127.0.0.1: $(cat "$IPVFS_MAP")"
echo "ranks listen on their hosts' addresses; status names hosts and cores"
# --read-places auto: targets on their I/O node's host get one READ place each
for io in 0 1; do
    ipvfs_logs | grep -q "I/O node $io: RAID-0 .*, 2 READs in the store at once" ||
        ipvfs_fail "I/O node $io did not take 1 READ place for each of its 2 local targets"
done

e2e_run 240 e2e_io ipvfs:/mh/io --nio 2 || ipvfs_fail "e2e_io across hosts"
echo "e2e_io passed on clients node3+node4"

# IOR-like traffic, file per process and one shared file, read back and
# verified, with the map taken from the metadata rank.
export IPVFS_MAP_FILE=$IPVFS_MAP
IPVFS_MAP=node1:$MH_META_PORT IPVFS_KEY=$IPVFS_CLUSTER_DIR/secret \
    e2e_run 120 "$IOR" -f ipvfs:/mh/ior -b 8m -t 1m -F -w -r -v -e \
    >"$IPVFS_CLUSTER_DIR/ior-fpp.out" 2>&1 || {
        cat "$IPVFS_CLUSTER_DIR/ior-fpp.out"
        ipvfs_fail "ipvfs-ior file-per-process with IPVFS_MAP=node1:$MH_META_PORT"
    }
IPVFS_MAP=node1:$MH_META_PORT IPVFS_KEY=$IPVFS_CLUSTER_DIR/secret \
    e2e_run 120 "$IOR" -f ipvfs:/mh/shared -b 8m -t 256k -c -w -r -v -k \
    >"$IPVFS_CLUSTER_DIR/ior-shared.out" 2>&1 || {
        cat "$IPVFS_CLUSTER_DIR/ior-shared.out"
        ipvfs_fail "ipvfs-ior shared file, collective"
    }
grep -h '^RESULT' "$IPVFS_CLUSTER_DIR"/ior-*.out
[ "$(grep -c 'errors=0' "$IPVFS_CLUSTER_DIR"/ior-*.out | awk -F: '{ s += $2 } END { print s }')" = 4 ] ||
    ipvfs_fail "ipvfs-ior did not report 4 phases without errors"
export IPVFS_MAP=$IPVFS_MAP_FILE

# The map from the metadata rank: ipvfs-ctl on a client host, the data
# the MPI program wrote is there.
out=$(mh_on node4 env IPVFS_MAP="node1:$MH_META_PORT" IPVFS_KEY="$IPVFS_CLUSTER_DIR/secret" \
    ipvfs-ctl ls /mh 2>&1) || ipvfs_fail "ipvfs-ctl ls with the map from node1: $out"
echo "$out" | grep -q shared || ipvfs_fail "ls /mh from node4 lacks 'shared': $out"
out=$(mh_on node4 env IPVFS_MAP="node1:$MH_META_PORT" IPVFS_KEY= ipvfs-ctl ls /mh 2>&1) &&
    ipvfs_fail "ipvfs-ctl without IPVFS_KEY worked: $out"
echo "$out" | grep -q 'IPVFS_KEY' || ipvfs_fail "no word of IPVFS_KEY in: $out"
out=$(mh_on node4 env IPVFS_MAP="node1:$((MH_META_PORT + 1))" \
    IPVFS_KEY="$IPVFS_CLUSTER_DIR/secret" ipvfs-ctl ls /mh 2>&1) &&
    ipvfs_fail "ipvfs-ctl against a port where nothing listens worked: $out"
echo "$out" | grep -q "node1:$((MH_META_PORT + 1)).*refused" ||
    ipvfs_fail "the error does not name the address and the refusal: $out"
echo "map from the metadata rank: ok; without the key or at a wrong port: clear errors"

ipvfs_stop_cluster
echo "PASS"
