# Shared helpers of the iPVFS integration tests (bash; source it).
#
#   . "$IPVFS_SRCDIR/test/lib.sh"
#   ipvfs_start_cluster 2 2 --target-size 256M   # NIO NT [more server options]
#   ipvfs-ctl status || ipvfs_fail "status failed"
#   ipvfs_restart_cluster                        # clean stop, same data, same options
#   ipvfs_kill_cluster                           # kill -9 every server process (crash test)
#   ipvfs_start_cluster 2 2                      # ...again on the same IPVFS_CLUSTER_DIR
#   ipvfs_stop_cluster                           # ipvfs-ctl shutdown; fails if unclean
#   kill -TERM <pids>; ipvfs_wait_cluster 30     # the job's exit status
#   ipvfs_wait_log 'rebuilding -> up'            # a server log line, with a deadline
#   ipvfs_logs | grep -c 'assumed clean'         # every line the servers logged
#   ipvfs_serving_pids                           # every rank's serving process
#
# Environment used: IPVFS_BUILDDIR (binaries: backend/ipvfs-server,
# tools/ipvfs-ctl), TMPDIR, IPVFS_MPIEXEC_FLAGS (extra mpiexec flags, e.g.
# -disable-auto-cleanup, or -hosts ...), IPVFS_KEEP=1 (keep the cluster
# directory at exit), IPVFS_ON_HOST (a command prefix that runs mpiexec and
# ipvfs-ctl on one host of the cluster: test/multihost_lib.sh sets it to
# an emulated host's; empty: this host).
#
# Exported after a start: IPVFS_MAP (the server map), IPVFS_CLUSTER_DIR (the
# server's --data directory; server.log (mpiexec's output), log/ (the
# ranks' logs) and ipvfs.map live in it too).
# One cluster at a time per test.  The EXIT trap installed here kills what
# is still running and removes the directory; a test that needs its own
# cleanup defines a function ipvfs_test_cleanup, which the trap calls first.

IPVFS_BUILDDIR=${IPVFS_BUILDDIR:?IPVFS_BUILDDIR must name the build directory}
IPVFS_SERVER_BIN=$IPVFS_BUILDDIR/backend/ipvfs-server
IPVFS_CTL_BIN=$IPVFS_BUILDDIR/tools/ipvfs-ctl
export PATH=$IPVFS_BUILDDIR/backend:$IPVFS_BUILDDIR/tools:$PATH

_ipvfs_pid=          # mpiexec of the running cluster (leader of its process group)
_ipvfs_args=()       # NIO NT and extra options, for restarts

# ipvfs_ctl ARGS...: ipvfs-ctl, run where the cluster's hosts are.
ipvfs_ctl() {
    # shellcheck disable=SC2086
    ${IPVFS_ON_HOST:-} "$IPVFS_CTL_BIN" "$@"
}

# Prints a failure (with the server log's tail when there is one), exits 1.
ipvfs_fail() {
    echo "FAIL: $*" >&2
    if [ -n "${IPVFS_CLUSTER_DIR:-}" ] && [ -f "$IPVFS_CLUSTER_DIR/server.log" ]; then
        echo "--- last lines of $IPVFS_CLUSTER_DIR/server.log (mpiexec's output):" >&2
        tail -n 10 "$IPVFS_CLUSTER_DIR/server.log" >&2
        echo "--- last lines of the ranks' logs ($IPVFS_CLUSTER_DIR/log), by time:" >&2
        cat "$IPVFS_CLUSTER_DIR"/log/rank-*.log 2>/dev/null | sort -s -k1,1 | tail -n 30 >&2
    fi
    exit 1
}

# ipvfs_logs: everything the servers logged: mpiexec's output (server.log:
# start-up lines, fatal errors, sanitizer reports) and each rank's own log
# (--log-dir, by default DATA/log: rank-<r>.log, older lines in .log.1).
ipvfs_logs() {
    local f
    cat "$IPVFS_CLUSTER_DIR/server.log" 2>/dev/null
    for f in "$IPVFS_CLUSTER_DIR"/log/rank-*.log; do
        [ -f "$f" ] || continue
        cat "$f.1" 2>/dev/null
        cat "$f"
    done
}

# ipvfs_start_cluster NIO NT [server options...]: starts the cluster and
# waits (60 s at most) until rank 0 has written the map.
ipvfs_start_cluster() {
    local nio=${1:?ipvfs_start_cluster NIO NT [options]} nt=${2:?ipvfs_start_cluster NIO NT}
    local n=$((nio * (1 + nt))) i
    shift 2
    [ -x "$IPVFS_SERVER_BIN" ] || ipvfs_fail "no server binary at $IPVFS_SERVER_BIN"
    [ -z "$_ipvfs_pid" ] || ipvfs_fail "a cluster is already running"
    if [ -z "${IPVFS_CLUSTER_DIR:-}" ]; then
        IPVFS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-test.XXXXXX") ||
            ipvfs_fail "cannot make a cluster directory"
    fi
    export IPVFS_CLUSTER_DIR IPVFS_MAP=$IPVFS_CLUSTER_DIR/ipvfs.map
    _ipvfs_args=("$nio" "$nt" "$@")
    rm -f "$IPVFS_MAP"   # a map left by an earlier run must not look like readiness
    echo "=== starting $n ranks: $nio I/O nodes x $nt targets $*" >>"$IPVFS_CLUSTER_DIR/server.log"
    # setsid: the job gets its own process group, so that a kill reaches all of it.
    # shellcheck disable=SC2086
    setsid ${IPVFS_ON_HOST:-} mpiexec ${IPVFS_MPIEXEC_FLAGS:-} -n "$n" "$IPVFS_SERVER_BIN" \
        --io-nodes "$nio" --targets-per-io "$nt" --data "$IPVFS_CLUSTER_DIR" \
        --map "$IPVFS_MAP" "$@" >>"$IPVFS_CLUSTER_DIR/server.log" 2>&1 </dev/null &
    _ipvfs_pid=$!
    for ((i = 0; i < 600; i++)); do
        [ -s "$IPVFS_MAP" ] && return 0
        if ! kill -0 "$_ipvfs_pid" 2>/dev/null; then
            wait "$_ipvfs_pid"
            local rc=$?
            _ipvfs_pid=
            ipvfs_fail "the server exited (status $rc) before it was ready"
        fi
        sleep 0.1
    done
    ipvfs_fail "the cluster was not ready within 60 s"
}

# Waits up to $1 seconds for mpiexec; its exit status, or 124 on timeout.
_ipvfs_wait_job() {
    local limit=$1 i
    for ((i = 0; i < limit * 10; i++)); do
        if ! kill -0 "$_ipvfs_pid" 2>/dev/null; then
            wait "$_ipvfs_pid"
            return $?
        fi
        sleep 0.1
    done
    return 124
}

# The children of the pids given (one level).
_ipvfs_children() {
    local p
    for p in "$@"; do
        ps -o pid= --ppid "$p" 2>/dev/null
    done
}

# Kills every process of the running cluster: its process group, Hydra's
# proxies, the ranks (supervisors, whose pids the map names too) and their
# serving processes; waits (10 s at most) until the serving processes are
# gone, since nobody reaps them for us and the next start must not meet
# them on the same files.
_ipvfs_kill9() {
    local pids= sups= serving= p i
    if [ -n "$_ipvfs_pid" ]; then
        # Hydra's proxies and the ranks under them run in process groups of their own.
        pids=$(_ipvfs_children "$_ipvfs_pid")
        # shellcheck disable=SC2086
        sups=$(_ipvfs_children $pids)
    fi
    if [ -n "${IPVFS_MAP:-}" ] && [ -f "$IPVFS_MAP" ]; then
        sups="$sups $(awk '$1 == "rank" { print $9 }' "$IPVFS_MAP")"
    fi
    # shellcheck disable=SC2086
    serving=$(_ipvfs_children $sups)
    # The serving processes first, in one command, so that all of them die
    # within microseconds, as in a power cut: killing mpiexec or the
    # supervisors first would let Hydra or PR_SET_PDEATHSIG end them one by
    # one, and an I/O node that outlives its targets by a moment records
    # them as failed (a crash test then finds a stale member).
    # shellcheck disable=SC2086
    [ -n "${serving// /}" ] && kill -9 $serving 2>/dev/null
    [ -n "$_ipvfs_pid" ] && kill -9 -- "-$_ipvfs_pid" 2>/dev/null
    # shellcheck disable=SC2086
    [ -n "${pids// /}${sups// /}" ] && kill -9 $pids $sups 2>/dev/null
    for p in $serving; do
        for ((i = 0; i < 100; i++)); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
    done
    [ -n "$_ipvfs_pid" ] && _ipvfs_wait_job 10
    _ipvfs_pid=
    return 0
}

# ipvfs_stop_cluster: clean shutdown through ipvfs-ctl; fails (after
# killing what is left) when the shutdown or the job's exit is not clean.
ipvfs_stop_cluster() {
    local rc
    [ -n "$_ipvfs_pid" ] || ipvfs_fail "no cluster is running"
    if ! timeout 150 ${IPVFS_ON_HOST:-} "$IPVFS_CTL_BIN" shutdown; then
        _ipvfs_kill9
        ipvfs_fail "ipvfs-ctl shutdown failed"
    fi
    _ipvfs_wait_job 60
    rc=$?
    if [ "$rc" = 124 ]; then
        _ipvfs_kill9
        ipvfs_fail "the server did not exit within 60 s of the shutdown"
    fi
    _ipvfs_pid=
    [ "$rc" = 0 ] || ipvfs_fail "the server job exited with status $rc"
}

# ipvfs_restart_cluster: clean stop, then a start on the same directory
# with the same options.
ipvfs_restart_cluster() {
    local args=("${_ipvfs_args[@]}")
    ipvfs_stop_cluster
    ipvfs_start_cluster "${args[@]}"
}

# ipvfs_wait_cluster [SECONDS]: waits (default 60 s) for the server job to
# end by itself (after signals, or a lost rank); returns its exit status,
# 124 if it is still running (it is then killed).
ipvfs_wait_cluster() {
    local rc
    [ -n "$_ipvfs_pid" ] || ipvfs_fail "no cluster is running"
    _ipvfs_wait_job "${1:-60}"
    rc=$?
    [ "$rc" = 124 ] && _ipvfs_kill9
    _ipvfs_pid=
    return "$rc"
}

# ipvfs_kill_cluster: kill -9 every server process (for crash tests); the
# directory stays, so ipvfs_start_cluster can bring the data back.
ipvfs_kill_cluster() {
    [ -n "$_ipvfs_pid" ] || ipvfs_fail "no cluster is running"
    _ipvfs_kill9
}

# ipvfs_wait_log PATTERN [SECONDS]: waits (default 20 s) until the
# servers' logs (ipvfs_logs) have a line matching the extended regex
# PATTERN.  A rank may log a line after the reply that caused it, so a
# line that an action logs is waited for, never grepped at once.
ipvfs_wait_log() {
    local pattern=$1 limit=${2:-20} i
    for ((i = 0; i < limit * 10; i++)); do
        ipvfs_logs | grep -Eq -- "$pattern" && return 0
        sleep 0.1
    done
    return 1
}

# ipvfs_serving_pids: the pids of the ranks' serving processes, in rank
# order, from ipvfs-ctl status (the map names the ranks' supervisors, the
# MPI processes, which pass SIGTERM on but not SIGSTOP).  Fails unless
# every rank answers.
ipvfs_serving_pids() {
    ipvfs_ctl status --json | python3 -c '
import json, sys
print(" ".join(str(r["pid"]) for r in json.load(sys.stdin)["ranks"]))'
}

_ipvfs_cleanup() {
    local rc=$?
    if declare -F ipvfs_test_cleanup >/dev/null; then
        ipvfs_test_cleanup
    fi
    if [ -n "$_ipvfs_pid" ]; then
        echo "cleanup: killing the cluster still running" >&2
        _ipvfs_kill9
    fi
    # test/hosts_lib.sh's emulated hosts (and a Slurm in them), when used
    declare -F _hosts_cleanup >/dev/null && _hosts_cleanup
    if [ -n "${IPVFS_CLUSTER_DIR:-}" ] && [ -z "${IPVFS_KEEP:-}" ]; then
        rm -rf "$IPVFS_CLUSTER_DIR"
    fi
    exit "$rc"
}
trap _ipvfs_cleanup EXIT
trap 'exit 130' INT TERM
