#!/bin/bash
# timeout: 200
# Failures reach MPI programs as MPI errors with a clear message, in time:
# no server map, a wrong secret, servers killed (before the open and in the
# middle of a session), servers stopped (request timeout) and one stopped
# I/O node of two with the default timeouts (within 10 s).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require

bad_map= bad_key=
stopped_pids=
ipvfs_test_cleanup() {
    # shellcheck disable=SC2086
    [ -z "$stopped_pids" ] || kill -CONT $stopped_pids 2>/dev/null
    [ -z "$bad_map" ] || rm -f "$bad_map"
    [ -z "$bad_key" ] || rm -f "$bad_key"
}

(unset IPVFS_MAP; e2e_run 30 e2e_errors open ipvfs:/e2e/err "IPVFS_MAP" 10) ||
    ipvfs_fail "no map: no clear error"

ipvfs_start_cluster 1 1 --target-size 64M
# a map that names another key file: the servers do not prove that key
bad_map=$(mktemp "${TMPDIR:-/tmp}/ipvfs-badmap.XXXXXX")
bad_key=$(mktemp "${TMPDIR:-/tmp}/ipvfs-badkey.XXXXXX")
head -c 32 /dev/urandom >"$bad_key"
awk -v k="$bad_key" '$1 == "key" { $2 = k } { print }' "$IPVFS_MAP" >"$bad_map"
grep -q "^key $bad_key\$" "$bad_map" || ipvfs_fail "the map names no key file"
IPVFS_MAP=$bad_map e2e_run 30 e2e_errors open ipvfs:/e2e/err "another cluster key" 10 ||
    ipvfs_fail "wrong secret: no clear error"

# stopped servers: the request timeout (here 2 s) ends the wait
pids=$(ipvfs_serving_pids) || ipvfs_fail "no serving pids"
IPVFS_TIMEOUT_MS=2000 e2e_run 60 e2e_errors midway ipvfs:/e2e/err/stopped \
    "did not answer in time" 5 "kill -STOP $pids" || ipvfs_fail "stopped servers: no timely error"
stopped_pids=$pids
# an open while they are stopped: one timeout, not one per retry
IPVFS_TIMEOUT_MS=2000 e2e_run 60 e2e_errors open ipvfs:/e2e/err/stopped2 \
    "did not answer in time" 3.5 || ipvfs_fail "open with stopped servers: no timely error"
# shellcheck disable=SC2086
kill -CONT $pids
stopped_pids=

# servers killed for good in the middle of a session: the ranks (their
# supervisors, whom the map names; a lone serving process would be
# restarted) and their serving processes (Hydra may reap the job's other
# rank before kill reaches it: "No such process" is no failure; the errors
# that follow are the check)
sups=$(awk '$1 == "rank" { print $9 }' "$IPVFS_MAP" | tr '\n' ' ')
e2e_run 60 e2e_errors midway ipvfs:/e2e/err/killed "server rank" 10 \
    "kill -9 $sups $pids 2>/dev/null; true" ||
    ipvfs_fail "servers killed midway: no clear error"
ipvfs_kill_cluster

# servers down before the open
e2e_run 30 e2e_errors open ipvfs:/e2e/err "server rank 0" 10 ||
    ipvfs_fail "servers down: no clear error"
# one hung I/O node while the metadata rank answers, default timeouts:
# every rank's write and read fail within 10 s, naming that rank
rm -rf "$IPVFS_CLUSTER_DIR"
unset IPVFS_CLUSTER_DIR    # a new cluster of another shape, in a directory of its own
ipvfs_start_cluster 2 1 --target-size 64M
read -r io1_rank io1_pid < <(ipvfs-ctl status --json | python3 -c '
import json, sys
r = [r for r in json.load(sys.stdin)["ranks"] if r["role"] == "io" and r["io_index"] == 1][0]
print(r["rank"], r["pid"])') || ipvfs_fail "no I/O node 1 in status"
stopped_pids=$io1_pid
(unset IPVFS_TIMEOUT_MS; e2e_run 90 e2e_errors midway ipvfs:/e2e/err/io1 \
    "server rank $io1_rank" 10 "kill -STOP $io1_pid") || ipvfs_fail "one hung I/O node: no timely error"
kill -CONT "$io1_pid"
stopped_pids=
ipvfs_stop_cluster
echo "PASS t_e2e_errors"
