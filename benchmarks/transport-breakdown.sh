#!/bin/bash
# transport-breakdown.sh: where a 1 MiB sequential write and read spend
# their time, per hop (client ranks, I/O nodes, targets; the iRAID runs
# inside the I/O node's process), for benchmarks/results/transport-breakdown.md.
#
#   benchmarks/transport-breakdown.sh [--out DIR] [BUILDDIR]
#
# One 2 I/O node x 2 target RAID-0 cluster (doc/launching.md, test/lib.sh),
# 4 ranks of ipvfs-ior, file per process, 1 MiB transfers, 64 MiB per rank
# (BREAKDOWN_BLOCK), a write with fsync, then a read.  Per phase and hop:
#   cpu_s_per_gib  utime + stime (/proc/PID/stat before and after; the
#                  clients' from getrusage) per GiB moved
#   cpu_us_per_call  the same per 1 MiB call
#   perf_samples, copy_share, top_copy  when `perf record -a` works: the
#                  hop's samples, the share in copy and clear routines
#                  (kernel copy_*/_copy_*_iter/rep_movs*, libc memcpy/
#                  memmove/memset, clear_page*), and the biggest of them
# and the client-observed wall time of one call (p50/p99, ipvfs-ior).
# Output: DIR/transport-breakdown.csv (DIR default benchmarks/results)
# and the same as a table on stdout.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
out=$srcdir/benchmarks/results
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "transport-breakdown.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
IPVFS_SRCDIR=$srcdir
IPVFS_BUILDDIR=$(cd "${1:-$srcdir/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
for f in "$lib" "$ior"; do
    [ -e "$f" ] || { echo "transport-breakdown.sh: $f is not built" >&2; exit 1; }
done
block=${BREAKDOWN_BLOCK:-64m}
mkdir -p "$out" || exit 1
. "$srcdir/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-breakdown.XXXXXX") || exit 1
perf_pid=
ipvfs_test_cleanup() {
    [ -z "$perf_pid" ] || kill -INT "$perf_pid" 2>/dev/null
    rm -rf "$work"
}
use_perf=0
perf record -o "$work/probe.data" -a -- true >/dev/null 2>&1 && use_perf=1

role_pids() {
    ipvfs-ctl status --json | python3 -c '
import json, sys
role = sys.argv[1]
for r in json.load(sys.stdin)["ranks"]:
    io = "io" in r.get("services", [])
    if (role == "ionode" and io) or (role == "target" and not io):
        print(r["pid"])' "$1"
}

cpu_of() {
    local tck sum=0 p
    tck=$(getconf CLK_TCK)
    for p in "$@"; do
        sum=$((sum + $(sed 's/.*) //' "/proc/$p/stat" | awk '{ print $12 + $13 }')))
    done
    awk -v s="$sum" -v t="$tck" 'BEGIN { printf "%.3f", s / t }'
}

ipvfs_start_cluster 2 2 --raid 0
ionode_pids=$(role_pids ionode) target_pids=$(role_pids target)
echo "op,hop,cpu_s_per_gib,cpu_us_per_call,perf_samples,copy_share,top_copy,call_p50_us,call_p99_us" \
    >"$out/transport-breakdown.csv"
for op in write read; do
    flags="-w -e -k"; [ $op = read ] && flags="-r"
    io0=$(cpu_of $ionode_pids) t0=$(cpu_of $target_pids)
    if [ $use_perf = 1 ]; then
        perf record -o "$work/$op.data" -a -q >/dev/null 2>&1 &
        perf_pid=$!
    fi
    # shellcheck disable=SC2086
    o=$(mpiexec -n 4 env LD_PRELOAD="$lib" "$ior" -f ipvfs:/breakdown -b "$block" -t 1m -F $flags 2>&1) ||
        ipvfs_fail "ipvfs-ior failed: $o"
    if [ -n "$perf_pid" ]; then
        kill -INT "$perf_pid"
        wait "$perf_pid"
        perf_pid=
        perf report -i "$work/$op.data" --stdio --sort pid,sym 2>/dev/null >"$work/$op.report"
    fi
    io1=$(cpu_of $ionode_pids) t1=$(cpu_of $target_pids)
    line=$(grep '^RESULT' <<<"$o")
    grep -q ' errors=0 ' <<<"$line" || ipvfs_fail "ipvfs-ior reported errors: $line"
    echo "$line"
    python3 - "$op" "$(grep '^RESULT' <<<"$o")" "$io0" "$io1" "$t0" "$t1" \
        "$work/$op.report" "$ionode_pids" "$target_pids" >>"$out/transport-breakdown.csv" <<'EOF'
import re, sys
op, line = sys.argv[1], sys.argv[2]
kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
gib = int(kv["bytes"]) / 2**30
calls = int(kv["bytes"]) / int(kv["xfer"])
cpu = {"client": float(kv["cpu_s"]),
       "ionode": float(sys.argv[4]) - float(sys.argv[3]),
       "target": float(sys.argv[6]) - float(sys.argv[5])}
roles = {p: "ionode" for p in sys.argv[8].split()}
roles.update({p: "target" for p in sys.argv[9].split()})
copy = re.compile(r"copy|memcpy|memmove|movs|clear_page|memset")
samples = {r: 0.0 for r in cpu}
copies = {r: {} for r in cpu}
try:
    for l in open(sys.argv[7]):
        m = re.match(r"\s*([\d.]+)%\s+(\d+):(\S+)\s+\[.\]\s+(\S+)", l)
        if not m:
            continue
        share, pid, comm, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4)
        role = roles.get(pid, "client" if comm.startswith("ipvfs-ior") else None)
        if not role:
            continue
        samples[role] += share
        if copy.search(sym):
            copies[role][sym] = copies[role].get(sym, 0) + share
except OSError:
    pass
for r in ("client", "ionode", "target"):
    cs = sum(copies[r].values())
    top = max(copies[r], key=copies[r].get) if copies[r] else "-"
    print("%s,%s,%.2f,%.0f,%.1f%%,%.2f,%s,%s,%s" % (
        op, r, cpu[r] / gib, cpu[r] / calls * 1e6, samples[r], cs / samples[r] if samples[r] else 0,
        top, kv.get("p50_us", "0"), kv.get("p99_us", "0")))
EOF
done
ipvfs_stop_cluster
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: benchmarks/transport-breakdown.sh $IPVFS_BUILDDIR (perf: $([ $use_perf = 1 ] && echo yes || echo no))"
    column -t -s, "$out/transport-breakdown.csv"
}
