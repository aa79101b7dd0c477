#!/bin/bash
# timeout: 200
# List I/O and collective I/O end to end (ROMIO + ad_ipvfs, 4 ranks, a
# cluster of 2 I/O nodes x 1 target): byte-exact noncontiguous patterns
# (contiguous, strided, tiled, BTIO-like nested strided, resized filetype
# with lb > 0, 100,000 interleaved one-byte extents) for each schedule
# heuristic and several schedule blocks, independent and collective,
# blocking and nonblocking, read back by another rank; then the request
# count of a tile write and read from the servers' per-client counters.
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

# Request counts: with b at the protocol's maximum, a tile write or read
# is one request per touched I/O node; with b = 16 KiB, ceil(bytes/b).
stats=$IPVFS_CLUSTER_DIR/stats
for block in 8388608 16384; do
    e2e_run 60 e2e_listio "ipvfs:/listio/count-$block" --count "$stats" --block "$block" ||
        ipvfs_fail "e2e_listio --count failed (block $block)"
    python3 - "$stats" "$block" "$E2E_NP" <<'PY' || ipvfs_fail "request counts (block $block)"
import json, sys
prefix, block, nprocs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
snaps = [json.load(open("%s.%d.json" % (prefix, i))) for i in range(3)]

def per_client(snap):
    out = {}
    for r in snap["ranks"]:
        if r["role"] not in ("io", "metadata"):
            continue
        for c in r.get("clients", []):
            out[(r["rank"], c["client_id"])] = c
    return out

ok = True
for phase, name, key in ((1, "tile write", "bytes_in"), (2, "tile read", "bytes_out")):
    a, b = per_client(snaps[phase - 1]), per_client(snaps[phase])
    for cid in range(nprocs):
        touched = 0
        for (rank, c), now in sorted(b.items()):
            if c != cid:
                continue
            was = a.get((rank, c), {"requests": 0, "bytes_in": 0, "bytes_out": 0})
            reqs = now["requests"] - was["requests"]
            nbytes = now[key] - was[key]
            if nbytes == 0 and reqs == 0:
                continue
            touched += 1
            limit = -(-nbytes // block)
            print("%s client %d server rank %d: %d requests, %d bytes (limit %d)"
                  % (name, cid, rank, reqs, nbytes, limit))
            if reqs > limit or reqs < 1:
                ok = False
        if touched == 0:
            print("%s client %d: no server saw it" % (name, cid))
            ok = False
sys.exit(0 if ok else 1)
PY
done
ipvfs_stop_cluster
echo "PASS t_e2e_listio"
