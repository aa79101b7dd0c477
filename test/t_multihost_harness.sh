#!/bin/bash
# Self-test of test/hosts_lib.sh, the emulated hosts (network namespaces
# on one bridge) that multi-host tests run in:
#   - hosts_up 3 makes node1..node3: an MPI program (built here with
#     mpicc) started by hosts_mpiexec on node1 across the three reports
#     three distinct host names and its Allreduce over them adds up;
#   - a TCP transfer (iperf3) from node1 to node2 works, and with
#     hosts_shape node2 50mbit it measures 0.6 to 1.1 times 50 Mbit/s
#     (unshaped it runs at several Gbit/s, so shaping that does not act
#     fails);
#   - hosts_link node2 down makes a connect to node2 fail, up makes it
#     work again;
#   - hosts_crash node3 leaves no process in it;
#   - after hosts_down no namespace, /etc/netns entry or process of the
#     test remains, and the root namespace's links are as before.
# Skips (77) unless root with usable `ip netns`, mpicc, mpiexec, iperf3.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
hosts_require
for c in mpicc mpiexec iperf3 ss python3; do
    command -v "$c" >/dev/null || { echo "skip: no $c here"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-multihost.XXXXXX") || ipvfs_fail "mktemp"
ipvfs_test_cleanup() {
    rm -rf "$tmp"
}

# wait_listen HOST PORT: until something listens there (5 s at most).
wait_listen() {
    local i
    for ((i = 0; i < 50; i++)); do
        hosts_exec "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
        sleep 0.1
    done
    ipvfs_fail "nothing listens on $1 port $2 after 5 s"
}

# measure: one iperf3 run, node1 sending to node2 for 2 s; prints the
# rate the receiver saw, in Mbit/s.
measure() {
    local srv rc
    hosts_exec node2 timeout 20 iperf3 -s -1 -p 5201 >"$tmp/iperf-server.log" 2>&1 &
    srv=$!
    wait_listen node2 5201
    hosts_exec node1 timeout 20 iperf3 -c "$(hosts_addr node2)" -p 5201 -t 2 -J \
        >"$tmp/iperf.json" 2>&1
    rc=$?
    wait "$srv"
    [ "$rc" = 0 ] || ipvfs_fail "iperf3 node1 -> node2 failed: $(tail -c 300 "$tmp/iperf.json")"
    python3 -c 'import json, sys
print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))' \
        "$tmp/iperf.json" || ipvfs_fail "no rate in iperf3's output"
}

# connects HOST: whether node1 reaches HOST's iperf3 server on port 5202
# within 2 s (and a 1 s transfer goes through).
connects() {
    hosts_exec node1 timeout 10 iperf3 -c "$(hosts_addr "$1")" -p 5202 -t 1 \
        --connect-timeout 2000 >/dev/null 2>&1
}

root_links_before=$(ip -o link show | awk -F': ' '{ print $2 }' | sort)
hosts_up 3
[ "$(ip netns list | grep -c "^$HOSTS_PREFIX")" = 4 ] ||
    ipvfs_fail "expected 4 namespaces (3 hosts, the switch): $(ip netns list)"
nsids=
for ns in node1 node2 node3 sw; do
    nsids="$nsids $(stat -L -c %i "/run/netns/$HOSTS_PREFIX$ns")" || ipvfs_fail "no /run/netns/$HOSTS_PREFIX$ns"
done

mpicc -o "$tmp/hello" "$IPVFS_SRCDIR/test/hosts/mpi_hello.c" || ipvfs_fail "mpicc mpi_hello.c"
out=$(hosts_mpiexec node1 -hosts node1,node2,node3 -n 3 timeout 30 "$tmp/hello" 2>&1) ||
    ipvfs_fail "hosts_mpiexec failed: $out"
echo "$out"
[ "$(grep -c ' of 3 on node[123] sum 3$' <<<"$out")" = 3 ] || ipvfs_fail "not 3 ranks that add up"
[ "$(awk '/ of 3 on / { print $6 }' <<<"$out" | sort -u | wc -l)" = 3 ] ||
    ipvfs_fail "the 3 ranks did not run on 3 distinct hosts"

full=$(measure)
echo "iperf3 node1 -> node2 unshaped: $full Mbit/s"
hosts_shape node2 50mbit
shaped=$(measure)
echo "iperf3 node1 -> node2 shaped to 50mbit: $shaped Mbit/s"
awk -v r="$shaped" 'BEGIN { exit !(r >= 30 && r <= 55) }' ||
    ipvfs_fail "shaped to 50mbit, measured $shaped Mbit/s (want 30..55)"
hosts_unshape node2

for h in node2 node3; do
    hosts_exec "$h" timeout 30 iperf3 -s -p 5202 >/dev/null 2>&1 &   # ends with hosts_down
    wait_listen "$h" 5202
done
connects node2 || ipvfs_fail "node1 cannot connect to node2"
hosts_link node2 down
connects node2 && ipvfs_fail "node1 still connects to node2 with node2's link down"
connects node3 || ipvfs_fail "node1 cannot connect to node3 while node2's link is down"
hosts_link node2 up
ok=0
for ((i = 0; i < 20; i++)); do
    connects node2 && { ok=1; break; }
    sleep 0.2
done
[ "$ok" = 1 ] || ipvfs_fail "node1 cannot connect to node2 after its link is up again"
echo "link down/up: connect fails while down, works again after up"

# (2>/dev/null: the subshells running these report the kill -9)
hosts_exec node3 sleep 60 2>/dev/null &
hosts_exec node3 sh -c 'sleep 61 & sleep 62' 2>/dev/null &
for ((i = 0; i < 50; i++)); do
    [ "$(ip netns pids "${HOSTS_PREFIX}node3" | wc -l)" -ge 3 ] && break
    sleep 0.1
done
hosts_crash node3
[ -z "$(ip netns pids "${HOSTS_PREFIX}node3")" ] || ipvfs_fail "processes survive hosts_crash node3"
ip -n "${HOSTS_PREFIX}node3" -o link show eth0 | grep -q 'state DOWN' ||
    ipvfs_fail "node3's link is not down after hosts_crash"
echo "hosts_crash node3: no process left, link down"

prefix=$HOSTS_PREFIX
hosts_down || ipvfs_fail "hosts_down failed"
wait    # the background hosts_exec wrappers, whose commands died with their hosts
ip netns list | grep -q "^$prefix" && ipvfs_fail "namespaces remain: $(ip netns list)"
ls -d /etc/netns/"$prefix"* 2>/dev/null && ipvfs_fail "/etc/netns entries remain"
# A process is in one of the test's network namespaces when its ns/net
# link names one of their inodes (a zombie has no link: it is gone).
for l in /proc/[0-9]*/ns/net; do
    id=$(stat -L -c %i "$l" 2>/dev/null) || continue
    for n in $nsids; do
        [ "$id" = "$n" ] && ipvfs_fail "process $(cut -d/ -f3 <<<"$l") is still in a namespace of the test"
    done
done
[ "$(ip -o link show | awk -F': ' '{ print $2 }' | sort)" = "$root_links_before" ] ||
    ipvfs_fail "the root namespace's links changed"
ip -o addr show | grep -q '198\.18\.' && ipvfs_fail "a 198.18 address in the root namespace"
echo "hosts_down: no namespace, /etc/netns entry or process left"
echo "PASS"
