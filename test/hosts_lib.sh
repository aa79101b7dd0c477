# shellcheck shell=bash disable=SC2015
# Several emulated hosts on this machine, for the iPVFS integration tests
# (bash; source it after test/lib.sh).  Needs root.
#
#   . "$IPVFS_SRCDIR/test/lib.sh"
#   . "$IPVFS_SRCDIR/test/hosts_lib.sh"
#   hosts_require                        # skip (77) unless root with usable `ip netns`
#   hosts_up 3 [200mbit]                 # hosts node1..node3, links optionally shaped
#   hosts_exec node2 sh -c 'hostname'    # a command on a host (arguments kept as given)
#   hosts_mpiexec node1 -hosts node1,node2 -n 4 ./prog   # Hydra across hosts
#   hosts_addr node2                     # 198.18.0.2 (also in $HOSTS_ADDR_node2)
#   hosts_shape node2 50mbit             # both directions; hosts_unshape node2
#   hosts_link node2 down                # pull its cable; hosts_link node2 up
#   hosts_crash node3                    # link down, then kill -9 all its processes at once
#   hosts_down                           # all of it gone (done at exit anyway)
#
# Topology: a "switch" namespace ${HOSTS_PREFIX}sw holding bridge br0 and,
# per host nodeK, a namespace ${HOSTS_PREFIX}nodeK whose eth0 (address
# 198.18.0.K/24, a benchmarking range that exists only inside these
# namespaces) is a veth whose peer vK is a port of br0.  Each host sees
# /etc/netns/${HOSTS_PREFIX}nodeK/hosts as /etc/hosts, naming every host.
# Commands run there under their own UTS namespace named after the host,
# as sshd would run them.  The root namespace is never touched: it has no
# route to the hosts, so mpiexec, srun, clients... must run inside one.
# HOSTS_PREFIX (exported as IPVFS_NETNS_PREFIX for test/hosts/netns-ssh,
# Hydra's "ssh") is ipvfs-<pid of the test>-, so concurrent tests do not
# meet, and hosts_up removes what a killed earlier test left.
# HOSTS_NETNS_SSH is netns-ssh's path, for mpiexec -launcher-exec.
#
# Cleanup: lib.sh's EXIT trap calls _hosts_cleanup after ipvfs_test_cleanup
# (which stays the test's own) and after killing the cluster: hosts_down,
# which also stops a Slurm started by test/hosts/slurm_lib.sh.

HOSTS_PREFIX=ipvfs-$$-
export IPVFS_NETNS_PREFIX=$HOSTS_PREFIX
HOSTS_NAMES=()       # node1..nodeN while up
HOSTS_NETNS_SSH=${IPVFS_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}/test/hosts/netns-ssh

# hosts_require: exits 77 (skip) when this cannot work here.
hosts_require() {
    local probe=${HOSTS_PREFIX}probe ok=1 c
    [ "$(id -u)" = 0 ] || { echo "skip: emulated hosts need root"; exit 77; }
    for c in ip tc unshare; do
        command -v "$c" >/dev/null || { echo "skip: no $c here"; exit 77; }
    done
    ip netns add "$probe" 2>/dev/null || ok=0
    if [ "$ok" = 1 ]; then
        ip netns exec "$probe" unshare --uts true 2>/dev/null &&
            ip -n "$probe" link add br0 type bridge 2>/dev/null &&
            ip -n "$probe" link add v0 type veth peer name v1 2>/dev/null || ok=0
        ip netns delete "$probe" 2>/dev/null
    fi
    [ "$ok" = 1 ] || { echo "skip: ip netns, bridges or veths are unusable here"; exit 77; }
}

# hosts_addr HOST: the host's address.
hosts_addr() {
    _hosts_known "$1"
    echo "198.18.0.${1#node}"
}

_hosts_known() {
    local h
    for h in "${HOSTS_NAMES[@]}"; do
        [ "$h" = "$1" ] && return 0
    done
    ipvfs_fail "no emulated host '$1' (hosts up: ${HOSTS_NAMES[*]:-none})"
}

# Processes that are gone for good (a zombie counts as gone: pid 1 here
# reaps orphans only after a while).
_hosts_alive() {
    local s
    s=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$s" ] && [ "$s" != Z ]
}

# _hosts_kill_ns NS...: kill -9 every process in these namespaces, all in
# one command, again until none is left (one may have forked meanwhile);
# 10 s at most.
_hosts_kill_ns() {
    local i ns pids
    for ((i = 0; i < 100; i++)); do
        pids=
        for ns in "$@"; do
            pids="$pids $(ip netns pids "$ns" 2>/dev/null)"
        done
        [ -n "${pids// /}" ] || return 0
        # shellcheck disable=SC2086
        kill -9 $pids 2>/dev/null
        sleep 0.1
    done
    echo "hosts: processes left in $*: $pids" >&2
    return 1
}

# _hosts_remove PREFIX: kills, deletes every namespace named PREFIX* and
# their /etc/netns directories.
_hosts_remove() {
    local nss=() ns rc=0
    mapfile -t nss < <(ip netns list 2>/dev/null | awk -v p="$1" 'index($1, p) == 1 { print $1 }')
    if [ ${#nss[@]} -gt 0 ]; then
        _hosts_kill_ns "${nss[@]}" || rc=1
        for ns in "${nss[@]}"; do
            ip netns delete "$ns" 2>/dev/null || rc=1
        done
    fi
    for ns in /etc/netns/"$1"*; do
        [ -e "$ns" ] && rm -rf "$ns"
    done
    return "$rc"
}

# Namespaces left by a test that was killed (SIGKILL: no cleanup ran):
# those named ipvfs-<pid>- where no process <pid> is alive.
_hosts_reap_stale() {
    local p
    for p in $( (ip netns list 2>/dev/null | awk '{ print $1 }'; ls /etc/netns 2>/dev/null) |
                sed -n 's/^ipvfs-\([0-9][0-9]*\)-.*/\1/p' | sort -u); do
        [ "$p" = "$$" ] || _hosts_alive "$p" || _hosts_remove "ipvfs-$p-"
    done
}

_hosts_rate_bits() {
    [[ ${1,,} =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || return 1
    case ${BASH_REMATCH[2]} in
    bit) echo "${BASH_REMATCH[1]}" ;;
    kbit) echo $((BASH_REMATCH[1] * 1000)) ;;
    mbit) echo $((BASH_REMATCH[1] * 1000000)) ;;
    gbit) echo $((BASH_REMATCH[1] * 1000000000)) ;;
    esac
}

# hosts_shape HOST RATE [BURST LIMIT]: shapes the host's link to RATE
# (tc's units: 500kbit, 200mbit, 1gbit) both ways: tbf on its eth0 (what
# it sends) and on the switch's vK (what it receives).  By default the
# bucket holds 10 ms of the rate (16 KiB at least) and the queue 50 ms
# more, enough for one TCP flow to keep the link full without a long
# burst above the rate.  BURST and LIMIT (bytes) set the bucket and the
# queue instead: the benchmarks take a bucket of under three packets, so
# that an idle link is no faster than its rate, and a queue that never
# drops (benchmarks/model-validate-hosts.sh).
hosts_shape() {
    local host=${1:?hosts_shape HOST RATE} rate=${2:?hosts_shape HOST RATE} bits burst queue
    _hosts_known "$host"
    bits=$(_hosts_rate_bits "$rate") || ipvfs_fail "bad rate '$rate' (e.g. 200mbit)"
    if [ $# -ge 4 ]; then
        burst=$3 queue=(limit "$4")
    else
        burst=$((bits / 8 / 100))
        ((burst >= 16384)) || burst=16384
        queue=(latency 50ms)
    fi
    tc -n "$HOSTS_PREFIX$host" qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" \
        "${queue[@]}" || ipvfs_fail "tbf on $host's eth0"
    tc -n "${HOSTS_PREFIX}sw" qdisc replace dev "v${host#node}" root tbf rate "$rate" \
        burst "$burst" "${queue[@]}" || ipvfs_fail "tbf on the switch port of $host"
}

# hosts_iperf_mibs FROM TO: MiB/s that iperf3 moves from host FROM to host
# TO over 3 s (the limit beside a benchmark's figures); fails the run
# when iperf3 gives nothing.
hosts_iperf_mibs() {
    local from=${1:?hosts_iperf_mibs FROM TO} to=${2:?hosts_iperf_mibs FROM TO} mibs='' i
    hosts_exec "$from" iperf3 -s -1 -D >/dev/null 2>&1 || ipvfs_fail "iperf3 server on $from"
    for ((i = 0; i < 50; i++)); do
        mibs=$(hosts_exec "$to" iperf3 -c "$(hosts_addr "$from")" -R -t 3 -f M 2>/dev/null |
            awk '/receiver/ { print $(NF - 2) }') && [ -n "$mibs" ] && break
        sleep 0.1   # the daemon not listening yet
    done
    [ -n "$mibs" ] || ipvfs_fail "iperf3 from $from to $to gave nothing"
    echo "$mibs"
}

# hosts_unshape HOST: the host's link at full speed again.
hosts_unshape() {
    _hosts_known "${1:?hosts_unshape HOST}"
    tc -n "$HOSTS_PREFIX$1" qdisc del dev eth0 root 2>/dev/null
    tc -n "${HOSTS_PREFIX}sw" qdisc del dev "v${1#node}" root 2>/dev/null
    return 0
}

# hosts_up N [RATE]: hosts node1..nodeN (see the top), each link shaped
# to RATE when given.
hosts_up() {
    local n=${1:?hosts_up N [RATE]} rate=${2:-} k h ns sw=${HOSTS_PREFIX}sw
    [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 250)) || ipvfs_fail "hosts_up: bad host count '$n'"
    [ ${#HOSTS_NAMES[@]} = 0 ] || ipvfs_fail "hosts_up: hosts are up already"
    _hosts_reap_stale
    _hosts_remove "$HOSTS_PREFIX"   # a half-made set of this same test
    ip netns add "$sw" && ip -n "$sw" link set lo up &&
        ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up ||
        ipvfs_fail "hosts_up: cannot make the switch namespace $sw"
    for ((k = 1; k <= n; k++)); do
        ns=${HOSTS_PREFIX}node$k
        # veth made inside the switch namespace, its peer moved straight
        # into the host's: no device ever appears in the root namespace.
        ip netns add "$ns" && ip -n "$ns" link set lo up &&
            ip -n "$sw" link add "v$k" type veth peer name eth0 netns "$ns" &&
            ip -n "$sw" link set "v$k" master br0 && ip -n "$sw" link set "v$k" up &&
            ip -n "$ns" addr add "198.18.0.$k/24" dev eth0 && ip -n "$ns" link set eth0 up ||
            ipvfs_fail "hosts_up: cannot make host node$k"
        HOSTS_NAMES+=("node$k")
        export "HOSTS_ADDR_node$k=198.18.0.$k"
    done
    for ((k = 1; k <= n; k++)); do
        mkdir -p "/etc/netns/${HOSTS_PREFIX}node$k" || ipvfs_fail "mkdir /etc/netns/..."
        {
            echo "127.0.0.1 localhost"
            for h in "${HOSTS_NAMES[@]}"; do
                echo "198.18.0.${h#node} $h"
            done
        } >"/etc/netns/${HOSTS_PREFIX}node$k/hosts"
        [ -z "$rate" ] || hosts_shape "node$k" "$rate"
    done
}

# hosts_exec HOST CMD [ARGS...]: runs CMD in HOST's network namespace with
# HOST as host name; its exit status.
hosts_exec() {
    local host=${1:?hosts_exec HOST CMD...}
    shift
    _hosts_known "$host"
    # shellcheck disable=SC2016
    ip netns exec "$HOSTS_PREFIX$host" unshare --uts /bin/sh -c 'hostname "$1" && shift && exec "$@"' \
        hosts_exec "$host" "$@"
}

# hosts_mpiexec HOST MPIEXEC-ARGS...: mpiexec started on HOST, reaching
# the other hosts through test/hosts/netns-ssh.
hosts_mpiexec() {
    local host=${1:?hosts_mpiexec HOST MPIEXEC-ARGS...}
    shift
    hosts_exec "$host" mpiexec -launcher ssh -launcher-exec "$HOSTS_NETNS_SSH" "$@"
}

# hosts_link HOST up|down: the host's network cable in or out.
hosts_link() {
    local host=${1:?hosts_link HOST up|down} state=${2:-}
    _hosts_known "$host"
    case $state in up|down) ;; *) ipvfs_fail "hosts_link $host: up or down, not '$state'" ;; esac
    ip -n "$HOSTS_PREFIX$host" link set eth0 "$state" || ipvfs_fail "hosts_link $host $state"
}

# hosts_crash HOST: the host dies as in a power cut: its link goes down
# first (so that no FIN or RST leaves it, as none would), then every
# process in it gets kill -9 in one command.
hosts_crash() {
    local host=${1:?hosts_crash HOST}
    hosts_link "$host" down
    _hosts_kill_ns "$HOSTS_PREFIX$host" || ipvfs_fail "hosts_crash $host: processes survive"
}

# hosts_down: stops a Slurm of test/hosts/slurm_lib.sh, kills every
# process in every namespace of this test, removes the namespaces (with
# them the bridge and veths) and their /etc/netns entries.  Never exits
# (it runs in the EXIT trap): returns 1, after doing what it can, when
# something stays.
hosts_down() {
    local rc=0
    if declare -F slurm_down >/dev/null; then
        slurm_down || rc=1
    fi
    HOSTS_NAMES=()
    _hosts_remove "$HOSTS_PREFIX" || rc=1
    return "$rc"
}

_hosts_cleanup() {
    hosts_down || echo "cleanup: hosts_down left something behind" >&2
}
