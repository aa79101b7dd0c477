#!/bin/bash
# The servers under Slurm, as doc/launching.md documents it:
#   srun -O -n 4 --mpi=pmi2 ipvfs-server --io-nodes 1 --targets-per-io 3 ...
# (Debian's MPICH takes its PMI-2 from srun).  A kill -9 of a target's and
# then of the I/O node's (metadata rank's) serving process ends neither the
# job nor any other rank: each supervisor restarts its process (status
# shows the restart and the cause), the member comes back up, a file
# written before reads back byte-exact, and `ipvfs-ctl shutdown` ends the
# job with status 0.
# The Slurm is the test's own (test/hosts/slurm_lib.sh: munged, slurmctld
# and slurmd on one emulated host, node1, of test/hosts_lib.sh); srun, the
# clients (mpiexec) and ipvfs-ctl run on node1, where the ranks, all on
# one host, listen on 127.0.0.1.  Skips (77) unless root with usable
# `ip netns`, Slurm and munge (scripts/setup-deps.sh installs them).
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/hosts/slurm_lib.sh"
e2e_require
hosts_require
slurm_require
export E2E_NP=2
srun_pid=
# A failed test still stops the job cleanly when it can; hosts_down
# (lib.sh's EXIT trap, after this) cancels what is left through Slurm and
# kills every process on the host.
ipvfs_test_cleanup() {
    [ -n "$srun_pid" ] || return 0
    kill -0 "$srun_pid" 2>/dev/null &&
        timeout 20 "$HOSTS_NETNS_SSH" node1 "$IPVFS_CTL_BIN" shutdown >/dev/null 2>&1
    srun_pid=
}

IPVFS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-test.XXXXXX") || ipvfs_fail "mktemp"
export IPVFS_CLUSTER_DIR IPVFS_MAP=$IPVFS_CLUSTER_DIR/ipvfs.map
# ipvfs_ctl (status, ipvfs_serving_pids) and e2e_run's mpiexec on node1
export IPVFS_ON_HOST="$HOSTS_NETNS_SSH node1" E2E_ON_HOST="$HOSTS_NETNS_SSH node1"

hosts_up 1
slurm_up node1
# setsid: srun leads its own process group, its output in server.log
setsid "$HOSTS_NETNS_SSH" node1 srun -O -n 4 --mpi=pmi2 -J "ipvfs-test-$$" "$IPVFS_SERVER_BIN" \
    --io-nodes 1 --targets-per-io 3 --data "$IPVFS_CLUSTER_DIR" --map "$IPVFS_MAP" --target-size 64M \
    --no-bind >"$IPVFS_CLUSTER_DIR/server.log" 2>&1 </dev/null &
srun_pid=$!
for ((i = 0; i < 600; i++)); do
    [ -s "$IPVFS_MAP" ] && break
    kill -0 "$srun_pid" 2>/dev/null || ipvfs_fail "srun exited before the cluster was ready"
    sleep 0.1
done
[ -s "$IPVFS_MAP" ] || ipvfs_fail "the cluster was not ready under srun within 60 s"
hosts_exec node1 squeue -s -o '%i %j %N' || ipvfs_fail "squeue"
[ "$(hosts_exec node1 squeue -h -s -n "ipvfs-test-$$" -o %i | wc -l)" = 1 ] ||
    ipvfs_fail "the server job step is not running in Slurm"
e2e_run 60 e2e_persist write ipvfs:/s/1 1 >/dev/null || ipvfs_fail "write /s/1"

for rank in 2 0; do
    read -r -a pids < <(ipvfs_serving_pids)
    pid=${pids[$rank]:-}
    [ -n "$pid" ] || ipvfs_fail "no serving process of rank $rank in status"
    kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
    wait_status 60 '
t = st["ranks"]['"$rank"']
assert t["state"] == "serving" and t["restarts"] == 1 and t["last_exit"] == "killed by SIGKILL", t
assert all(r["state"] in ("serving", "degraded") for r in st["ranks"]), st' ||
        ipvfs_fail "rank $rank did not come back under srun within 60 s"
    kill -0 "$srun_pid" 2>/dev/null || ipvfs_fail "the srun job ended after the kill of rank $rank"
    # The volume whole again (the member up, no rank degraded) before the
    # next kill: an I/O node killed while a member still rebuilds and a
    # write-intent region is dirty rightly refuses to start (RAID-5 write
    # hole: --start-dirty-degraded), which is not what this test is about.
    wait_status 60 '
assert vol["missing"] == 0, vol
assert all(r["state"] == "serving" for r in st["ranks"]), st' ||
        ipvfs_fail "the volume was not whole again within 60 s of the kill of rank $rank"
    echo "rank $rank: serving process $pid killed; restarted, the job goes on, the volume whole"
done
e2e_run 60 e2e_persist verify ipvfs:/s/1 1 >/dev/null || ipvfs_fail "/s/1 differs after the kills"
echo "/s/1 reads back byte-exact"

timeout 60 "$HOSTS_NETNS_SSH" node1 "$IPVFS_CTL_BIN" shutdown || ipvfs_fail "ipvfs-ctl shutdown"
for ((i = 0; i < 600; i++)); do
    kill -0 "$srun_pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$srun_pid" 2>/dev/null && ipvfs_fail "srun did not exit within 60 s of the shutdown"
wait "$srun_pid"
rc=$?
srun_pid=
[ "$rc" = 0 ] || ipvfs_fail "the srun job exited with status $rc"
echo "t_survive_slurm: ok"
