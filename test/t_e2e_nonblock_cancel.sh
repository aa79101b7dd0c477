#!/bin/bash
# Nonblocking requests in bounded pieces (adio/ad_ipvfs/ad_ipvfs.h, the
# window), end to end on 2 I/O nodes x 1 target, 2 ranks: 32 MiB
# noncontiguous iwrite/iread (both sides strided) byte-exact; MPI_Cancel of
# a request queued behind one that holds the window comes back cancelled
# and moves nothing; MPI_Cancel of a started one completes it whole; a
# contiguous 24 MiB iwrite/iread driven by MPI_Test alone (test/mpi/
# e2e_nbcancel.c).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -x "$E2E_PROGS/e2e_nbcancel" ] || { echo "skip: e2e_nbcancel is not built"; exit 77; }

ipvfs_start_cluster 2 1
E2E_NP=2 e2e_run 120 e2e_nbcancel ipvfs:/nbc/file ||
    ipvfs_fail "bounded nonblocking pieces / MPI_Cancel: wrong data, count or cancel state"
ipvfs_stop_cluster
echo "PASS t_e2e_nonblock_cancel"
