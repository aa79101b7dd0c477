#!/bin/bash
# timeout: 200
# Nonblocking independent I/O end to end (ROMIO + ad_ipvfs, 2 I/O nodes x
# 1 target): several MPI_File_iwrite/iread outstanding at once, byte-exact,
# with byte counts in the statuses; an iwrite returns before its data is on
# the servers (they are stopped while it is posted) and MPI_Test alone
# completes one; with stopped servers and a short IPVFS_TIMEOUT_MS the
# error surfaces in MPI_Wait with the time-limit message; ranks waiting
# in MPI_Wait for a nonblocking collective that a late rank holds up nap
# (CPU time well under wall time) and get the right data and counts; one
# process's nonblocking reads reach the stopped servers together, not one
# after another.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -x "$E2E_PROGS/e2e_nonblock" ] || { echo "skip: e2e_nonblock is not built"; exit 77; }

pids=
ipvfs_test_cleanup() {
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -CONT $pids 2>/dev/null
}

ipvfs_start_cluster 2 1
e2e_run 90 e2e_nonblock exact ipvfs:/nb/exact || ipvfs_fail "nonblocking byte-exact run failed"
E2E_NP=2 e2e_run 90 e2e_nonblock collwait ipvfs:/nb/collwait ||
    ipvfs_fail "nonblocking collectives: spinning wait or wrong data"

# every server rank: stopping them all leaves nothing to answer
pids=$(ipvfs_serving_pids) || ipvfs_fail "no serving pids"
E2E_NP=1 e2e_run 90 e2e_nonblock overlap ipvfs:/nb/overlap "$pids" ||
    ipvfs_fail "nonblocking overlap run failed"
E2E_NP=1 e2e_run 90 e2e_nonblock queue ipvfs:/nb/queue "$pids" ||
    ipvfs_fail "one process's nonblocking reads did not reach the servers together"
IPVFS_TIMEOUT_MS=2000 E2E_NP=1 e2e_run 90 e2e_nonblock stopped ipvfs:/nb/stopped "$pids" ||
    ipvfs_fail "stopped servers: no clear error in MPI_Wait"
# shellcheck disable=SC2086
kill -CONT $pids
ipvfs_stop_cluster
echo "PASS t_e2e_nonblock"
