#!/bin/bash
# shellcheck disable=SC2015
# The servers and their clients as Slurm jobs across four emulated hosts
# (test/hosts_lib.sh, a Slurm of test/hosts/slurm_lib.sh on all four):
#
#   node1, node2: the server job, one step of 6 ranks spread 3 + 3
#     (srun --mpi=pmi2 -N 2 --ntasks-per-node=3 ipvfs-server --io-nodes 2
#      --targets-per-io 2 --meta-port 3334 ...), srun run on node1
#   node3, node4: the client jobs, srun --mpi=pmi2 -N 2 -n 4 with
#     libipvfs-romio.so preloaded
#
# Checks that the ranks srun placed listen on their own hosts' addresses
# (--listen auto: 198.18.0.1 and .2, never 127.0.0.1; rank 0 on
# --meta-port) and status names their hosts; that the end-to-end program
# (map from the shared file) and IOR-like file-per-process traffic (map
# from the metadata rank, IPVFS_MAP=node1:3334 + IPVFS_KEY) run byte-exact
# as client jobs whose tasks ran on node3 and node4; that a kill -9 of the
# serving process of I/O node 1 (rank 3, on node2) is restarted by its
# supervisor under srun, the step going on, its volume whole again and the
# files written (and synced) before read back byte-exact; that `ipvfs-ctl
# shutdown` (from node4) ends the server srun with status 0 and no job is
# left; and that slurm_down then leaves no Slurm daemon nor server process.
# Skips (77) unless root with usable `ip netns`, Slurm and munge
# (scripts/setup-deps.sh installs them).
# timeout: 150
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/hosts/slurm_lib.sh"
e2e_require
hosts_require
slurm_require
IOR=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$IOR" ] || { echo "skip: $IOR is not built"; exit 77; }
META_PORT=3334

srun_pid=
# A failed test stops the servers when it can; hosts_down (lib.sh's EXIT
# trap, after this) cancels every job and kills what is left on the hosts.
ipvfs_test_cleanup() {
    [ -n "$srun_pid" ] || return 0
    kill -0 "$srun_pid" 2>/dev/null && timeout 20 "$HOSTS_NETNS_SSH" node1 \
        "$IPVFS_CTL_BIN" --map "$IPVFS_MAP" shutdown >/dev/null 2>&1
    srun_pid=
}

IPVFS_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-test.XXXXXX") || ipvfs_fail "mktemp"
export IPVFS_CLUSTER_DIR IPVFS_MAP=$IPVFS_CLUSTER_DIR/ipvfs.map
# ipvfs_ctl, ipvfs_serving_pids: ipvfs-ctl on node3, a client host (it
# reads the map file, on the file system every host shares)
export IPVFS_ON_HOST="$HOSTS_NETNS_SSH node3"

hosts_up 4
slurm_up node1 node2 node3 node4

# The server job: srun on node1, in the background, its own session.
setsid "$HOSTS_NETNS_SSH" node1 srun --mpi=pmi2 -J "ipvfs-servers-$$" -w node1,node2 -N 2 \
    --ntasks-per-node=3 -n 6 "$IPVFS_SERVER_BIN" --io-nodes 2 --targets-per-io 2 \
    --data "$IPVFS_CLUSTER_DIR" --map "$IPVFS_MAP" --target-size 256M --meta-port "$META_PORT" \
    >"$IPVFS_CLUSTER_DIR/server.log" 2>&1 </dev/null &
srun_pid=$!
start=$SECONDS
for ((i = 0; i < 600; i++)); do
    [ -s "$IPVFS_MAP" ] && break
    if ! kill -0 "$srun_pid" 2>/dev/null; then
        wait "$srun_pid"
        ipvfs_fail "the server srun exited (status $?) before the cluster was ready"
    fi
    sleep 0.1
done
[ -s "$IPVFS_MAP" ] || ipvfs_fail "the cluster was not ready under srun within 60 s"
echo "cluster ready under srun after $((SECONDS - start)) s"
hosts_exec node1 squeue -s -o '%i %j %N' || ipvfs_fail "squeue"

# Where each rank runs and listens.
ipvfs_ctl status --json >"$IPVFS_CLUSTER_DIR/status.json" || ipvfs_fail "ipvfs-ctl status from node3"
python3 - "$IPVFS_CLUSTER_DIR/status.json" "$META_PORT" <<'EOF' ||
import json, sys
ranks = json.load(open(sys.argv[1]))["ranks"]
assert len(ranks) == 6, ranks
for r in ranks:
    node = "node1" if r["rank"] < 3 else "node2"
    assert r["state"] == "serving", r
    assert r["node"] == node, (r["rank"], r["node"], node)
    assert r["host"] == "198.18.0." + node[4:], (r["rank"], r["host"])
assert int(ranks[0]["port"]) == int(sys.argv[2]), ("rank 0 not on --meta-port", ranks[0])
for io in (0, 3):
    for m in ranks[io]["volume"]["members"]:
        assert m["url"].startswith("iscsi://198.18.0.%d:" % (1 + io // 3)), m
print("ranks:", ", ".join("%d %s %s:%s" % (r["rank"], r["node"], r["host"], r["port"]) for r in ranks))
EOF
    ipvfs_fail "status under srun is wrong: $(cat "$IPVFS_CLUSTER_DIR/status.json")"
grep -q '127\.0\.0\.1' "$IPVFS_MAP" && ipvfs_fail "the map names 127.0.0.1: $(cat "$IPVFS_MAP")"
echo "srun's ranks listen on node1's and node2's addresses; status names their hosts"

# client_job NAME SECONDS PROGRAM ARGS...: a client job from node3,
# 4 ranks on node3 and node4, libipvfs-romio.so preloaded (in the tasks
# only: srun itself must not load it); its output in NAME.out, each task
# saying first where it runs.
client_job() {
    local name=$1 limit=$2 out=$IPVFS_CLUSTER_DIR/$1.out
    shift 2
    # netns-ssh joins its arguments into one command line, as ssh does:
    # the sh -c script is quoted once more for it.
    # shellcheck disable=SC2016
    timeout -k 5 "$limit" "$HOSTS_NETNS_SSH" node3 srun --mpi=pmi2 -J "ipvfs-$name-$$" \
        -w node3,node4 -N 2 --ntasks-per-node=2 -n 4 sh -c \
        "'"'echo "task $SLURM_PROCID on $(hostname)"; exec env LD_PRELOAD="$0" "$@"'"'" \
        "$E2E_ROMIO_LIB" "$@" >"$out" 2>&1 </dev/null || return 1
    [ "$(grep -cE '^task [0-3] on node[34]$' "$out")" = 4 ] && grep -q '^task . on node3$' "$out" &&
        grep -q '^task . on node4$' "$out" ||
        { echo "the $name job's 4 tasks did not run on node3 and node4" >&2; return 1; }
}

client_job e2e_io 120 "$E2E_PROGS/e2e_io" ipvfs:/slurm/io --nio 2 ||
    { cat "$IPVFS_CLUSTER_DIR/e2e_io.out"; ipvfs_fail "e2e_io as a Slurm job on node3+node4"; }
grep -q '^PASS e2e_io (0 failures)' "$IPVFS_CLUSTER_DIR/e2e_io.out" ||
    { cat "$IPVFS_CLUSTER_DIR/e2e_io.out"; ipvfs_fail "e2e_io did not report PASS"; }
echo "e2e_io passed as a Slurm job on node3+node4 (map from the shared file)"

# ior_job NAME PHASES IOR-FLAGS...: ipvfs-ior (file per process,
# verified, kept) as a client job, the map from the metadata rank; a
# RESULT line without errors for each of the PHASES phases.
ior_job() {
    local name=$1 want=$2 phases
    shift 2
    IPVFS_MAP=node1:$META_PORT IPVFS_KEY=$IPVFS_CLUSTER_DIR/secret \
        client_job "$name" 120 "$IOR" -f ipvfs:/slurm/ior -b 8m -t 1m -F -v -k "$@" || {
            cat "$IPVFS_CLUSTER_DIR/$name.out"
            ipvfs_fail "ipvfs-ior $* as a Slurm job with IPVFS_MAP=node1:$META_PORT"
        }
    grep '^RESULT' "$IPVFS_CLUSTER_DIR/$name.out"
    phases=$(grep -c '^RESULT .*errors=0 ' "$IPVFS_CLUSTER_DIR/$name.out")
    [ "$phases" = "$want" ] ||
        { cat "$IPVFS_CLUSTER_DIR/$name.out"; ipvfs_fail "ipvfs-ior $*: not $want phases without errors"; }
}
ior_job ior 2 -w -r -e   # -e: synced before close
echo "ipvfs-ior passed as a Slurm job (map from the metadata rank at node1:$META_PORT)"

# kill -9 of the serving process of rank 3 (I/O node 1, on node2): its
# supervisor, a task of the server step, starts another, which finds its
# volume and datafiles again; the step goes on.  The files read back
# afterwards come from node2's targets, not from the killed process's L1.
read -r -a pids < <(ipvfs_serving_pids)
pid=${pids[3]:-}
[ -n "$pid" ] || ipvfs_fail "no serving process of rank 3 in status"
ip netns pids "${HOSTS_PREFIX}node2" | grep -qx "$pid" ||
    ipvfs_fail "rank 3's serving process $pid is not on node2"
kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
for ((i = 0; i < 240; i++)); do
    ipvfs_ctl status --json >"$IPVFS_CLUSTER_DIR/status.json" 2>/dev/null &&
        python3 - "$IPVFS_CLUSTER_DIR/status.json" <<'EOF' 2>/dev/null && break
import json, sys
ranks = json.load(open(sys.argv[1]))["ranks"]
t = ranks[3]
assert t["state"] == "serving" and t["restarts"] == 1 and t["last_exit"] == "killed by SIGKILL", t
assert all(r["state"] == "serving" for r in ranks), ranks
assert ranks[3]["volume"]["missing"] == 0, ranks[3]["volume"]
EOF
    sleep 0.25
done
[ "$i" -lt 240 ] || ipvfs_fail "rank 3 was not restarted, every rank serving, within 60 s:" \
    "$(cat "$IPVFS_CLUSTER_DIR/status.json")"
kill -0 "$srun_pid" 2>/dev/null || ipvfs_fail "the server srun ended after the kill of rank 3"
echo "rank 3's serving process $pid killed on node2: restarted under srun, its volume whole"
ior_job ior-after 1 -r
echo "the files written before the kill read back byte-exact"

# Clean shutdown, from node4: the server srun exits with status 0.
timeout 60 "$HOSTS_NETNS_SSH" node4 "$IPVFS_CTL_BIN" --map "$IPVFS_MAP" shutdown ||
    ipvfs_fail "ipvfs-ctl shutdown from node4"
for ((i = 0; i < 600; i++)); do
    kill -0 "$srun_pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$srun_pid" 2>/dev/null && ipvfs_fail "the server srun did not exit within 60 s of the shutdown"
wait "$srun_pid"
rc=$?
srun_pid=
[ "$rc" = 0 ] || ipvfs_fail "the server srun exited with status $rc"
echo "ipvfs-ctl shutdown: the server srun exited with status 0"
for ((i = 0; i < 100; i++)); do
    [ -z "$(hosts_exec node1 squeue -h -o %i)" ] && break
    sleep 0.1
done
[ "$i" -lt 100 ] || ipvfs_fail "jobs left in Slurm 10 s after the shutdown: $(hosts_exec node1 squeue)"

# slurm_down: no Slurm daemon, step or server process is left anywhere.
conf_dir=$SLURM_HOSTS_DIR
slurm_down || ipvfs_fail "slurm_down failed"
left=
for ns in node1 node2 node3 node4 sw; do
    for p in $(ip netns pids "$HOSTS_PREFIX$ns"); do
        case $(cat "/proc/$p/comm" 2>/dev/null) in
        slurmctld|slurmscriptd|slurmd|slurmstepd|munged|ipvfs-server) left="$left $p" ;;
        esac
    done
done
# Anywhere else: a process whose command line names the Slurm or the
# cluster directory (zombies are gone already, waiting for pid 1).
left="$left $(ps -eo pid=,stat=,args= | D1=$conf_dir D2=$IPVFS_CLUSTER_DIR awk '
    (index($0, ENVIRON["D1"]) || index($0, ENVIRON["D2"])) && $2 !~ /^Z/ { print $1 }')"
read -r -a left <<<"$left"
[ ${#left[@]} = 0 ] || ipvfs_fail "processes left after the shutdown and slurm_down:" \
    "$(ps -o pid,args -p "$(IFS=,; echo "${left[*]}")" 2>&1)"
[ -e "$conf_dir" ] && ipvfs_fail "$conf_dir remains after slurm_down"
echo "slurm_down: no Slurm daemon nor server process left"
echo "PASS"
