#!/bin/bash
# transport.sh: the data path's figures next to the physical limits of the
# machine, in one run (issue 14).  Builds nothing: runs on a built tree.
#
#   benchmarks/transport.sh [--quick] [--out DIR] [--trials N] [BUILDDIR]
#
# BUILDDIR defaults to _build of this source tree.  Clusters start as the
# doc/launching.md documents (test/lib.sh), 4 client ranks of ipvfs-ior:
#   layouts  raid0: 2 I/O nodes x 2 targets, --raid 0
#            raid5: 2 I/O nodes x 3 targets, --raid 5
#   seq      file per process (ipvfs-ior -F), sequential write (with fsync,
#            timed) then read, transfers of 1 MiB and 4 MiB
#   shared   the same into one shared file (rank r's block at r * BLOCK)
#   rand     4 KiB reads at random offsets of a file per process written
#            before (untimed): MiB/s and the p50/p99 latency of one call
#   limit    (every trial) loopback iperf3 with 1 stream and with 4 (one
#            per client rank), memcpy bandwidth (memcpy-bw), fio on the
#            directory that holds the targets' backing files (TMPDIR):
#            sequential 1 MiB write (with fsync) and read, random 4 KiB
#            reads with 4 jobs at queue depth 1 (the client ranks' shape);
#            reads from the page cache, where the targets' data is too
# Every ipvfs row also gets the CPU seconds per GiB moved of the client
# ranks (getrusage in ipvfs-ior), the I/O nodes and the targets (serving
# processes' utime + stime from /proc/PID/stat, before and after), and the
# limit that bounds it, with the fraction reached:
#   seq/shared  min(iperf3 4 streams / 2, fio sequential same op): every
#               byte crosses loopback TCP twice (client -> I/O node ->
#               target) and ends in (or comes from) the backing store
#   rand        fio random 4 KiB reads (MiB/s)
# Environment: TRANSPORT_BENCH_DIR (see below), TMPDIR, TRANSPORT_BLOCKS
# (the seq/shared transfer sizes, default "1M 4M").
# Trials: median of --trials (default 3; --quick: 1 trial and 16 MiB per
# rank instead of 64, under 5 minutes).  Output in DIR (default
# benchmarks/results): transport-trials.csv (every trial), transport.csv
# (medians; header case,layout,op,block,mib_s,...), transport.txt (table,
# command, date, load) and transport.png (gnuplot).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
out=$srcdir/benchmarks/results quick=0 trials=3
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --trials) trials=${2:?--trials needs a number}; shift 2 ;;
    -*) echo "transport.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -le 1 ] || { echo "usage: transport.sh [--quick] [--out DIR] [--trials N] [BUILDDIR]" >&2; exit 2; }
case $trials in ''|*[!0-9]*|0) echo "transport.sh: --trials needs a number above 0" >&2; exit 2 ;; esac
IPVFS_SRCDIR=$srcdir
IPVFS_BUILDDIR=$(cd "${1:-$srcdir/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
# TRANSPORT_BENCH_DIR: where ipvfs-ior and memcpy-bw come from (default
# BUILDDIR/benchmarks), so that a build older than them (today's main) is
# measured by the same programs; servers and client library stay BUILDDIR's.
bench=${TRANSPORT_BENCH_DIR:-$IPVFS_BUILDDIR/benchmarks}
ior=$bench/ipvfs-ior
memcpy_bw=$bench/memcpy-bw
for f in "$lib" "$ior" "$memcpy_bw"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "transport.sh: $f is not built" >&2; exit 1; }
done
for t in iperf3 fio python3; do
    command -v $t >/dev/null || { echo "transport.sh: $t is missing (scripts/setup-deps.sh)" >&2; exit 1; }
done
per_rank=64m fio_size=256m secs=2
if [ "$quick" = 1 ]; then trials=1 per_rank=16m fio_size=64m secs=1; fi
np=4
mkdir -p "$out" || exit 1
. "$srcdir/test/lib.sh" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-transport.XXXXXX") || exit 1
iperf_pid=
ipvfs_test_cleanup() {
    [ -z "$iperf_pid" ] || kill "$iperf_pid" 2>/dev/null
    rm -rf "$work"
}
trials_csv=$out/transport-trials.csv
echo "trial,case,layout,op,block,mib_s,client_cpu_s,ionode_cpu_s,target_cpu_s,gib,p50_us,p99_us" >"$trials_csv"

# ---- limits ----

# iperf3_mibs STREAMS: loopback TCP MiB/s (receiver side).
iperf3_mibs() {
    local port=$((20000 + RANDOM % 20000)) j
    iperf3 -s -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
    iperf_pid=$!
    # Only a listening server may see the client: a refused first try
    # would leave a one-shot server waiting for ever.
    for ((j = 0; j < 100; j++)); do
        [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && break
        sleep 0.05
    done
    iperf3 -c 127.0.0.1 -p "$port" -t "$secs" -P "$1" -J >"$work/iperf.json" 2>/dev/null
    kill "$iperf_pid" 2>/dev/null
    wait "$iperf_pid" 2>/dev/null
    iperf_pid=
    python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8 / 2**20))' \
        "$work/iperf.json" 2>/dev/null || echo 0
}

# fio_run NAME FIO_ARGS...: prints "MiB/s p50_us p99_us" of the job group.
fio_run() {
    local name=$1
    shift
    mkdir -p "$work/fio"
    fio --name="$name" --directory="$work/fio" --ioengine=io_uring --group_reporting \
        --output-format=json "$@" >"$work/fio.json" 2>"$work/fio.err" ||
        { echo "transport.sh: fio $name failed: $(tail -n 3 "$work/fio.err")" >&2; echo "0 0 0"; return; }
    python3 - "$work/fio.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
side = j["read"] if j["read"]["io_bytes"] else j["write"]
pct = side.get("clat_ns", {}).get("percentile", {})
print("%.1f %.1f %.1f" % (side["bw"] / 1024, pct.get("50.000000", 0) / 1000, pct.get("99.000000", 0) / 1000))
EOF
}

limit_row() { echo "$trial,limit,$1,$2,$3,$4,0,0,0,0,$5,$6" >>"$trials_csv"; }

# measure_limits TRIAL: one set of limit rows (once per trial, so that
# their median sees the same load as the ipvfs rows').
measure_limits() {
    local r trial=$1
    echo "limits, trial $trial: iperf3, memcpy, fio on $work/fio"
    limit_row iperf3-1 stream - "$(iperf3_mibs 1)" 0 0
    limit_row iperf3-$np stream - "$(iperf3_mibs $np)" 0 0
    r=$("$memcpy_bw" 64 "$secs" | sed -n 's/.*MiBps=\([0-9.]*\).*/\1/p')
    limit_row memcpy copy - "${r:-0}" 0 0
    read -r r _ _ < <(fio_run seqw --rw=write --bs=1M --size="$fio_size" --iodepth=16 --end_fsync=1)
    limit_row fio write 1M "$r" 0 0
    # --invalidate=0: the file stays in the page cache, as the targets'
    # data does in the ipvfs rows (fio would drop it and read the disk)
    read -r r _ _ < <(fio_run seqw --rw=read --bs=1M --size="$fio_size" --iodepth=16 --invalidate=0)
    limit_row fio read 1M "$r" 0 0
    local p50 p99
    read -r r p50 p99 < <(fio_run randr --rw=randread --bs=4k --size="$fio_size" --numjobs=$np \
        --iodepth=1 --invalidate=0 --time_based --runtime="$secs" --filename="$work/fio/seqw.0.0")
    limit_row fio randread 4K "$r" "$p50" "$p99"
    rm -rf "$work/fio"
}

# ---- ipvfs ----

# role_pids ROLE: serving processes of the running cluster with that role
# (ionode: ranks serving "io"; target).
role_pids() {
    ipvfs-ctl status --json | python3 -c '
import json, sys
role = sys.argv[1]
for r in json.load(sys.stdin)["ranks"]:
    io = "io" in r.get("services", [])
    if (role == "ionode" and io) or (role == "target" and not io):
        print(r["pid"])' "$1"
}

# cpu_of PIDS...: their utime + stime, in seconds.
cpu_of() {
    local tck sum=0 p
    tck=$(getconf CLK_TCK)
    for p in "$@"; do
        # fields 14 and 15 after the command name, which may hold spaces
        sum=$((sum + $(sed 's/.*) //' "/proc/$p/stat" | awk '{ print $12 + $13 }')))
    done
    awk -v s="$sum" -v t="$tck" 'BEGIN { printf "%.3f", s / t }'
}

# phase TRIAL CASE LAYOUT OP BLOCK IOR_ARGS...: one timed ipvfs-ior run,
# recorded with the servers' CPU time.
phase() {
    local trial=$1 case=$2 layout=$3 op=$4 block=$5 o io0 io1 t0 t1 line
    shift 5
    io0=$(cpu_of $ionode_pids) t0=$(cpu_of $target_pids)
    o=$(timeout -k 5 600 mpiexec -n $np env LD_PRELOAD="$lib" "$ior" "$@" 2>&1) ||
        ipvfs_fail "ipvfs-ior $* failed: $(echo "$o" | tail -n 5)"
    io1=$(cpu_of $ionode_pids) t1=$(cpu_of $target_pids)
    line=$(grep '^RESULT' <<<"$o")
    grep -q ' errors=0 ' <<<"$line" || ipvfs_fail "ipvfs-ior $* reported errors: $line"
    python3 - "$line" "$trial,$case,$layout,$op,$block" "$io0" "$io1" "$t0" "$t1" >>"$trials_csv" <<'EOF'
import sys
kv = dict(f.split("=", 1) for f in sys.argv[1].split() if "=" in f)
io = float(sys.argv[4]) - float(sys.argv[3])
tg = float(sys.argv[6]) - float(sys.argv[5])
gib = int(kv["bytes"]) / 2**30
print("%s,%s,%s,%.3f,%.3f,%.6f,%s,%s" % (sys.argv[2], kv["MiBps"], kv["cpu_s"], io, tg, gib,
                                       kv["p50_us"], kv["p99_us"]))
EOF
    echo "  $case $layout $op $block: $(sed 's/.*MiBps=\([0-9.]*\).*/\1/' <<<"$line") MiB/s"
}

run_layout() {
    local layout=$1 t b flag case
    shift
    ipvfs_start_cluster "$@"
    ionode_pids=$(role_pids ionode) target_pids=$(role_pids target)
    for ((t = 1; t <= trials; t++)); do
        echo "trial $t, $layout ($*)"
        for b in $blocks; do
            for case in seq shared; do
                flag=; [ $case = seq ] && flag=-F
                phase "$t" $case "$layout" write $b -f ipvfs:/transport-$case -b "$per_rank" -t $b $flag -w -e -k
                phase "$t" $case "$layout" read $b -f ipvfs:/transport-$case -b "$per_rank" -t $b $flag -r
            done
        done
        mpiexec -n $np env LD_PRELOAD="$lib" "$ior" -f ipvfs:/transport-rand -b "$per_rank" \
            -t 1m -F -w -e -k >/dev/null || ipvfs_fail "writing the random read file failed"
        phase "$t" rand "$layout" read 4K -f ipvfs:/transport-rand -b "$per_rank" -t 4k -F -r -z
    done
    ipvfs_stop_cluster
    # the next layout starts a cluster of its own: this one's directory
    # (its targets' backing files) goes now, not at exit, which sees only
    # the last one
    [ -n "${IPVFS_KEEP:-}" ] || rm -rf "$IPVFS_CLUSTER_DIR"
    unset IPVFS_CLUSTER_DIR
}

blocks=${TRANSPORT_BLOCKS:-1M 4M}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((t = 1; t <= trials; t++)); do measure_limits $t; done
run_layout raid0 2 2 --raid 0
run_layout raid5 2 3 --raid 5
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- medians, bounds, fractions ----
python3 - "$trials_csv" "$out/transport.csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda xs: statistics.median(xs) if xs else 0.0
groups = {}
for r in rows:
    groups.setdefault((r["case"], r["layout"], r["op"], r["block"]), []).append(r)
lim = {(k[1], k[3]): med([float(r["mib_s"]) for r in v]) for k, v in groups.items() if k[0] == "limit"}
tcp = lim.get(("iperf3-4", "-"), 0) / 2
with open(sys.argv[2], "w") as f:
    f.write("case,layout,op,block,mib_s,cpu_s_per_gib,client_cpu_s_per_gib,ionode_cpu_s_per_gib,"
            "target_cpu_s_per_gib,p50_us,p99_us,bound,bound_mib_s,fraction,trials\n")
    for k, v in groups.items():
        case, layout, op, block = k
        mibs = med([float(r["mib_s"]) for r in v])
        p50 = med([float(r["p50_us"]) for r in v])
        p99 = med([float(r["p99_us"]) for r in v])
        if case == "limit":
            f.write(f"limit,{layout},{op},{block},{mibs:.1f},0,0,0,0,{p50:.1f},{p99:.1f},-,0,0,{len(v)}\n")
            continue
        per = lambda col: med([float(r[col]) / float(r["gib"]) for r in v if float(r["gib"]) > 0])
        cl, io, tg = per("client_cpu_s"), per("ionode_cpu_s"), per("target_cpu_s")
        if case == "rand":
            bound, bmibs = "fio-randread-4K", lim.get(("fio", "4K"), 0)
        else:
            fio = med([float(r["mib_s"]) for r in groups.get(("limit", "fio", op, "1M"), [])])
            bound, bmibs = ("iperf3-4/2", tcp) if tcp <= fio or fio == 0 else (f"fio-{op}-1M", fio)
        frac = mibs / bmibs if bmibs else 0
        f.write(f"{case},{layout},{op},{block},{mibs:.1f},{cl + io + tg:.2f},{cl:.2f},{io:.2f},{tg:.2f},"
                f"{p50:.1f},{p99:.1f},{bound},{bmibs:.1f},{frac:.3f},{len(v)}\n")
EOF
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load before $load0, after $load1"
    echo "# command: ${TRANSPORT_BENCH_DIR:+TRANSPORT_BENCH_DIR=$TRANSPORT_BENCH_DIR }benchmarks/transport.sh $([ $quick = 1 ] && echo --quick) --trials $trials --out $out $IPVFS_BUILDDIR"
    echo "# $np client ranks, $per_rank per rank; median of $trials trial(s); cpu_s_per_gib = client + I/O nodes + targets"
    column -t -s, "$out/transport.csv"
} >"$out/transport.txt"
cat "$out/transport.txt"
if command -v gnuplot >/dev/null; then
    grep -E '^(seq|shared|rand),' "$out/transport.csv" >"$work/plot.csv"
    gnuplot <<EOF || echo "transport.sh: gnuplot failed; no plot" >&2
set terminal png size 1200,550
set output "$out/transport.png"
set datafile separator ","
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "MiB/s (median of $trials)"
set y2label "fraction of the bound"
set y2tics
set y2range [0:1.2]
set title "iPVFS data path: 4 client ranks, $per_rank per rank (bars: MiB/s; points: fraction of the bound)"
set xtics rotate by -40
set key top right
plot "$work/plot.csv" using 5:xticlabels(stringcolumn(1)."/".stringcolumn(2)."/".stringcolumn(3)."/".stringcolumn(4)) title "MiB/s", \
     "" using 0:14 axes x1y2 with points pt 7 ps 1.5 title "fraction of bound"
EOF
fi
