#!/bin/bash
# timeout: 240
# A write of interleaved rows waits for the writes of its datafile on
# their way (backend/dfstore/dfstore.h, dfstore_set_arrivals; issue 27).
# First the store alone over two of our iSCSI targets, the test playing
# the I/O node (test/test_small_wait.c: a partner joins the waiting write,
# the timer, a read, a sync, whole blocks, another datafile, a write that
# reaches the head after another).  Then the I/O nodes themselves
# (2 I/O nodes x 2 targets, the documented launch and defaults): 4 x 1
# tiles of 32 KiB rows written four times by 4 ranks, every byte checked
# by ipvfs-patterns: some writes waited for the WRITEs the I/O node was
# receiving (4-7 of 32 were seen, each joined by the next to arrive; the
# others found a write of theirs already running, or none on its way).
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
export PATH=$build/backend:$PATH
tool=$build/test/storage-small-wait
[ -x "$tool" ] || { echo "storage-small-wait not built (make check TESTS=)"; exit 77; }
pat=$build/benchmarks/ipvfs-patterns
romio=$build/adio/libipvfs-romio.so
[ -x "$pat" ] && [ -e "$romio" ] || { echo "skip: ipvfs-patterns is not built"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=$(mktemp -d /tmp/ipvfs-smallwait.XXXXXX)
trap 'iraid_targets_stop; rm -rf "$dir"' EXIT
mkdir "$dir/own" && iraid_ipvfs_targets_start "$dir/own" 2 16 || { echo "FAILED: ipvfs-target"; exit 1; }
"$tool" "$dir/meta" "${IRAID_URLS[@]}" || { echo "FAILED: storage-small-wait"; exit 1; }
iraid_targets_stop
rm -rf "$dir"
trap - EXIT

. "$src/test/lib.sh"   # its own EXIT trap from here on
rows=512
tile() {
    timeout -k 5 120 mpiexec -n 4 env LD_PRELOAD="$romio" "$pat" "$1" ipvfs:/rows "4:$rows:1024:32" 2>&1
}
ipvfs_start_cluster 2 2 --target-size 512M
for i in 1 2 3 4; do
    out=$(tile wtile) || ipvfs_fail "writing 32 KiB rows ($i): $out"
done
out=$(tile rtile) || ipvfs_fail "reading the rows back: $out"
ipvfs_stop_cluster
sum() { ipvfs_logs | sed -n "s/.*dfstore: $1.*/\\1/p" | awk '{ s += $1 } END { print s + 0 }'; }
writes=$(sum '\([0-9]*\) writes, .*')
gathered=$(sum '[0-9]* writes, \([0-9]*\) of them gathered.*')
waited=$(sum '.*; \([0-9]*\) waited for writes on their way.*')
echo "4 x 1 tiles of 32 KiB rows: $writes writes, $gathered gathered into groups, $waited waited"
[ "$waited" -gt 0 ] || ipvfs_fail "no write waited for the WRITEs on their way"
echo "t_small_wait: ok"
