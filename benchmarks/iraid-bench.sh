#!/bin/bash
# iRAID throughput on loopback tgtd targets: sequential full-stripe write
# and read, 4 KiB random write, and sequential read with one member failed,
# for RAID-0/1/5 and Nt = 2..5.  Prints a table (MiB/s).
#
#   benchmarks/iraid-bench.sh [BUILDDIR] [SECONDS_PER_FIGURE]
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/_build}
secs=${2:-1}
bench=$build/benchmarks/iraid-bench
[ -x "$bench" ] || { echo "iraid-bench not built (make benchmarks/iraid-bench)"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=$(mktemp -d /tmp/ipvfs-iraidbench.XXXXXX)
cleanup() { iraid_targets_stop; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

iraid_targets_start "$dir" 5 64 || exit $?
printf '%-7s %-5s %9s %9s %9s %9s\n' level Nt seq-write seq-read rand-4k-w degr-read
for n in 2 3 4 5; do
    for level in 0 1 5; do
        [ "$level" = 5 ] && [ "$n" -lt 3 ] && continue
        "$bench" "$level" 65536 "$secs" "${IRAID_URLS[@]:0:$n}" 2>>"$dir/bench.log" ||
            { tail -n 5 "$dir/bench.log"; echo "FAILED: RAID-$level Nt=$n"; }
    done
done
