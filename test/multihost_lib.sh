# An iPVFS cluster and its clients on several emulated hosts (bash; source
# after test/lib.sh, test/mpi/e2e_lib.sh and test/hosts_lib.sh; raid_lib's
# status_check and wait_status then ask the cluster's hosts).  The
# servers start with doc/launching.md's launch, `mpiexec -hosts ... -n N
# ipvfs-server ...`, Hydra reaching the hosts through test/hosts/netns-ssh
# as it would through ssh; lib.sh's functions (ipvfs_start_cluster,
# ipvfs_stop_cluster, ipvfs_ctl, e2e_run ...) then work across the hosts.
#
#   hosts_up 4
#   mh_servers_on node1 node1:3,node2:3   # mpiexec on node1, ranks 0-2 on node1
#   mh_clients_on node3 node3,node4       # e2e_run's ranks on node3 and node4
#   ipvfs_start_cluster 2 2 --meta-port "$MH_META_PORT"
#   e2e_run 60 e2e_persist write ipvfs:/f 1
#   mh_on node3 env IPVFS_MAP="node1:$MH_META_PORT" ipvfs-ctl ls /   # one command on a host

MH_META_PORT=3334

# mh_on HOST CMD...: CMD on HOST (hosts_exec), with the build's programs on PATH.
mh_on() {
    local host=$1
    shift
    hosts_exec "$host" env PATH="$PATH" "$@"
}

# mh_servers_on HOST HOSTSPEC: the server job's mpiexec runs on HOST and
# places its ranks as HOSTSPEC says (Hydra's -hosts: host:count,... in
# rank order); ipvfs-ctl runs on HOST too.
mh_servers_on() {
    IPVFS_ON_HOST="$HOSTS_NETNS_SSH ${1:?mh_servers_on HOST HOSTSPEC}"
    IPVFS_MPIEXEC_FLAGS="-launcher ssh -launcher-exec $HOSTS_NETNS_SSH -hosts ${2:?} ${MH_SERVER_FLAGS:-}"
    export IPVFS_ON_HOST IPVFS_MPIEXEC_FLAGS
}

# mh_clients_on HOST HOSTLIST: e2e_run's mpiexec runs on HOST, its ranks
# spread over HOSTLIST (host[:count],...).
mh_clients_on() {
    E2E_ON_HOST="$HOSTS_NETNS_SSH ${1:?mh_clients_on HOST HOSTLIST}"
    E2E_MPIEXEC_FLAGS="-launcher ssh -launcher-exec $HOSTS_NETNS_SSH -hosts ${2:?}"
    export E2E_ON_HOST E2E_MPIEXEC_FLAGS
}
