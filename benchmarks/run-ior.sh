#!/bin/bash
# run-ior.sh: ipvfs-ior on ipvfs: (a 2 I/O nodes x 2 targets cluster started
# through test/lib.sh) and on ufs: (a directory under TMPDIR) with the same
# preloaded ROMIO, then both results and their ratio.
#
#   benchmarks/run-ior.sh [BUILDDIR]
#
# Environment: IPVFS_BUILDDIR (else BUILDDIR, else the current directory),
# IOR_NP (ranks, default 4), IOR_BLOCK (per rank, default 64m: 256 MiB in
# all with 4 ranks), IOR_XFER (default 1m), IOR_FLAGS (more ipvfs-ior
# options, e.g. -c for collective), IOR_SERVER_OPTS (more server options).
# Each file system gets a timed run (write with fsync, then read) and then
# a verifying run (every byte checked; untimed, since filling and comparing
# patterns would weigh on both sides alike and hide the difference).
# Output: the RESULT lines of the timed runs, then lines
#   RATIO op=write ipvfs_MiBps=... ufs_MiBps=... ipvfs/ufs=...
# Exit 1 when a run fails, or when the write ratio is below IOR_MIN_WRITE_RATIO
# (default 0.3, the floor of issue 5).
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-.}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
np=${IOR_NP:-4}
block=${IOR_BLOCK:-64m}
xfer=${IOR_XFER:-1m}
lib=${IPVFS_ROMIO_LIB:-$IPVFS_BUILDDIR/adio/libipvfs-romio.so}
ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
for f in "$lib" "$ior"; do
    [ -e "$f" ] || { echo "run-ior.sh: $f is not built" >&2; exit 1; }
done
. "$IPVFS_SRCDIR/test/lib.sh"

ufs_dir=
ipvfs_test_cleanup() {
    [ -z "$ufs_dir" ] || rm -rf "$ufs_dir"
}

# run_ior FILE [FLAGS]: both phases; RESULT lines on stdout.
run_ior() {
    local f=$1
    shift
    # shellcheck disable=SC2086
    timeout -k 5 600 mpiexec -n "$np" env LD_PRELOAD="$lib" "$ior" -f "$f" -b "$block" \
        -t "$xfer" -w -r -e ${IOR_FLAGS:-} "$@"
}

# timed_and_verified FILE: the timed run's RESULT lines; fails unless the
# verifying run finds every byte right.
timed_and_verified() {
    local out
    out=$(run_ior "$1") || { echo "$out"; return 1; }
    run_ior "$1" -v >/dev/null || { echo "verification of $1 failed"; return 1; }
    echo "$out"
}

ufs_dir=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-ior-ufs.XXXXXX") || exit 1
# shellcheck disable=SC2086
ipvfs_start_cluster 2 2 ${IOR_SERVER_OPTS:-}
out_ipvfs=$(timed_and_verified ipvfs:/bench/ior) || ipvfs_fail "ipvfs-ior on ipvfs: failed: $out_ipvfs"
ipvfs_stop_cluster
out_ufs=$(timed_and_verified "ufs:$ufs_dir/ior") || ipvfs_fail "ipvfs-ior on ufs: failed: $out_ufs"
echo "$out_ipvfs"
echo "$out_ufs"
for op in write read; do
    a=$(echo "$out_ipvfs" | sed -n "s/^RESULT op=$op .*MiBps=\([0-9.]*\).*/\1/p")
    b=$(echo "$out_ufs" | sed -n "s/^RESULT op=$op .*MiBps=\([0-9.]*\).*/\1/p")
    awk -v op="$op" -v a="$a" -v b="$b" \
        'BEGIN { printf "RATIO op=%s ipvfs_MiBps=%s ufs_MiBps=%s ipvfs/ufs=%.3f\n", op, a, b, (b > 0 ? a / b : 0) }'
done
floor=${IOR_MIN_WRITE_RATIO:-0.3}
awk -v a="$(echo "$out_ipvfs" | sed -n 's/^RESULT op=write .*MiBps=\([0-9.]*\).*/\1/p')" \
    -v b="$(echo "$out_ufs" | sed -n 's/^RESULT op=write .*MiBps=\([0-9.]*\).*/\1/p')" \
    -v f="$floor" 'BEGIN { exit !(b > 0 && a / b >= f) }' ||
    { echo "run-ior.sh: ipvfs write below $floor x ufs write"; exit 1; }
