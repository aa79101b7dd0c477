#!/bin/bash
# Embedded iSCSI target against tgtd on loopback, same run, same LUN size
# (sparse files): iscsi-perf sequential reads of 4 KiB, 64 KiB and 1 MiB
# with 16 in flight, and our write workload (ipvfs-iscsi-wperf: sequential
# WRITE(16) through libiscsi, 16 in flight) at the same sizes.  Prints
# IOPS and MiB/s (2^20 bytes) for both targets and the MiB/s ratio
# ipvfs/tgtd.  iscsi-perf's own MB/s figure is an integer; MiB/s is
# computed here from its IOPS average and the request size instead.
# Each figure is the median of PERF_REPEAT runs, ours and tgtd taking
# turns, so that a burst of other load on a shared machine hits both
# targets alike and one unlucky run does not decide a row.
#
#   benchmarks/target-perf.sh [BUILDDIR]    (PERF_SECONDS=4, PERF_SIZE=512M,
#                                            PERF_ROWS="read write",
#                                            PERF_REPEAT=3)
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(cd "${1:-${IPVFS_BUILDDIR:-$srcdir/_build}}" && pwd)
secs=${PERF_SECONDS:-4}
size=${PERF_SIZE:-512M}
rows=${PERF_ROWS:-read write}
repeat=${PERF_REPEAT:-3}
target=$builddir/backend/ipvfs-target
wperf=$builddir/backend/iscsi/ipvfs-iscsi-wperf
for p in iscsi-perf tgtd tgtadm; do
    command -v $p >/dev/null || { echo "$p not installed"; exit 77; }
done
[ -x "$target" ] && [ -x "$wperf" ] || { echo "build backend/ipvfs-target and backend/iscsi/ipvfs-iscsi-wperf first"; exit 1; }

work=$(mktemp -d /tmp/ipvfs-perf.XXXXXX)
ours_pid= tgtd_pid= ctl=
cleanup() {
    [ -n "$ours_pid" ] && kill "$ours_pid" 2>/dev/null && wait "$ours_pid" 2>/dev/null
    if [ -n "$tgtd_pid" ]; then
        tgtadm -C "$ctl" --lld iscsi --op delete --mode target --tid 1 --force >/dev/null 2>&1
        tgtadm -C "$ctl" --op update --mode sys --name State -v offline >/dev/null 2>&1
        tgtadm -C "$ctl" --op delete --mode system >/dev/null 2>&1
        for _ in $(seq 10); do kill -0 "$tgtd_pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$tgtd_pid" 2>/dev/null
        wait "$tgtd_pid" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# Both LUNs hold the same random data (in the page cache for both).
head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$work/ours.img" || exit 1
cp "$work/ours.img" "$work/tgtd.img" || exit 1

IPVFS_LOG=warn "$target" --portal 127.0.0.1:0 --iqn iqn.2026-01.org.ipvfs:perf \
    --lun "$work/ours.img:$size" >"$work/ours.out" 2>"$work/ours.log" &
ours_pid=$!
for _ in $(seq 50); do grep -q '^listening on' "$work/ours.out" && break; sleep 0.1; done
oport=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/ours.out")
[ -n "$oport" ] || { echo "ipvfs-target did not start"; cat "$work/ours.log"; exit 1; }

tport=$((13400 + $$ % 40 * 2)); ctl=$((tport + 1))
tgtd -f -C "$ctl" --iscsi portal=127.0.0.1:$tport >"$work/tgtd.log" 2>&1 &
tgtd_pid=$!
for _ in $(seq 30); do tgtadm -C "$ctl" --op show --mode sys >/dev/null 2>&1 && break; sleep 0.1; done
tgtadm -C "$ctl" --lld iscsi --mode target --op new --tid 1 -T iqn.2026-01.org.tgt:perf &&
tgtadm -C "$ctl" --lld iscsi --mode logicalunit --op new --tid 1 --lun 1 -b "$work/tgtd.img" &&
tgtadm -C "$ctl" --lld iscsi --mode target --op bind --tid 1 -I ALL || { echo "tgtd setup failed"; exit 1; }

ours_url=iscsi://127.0.0.1:$oport/iqn.2026-01.org.ipvfs:perf/0
tgtd_url=iscsi://127.0.0.1:$tport/iqn.2026-01.org.tgt:perf/1

# prints "IOPS MiB/s"; $2 is the request size in 512-byte blocks
read_perf() {
    timeout -s INT $((secs + 10)) iscsi-perf -m 16 -b "$2" -t "$secs" "$1" 2>&1 | tr '\r' '\n' |
        sed -n 's/^ *iops average \([0-9]*\) .*/\1/p' | tail -1 |
        awk -v b="$2" '{ printf "%d %.1f\n", $1, $1 * b * 512 / 1048576 }'
}
write_perf() {
    "$wperf" "$1" "$2" "$3" "$4" 16 "$secs" | sed -n 's/^iops \([0-9]*\) MiB\/s \([0-9.]*\)$/\1 \2/p'
}

# The "IOPS MiB/s" line of the median MiB/s among the lines on stdin.
median() {
    sort -k2,2n | awk '{ l[NR] = $0 } END { if (NR) print l[int((NR + 1) / 2)] }'
}
# Runs "$1 ARGS_OURS" and "$1 ARGS_TGTD" in turns, repeat times each;
# prints the two medians on two lines.
measure() {
    local fn=$1 ours=$2 tgtd=$3 i a= b=
    for ((i = 0; i < repeat; i++)); do
        a+=$($fn $ours)$'\n'
        b+=$($fn $tgtd)$'\n'
    done
    printf '%s' "$a" | grep . | median
    printf '%s' "$b" | grep . | median
}

printf '%-18s %23s %23s %7s\n' "workload" "ipvfs-target IOPS MiB/s" "tgtd IOPS MiB/s" "ratio"
row() {
    local name=$1 a=$2 b=$3
    read -r ai am <<<"${a:-0 0}"
    read -r bi bm <<<"${b:-0 0}"
    printf '%-18s %14s %8s %14s %8s %7s\n' "$name" "$ai" "$am" "$bi" "$bm" \
        "$(awk -v x="$am" -v y="$bm" 'BEGIN { if (y > 0) printf "%.2f", x / y; else print "-" }')"
}
[[ " $rows " == *" read "* ]] &&
for blocks in 8 128 2048; do
    { read -r a; read -r b; } < <(measure read_perf "$ours_url $blocks" "$tgtd_url $blocks")
    row "read $((blocks / 2))KiB x16" "$a" "$b"
done
[[ " $rows " == *" write "* ]] &&
for bytes in 4096 65536 1048576; do
    { read -r a; read -r b; } < <(measure write_perf \
        "127.0.0.1:$oport iqn.2026-01.org.ipvfs:perf 0 $bytes" \
        "127.0.0.1:$tport iqn.2026-01.org.tgt:perf 1 $bytes")
    row "write $((bytes / 1024))KiB x16" "$a" "$b"
done
