#!/bin/bash
# timeout: 600
# List I/O and collective I/O end to end (ROMIO + ad_ipvfs, 4 ranks, a
# cluster of 2 I/O nodes x 1 target): byte-exact noncontiguous patterns
# (contiguous, strided, tiled, BTIO-like nested strided, resized filetype
# with lb > 0, 100,000 interleaved one-byte extents) for each schedule
# heuristic and several schedule blocks, independent and collective,
# blocking and nonblocking, read back by another rank, and a collective
# write where odd ranks write nothing followed by a collective read past
# the end of the file (status byte counts); the same with
# several aggregators and rounds (cb_nodes, cb_buffer_size) for our
# collective path and for ROMIO's generic one (ipvfs_coll=generic); then
# the request count of a tile write and read from the servers' per-client
# counters, and which servers the collective path's aggregators talk to.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -x "$E2E_PROGS/e2e_listio" ] || { echo "skip: e2e_listio is not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is needed to read the counters"; exit 77; }

ipvfs_start_cluster 2 1
for run in "hash 65536 0" "first 4096 1" "random 1048576 1" "hash 3000 1"; do
    set -- $run
    echo "--- schedule $1, block $2"
    e2e_run 90 e2e_listio "ipvfs:/listio/$1-$2" --schedule "$1" --block "$2" --quick "$3" ||
        ipvfs_fail "e2e_listio failed with schedule $1, block $2"
done

# Collective I/O with several aggregators and rounds: 2 aggregators of one
# I/O node each and 64 KiB rounds; 3 aggregators (one more than I/O nodes:
# the third gets nothing) and rounds smaller than a stripe unit.  (The
# runs above use the default cb_nodes, one aggregator on one host, and the
# per-call choice of path; these force two-phase with romio_cb_*=enable.)
for run in "2 65536 ipvfs" "3 20000 ipvfs"; do
    set -- $run
    echo "--- collective: cb_nodes $1, cb_buffer_size $2, ipvfs_coll=$3"
    e2e_run 90 e2e_listio "ipvfs:/listio/coll-$1-$2-$3" --cb-nodes "$1" --cb-buffer-size "$2" \
        --coll "$3" --cb enable --quick 1 || ipvfs_fail "e2e_listio failed with cb_nodes $1, cb_buffer_size $2, $3"
done

# Which servers the aggregators talk to: a collective tile write and read
# with 2 aggregators on 2 I/O nodes.  Our path: exactly the 2 aggregator
# ranks move data, each to one I/O node of its own.  ROMIO's generic path
# (stripe-aligned contiguous domains) has an aggregator talk to both, which
# shows the check tells the two apart.  Both forced two-phase
# (romio_cb_*=enable): by default the tile goes independent (see
# t_e2e_collchoice).
stats=$IPVFS_CLUSTER_DIR/stats-coll
for impl in ipvfs generic; do
    e2e_run 60 e2e_listio "ipvfs:/listio/coll-count-$impl" --count "$stats" --count-coll 1 \
        --cb-nodes 2 --cb enable --coll "$impl" || ipvfs_fail "e2e_listio --count-coll failed ($impl)"
    python3 - "$stats" "$impl" <<'PY' || ipvfs_fail "collective aggregator traffic ($impl)"
import os, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_stats
prefix, impl = sys.argv[1], sys.argv[2]
snaps = ipvfs_stats.load(prefix, 3)

ok = True
for phase, name, key in ((1, "collective write", "bytes_in"), (2, "collective read", "bytes_out")):
    servers = {}
    for (rank, cid), d in ipvfs_stats.changes(snaps[phase - 1], snaps[phase]).items():
        if d[key] > 0:
            servers.setdefault(cid, set()).add(rank)
    print("%s (%s): I/O node ranks per client: %s" % (name, impl, servers))
    one_each = len(servers) == 2 and all(len(s) == 1 for s in servers.values()) and \
        len(set.union(*servers.values())) == 2
    if impl == "ipvfs" and not one_each:
        ok = False
    if impl == "generic" and not any(len(s) > 1 for s in servers.values()):
        print("generic path: expected an aggregator talking to both I/O nodes")
        ok = False
sys.exit(0 if ok else 1)
PY
done

# Request counts: the tile's rows (1152 bytes) are shorter than b, so a
# tile write or read is one list request per touched I/O node, with b at
# the protocol's maximum and at 16 KiB alike; with b = 512 the schedule
# block cuts every row, more than one request but at most ceil(bytes/b).
stats=$IPVFS_CLUSTER_DIR/stats
for block in 8388608 16384 512; do
    e2e_run 60 e2e_listio "ipvfs:/listio/count-$block" --count "$stats" --block "$block" ||
        ipvfs_fail "e2e_listio --count failed (block $block)"
    python3 - "$stats" "$block" "$E2E_NP" <<'PY' || ipvfs_fail "request counts (block $block)"
import os, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_stats
prefix, block, nprocs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ROW = 1152
snaps = ipvfs_stats.load(prefix, 3)

ok = True
for phase, name, key in ((1, "tile write", "bytes_in"), (2, "tile read", "bytes_out")):
    moved = ipvfs_stats.changes(snaps[phase - 1], snaps[phase])
    for cid in range(nprocs):
        touched = 0
        for (rank, c), d in moved.items():
            if c != cid:
                continue
            reqs, nbytes = d["requests"], d[key]
            touched += 1
            if block >= ROW:
                least, limit = 1, 1
            else:
                least, limit = 2, -(-nbytes // block)
            print("%s client %d server rank %d: %d requests, %d bytes (%d to %d)"
                  % (name, cid, rank, reqs, nbytes, least, limit))
            if reqs > limit or reqs < least:
                ok = False
        if touched == 0:
            print("%s client %d: no server saw it" % (name, cid))
            ok = False
sys.exit(0 if ok else 1)
PY
done
ipvfs_stop_cluster
echo "PASS t_e2e_listio"
