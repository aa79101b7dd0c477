#!/bin/bash
# Links that go down for a few seconds and come back (`ip link set
# down`/`up`) under a stream of synced MPI-IO writes cost retries, not
# data:
#
#   node1: rank 0 (metadata + I/O node 0)   node2: its target
#   node3: I/O node 1                       node4: its target
#   node5: the clients
#
# In turn, for 2.5 s each: a target host's link (the iSCSI session stalls:
# the I/O node pings it, and it answers again before the 5 s that would
# mark it down), an I/O node host's link (the clients' requests and its
# iSCSI wait), the metadata host's, and the clients' own.  No write
# fails, no member goes down, every synced file reads back byte-exact.
# timeout: 240
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/multihost_lib.sh"
e2e_require
hosts_require
export E2E_NP=2 WRITER_PACE=0.2
writer_pid=
ipvfs_test_cleanup() {
    [ -n "$writer_pid" ] && kill -9 -- "-$writer_pid" 2>/dev/null
    writer_pid=
}

hosts_up 5
mh_servers_on node1 node1:1,node2:1,node3:1,node4:1
mh_clients_on node5 node5:2
ipvfs_start_cluster 2 1 --target-size 256M --no-bind
writer_start /flap

# flap HOST: its link down for 2.5 s, then up; then 2 more files synced.
flap() {
    local host=$1 before end
    before=$(synced_count)
    hosts_link "$host" down
    end=$(($(date +%s%N) + 2500000000))
    while (($(date +%s%N) < end)); do   # the outage itself, not a wait for a condition
        sleep 0.1
    done
    hosts_link "$host" up
    wait_synced $((before + 2)) || ipvfs_fail "writes did not go on after $host's link came back"
    echo "$host: link down 2.5 s and up; the stream goes on ($(synced_count) files synced)"
}
flap node2    # target of I/O node 0
flap node3    # I/O node 1 (its target's link stays up)
flap node1    # metadata + I/O node 0
flap node5    # the clients
writer_finish
status_check '
for io in (0, 2):
    vol = ranks[io]["volume"]
    assert vol["missing"] == 0, (io, vol)
    assert all(m["state"] == "up" for m in vol["members"]), (io, vol)
' || ipvfs_fail "a member went down: $(cat "$IPVFS_CLUSTER_DIR/status.json")"
ipvfs_logs | grep -E 'iraid: member [0-9]+ .* failed:|-> down' && ipvfs_fail "a member was marked down during a flap"
verify_synced /flap "after the link flaps"
echo "no write failed, no member went down, all $(synced_count) synced files byte-exact"
ipvfs_stop_cluster
echo "PASS"
