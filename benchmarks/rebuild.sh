#!/bin/bash
# rebuild.sh: how long the I/O node takes to rebuild one RAID-5 (or
# RAID-1) member, against the time the rebuilt member's own disk needs to
# take its bytes, and with --baseline a build from before beside this one.
#
#   benchmarks/rebuild.sh [--raid 5|1] [--rounds N] [--size MIB]
#                         [--baseline BUILDDIR0] [--out DIR] [BUILDDIR]
#
# One I/O node x 4 targets, RAID-5 (64 KiB chunks), or with --raid 1 x 2
# targets, a mirror; members of MIB MiB (default 256) filled by a 1 MiB-
# request write of half the volume first; then `ipvfs-ctl rebuild 0 M`
# rebuilds member M (2 of RAID-5, 1 of the mirror) in full onto its own LUN
# while nothing else runs, and the time until status shows it up is taken.
# Two backing stores: "file" (the targets' plain file LUNs, in the page
# cache) and "disk" (--emulate-disk st318452lw: 51 MB/s, one io at a
# time).  Each round (default 3) runs every store with BUILDDIR0's servers
# (if given) and then BUILDDIR's, each on a fresh cluster.  The physical
# limit beside each store: the member's bytes at the rate its disk writes
# them (51 MB/s for the emulated disk; fio's buffered sequential write
# with an fsync at the end, of the member's size, in TMPDIR, for "file").
# CPU: the user+system time of all the cluster's processes during the
# rebuild, per GiB rebuilt.  Output in DIR (default benchmarks/results):
# rebuild.csv (build,store,round,seconds,mbps,cpu_s,cpu_s_per_gib,
# limit_mbps), rebuild.txt (command, date, load, medians) and rebuild.png;
# with --raid 1, rebuild-raid1.csv, .txt and .png.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
rounds=3 size=256 out=$src/benchmarks/results base='' raid=5
usage="usage: rebuild.sh [--raid 5|1] [--rounds N] [--size MIB] [--baseline BUILDDIR0] [--out DIR] [BUILDDIR]"
while [ $# -gt 0 ]; do
    case $1 in
    --raid) raid=${2:?--raid needs 5 or 1}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a count}; shift 2 ;;
    --size) size=${2:?--size needs MiB}; shift 2 ;;
    --baseline) base=$(cd "${2:?--baseline needs a build directory}" && pwd) || exit 2; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "rebuild.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
    *) break ;;
    esac
done
for v in "$rounds" "$size"; do
    case $v in ''|*[!0-9]*|0) echo "rebuild.sh: '$v' is not a count above 0 ($usage)" >&2; exit 2 ;; esac
done
[ "$size" -ge 16 ] || { echo "rebuild.sh: --size needs 16 MiB or more" >&2; exit 2; }
# targets, the member rebuilt, MiB of the fill (half the volume), output name
case $raid in
5) nt=4 member=2 fill=$((size * 3 / 2)) name=rebuild ;;
1) nt=2 member=1 fill=$((size / 2)) name=rebuild-raid1 ;;
*) echo "rebuild.sh: --raid takes 5 or 1 ($usage)" >&2; exit 2 ;;
esac
new=$(cd "${1:-$src/_build}" && pwd) || exit 2
for b in $new $base; do
    [ -x "$b/backend/ipvfs-server" ] || { echo "rebuild.sh: no server in $b" >&2; exit 2; }
done
for t in gnuplot fio python3; do
    command -v $t >/dev/null || { echo "rebuild.sh: $t is needed" >&2; exit 1; }
done
cmd="benchmarks/rebuild.sh --raid $raid --rounds $rounds --size $size${base:+ --baseline $base} --out $out $new"
mkdir -p "$out" || exit 1
csv=$out/$name.csv
echo "build,store,round,seconds,mbps,cpu_s,cpu_s_per_gib,limit_mbps" >"$csv"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
IPVFS_SRCDIR=$src IPVFS_BUILDDIR=$new
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$src/test/lib.sh" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-rebuild.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# The backing store's own rate for "file": fio, member-sized, buffered,
# fsync at the end (what a target's LUN file does during a rebuild).
fio_mbps=$(fio --name=member --filename="$work/fio.img" --rw=write --bs=1M --size="${size}M" \
    --end_fsync=1 --output-format=json 2>/dev/null | python3 -c '
import json, sys
print("%.1f" % (json.load(sys.stdin)["jobs"][0]["write"]["bw"] / 1000.0))') ||
    { echo "rebuild.sh: fio failed" >&2; exit 1; }
rm -f "$work/fio.img"

# CPU seconds (user + system) of the cluster's server processes: those
# whose command line names its directory (--data; Hydra gives every rank
# a session of its own, so no process group holds them all).
cluster_cpu() {
    python3 - "$IPVFS_CLUSTER_DIR" <<'PYEOF'
import os, sys
hz, t = os.sysconf("SC_CLK_TCK"), 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if sys.argv[1].encode() not in open("/proc/%s/cmdline" % pid, "rb").read():
            continue
        f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
        t += int(f[11]) + int(f[12])
    except OSError:
        pass
print("%.2f" % (t / hz))
PYEOF
}

member_up() {
    ipvfs-ctl status --json 2>/dev/null | python3 -c '
import json, sys
sys.exit(json.load(sys.stdin)["ranks"][0]["volume"]["members"][int(sys.argv[1])]["state"] != "up")' "$member"
}

# one_run BUILD LABEL STORE ROUND
one_run() {
    local b=$1 label=$2 store=$3 r=$4 extra=() t0 t1 c0 c1 i limit
    # shellcheck disable=SC2034  # test/lib.sh's
    IPVFS_BUILDDIR=$b IPVFS_SERVER_BIN=$b/backend/ipvfs-server IPVFS_CTL_BIN=$b/tools/ipvfs-ctl
    PATH=$b/backend:$b/tools:$PATH
    limit=$fio_mbps
    [ "$store" = disk ] && extra=(--emulate-disk st318452lw) limit=51.0
    IPVFS_CLUSTER_DIR=$work/cl
    rm -rf "$IPVFS_CLUSTER_DIR" && mkdir -p "$IPVFS_CLUSTER_DIR" || exit 1
    ipvfs_start_cluster 1 "$nt" --raid "$raid" --target-size "${size}M" --no-bind "${extra[@]}"
    # half the volume written, synced: the rebuild's reads are of real
    # bytes, whatever the store does with holes
    mpiexec -n 1 env LD_PRELOAD="$new/adio/libipvfs-romio.so" "$new/benchmarks/ipvfs-ior" -w -e -k \
        -b "${fill}m" -t 1m -f ipvfs:/rebuild-fill >"$work/ior.log" 2>&1 ||
        ipvfs_fail "writing the fill file ($label $store)"
    c0=$(cluster_cpu) t0=$(date +%s%N)
    ipvfs-ctl rebuild 0 "$member" >/dev/null || ipvfs_fail "rebuild 0 $member ($label $store)"
    for ((i = 0; i < 12000; i++)); do
        member_up && break
        sleep 0.05
    done
    t1=$(date +%s%N) c1=$(cluster_cpu)
    member_up || ipvfs_fail "member $member was not rebuilt within 10 minutes ($label $store)"
    ipvfs_stop_cluster >/dev/null
    unset IPVFS_CLUSTER_DIR
    awk -v b="$label" -v s="$store" -v r="$r" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" \
        -v m="$size" -v lim="$limit" 'BEGIN {
        sec = (t1 - t0) / 1e9
        printf "%s,%s,%d,%.2f,%.1f,%.2f,%.1f,%s\n", b, s, r, sec, m * 1.048576 / sec,
            c1 - c0, (c1 - c0) / (m / 1024.0), lim }' >>"$csv"
    tail -n 1 "$csv"
}

[ -x "$new/benchmarks/ipvfs-ior" ] || { echo "rebuild.sh: no ipvfs-ior in $new" >&2; exit 2; }
for ((r = 1; r <= rounds; r++)); do
    for store in file disk; do
        [ -z "$base" ] || one_run "$base" base "$store" "$r"
        one_run "$new" new "$store" "$r"
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$csv" >"$out/$name.txt" <<'PYEOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("%-5s %-5s %8s %9s %12s %11s" % ("store", "build", "median s", "MB/s", "CPU s/GiB", "limit MB/s"))
for store in ("file", "disk"):
    for build in ("base", "new"):
        r = [x for x in rows if x["store"] == store and x["build"] == build]
        if not r:
            continue
        med = lambda k: statistics.median(float(x[k]) for x in r)
        print("%-5s %-5s %8.2f %9.1f %12.1f %11s" % (store, build, med("seconds"), med("mbps"),
              med("cpu_s_per_gib"), r[0]["limit_mbps"]))
PYEOF
{
    echo "command: $cmd"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before/after: $load0 / $load1 ($(nproc) CPUs, shared)"
} >>"$out/$name.txt"
cat "$out/$name.txt"

python3 - "$csv" "$work/plot.dat" <<'PYEOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as f:
    for i, store in enumerate(("file", "disk")):
        vals = []
        for build in ("base", "new"):
            r = [float(x["mbps"]) for x in rows if x["store"] == store and x["build"] == build]
            vals.append("%.1f" % statistics.median(r) if r else "0")
        lim = [x["limit_mbps"] for x in rows if x["store"] == store][0]
        f.write("%s %s %s %s\n" % (store, vals[0], vals[1], lim))
PYEOF
gnuplot <<GP || { echo "rebuild.sh: gnuplot failed" >&2; exit 1; }
set terminal png size 800,500
set output "$out/$name.png"
set title "Rebuild of one RAID-$raid member (1 I/O node x $nt targets, ${size} MiB each): median MB/s"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "MB/s rebuilt"
set logscale y
set yrange [1:*]
plot "$work/plot.dat" using 2:xtic(1) title "baseline", "" using 3 title "this build", "" using 4 title "limit: the member's disk"
GP
