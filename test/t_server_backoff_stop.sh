#!/bin/bash
# timeout: 120
# `ipvfs-ctl shutdown` while a rank waits to restart its serving process
# (1 I/O node x 2 targets, RAID-1, the plain launch of doc/launching.md):
#  - status --json of a rank that does not answer (its serving process
#    stopped with SIGSTOP) shows pid null and the supervisor's pid as
#    supervisor_pid, never the supervisor's pid as the rank's pid;
#  - target rank 2's serving process is killed with kill -9 five times,
#    each time after its restart, so that its supervisor then waits 8 s
#    (BACKOFF) before the next start; a shutdown right then exits 0 (every
#    rank that is up stopped) and names rank 2 as already down; the
#    waiting supervisor starts no serving process, and the job ends within
#    15 s of the shutdown (no 30 s exit-barrier give-up) with status 3 (a
#    rank was down).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"

stopped=
ipvfs_test_cleanup() {
    [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
    stopped=
}

# rank_field RANK KEY: one field of the rank in status --json ("" if none).
rank_field() {
    ipvfs-ctl status --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"][int(sys.argv[1])]
print(r.get(sys.argv[2], ""))' "$1" "$2"
}

# wait_rank SECONDS RANK PYTHON: until the assertion on r (the rank's
# status) holds.
wait_rank() {
    local limit=$1 rank=$2 cond=$3 i
    for ((i = 0; i < limit * 5; i++)); do
        ipvfs-ctl status --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"][int(sys.argv[1])]
exec(sys.argv[2])' "$rank" "$cond" 2>/dev/null && return 0
        sleep 0.2
    done
    return 1
}

ipvfs_start_cluster 1 2 --raid 1 --target-size 64M --no-bind
sup=$(rank_field 2 supervisor_pid)
pid=$(rank_field 2 pid)
[ -n "$sup" ] && [ -n "$pid" ] && [ "$sup" != "$pid" ] || ipvfs_fail "rank 2: pid $pid, supervisor $sup"

# -- a rank that does not answer: no made-up pid
kill -STOP "$pid" && stopped=$pid
ipvfs-ctl status --json >"$IPVFS_CLUSTER_DIR/st.json" 2>/dev/null
python3 - "$IPVFS_CLUSTER_DIR/st.json" "$sup" <<'PYEOF' || ipvfs_fail "status of a rank that does not answer: $(cat "$IPVFS_CLUSTER_DIR/st.json")"
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][2]
assert r["state"] == "unreachable", r
assert r["pid"] is None and r["supervisor_pid"] == int(sys.argv[2]), r
PYEOF
kill -CONT "$pid"
stopped=
echo "a rank that does not answer: pid null, supervisor_pid $sup"

# -- five crashes: the supervisor then waits 8 s before the next start
for n in 1 2 3 4 5; do
    wait_rank 30 2 'assert r["state"] == "serving" and r["restarts"] == '"$((n - 1))"', r' ||
        ipvfs_fail "rank 2 is not serving before crash $n"
    pid=$(rank_field 2 pid)
    kill -9 "$pid" || ipvfs_fail "kill -9 $pid (crash $n)"
    ipvfs_wait_log "target0.1\] error: supervisor: serving process $pid killed by SIGKILL" ||
        ipvfs_fail "crash $n was not logged"
done
ipvfs_logs | grep -q "restarting the serving process in 8000 ms" || ipvfs_fail "no 8 s backoff after 5 crashes"
start=$(date +%s)
out=$(timeout 60 ipvfs-ctl shutdown 2>&1) || ipvfs_fail "shutdown with a rank waiting to restart: $out"
grep -q "^cluster stopped; already down: 2 (not answering" <<<"$out" ||
    ipvfs_fail "shutdown did not name rank 2 as down: $out"
ipvfs_wait_cluster 30
rc=$?
took=$(($(date +%s) - start))
[ "$rc" = 3 ] || ipvfs_fail "the job exited with status $rc, not 3 (a rank was down)"
[ "$took" -le 15 ] || ipvfs_fail "the job took $took s to end after the shutdown"
ipvfs_logs | grep -q "target0.1\] info: supervisor: the other ranks are leaving: no restart" ||
    ipvfs_fail "the waiting supervisor did not give up its restart"
ipvfs_logs | grep -q "serving process .* started (restart 6" && ipvfs_fail "a sixth serving process started"
echo "shutdown during a restart backoff: '$out', job ended in $took s with status 3"
echo "t_server_backoff_stop: ok"
