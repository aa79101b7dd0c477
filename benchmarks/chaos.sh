#!/bin/bash
# chaos.sh: a 4-rank MPI write/sync/verify loop through ipvfs: while a
# random server rank's serving process is killed with kill -9 every 20 to
# 40 s (issue 12).  The cluster is started with doc/launching.md's plain launch
# (through test/lib.sh), by default 2 I/O nodes x 3 targets, RAID-5.
#
#   benchmarks/chaos.sh [BUILDDIR] [--duration S] [--seed N]
#                       [--io-nodes N] [--targets-per-io N]
#
# Loop (ipvfs-ior, 4 ranks, 1 MiB per rank, collective): file N is written
# and synced (-w -e -v), then read back and checked (-r -v); a run that fails
# is a client-visible error.  Meanwhile a killer picks a random rank every
# 20-40 s (uniform, --seed), kills its serving process (pid from status),
# and times its recovery: until the rank serves again with a new process
# and every volume has all members up.  After the duration the loop stops,
# the cluster is waited for to be whole again (120 s at most), and every
# file whose write and sync succeeded is read back and checked: a file
# that then fails is bytes lost after a successful sync (must be 0).
#
# Output in benchmarks/results/: chaos.csv (one summary row: duration_s,
# kills, restarts, client_errors, files_synced, bytes_verified, bytes_lost,
# recovery_median_s, recovery_max_s), chaos-kills.csv (one row per kill:
# t_s, rank, role, pid, recovery_s), chaos-timeline.csv (per loop run:
# t_s, n, op, ok, bytes), chaos.png, and chaos.cmd (the command line).
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cmdline="benchmarks/chaos.sh $*"
build=.
duration=300 seed=$$ nio=2 nt=3
while [ $# -gt 0 ]; do
    case $1 in
    --duration) duration=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --io-nodes) nio=$2; shift 2 ;;
    --targets-per-io) nt=$2; shift 2 ;;
    -*) echo "chaos.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
[[ $duration =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ && $nio =~ ^[0-9]+$ && $nt =~ ^[0-9]+$ ]] || {
    echo "chaos.sh: --duration, --seed, --io-nodes and --targets-per-io take numbers" >&2
    exit 2
}
IPVFS_BUILDDIR=$(cd "$build" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
cmdline="$cmdline  # duration $duration s, seed $seed, $nio x $nt, $(date -u +%FT%TZ)"
lib=${IPVFS_ROMIO_LIB:-$IPVFS_BUILDDIR/adio/libipvfs-romio.so}
ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
for f in "$lib" "$ior"; do
    [ -e "$f" ] || { echo "chaos.sh: $f is not built" >&2; exit 1; }
done
. "$IPVFS_SRCDIR/test/lib.sh"
out=$IPVFS_SRCDIR/benchmarks/results
mkdir -p "$out" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-chaos.XXXXXX") || exit 1
killer_pid=
ipvfs_test_cleanup() {
    [ -n "$killer_pid" ] && kill "$killer_pid" 2>/dev/null
    rm -rf "$work"
}
RANDOM=$seed
np=4 block=1m
t0=$(date +%s.%N)
elapsed() { echo "$(date +%s.%N) - $t0" | bc; }

ior_run() {   # FILE FLAGS...
    local f=$1
    shift
    timeout -k 5 120 mpiexec -n "$np" env LD_PRELOAD="$lib" "$ior" -f "ipvfs:$f" -b "$block" \
        -t 256k -c -k "$@" >>"$work/ior.log" 2>&1 </dev/null
}

# status_field PYTHON: evaluates PYTHON on the status (st), prints it.
status_eval() {
    ipvfs-ctl status --json 2>/dev/null | python3 -c '
import json, sys
st = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$1" 2>/dev/null
}

# whole: every rank serving (degraded counts: a member may be rebuilding)
# and every volume with all members up.
whole() {
    [ "$(status_eval 'all(r["state"] in ("serving", "degraded") for r in st["ranks"]) and all(r["volume"]["missing"] == 0 for r in st["ranks"] if "volume" in r)')" = True ]
}

killer() {
    local rank pid role start now rec i
    while :; do
        sleep $((20 + RANDOM % 21))
        rank=$((RANDOM % nranks))
        pid=$(status_eval "st['ranks'][$rank]['pid']")
        role=$(status_eval "st['ranks'][$rank]['role']")
        [[ $pid =~ ^[0-9]+$ ]] || { echo "$(elapsed),$rank,$role,,skipped" >>"$work/kills.csv"; continue; }
        start=$(elapsed)
        kill -9 "$pid" 2>/dev/null || continue
        rec=
        for ((i = 0; i < 1200; i++)); do
            now=$(status_eval "st['ranks'][$rank]['pid']")
            if [[ $now =~ ^[0-9]+$ ]] && [ "$now" != "$pid" ] && whole; then
                rec=$(echo "$(elapsed) - $start" | bc)
                break
            fi
            sleep 0.1
        done
        echo "$start,$rank,$role,$pid,${rec:-none}" >>"$work/kills.csv"
    done
}

echo "chaos: $nio I/O nodes x $nt targets, $np client ranks, $duration s, seed $seed"
ipvfs_start_cluster "$nio" "$nt" --target-size 512M --no-bind
nranks=$((nio * (1 + nt)))
: >"$work/kills.csv"
killer &
killer_pid=$!
errors=0 n=0
echo "t_s,n,op,ok,bytes" >"$out/chaos-timeline.csv"
fbytes=$((np * 1024 * 1024))
while [ "$(echo "$(elapsed) < $duration" | bc)" = 1 ]; do
    n=$((n + 1))
    ok=1
    ior_run "/chaos/$n" -w -e -v || ok=0
    echo "$(elapsed),$n,write,$ok,$fbytes" >>"$out/chaos-timeline.csv"
    if [ "$ok" = 1 ]; then
        echo "$n" >>"$work/synced"
        ok=1
        ior_run "/chaos/$n" -r -v || ok=0
        echo "$(elapsed),$n,verify,$ok,$fbytes" >>"$out/chaos-timeline.csv"
    fi
    [ "$ok" = 1 ] || errors=$((errors + 1))
done
kill "$killer_pid" 2>/dev/null
wait "$killer_pid" 2>/dev/null
killer_pid=
echo "chaos: loop done after $n runs; waiting for the cluster to be whole"
for ((i = 0; i < 1200; i++)); do whole && break; sleep 0.1; done
whole || echo "chaos: the cluster is not whole after 120 s: $(ipvfs-ctl status 2>&1 | tail -n 12)"
verified=0 lost=0 synced=0
while read -r f; do
    synced=$((synced + 1))
    if ior_run "/chaos/$f" -r -v; then
        verified=$((verified + fbytes))
    else
        lost=$((lost + fbytes))
        echo "chaos: /chaos/$f was synced but does not read back intact"
    fi
done < <(cat "$work/synced" 2>/dev/null)
restarts=$(status_eval 'sum(r.get("restarts", 0) for r in st["ranks"])')
ipvfs_stop_cluster
kills=$(grep -vc ",skipped$" "$work/kills.csv")
read -r med max < <(awk -F, '$5 != "none" && $5 != "skipped" { print $5 }' "$work/kills.csv" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "none none";
        else printf "%.2f %.2f\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }')
{
    echo "duration_s,kills,restarts,client_errors,files_synced,bytes_verified,bytes_lost,recovery_median_s,recovery_max_s"
    echo "$duration,$kills,$restarts,$errors,$synced,$verified,$lost,$med,$max"
} >"$out/chaos.csv"
{ echo "t_s,rank,role,pid,recovery_s"; cat "$work/kills.csv"; } >"$out/chaos-kills.csv"
echo "$cmdline" >"$out/chaos.cmd"
errplot=
awk -F, 'NR > 1 && $4 == 0 { print $1 ",0" }' "$out/chaos-timeline.csv" >"$work/errors.dat"
[ -s "$work/errors.dat" ] &&
    errplot="\"$work/errors.dat\" using 1:2 with points pt 2 ps 2 title \"client-visible error\","
gnuplot <<GP || echo "chaos: gnuplot failed"
set terminal pngcairo size 900,450
set output "$out/chaos.png"
set datafile separator ","
set title "chaos: kill -9 of a random server rank every 20-40 s ($nio x $nt, RAID-5, $np clients)"
set xlabel "time (s)"
set ylabel "MiB verified (cumulative)"
set y2label "recovery (s)"
set y2tics
set key top left
plot "< awk -F, 'NR > 1 && \$3 == \"verify\" && \$4 == 1 { s += \$5 / 1048576; print \$1 \",\" s }' $out/chaos-timeline.csv" \
        using 1:2 with lines lw 2 title "verified after sync", \
     $errplot "$out/chaos-kills.csv" every ::1 using 1:(\$5) axes x1y2 with impulses lw 3 title "kill -9 (height: recovery)"
GP
cat "$out/chaos.csv"
echo "chaos: results in $out/chaos.csv, chaos-kills.csv, chaos-timeline.csv, chaos.png"
[ "$lost" = 0 ]
