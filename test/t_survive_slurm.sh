#!/bin/bash
# The servers under Slurm, as the README documents it:
#   srun -O -n 4 --mpi=pmi2 ipvfs-server --io-nodes 1 --targets-per-io 3 ...
# (Debian's MPICH takes its PMI-2 from srun).  A kill -9 of a target's and
# then of the I/O node's (metadata rank's) serving process ends neither the
# job nor any other rank: each supervisor restarts its process (status
# shows the restart and the cause), the member comes back up, a file
# written before reads back byte-exact, and `ipvfs-ctl shutdown` ends the
# job with status 0.  Skips (77) where no Slurm runs here
# (scripts/setup-slurm.sh sets up a one-host Slurm, as root).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
e2e_require
command -v srun >/dev/null && command -v sinfo >/dev/null ||
    { echo "skip: no Slurm here (srun, sinfo); scripts/setup-slurm.sh sets one up"; exit 77; }
state=$(timeout 10 sinfo -h -o %t 2>/dev/null | head -1)
case $state in
idle|mix) ;;
*) echo "skip: no Slurm node is idle (sinfo: '${state}'); scripts/setup-slurm.sh starts one"
   exit 77 ;;
esac
export E2E_NP=2
srun_pid=
# A failed test still stops the job cleanly when it can (a serving
# process outlives a killed srun until Slurm reaps the step), else cancels
# it through Slurm, then kills what is left of srun.
ipvfs_test_cleanup() {
    local i
    [ -n "$srun_pid" ] || return 0
    timeout 30 "$IPVFS_CTL_BIN" shutdown >/dev/null 2>&1 || scancel --name "ipvfs-test-$$" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        kill -0 "$srun_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 -- "-$srun_pid" 2>/dev/null
    srun_pid=
}

IPVFS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-test.XXXXXX") || ipvfs_fail "mktemp"
export IPVFS_CLUSTER_DIR IPVFS_MAP=$IPVFS_CLUSTER_DIR/ipvfs.map
# setsid: srun leads its own process group (the cleanup kills all of it)
setsid srun -O -n 4 --mpi=pmi2 -J "ipvfs-test-$$" "$IPVFS_SERVER_BIN" --io-nodes 1 \
    --targets-per-io 3 --data "$IPVFS_CLUSTER_DIR" --map "$IPVFS_MAP" --target-size 64M \
    --no-bind >"$IPVFS_CLUSTER_DIR/server.log" 2>&1 </dev/null &
srun_pid=$!
for ((i = 0; i < 600; i++)); do
    [ -s "$IPVFS_MAP" ] && break
    kill -0 "$srun_pid" 2>/dev/null || ipvfs_fail "srun exited before the cluster was ready"
    sleep 0.1
done
[ -s "$IPVFS_MAP" ] || ipvfs_fail "the cluster was not ready under srun within 60 s"
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
    echo "rank $rank: serving process $pid killed; restarted, the job goes on"
done
wait_status 60 'assert vol["missing"] == 0, vol' || ipvfs_fail "the member did not come back up"
e2e_run 60 e2e_persist verify ipvfs:/s/1 1 >/dev/null || ipvfs_fail "/s/1 differs after the kills"

timeout 150 ipvfs-ctl shutdown || ipvfs_fail "ipvfs-ctl shutdown"
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
