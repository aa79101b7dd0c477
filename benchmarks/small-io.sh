#!/bin/bash
# small-io.sh: small noncontiguous I/O (issue 27) side by side in one run:
# the mpi-tile-io pattern (ipvfs-patterns itile/ctile/rtile) on two builds
# (the base, e.g. a worktree of main built with scripts/build.sh, and the
# candidate), each with the I/O nodes' L1 at its default and with
# --cache-l1 0, on 2 I/O nodes x 2 targets (RAID-0, test/lib.sh's launch).
#
#   benchmarks/small-io.sh [--rounds N] [--shapes "2x2 4x1 3x3"] [--elems "8 32 1024"]
#                          [--modes "indep coll"] [--mib-per-rank M] [--out DIR] [--name NAME]
#                          BASE_BUILD NEW_BUILD
#   benchmarks/small-io.sh --report TRIALS_CSV [--out DIR] [--name NAME]
#
# Cases: shape AxB = A tiles across, B down (A x B ranks: 2x2 and 4x1 take 4,
# 3x3 takes 9), tile rows of 1024 elements of ELEM bytes (rows of 8 KiB,
# 32 KiB, 1 MiB, which interleave with the next rank's), M MiB per rank
# (default 16), independent (MPI_File_write_at/read_at) or collective
# (write_at_all/read_at_all) calls through a subarray view.  Per case:
# the first write of a new file (with its MPI_File_sync), a rewrite of
# it, and a read alone (rtile); independent writes alone too (wtile), so
# that ipvfs-ctl stats around each give the iSCSI commands the targets
# served per MiB written or read.  Every byte read is checked by
# the program.  Rounds (default 3) take turns over the four variants
# (base/new x L1 on/off), their order rotated each round and reversed
# every second one, each variant on a fresh cluster; the figures are medians over rounds.  The ipvfs-patterns
# of NEW_BUILD drives both builds (each with its own libipvfs-romio.so and
# servers): only the file system differs.
# Output (DIR, default benchmarks/results; NAME, default small-io):
#   NAME-trials.csv  round,build,l1,shape,elem,mode,op,MiBps,cmds_per_MiB,data_MiBps
#                    (data_MiBps: a write's bytes over the time until its
#                    writes returned, before its MPI_File_sync; MiBps is
#                    the durable figure, sync included)
#   NAME.csv         medians: shape,elem,mode,op, the four variants, and
#                    new_over_base (L1 on), on_over_off (new), the
#                    commands per MiB (base, new; independent calls), then
#                    the same two ratios paired: the median over rounds of
#                    each round's own ratio (the variants of one round ran
#                    minutes apart, so load from elsewhere hits both alike:
#                    these are the figures to judge a change by)
#   NAME.txt         the command, the date, the table; NAME.png (gnuplot)
# --report recomputes NAME.csv, .txt and .png from the trials file of an
# earlier run, running nothing (give it another NAME than that run's).
# The physical limit beside the figures: the same bytes in large pieces,
# in the same run with --shapes 1x4 (one tile across: each rank's tile is
# one contiguous range), or benchmarks/transport.sh's sequential 1 MiB
# figures on this host.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
rounds=3 shapes="2x2 4x1 3x3" elems="8 32 1024" modes="indep coll" mib=16
out=$srcdir/benchmarks/results name=small-io report=
cmdline="benchmarks/small-io.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=${2:?}; shift 2 ;;
    --shapes) shapes=${2:?}; shift 2 ;;
    --elems) elems=${2:?}; shift 2 ;;
    --modes) modes=${2:?}; shift 2 ;;
    --mib-per-rank) mib=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --name) name=${2:?}; shift 2 ;;
    --report) report=${2:?}; shift 2 ;;
    -*) echo "small-io.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
if [ -n "$report" ]; then
    [ $# -eq 0 ] && [ -f "$report" ] ||
        { echo "usage: small-io.sh --report TRIALS_CSV [--out DIR] [--name NAME]" >&2; exit 2; }
    set -- "$report" "$report"
fi
[ $# -eq 2 ] || { echo "usage: small-io.sh [options] BASE_BUILD NEW_BUILD" >&2; exit 2; }
case $rounds$mib in *[!0-9]* | '') echo "small-io.sh: --rounds and --mib-per-rank take numbers" >&2; exit 2 ;; esac
for s in $shapes; do
    case $s in [1-9]x[1-9]) ;; *) echo "small-io.sh: a shape is AxB, e.g. 2x2" >&2; exit 2 ;; esac
done
for e in $elems; do
    case $e in '' | *[!0-9]* | 0) echo "small-io.sh: elements are byte counts" >&2; exit 2 ;; esac
done
for m in $modes; do
    case $m in indep | coll) ;; *) echo "small-io.sh: modes are indep and coll" >&2; exit 2 ;; esac
done
[ -n "$report" ] || { base=$(cd "$1" && pwd) && new=$(cd "$2" && pwd); } || exit 2
pat=${new:-}/benchmarks/ipvfs-patterns
[ -n "$report" ] || for b in "$base" "$new"; do
    [ -x "$b/backend/ipvfs-server" ] && [ -e "$b/adio/libipvfs-romio.so" ] ||
        { echo "small-io.sh: $b is not a built tree (scripts/build.sh)" >&2; exit 2; }
done
mkdir -p "$out" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-smallio.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
raw=$out/$name-trials.csv csv=$out/$name.csv table=$out/$name.txt png=$out/$name.png
if [ -n "$report" ]; then
    raw=$report
    rounds=$(awk -F, 'NR > 1 && $1 > n { n = $1 } END { print n + 0 }' "$raw")
else
    echo "round,build,l1,shape,elem,mode,op,MiBps,cmds_per_MiB,data_MiBps" >"$raw"
fi

# variant ROUND BUILD_LABEL BUILD_DIR L1: one fresh cluster, every case.
variant() {
    local round=$1 label=$2 bdir=$3 l1=$4
    (
        export IPVFS_SRCDIR=$srcdir IPVFS_BUILDDIR=$bdir
        . "$srcdir/test/lib.sh"
        local opts=() s e m a b c np tile o w dw r f t0 t1 cmds
        [ "$l1" = off ] && opts=(--cache-l1 0)
        ipvfs_start_cluster 2 2 --target-size 1G "${opts[@]}"
        # commands the targets served so far
        served() {
            ipvfs_ctl stats --json | python3 -c '
import json, sys
print(sum(r.get("requests", 0) for r in json.load(sys.stdin)["ranks"] if r.get("role") == "target"))'
        }
        for s in $shapes; do
            a=${s%x*} b=${s#*x} np=$((${s%x*} * ${s#*x}))
            for e in $elems; do
                c=$(( (mib << 20) / (1024 * e) ))
                [ "$c" -ge 1 ] || c=1
                tile=$a:$c:1024:$e
                for m in $modes; do
                    f=ipvfs:/small/$s-$e-$m
                    run() {
                        timeout -k 5 600 mpiexec -n "$np" env LD_PRELOAD="$bdir/adio/libipvfs-romio.so" \
                            "$pat" "$@" 2>&1
                    }
                    # independent writes alone (wtile), with the commands they cost
                    mp=$([ "$m" = coll ] && echo ctile || echo wtile)
                    for op in first_write rewrite; do
                        t0=$(served)
                        o=$(run "$mp" "$f" "$tile") || { echo "small-io.sh: $label/$l1 $s $e $m: $o" >&2; exit 1; }
                        t1=$(served)
                        w=$(sed -n 's/^RESULT.* op=write .* MiBps=\([^ ]*\) .*/\1/p' <<<"$o")
                        dw=$(sed -n 's/^RESULT.* op=write .* data_MiBps=\([^ ]*\).*/\1/p' <<<"$o")
                        cmds=
                        [ "$m" = indep ] &&
                            cmds=$(awk -v n=$((t1 - t0)) -v mb=$((mib * np)) 'BEGIN { printf "%.1f", n / mb }')
                        echo "$round,$label,$l1,$s,$e,$m,$op,$w,$cmds,$dw" >>"$raw"
                    done
                    t0=$(served)
                    if [ "$m" = coll ]; then
                        # collective read alone: ctile's read (after its write) is the figure
                        r=$(sed -n 's/^RESULT.* op=read .* MiBps=\([^ ]*\) .*/\1/p' <<<"$o")
                        cmds=
                    else
                        o=$(run rtile "$f" "$tile") || { echo "small-io.sh: read $s $e: $o" >&2; exit 1; }
                        t1=$(served)
                        r=$(sed -n 's/^RESULT.* op=read .* MiBps=\([^ ]*\) .*/\1/p' <<<"$o")
                        cmds=$(awk -v n=$((t1 - t0)) -v mb=$((mib * np)) 'BEGIN { printf "%.1f", n / mb }')
                    fi
                    echo "$round,$label,$l1,$s,$e,$m,read,$r,$cmds," >>"$raw"
                done
            done
        done
        ipvfs_stop_cluster >/dev/null
    )
}

variants=("base on" "base off" "new on" "new off")
# Each round starts one later in the list, and every second round walks it
# backwards: a variant is not always run right after the same other one
# (which leaves its load behind: a cluster's teardown, written-back data).
[ -n "$report" ] || for round in $(seq "$rounds"); do
    for i in 0 1 2 3; do
        k=$(( round % 2 ? i : 3 - i ))
        v=${variants[$(( (k + round - 1) % 4 ))]}
        label=${v% *} l1=${v#* }
        bdir=$([ "$label" = base ] && echo "$base" || echo "$new")
        echo "round $round: $label, L1 $l1" >&2
        variant "$round" "$label" "$bdir" "$l1" || { echo "small-io.sh: $label/$l1 failed" >&2; exit 1; }
    done
done

python3 - "$raw" "$csv" "$table" "$work" <<'PY'
import csv, statistics, sys
raw, out, table, work = sys.argv[1:5]
rows = list(csv.DictReader(open(raw)))
key = lambda r: (r["shape"], int(r["elem"]), r["mode"], r["op"])
cases = sorted({key(r) for r in rows}, key=lambda k: (k[0], k[1], k[2], ["first_write", "rewrite", "read"].index(k[3])))
def med(k, b, l, col="MiBps"):
    v = [float(r[col]) for r in rows if key(r) == k and r["build"] == b and r["l1"] == l and r[col]]
    return statistics.median(v) if v else None
by_round = {(key(r), r["build"], r["l1"], r["round"]): float(r["MiBps"]) for r in rows if r["MiBps"]}
def paired(k, a, b):
    # the median over rounds of a round's a / b: the variants of a round
    # ran minutes apart, so what else loaded the machine hits both alike
    v = [by_round[(k,) + a + (n,)] / by_round[(k,) + b + (n,)] for n in {r["round"] for r in rows}
         if (k,) + a + (n,) in by_round and (k,) + b + (n,) in by_round and by_round[(k,) + b + (n,)]]
    return statistics.median(v) if v else None
f = lambda x, p=1: "" if x is None else f"{x:.{p}f}"
with open(out, "w") as o, open(table, "w") as t:
    o.write("shape,elem,mode,op,base_on,base_off,new_on,new_off,new_over_base,on_over_off,"
            "base_cmds_per_MiB,new_cmds_per_MiB,paired_new_over_base,paired_on_over_off\n")
    t.write("%-5s %5s %-5s %-11s %8s %8s %8s %8s %6s %6s %7s %7s %6s %6s\n" % ("shape", "elem", "mode", "op",
            "base", "base-0", "new", "new-0", "n/b", "on/off", "cmdB", "cmdN", "p-n/b", "p-o/o"))
    for k in cases:
        bo, bf, no, nf = med(k, "base", "on"), med(k, "base", "off"), med(k, "new", "on"), med(k, "new", "off")
        nb = no / bo if no and bo else None
        oo = no / nf if no and nf else None
        pnb, poo = paired(k, ("new", "on"), ("base", "on")), paired(k, ("new", "on"), ("new", "off"))
        cb, cn = med(k, "base", "on", "cmds_per_MiB"), med(k, "new", "on", "cmds_per_MiB")
        o.write(",".join([k[0], str(k[1]), k[2], k[3], f(bo), f(bf), f(no), f(nf), f(nb, 2), f(oo, 2), f(cb), f(cn),
                          f(pnb, 2), f(poo, 2)]) + "\n")
        t.write("%-5s %5d %-5s %-11s %8s %8s %8s %8s %6s %6s %7s %7s %6s %6s\n" % (k[0], k[1], k[2], k[3], f(bo), f(bf),
                f(no), f(nf), f(nb, 2), f(oo, 2), f(cb), f(cn), f(pnb, 2), f(poo, 2)))
    for op in ("first_write", "rewrite", "read"):
        with open(f"{work}/{op}.dat", "w") as d:
            for k in cases:
                if k[3] == op:
                    d.write("%s-%d-%s %s %s %s %s\n" % (k[0], k[1], k[2], *[f(med(k, b, l)) or 0 for b, l in
                            (("base", "on"), ("base", "off"), ("new", "on"), ("new", "off"))]))
PY
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores (shared with other work)"
    echo "# command: $cmdline"
    if [ -n "$report" ]; then
        echo "# recomputed from $report (the builds and command of that run: the .txt beside it)"
    else
        echo "# base: $base ($(git -C "$base/.." rev-parse --short HEAD 2>/dev/null)), new: $new ($(git -C "$new/.." rev-parse --short HEAD 2>/dev/null))"
    fi
    echo "# 2 I/O nodes x 2 targets RAID-0, $mib MiB per rank, median of $rounds rounds; MiB/s; n/b = new/base (L1 on), on/off = new L1 on / off;"
    echo "# cmdB/cmdN: iSCSI commands the targets served per MiB of the independent write or read, L1 on (ipvfs-ctl stats);"
    echo "# p-n/b, p-o/o: the same ratios paired, the median over rounds of each round's own ratio"
} | cat - "$table" >"$work/t" && mv "$work/t" "$table"
cat "$table"
if command -v gnuplot >/dev/null; then
    gnuplot -e "set terminal png size 1500,1200 noenhanced; set output '$png';
        set style data histograms; set style histogram clustered; set style fill solid 0.8;
        set ylabel 'MiB/s'; set yrange [0:*]; set xtics rotate by -35 font ',8'; set key outside right top;
        set multiplot layout 3,1;
        do for [op in 'first_write rewrite read'] {
            set title 'tile pattern, '.op.' (median of $rounds rounds, 2 I/O nodes x 2 targets)';
            f = '$work/'.op.'.dat';
            plot f u 2:xtic(1) t 'base, L1 default', f u 3 t 'base, --cache-l1 0',
                 f u 4 t 'new, L1 default', f u 5 t 'new, --cache-l1 0'
        };
        unset multiplot" || echo "(gnuplot failed: no $png)"
fi
echo "wrote $csv $raw $table $png"
