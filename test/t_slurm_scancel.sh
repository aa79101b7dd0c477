#!/bin/bash
# The servers' job step cancelled by Slurm (scancel, as at a job's time
# limit) stops every rank cleanly: Slurm signals every process of the step,
# so each serving process gets SIGTERM twice at once (from Slurm and from
# its rank's supervisor, which passes its own on); that is one stop, not a
# request to leave without closing the stores.  Checks: every rank logs
# its stop and none leaves its stores open; a RAID-5 cluster started again
# on the same --data finds its volume clean (no dirty region to resync)
# and every file written before, synced or only closed, byte-exact.
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/hosts/slurm_lib.sh"
e2e_require
hosts_require
slurm_require
export E2E_NP=2

IPVFS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-test.XXXXXX") || ipvfs_fail "mktemp"
export IPVFS_CLUSTER_DIR IPVFS_MAP=$IPVFS_CLUSTER_DIR/ipvfs.map
export IPVFS_ON_HOST="$HOSTS_NETNS_SSH node1" E2E_ON_HOST="$HOSTS_NETNS_SSH node1"
hosts_up 1
slurm_up node1

# srun_servers: the servers as a job step on node1; waits for the map.
srun_servers() {
    rm -f "$IPVFS_MAP"
    setsid "$HOSTS_NETNS_SSH" node1 srun -O -n 4 --mpi=pmi2 -J "ipvfs-test-$$" \
        "$IPVFS_SERVER_BIN" --io-nodes 1 --targets-per-io 3 --data "$IPVFS_CLUSTER_DIR" \
        --map "$IPVFS_MAP" --target-size 64M --no-bind >>"$IPVFS_CLUSTER_DIR/server.log" 2>&1 \
        </dev/null &
    srun_pid=$!
    for ((i = 0; i < 600; i++)); do
        [ -s "$IPVFS_MAP" ] && return 0
        kill -0 "$srun_pid" 2>/dev/null || ipvfs_fail "srun exited before the cluster was ready"
        sleep 0.1
    done
    ipvfs_fail "the cluster was not ready under srun within 60 s"
}

srun_servers
e2e_run 60 e2e_persist write ipvfs:/c/1 1 >/dev/null || ipvfs_fail "write /c/1 (synced)"
e2e_run 60 e2e_persist write-close ipvfs:/c/2 2 >/dev/null || ipvfs_fail "write /c/2 (closed)"

job=$(hosts_exec node1 squeue -h -n "ipvfs-test-$$" -o %i) || ipvfs_fail "squeue"
[ -n "$job" ] || ipvfs_fail "no job ipvfs-test-$$ in squeue"
hosts_exec node1 scancel "$job" || ipvfs_fail "scancel $job"
for ((i = 0; i < 600; i++)); do
    kill -0 "$srun_pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$srun_pid" 2>/dev/null && ipvfs_fail "srun did not end within 60 s of scancel"
wait "$srun_pid"
stops=$(ipvfs_logs | grep -c 'signal 15: stopping this rank')
echo "scancel $job: srun ended; $stops of 4 ranks logged their stop"
[ "$stops" -ge 4 ] || ipvfs_fail "only $stops of 4 ranks logged 'signal 15: stopping this rank'"
if ipvfs_logs | grep 'without closing the stores'; then
    ipvfs_fail "a rank left without closing its stores after scancel"
fi

srun_servers
if ipvfs_logs | grep -E 'resyncing [0-9]+ dirty region'; then
    ipvfs_fail "the volume came back dirty after scancel"
fi
for n in 1 2; do
    e2e_run 60 e2e_persist verify "ipvfs:/c/$n" "$n" >/dev/null || ipvfs_fail "/c/$n differs"
done
echo "started again: volume clean, /c/1 and /c/2 byte-exact"
timeout 60 "$HOSTS_NETNS_SSH" node1 "$IPVFS_CTL_BIN" shutdown || ipvfs_fail "shutdown"
for ((i = 0; i < 600; i++)); do
    kill -0 "$srun_pid" 2>/dev/null || break
    sleep 0.1
done
wait "$srun_pid" || ipvfs_fail "srun exited with status $? after the shutdown"
echo "PASS"
