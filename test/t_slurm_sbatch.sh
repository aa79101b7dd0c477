#!/bin/bash
# shellcheck disable=SC2015
# The batch script of doc/slurm.md, exactly as the doc shows it (the
# block between its "begin ipvfs-job.sh" and "end ipvfs-job.sh" lines),
# submitted with sbatch to a Slurm on two emulated hosts
# (test/hosts_lib.sh, test/hosts/slurm_lib.sh), with the build's programs
# through the script's environment variables:
#   - with ipvfs-ior (file per process, written, synced, read back and
#     verified) as its program: the job completes with exit code 0; its
#     output shows the servers' ranks on node1 and node2, each at its
#     node's address, both of ipvfs-ior's phases without errors,
#     `cluster stopped` and the servers' step ending with status 0; the
#     data directory and the key copies are gone, no job is left;
#   - with a program that fails (false): the job fails with its status 1,
#     the servers still stop cleanly (status 0).
# Skips (77) unless root with usable `ip netns`, Slurm and munge.
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/hosts/slurm_lib.sh"
e2e_require
hosts_require
slurm_require
command -v sbatch >/dev/null && command -v scontrol >/dev/null ||
    { echo "skip: no sbatch or scontrol here"; exit 77; }
IOR=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$IOR" ] || { echo "skip: $IOR is not built"; exit 77; }
doc=$IPVFS_SRCDIR/doc/slurm.md
# lib.sh's EXIT trap removes this directory (IPVFS_KEEP=1 keeps it).
IPVFS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-test.XXXXXX") || ipvfs_fail "mktemp"
export IPVFS_CLUSTER_DIR
tmp=$IPVFS_CLUSTER_DIR

# The script, from the fenced block between the marker lines.
awk '/^<!-- begin ipvfs-job\.sh/ { inside = 1; next }
     /^<!-- end ipvfs-job\.sh/ { inside = 0 }
     inside && /^```/ { fence++; next }
     inside && fence == 1' "$doc" >"$tmp/ipvfs-job.sh"
head -n 1 "$tmp/ipvfs-job.sh" | grep -qx '#!/bin/bash' && grep -q '^srun .*--mpi=pmi2' "$tmp/ipvfs-job.sh" ||
    ipvfs_fail "no batch script between the marker lines of $doc"
bash -n "$tmp/ipvfs-job.sh" || ipvfs_fail "the batch script of $doc does not parse"
echo "doc/slurm.md: $(wc -l <"$tmp/ipvfs-job.sh") lines of batch script"

hosts_up 2
slurm_up node1 node2

# fail_job ID WHY: fails, with the job's output and the ranks' logs.
fail_job() {
    echo "--- the job's output ($tmp/job-$1.out):" >&2
    cat "$tmp/job-$1.out" >&2
    echo "--- last lines of the ranks' logs:" >&2
    cat "$tmp/data/log"/rank-*.log 2>/dev/null | sort -s -k1,1 | tail -n 30 >&2
    hosts_exec node1 scontrol show job "$1" >&2
    ipvfs_fail "job $1: $2"
}

# submit_job PROGRAM ARGS...: submits the script from node1 with the
# build's programs and a small cluster; its id in $job.
submit_job() {
    local out
    out=$(hosts_exec node1 env IPVFS_SERVER="$IPVFS_SERVER_BIN" IPVFS_CTL="$IPVFS_CTL_BIN" \
        IPVFS_ROMIO="$E2E_ROMIO_LIB" IPVFS_DATA="$tmp/data" IPVFS_KEY="$tmp/key" \
        IPVFS_TARGET_SIZE=256M sbatch --parsable -D "$tmp" -o "$tmp/job-%j.out" \
        "$tmp/ipvfs-job.sh" "$@" 2>&1) || ipvfs_fail "sbatch: $out"
    job=${out%%;*}
    [[ $job =~ ^[0-9]+$ ]] || ipvfs_fail "sbatch said '$out', not a job id"
}

# wait_job WHAT: waits (90 s at most) until job $job has left the queue;
# its state and exit code in $state.
wait_job() {
    local i
    for ((i = 0; i < 900; i++)); do
        [ -z "$(hosts_exec node1 squeue -h -j "$job" -o %i 2>/dev/null)" ] && break
        sleep 0.1
    done
    [ "$i" -lt 900 ] || fail_job "$job" "still in the queue after 90 s"
    state=$(hosts_exec node1 scontrol show job "$job" | grep -o 'JobState=[A-Z_]* .*\|ExitCode=[0-9:]*' |
        awk '{ print $1 }' | tr '\n' ' ')
    echo "job $job ($1): $state"
}

run_job() {
    submit_job "$@"
    wait_job "$*"
}

run_job "$IOR" -f ipvfs:/job/ior -b 8m -t 1m -F -w -r -v -e
out=$tmp/job-$job.out
[ "$state" = "JobState=COMPLETED ExitCode=0:0 " ] || fail_job "$job" "not completed with exit code 0: $state"
python3 - "$out" <<'EOF' ||
import re, sys
# RANK ROLE PID ADDRESS STATE ...: ranks 0-2 on node1, 3-5 on node2
rows = re.findall(r"^(\d+) +\S+ +\d+ +198\.18\.0\.(\d+):\d+ +serving ", open(sys.argv[1]).read(), re.M)
assert sorted(rows) == [(str(r), "1" if r < 3 else "2") for r in range(6)], rows
EOF
    fail_job "$job" "ipvfs-ctl status in its output: not ranks 0-2 serving on node1, 3-5 on node2"
grep '^RESULT' "$out"
[ "$(grep -c '^RESULT .*errors=0 ' "$out")" = 2 ] || fail_job "$job" "not 2 ipvfs-ior phases without errors"
grep -q '^cluster stopped' "$out" || fail_job "$job" "no 'cluster stopped'"
grep -qx "ipvfs-job: $IOR exited with status 0" "$out" || fail_job "$job" "no status 0 of the program"
grep -qx 'ipvfs-job: the servers exited with status 0' "$out" || fail_job "$job" "no status 0 of the servers"
[ -e "$tmp/data" ] && fail_job "$job" "the job left its data directory"
[ -e "$tmp/key" ] && fail_job "$job" "the job left its key copy"
echo "the doc's batch script ran ipvfs-ior on node1+node2 and stopped the servers cleanly"

run_job false
out=$tmp/job-$job.out
[ "$state" = "JobState=FAILED ExitCode=1:0 " ] || fail_job "$job" "not failed with exit code 1: $state"
grep -qx "ipvfs-job: false exited with status 1" "$out" || fail_job "$job" "no status 1 of the program"
grep -qx 'srun: error: node1: tasks 0-1: Exited with exit code 1' "$out" &&
    grep -qx 'srun: error: node2: tasks 2-3: Exited with exit code 1' "$out" ||
    fail_job "$job" "the program's tasks did not run 2 on node1 and 2 on node2"
grep -qx 'ipvfs-job: the servers exited with status 0' "$out" || fail_job "$job" "no status 0 of the servers"
echo "a failing program: the job fails with its status, the servers still stop cleanly"

# USR1 to the batch shell (what --signal=B:USR1@300 sends before the time
# limit) while the program runs: the program is stopped (SIGTERM), then
# the servers, cleanly.
# shellcheck disable=SC2016
submit_job sh -c 'echo "task $SLURM_PROCID sleeping"; exec sleep 300'
out=$tmp/job-$job.out
for ((i = 0; i < 600; i++)); do
    [ "$(grep -c '^task [0-3] sleeping$' "$out" 2>/dev/null)" = 4 ] && break
    sleep 0.1
done
[ "$i" -lt 600 ] || fail_job "$job" "its 4 sleeping tasks did not start within 60 s"
hosts_exec node1 scancel --batch --signal=USR1 "$job" || ipvfs_fail "scancel --batch --signal=USR1 $job"
wait_job "sleep, then USR1"
grep -qx 'ipvfs-job: USR1: stopping sh early' "$out" || fail_job "$job" "no word of USR1"
grep -q '^cluster stopped' "$out" || fail_job "$job" "no 'cluster stopped' after USR1"
grep -qx 'ipvfs-job: the servers exited with status 0' "$out" ||
    fail_job "$job" "no status 0 of the servers after USR1"
grep -q '^ipvfs-job: sh exited with status [1-9]' "$out" || fail_job "$job" "the program's status is not an error"
[[ $state == "JobState=FAILED ExitCode="* ]] || fail_job "$job" "not failed: $state"
[ -e "$tmp/data" ] && fail_job "$job" "the job left its data directory after USR1"
echo "USR1 to the batch shell: the program stopped, the servers stopped cleanly"
[ -z "$(hosts_exec node1 squeue -h -o %i)" ] || ipvfs_fail "jobs left: $(hosts_exec node1 squeue)"
echo "PASS"
