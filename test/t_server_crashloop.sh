#!/bin/bash
# timeout: 240
# A rank whose serving process keeps crashing stays down: the serving
# process of target rank 2 (1 I/O node x 2 targets, RAID-1) is killed with
# kill -9 six times in a row, each time after its supervisor restarted it
# (backoff 0.5 s, 1 s, 2 s, 4 s, 8 s).  After the sixth crash (six crashes,
# five restarts within 60 s) the rank stays down: status shows it "down"
# with the reason, the I/O node serves on degraded, and `ipvfs-ctl
# shutdown` still stops the cluster (exit status 0: every rank confirmed,
# the down one too, which it names as already down); the job exits with
# status 3 (a rank stayed down).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"

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
[ -n "$sup" ] || ipvfs_fail "no supervisor pid for rank 2"
for n in 1 2 3 4 5 6; do
    pid=$(rank_field 2 pid)
    [ -n "$pid" ] || ipvfs_fail "no serving pid for rank 2 before crash $n"
    kill -9 "$pid" || ipvfs_fail "kill -9 $pid (crash $n)"
    ipvfs_wait_log "target0.1\] error: supervisor: serving process $pid killed by SIGKILL" ||
        ipvfs_fail "crash $n was not logged"
    [ "$n" = 6 ] && break
    wait_rank 30 2 'assert r["state"] == "serving" and r["restarts"] == '"$n"' and r["pid"] != '"$pid"', r' ||
        ipvfs_fail "rank 2 did not come back after crash $n"
    echo "crash $n: restarted"
done
wait_rank 30 2 '
assert r["state"] == "down" and r["supervisor_pid"] == '"$sup"', r
assert r["reason"] == "5 restarts within 60 s; last: killed by SIGKILL", r' ||
    ipvfs_fail "rank 2 is not down with its reason: $(ipvfs-ctl status --json)"
ipvfs_wait_log "rank 2 stays down: 5 restarts within 60 s" || ipvfs_fail "no log line for the down rank"
out=$(ipvfs-ctl status) || ipvfs_fail "status with a down rank failed: $out"
grep -q "rank 2 is down: 5 restarts within 60 s; last: killed by SIGKILL" <<<"$out" ||
    ipvfs_fail "plain status does not say why rank 2 is down: $out"
grep -Eq "^0 .* degraded " <<<"$out" || ipvfs_fail "rank 0 is not degraded: $out"
# Still serving: the namespace and the volume's other member.
ipvfs-ctl mkdir /still/up || ipvfs_fail "mkdir with a down rank"
echo "rank 2 down, with its reason in status"

out=$(timeout 150 ipvfs-ctl shutdown 2>&1) || ipvfs_fail "shutdown with a down rank: $out"
grep -q "^cluster stopped; already down: 2 (stayed down: 5 restarts within 60 s" <<<"$out" ||
    ipvfs_fail "shutdown did not name the down rank: $out"
ipvfs_wait_cluster 60
rc=$?
[ "$rc" = 3 ] || ipvfs_fail "the job exited with status $rc, not 3 (a rank stayed down)"
echo "t_server_crashloop: ok"
