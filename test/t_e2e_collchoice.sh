#!/bin/bash
# The collective path's per-call choice (adio/ad_ipvfs/ad_ipvfs_choice.h)
# end to end (4 ranks, 2 I/O nodes x 1 target):
#  - overlapping collective writes under the default choice give every
#    shared byte the last rank's data, nothing torn (e2e_collchoice, 3
#    rounds), and so does forced two-phase (romio_cb_*=enable); also when
#    every rank's pieces are one progression (the decision finds the
#    overlap without the pieces' allgather); and when disjoint collective
#    writes of the same handle came first, so that its list I/O already
#    ran while the choice was made (the two-phase write that follows must
#    write over it);
#  - a collective tile write and read of 4.5 MiB (1024 rows of 1152
#    bytes per rank), whose pieces do not overlap and are too long to gain
#    from merging, goes each rank's own way: every client rank moves data to
#    the I/O nodes (servers' per-client counters), where forced two-phase
#    has only the aggregator do it.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -x "$E2E_PROGS/e2e_collchoice" ] || { echo "skip: e2e_collchoice is not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is needed to read the counters"; exit 77; }

ipvfs_start_cluster 2 1
for cb in automatic enable; do
    echo "--- overlapping collective writes, romio_cb_write=$cb"
    e2e_run 90 e2e_collchoice "ipvfs:/choice/overlap-$cb" --cb "$cb" --rounds 3 ||
        ipvfs_fail "overlapping collective writes ($cb)"
done
echo "--- overlapping collective writes, each rank's pieces one progression"
e2e_run 90 e2e_collchoice "ipvfs:/choice/overlap-regular" --rounds 3 --regular 1 ||
    ipvfs_fail "overlapping collective writes (progressions)"
echo "--- an overlapping collective write after disjoint ones (its list I/O ran during the decision)"
e2e_run 90 e2e_collchoice "ipvfs:/choice/overlap-after" --rounds 3 --disjoint-first 2 ||
    ipvfs_fail "an overlapping collective write after disjoint ones"

stats=$IPVFS_CLUSTER_DIR/stats-choice
for cb in automatic enable; do
    e2e_run 60 e2e_listio "ipvfs:/choice/tile-$cb" --count "$stats" --count-coll 1 --cb "$cb" \
        --count-rows 1024 ||
        ipvfs_fail "e2e_listio --count-coll failed ($cb)"
    python3 - "$stats" "$cb" "$E2E_NP" <<'PY' || ipvfs_fail "collective tile traffic ($cb)"
import os, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_stats
prefix, cb, nprocs = sys.argv[1], sys.argv[2], int(sys.argv[3])
snaps = ipvfs_stats.load(prefix, 3)

ok = True
for phase, name, key in ((1, "collective write", "bytes_in"), (2, "collective read", "bytes_out")):
    movers = set()
    for (rank, cid), d in ipvfs_stats.changes(snaps[phase - 1], snaps[phase]).items():
        if d[key] > 0:
            movers.add(cid)
    print("%s (romio_cb=%s): clients that moved data: %s" % (name, cb, sorted(movers)))
    want = nprocs if cb == "automatic" else 1
    if len(movers) != want:
        print("expected %d clients moving data" % want)
        ok = False
sys.exit(0 if ok else 1)
PY
done
ipvfs_stop_cluster
echo "PASS t_e2e_collchoice"
