#!/bin/bash
# qos-default.sh: does the default --qos (two-level, which serves as fifo
# while no class has an SLO; issue 30, doc/qos.md) move other areas'
# figures?  The same build's servers with --qos fifo and with the default,
# side by side, nobody setting an SLO:
#
#   benchmarks/qos-default.sh [--rounds N] [--only transport|small-io] [--out DIR]
#                             [--report-only] [BUILD]
#
# fifo runs BUILD's own ipvfs-server through a wrapper that adds --qos fifo
# (in a copy of BUILD made of symbolic links: the same client library,
# programs and server binary).
#   transport  benchmarks/transport.sh --quick with TRANSPORT_BLOCKS=1M
#              (RAID-0 and RAID-5, 4 ranks: sequential and shared 1 MiB
#              write and read, 4 KiB random reads), N rounds (default 5),
#              fifo and the default taking turns, the first of a round
#              alternating
#   small-io   benchmarks/small-io.sh --rounds N --shapes 2x2 --elems
#              "32 1024" --modes "indep coll" --mib-per-rank 8 with fifo as
#              its BASE and the default as its NEW (its own turns, L1 on
#              and off)
# Output in DIR (default benchmarks/results): qos-default-transport.csv
# (round,qos,case,layout,op,block,mib_s: every run's rows),
# qos-default-transport.txt (medians, default/fifo, each side's range, the
# command, date and load), qos-default-transport.png; small-io's own files
# qos-default-small-io.{csv,txt,png,-trials.csv} (its n/b column is
# default/fifo).  The physical limits are transport.sh's: its limit rows
# are in the CSV (iperf3, fio, memcpy of every run), and the plot draws the
# bound of the sequential rows, loopback TCP with 4 streams over 2 (every
# byte crosses it twice).  --report-only: no run; the transport txt and
# plot again from its CSV (its command and date lines stay).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 only= out=$srcdir/benchmarks/results report_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --only) only=${2:?--only needs transport or small-io}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --report-only) report_only=1 only=transport; shift ;;
    -*) echo "qos-default.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
case $rounds in ''|*[!0-9]*|0) echo "qos-default.sh: --rounds needs a number above 0" >&2; exit 2 ;; esac
case $only in ''|transport|small-io) ;; *) echo "qos-default.sh: --only is transport or small-io" >&2; exit 2 ;; esac
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd) || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-qosdefault.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
if [ "$report_only" = 0 ]; then
    build=$(cd "${1:-$srcdir/_build}" && pwd) || exit 2
    [ -x "$build/backend/ipvfs-server" ] ||
        { echo "qos-default.sh: $build is not a built tree" >&2; exit 2; }
    # the fifo side: BUILD as links, its server behind a wrapper
    cp -as "$build" "$work/fifo" || exit 1
    rm -f "$work/fifo/backend/ipvfs-server" || exit 1
    printf '#!/bin/sh\nexec "%s" --qos fifo "$@"\n' "$build/backend/ipvfs-server" \
        >"$work/fifo/backend/ipvfs-server" && chmod +x "$work/fifo/backend/ipvfs-server" || exit 1
fi
cmdline="benchmarks/qos-default.sh --rounds $rounds${only:+ --only $only}${1:+ $1}"

if [ "$only" != small-io ]; then
    csv=$out/qos-default-transport.csv
    [ "$report_only" = 0 ] || [ -f "$csv" ] || { echo "qos-default.sh: no $csv" >&2; exit 1; }
    [ "$report_only" = 0 ] && echo "round,qos,case,layout,op,block,mib_s" >"$csv"
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    for r in $(seq "$rounds"); do
        [ "$report_only" = 0 ] || break
        sides="fifo default"
        [ $((r % 2)) = 0 ] && sides="default fifo"
        for side in $sides; do
            b=$build
            [ "$side" = fifo ] && b=$work/fifo
            echo "round $r: $side"
            TRANSPORT_BLOCKS=1M "$srcdir/benchmarks/transport.sh" --quick --out "$work/tr" "$b" \
                >"$work/tr.log" 2>&1 || { tail -n 20 "$work/tr.log" >&2; exit 1; }
            tail -n +2 "$work/tr/transport.csv" |
                awk -F, -v r="$r" -v s="$side" '{ print r "," s "," $1 "," $2 "," $3 "," $4 "," $5 }' >>"$csv"
        done
    done
    load1=$(cut -d' ' -f1-3 /proc/loadavg)
    python3 - "$csv" "$work/transport.dat" "$work/limit" >"$out/qos-default-transport.txt.new" <<'EOF' || exit 1
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r["case"], r["layout"], r["op"], r["block"]), {}).setdefault(r["qos"], []).append(
        float(r["mib_s"]))
print("transport.sh --quick (1 MiB), MiB/s: median over rounds [min-max]; default/fifo")
print("%-7s %-9s %-8s %-5s %22s %22s %8s" % ("case", "layout", "op", "block", "fifo", "default",
                                          "def/fifo"))
ratios = []
with open(sys.argv[2], "w") as dat:
    for k, v in by.items():
        f, d = v.get("fifo", []), v.get("default", [])
        if not f or not d:
            continue
        mf, md = statistics.median(f), statistics.median(d)
        q = md / mf if mf else 0
        if k[0] != "limit":
            ratios.append(q)
            dat.write('"%s %s %s" %.1f %.1f\n' % (k[0], k[1], k[2], mf, md))
        print("%-7s %-9s %-8s %-5s %8.1f [%5.0f-%5.0f] %8.1f [%5.0f-%5.0f] %8.2f" % (
            k + (mf, min(f), max(f), md, min(d), max(d), q)))
if ratios:
    print("ipvfs rows: default/fifo median %.2f, range %.2f-%.2f (limit rows: the machine's"
          " own noise between the two sides' turns)" % (statistics.median(ratios), min(ratios),
                                                        max(ratios)))
# the sequential rows' bound (transport.sh): loopback TCP, 4 streams, / 2
tcp = [float(r["mib_s"]) / 2 for r in rows if r["case"] == "limit" and r["layout"] == "iperf3-4"]
open(sys.argv[3], "w").write("%.0f\n" % (statistics.median(tcp) if tcp else 0))
if tcp:
    print("bound of the seq/shared rows: iperf3 4 streams / 2 = %.0f MiB/s (median of every turn)"
          % statistics.median(tcp))
EOF
    if [ "$report_only" = 1 ]; then
        grep -E '^(command|date):' "$out/qos-default-transport.txt" >>"$out/qos-default-transport.txt.new"
        echo "report: recomputed from the CSV on $(date -u '+%Y-%m-%d %H:%M UTC') (qos-default.sh --report-only)" \
            >>"$out/qos-default-transport.txt.new"
        rounds=$(awk -F, 'NR > 1 && $1 > n { n = $1 } END { print n + 0 }' "$csv")
    else
        {
            echo "command: $cmdline"
            echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before/after: $load0 / $load1 ($(nproc) CPUs, shared)"
        } >>"$out/qos-default-transport.txt.new"
    fi
    mv "$out/qos-default-transport.txt.new" "$out/qos-default-transport.txt" || exit 1
    cat "$out/qos-default-transport.txt"
    gnuplot <<GP || exit 1
set terminal png size 1000,560
set output "$out/qos-default-transport.png"
set title "transport.sh --quick, 1 MiB: --qos fifo vs the default (two-level, no SLO), median of $rounds rounds"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "MiB/s"
set xtics rotate by -30
set yrange [0:*]
set key below
plot "$work/transport.dat" using 2:xtic(1) title "--qos fifo", "" using 3 title "default (two-level)", \
    $(cat "$work/limit") with lines dt 2 lw 2 title "seq/shared bound: iperf3 4 streams / 2"
GP
fi

if [ "$only" != transport ]; then
    "$srcdir/benchmarks/small-io.sh" --rounds "$rounds" --shapes 2x2 --elems "32 1024" \
        --modes "indep coll" --mib-per-rank 8 --out "$out" --name qos-default-small-io \
        "$work/fifo" "$build" || exit 1
    python3 - "$out/qos-default-small-io.csv" >>"$out/qos-default-small-io.txt" <<'EOF' || exit 1
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for l1 in ("on", "off"):
    q = [float(r["new_" + l1]) / float(r["base_" + l1]) for r in rows if float(r["base_" + l1]) > 0]
    if q:
        print("default/fifo, L1 %s: median %.2f over %d rows, range %.2f-%.2f" % (
            l1, statistics.median(q), len(q), min(q), max(q)))
EOF
    echo "command: $cmdline (base: --qos fifo through a wrapper, new: the default)" \
        >>"$out/qos-default-small-io.txt"
fi
