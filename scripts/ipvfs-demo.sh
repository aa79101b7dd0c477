#!/bin/bash
# The main job: set everything up on a fresh Debian 12 machine, start an
# embedded iPVFS cluster on loopback (2 I/O nodes x 2 iSCSI targets each),
# write a 256 MiB file through ipvfs: from 4 MPI ranks, read it back and
# verify every byte, print the bandwidth, stop the cluster.
#
#   scripts/ipvfs-demo.sh            (environment: DEMO_NP, DEMO_BLOCK, DEMO_XFER)
set -eu
set -o pipefail
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=$srcdir/_build
prefix=$srcdir/_install
np=${DEMO_NP:-4}
block=${DEMO_BLOCK:-64m}
xfer=${DEMO_XFER:-1m}

"$srcdir/scripts/build.sh" "$builddir" "$prefix"

work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-demo.XXXXXX")
map=$work/ipvfs.map
server_pid=
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        "$prefix/bin/ipvfs-ctl" --map "$map" shutdown >/dev/null 2>&1 || kill -9 "$server_pid"
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "demo: starting 6 server ranks (2 I/O nodes x 2 targets) under $work"
mpiexec -n 6 "$prefix/bin/ipvfs-server" --io-nodes 2 --targets-per-io 2 \
    --data "$work/data" --map "$map" --target-size 2G >"$work/server.log" 2>&1 &
server_pid=$!
# mpiexec's output has the start-up lines; each rank logs to data/log/rank-<r>.log.
server_logs() { tail -n 20 "$work/server.log" "$work"/data/log/rank-*.log 2>/dev/null; }
for _ in $(seq 600); do
    [ -s "$map" ] && break
    kill -0 "$server_pid" 2>/dev/null || { server_logs; exit 1; }
    sleep 0.1
done
[ -s "$map" ] || { echo "demo: cluster did not come up"; server_logs; exit 1; }
export IPVFS_MAP=$map
"$prefix/bin/ipvfs-ctl" status

echo "demo: $np ranks write then read and verify ipvfs:/demo/ior ($block per rank, $xfer transfers)"
mpiexec -n "$np" env LD_PRELOAD="$prefix/lib/libipvfs-romio.so" \
    "$builddir/benchmarks/ipvfs-ior" -f ipvfs:/demo/ior -b "$block" -t "$xfer" -w -r -v -e -k |
    awk '/^RESULT/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); r[kv[1]] = kv[2] }
                     printf "demo: %-5s %8.1f MiB/s  (%s bytes in %s s, errors %s)\n",
                            r["op"], r["MiBps"], r["bytes"], r["seconds"], r["errors"]
                     n++; if (r["errors"] != 0) bad = 1 }
         END { if (n != 2) { print "demo: the workload did not finish"; bad = 1 }; exit bad }'
"$prefix/bin/ipvfs-ctl" ls /demo
"$prefix/bin/ipvfs-ctl" stats
echo "demo: stopping the cluster"
"$prefix/bin/ipvfs-ctl" shutdown
wait "$server_pid"
server_pid=
echo "demo: done"
