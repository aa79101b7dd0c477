#!/bin/bash
# Self-test of test/hosts/slurm_lib.sh, a Slurm across emulated hosts
# (test/hosts_lib.sh):
#   - slurm_up node1 node2 brings both nodes to idle (slurmctld on node1,
#     a slurmd per host);
#   - srun --mpi=pmi2 -N 2 -n 4 runs an MPI program (built here with
#     mpicc) with ranks on node1 and on node2, its Allreduce adding up;
#   - the way the servers and their clients run: a long-running step
#     spread over both nodes in the background (a "server" job) and,
#     meanwhile, a second job across both nodes; then, in one allocation,
#     a background step and a second step beside it (srun --exact);
#   - slurm_down cancels the job still running and leaves no slurmctld,
#     slurmd, slurmstepd or munged of the test;
#   - Slurm up again, node1 (the controller's host) crashes under a
#     running job: slurm_down still leaves no process on node2.
# Skips (77) unless root with usable `ip netns`, Slurm and munge
# (scripts/setup-deps.sh installs them), and mpicc.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/hosts/slurm_lib.sh"
hosts_require
slurm_require
command -v mpicc >/dev/null || { echo "skip: no mpicc here"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-slurmtest.XXXXXX") || ipvfs_fail "mktemp"
ipvfs_test_cleanup() {
    rm -rf "$tmp"
}

mpicc -o "$tmp/hello" "$IPVFS_SRCDIR/test/hosts/mpi_hello.c" || ipvfs_fail "mpicc mpi_hello.c"

# check_hello NP OUTPUT: NP ranks that add up, on node1 and on node2.
check_hello() {
    echo "$2"
    [ "$(grep -c " of $1 on node[12] sum $1\$" <<<"$2")" = "$1" ] || ipvfs_fail "not $1 ranks that add up"
    if ! grep -q " on node1 " <<<"$2" || ! grep -q " on node2 " <<<"$2"; then
        ipvfs_fail "the ranks did not run on both node1 and node2"
    fi
}

hosts_up 2
slurm_up node1 node2
hosts_exec node1 sinfo -N -o '%N %t %c' || ipvfs_fail "sinfo"

out=$(hosts_exec node1 timeout 60 srun --mpi=pmi2 -N 2 -n 4 "$tmp/hello" 2>&1) ||
    ipvfs_fail "srun -N 2 -n 4 hello failed: $out"
check_hello 4 "$out"

# A "server" job: one step, a task per node, running until cancelled.
hosts_exec node1 srun -J servers -N 2 --ntasks-per-node=1 sleep 300 >"$tmp/servers.log" 2>&1 &
servers=$!
for ((i = 0; i < 100; i++)); do
    [ "$(hosts_exec node1 squeue -h -n servers -t R -o %D)" = 2 ] && break
    sleep 0.1
done
[ "$i" -lt 100 ] || ipvfs_fail "the server job is not running on 2 nodes after 10 s"
out=$(hosts_exec node1 timeout 60 srun --mpi=pmi2 -N 2 --ntasks-per-node=2 "$tmp/hello" 2>&1) ||
    ipvfs_fail "a second job beside the servers failed: $out"
check_hello 4 "$out"
echo "a second job ran beside the running server job"

# One allocation: a background step on both nodes and, beside it, a
# second step (--exact: a step takes only what it asks for; without it
# the first would hold every CPU of the allocation).
# shellcheck disable=SC2016
out=$(hosts_exec node1 timeout 60 salloc -N 2 --ntasks-per-node=2 bash -c '
    srun --exact -N 2 -n 2 sleep 300 &
    for ((i = 0; i < 100; i++)); do
        squeue -h -s -j "$SLURM_JOB_ID" -o %i | grep -q "\.0$" && break
        sleep 0.1
    done
    srun --exact --mpi=pmi2 -N 2 -n 2 "$1"
    rc=$?
    kill %1
    wait
    exit "$rc"' step-test "$tmp/hello" 2>&1) || ipvfs_fail "a second step in one allocation failed: $out"
check_hello 2 "$(grep '^rank' <<<"$out")"
echo "a second step ran beside a running step in one allocation"

conf_dir=$SLURM_HOSTS_DIR
slurm_down || ipvfs_fail "slurm_down failed"
# The server job was cancelled: its srun ends.
for ((i = 0; i < 100; i++)); do
    kill -0 "$servers" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$servers" 2>/dev/null && ipvfs_fail "the server job's srun still runs after slurm_down"
# check_no_slurm CONF-DIR: no Slurm process of the test is left.
check_no_slurm() {
    local left='' ns p
    for ns in node1 node2 sw; do
        for p in $(ip netns pids "$HOSTS_PREFIX$ns"); do
            case $(cat "/proc/$p/comm" 2>/dev/null) in
            slurmctld|slurmscriptd|slurmd|slurmstepd|munged) left="$left $p" ;;
            esac
        done
    done
    # Anywhere else (a daemon's command line names its configuration);
    # zombies are gone already, waiting for pid 1 to reap them.
    left="$left $(ps -eo pid=,stat=,args= |
        D=$1 awk 'index($0, ENVIRON["D"]) && $2 !~ /^Z/ { print $1 }')"
    read -r -a left <<<"$left"
    [ ${#left[@]} = 0 ] || ipvfs_fail "Slurm processes left after slurm_down:" \
        "$(ps -o pid,args -p "$(IFS=,; echo "${left[*]}")" 2>&1)"
    [ -e "$1" ] && ipvfs_fail "$1 remains after slurm_down"
}
check_no_slurm "$conf_dir"
echo "slurm_down: no slurmctld, slurmd, slurmstepd or munged left"

# Again, and the controller's host crashes under a running job: slurm_down
# still ends the slurmd, the step and its task on node2.
slurm_up node1 node2
hosts_exec node1 srun -J servers -N 2 --ntasks-per-node=1 sleep 300 >"$tmp/servers.log" 2>&1 &
for ((i = 0; i < 100; i++)); do
    [ "$(hosts_exec node1 squeue -h -n servers -t R -o %D)" = 2 ] &&
        ip netns pids "${HOSTS_PREFIX}node2" | sed 's|^|/proc/|; s|$|/comm|' |
        xargs cat 2>/dev/null | grep -qx sleep && break
    sleep 0.1
done
[ "$i" -lt 100 ] || ipvfs_fail "the second server job is not running on 2 nodes after 10 s"
conf_dir=$SLURM_HOSTS_DIR
hosts_crash node1
slurm_down || ipvfs_fail "slurm_down failed after node1 crashed"
check_no_slurm "$conf_dir"
[ -z "$(ip netns pids "${HOSTS_PREFIX}node2")" ] ||
    ipvfs_fail "processes left on node2: $(ip netns pids "${HOSTS_PREFIX}node2" | xargs ps -o pid,args -p)"
wait
echo "node1 crashed: slurm_down still leaves nothing on node2"
echo "PASS"
