#!/bin/bash
# model-places.sh: where a read's time goes in the I/O node, point by
# point: for one configuration NIOxNT of the model's validation
# (benchmarks/model-validate.sh: emulated disk, no L1, random 64 KiB reads
# of a MV_FILE_MIB file, open-loop Poisson load from MV_CLIENTS ranks),
# each rate of RATES (requests/s in all) runs for MV_SECONDS, and after
# each the cluster is restarted on the same data so that the I/O nodes
# log that rate's counters alone:
#   place_ms     how long a READ held its place in the store
#   wait_ms      how long a READ that found no free place waited for one
#                (waited: how many did)
#   handoff_ms   how long a place freed while READs waited stayed free
#                (handoffs: how often)
#   server_ms    how long the I/O node took from a READ's request to its
#                reply (the rest of mean_ms is the client's and the way)
#   disk_ms, disk_wait_ms  the emulated disks' service and queue
#   cycle_ms     the places over the achieved rate: the time a place
#                takes per read it serves, idle time included (at overload:
#                what the capacity is made of)
#   server_cpu_ms, client_cpu_ms  CPU per read of the serving processes
#                and of the client ranks; busy: the machine's CPU use over
#                the run (all processes, the other engineers' too), 0-1
#   lag_max_ms, inflight_max, post_ms, test_ms  the generator's
#                (ipvfs-openload's RESULT: how late it posted at worst, how
#                many it had in flight at most, how long one
#                MPI_File_iread_at and one MPI_Testsome took)
#
#   benchmarks/model-places.sh NIOxNT "RATES" [BUILDDIR]
#
# A rate R:Q runs the generator with -Q Q (at most Q requests in flight per
# client rank: past saturation the backlog then waits in the generator, so
# that the achieved rate is the servers' capacity, not the client's).
# MV_CLIENT_ON, MV_SERVER_ARGS: as model-validate.sh's (a command prefix
# that runs the client ranks on an emulated host; more ipvfs-server
# options): benchmarks/model-validate-hosts.sh with MVH_PLACES.
# MP_TC_QUEUES="NAME=NETNS:DEV ...": shaped links to watch while each
# rate runs (benchmarks/tc-backlog.py: the mean bytes queued in each
# root qdisc, sampled every 20 ms on average), one row per queue and rate
# in MP_NAME-tc.csv.
# Output: BENCH_OUT (default BUILDDIR/bench-results)/MP_NAME (default
# model-places).csv, one row per rate appended (a header when new), and
# MP_NAME.txt (command, date, load).  About 15 s per rate plus the write of
# the file (~30 s for 256 MiB).
set -u
cfg=${1:?usage: model-places.sh NIOxNT "RATES" [BUILDDIR]}
rates=${2:?RATES}
nio=${cfg%x*} nt=${cfg#*x}
case "$nio,$nt" in *[!0-9,]* | ,* | *, | 0*) echo "model-places.sh: bad configuration '$cfg' (NIOxNT, both from 1)" >&2; exit 2 ;; esac
[ "$nt" -ge 1 ] || { echo "model-places.sh: bad configuration '$cfg' (NIOxNT, both from 1)" >&2; exit 2; }
for r in $rates; do
    python3 -c "import sys; r, _, q = sys.argv[1].partition(':'); assert float(r) > 0 and (not q or 1 <= int(q) <= 1024)" "$r" 2>/dev/null ||
        { echo "model-places.sh: bad rate '$r' (requests/s > 0, or R:Q with Q 1 to 1024)" >&2; exit 2; }
done
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${3:-${IPVFS_BUILDDIR:-_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$IPVFS_SRCDIR/test/lib.sh"
b=$IPVFS_BUILDDIR
out=${BENCH_OUT:-$b/bench-results}
name=${MP_NAME:-model-places}
clients=${MV_CLIENTS:-4}
secs=${MV_SECONDS:-8}
mib=${MV_FILE_MIB:-256}
romio=$b/adio/libipvfs-romio.so
csv=$out/$name.csv
tsize=$(python3 -c "import sys; n, t, m = map(int, sys.argv[1:]); print(max(64, -(-m * 5 // (4 * n * t))) + 16, end='M')" "$nio" "$nt" "$mib")
mkdir -p "$out"
[ -s "$csv" ] || echo "config,rate_per_s,inflight_cap,offered_per_s,achieved_per_s,mean_ms,p50_ms,p95_ms,server_ms,placed,place_ms,waited,wait_ms,handoffs,handoff_ms,cycle_ms,disk_ios,disk_ms,disk_wait_ms,server_cpu_ms,client_cpu_ms,busy,load1,lag_max_ms,inflight_max,post_ms,test_ms" >"$csv"
{
    echo "benchmarks/model-places.sh $cfg '$rates' (MV_CLIENTS=$clients MV_SECONDS=$secs MV_FILE_MIB=$mib)"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >>"$out/$name.txt"

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
cpu_ticks() {
    local t=0 p
    for p in $(ipvfs_serving_pids); do
        t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}
machine() {   # busy and total jiffies of the whole machine
    awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
}

climpi() {
    ${MV_CLIENT_ON:-} mpiexec "$@"
}

# shellcheck disable=SC2086 # MV_SERVER_ARGS: several options
ipvfs_start_cluster "$nio" "$nt" --target-size "$tsize" --emulate-disk st318452lw --cache-l1 0 \
    ${MV_SERVER_ARGS:-}
climpi -n 2 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/mp/big \
    -b $((mib / 2))m -t 1m -w -e -k >/dev/null 2>&1 || ipvfs_fail "writing the file"
ipvfs_restart_cluster   # the writes' disk counters out of the first rate's
for point in $rates; do
    rate=${point%%:*} cap=
    [ "$rate" = "$point" ] || cap=${point#*:}
    c0=$(cpu_ticks) m0=$(machine)
    sampler=
    if [ -n "${MP_TC_QUEUES:-}" ]; then
        # shellcheck disable=SC2086 # one argument per queue
        python3 "$IPVFS_SRCDIR/benchmarks/tc-backlog.py" 0.02 $MP_TC_QUEUES >"$out/.mp-tc" &
        sampler=$!
    fi
    res=$(climpi -n "$clients" env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-openload" \
        -f ipvfs:/mp/big -s 64K -r "$rate" -t "$secs" -W 1 ${cap:+-Q "$cap"} 2>&1 | grep '^RESULT') ||
        ipvfs_fail "ipvfs-openload at $rate/s"
    c1=$(cpu_ticks) m1=$(machine)
    if [ -n "$sampler" ]; then
        kill -TERM "$sampler" && wait "$sampler"
        [ -s "$out/$name-tc.csv" ] || echo "config,rate_per_s,queue,samples,backlog_bytes,busy,sent_bytes" >"$out/$name-tc.csv"
        sed "s/^\([^ ]*\) samples=\([0-9]*\) backlog_bytes=\([0-9]*\) busy=\([0-9.]*\) sent_bytes=\([0-9]*\)$/$cfg,$rate,\1,\2,\3,\4,\5/" \
            "$out/.mp-tc" >>"$out/$name-tc.csv"
        rm -f "$out/.mp-tc"
    fi
    ipvfs_restart_cluster
    ipvfs_logs >"$IPVFS_CLUSTER_DIR/mp-logs"
    # the last line of each kind per I/O node and target: this rate's
    python3 - "$IPVFS_CLUSTER_DIR/mp-logs" "${cap:-0}" "$cfg" "$rate" "$nio" "$secs" "$c0" "$c1" "$(getconf CLK_TCK)" \
        "$m0" "$m1" "$(cut -d' ' -f1 /proc/loadavg)" \
        "$(for f in offered_per_s achieved_per_s mean_ms p50_ms p95_ms cpu_s requests lag_max_ms inflight_max post_ms test_ms; do field $f <<<"$res"; done)" \
        <<'PY' | tee -a "$csv"
import re, sys
logs = sys.argv.pop(1)
cap = sys.argv.pop(1)
cfg, rate, nio, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
c0, c1, tck = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
m0, m1 = [list(map(int, a.split())) for a in sys.argv[8:10]]
load1 = sys.argv[10]
offered, achieved, mean, p50, p95, ccpu, nreq, lag, infl, post_ms, test_ms = map(float, sys.argv[11].split())
last = {}
for line in open(logs):
    for key, pat in (("place", r"I/O node (\d+): (\d+) READs held a place in the store for ([\d.]+) ms"),
                     ("wait", r"I/O node (\d+): (\d+) READs waited for a place ([\d.]+) ms"),
                     ("server", r"I/O node (\d+): (\d+) READs were answered ([\d.]+) ms after"),
                     ("places", r"I/O node (\d+):.* (\d+) READs in the store at once"),
                     ("handoff", r"I/O node (\d+): a place freed while READs waited was taken again after ([\d.]+) ms on average \((\d+) times\)"),
                     ("disk", r"\[(target[\d.]+)\].*: (\d+) ios, service mean ([\d.]+) ms, second moment [\d.]+ ms\^2 \(sd [\d.]+ ms\), wait mean ([\d.]+) ms")):
        m = re.search(pat, line)
        if m:
            last[(key, m.group(1))] = m.groups()[1:]
def total(key, ni, mi):   # count, count-weighted mean over the nodes
    rows = [(float(v[ni]), float(v[mi])) for (k, _), v in last.items() if k == key]
    n = sum(r[0] for r in rows)
    return n, (sum(r[0] * r[1] for r in rows) / n if n else 0.0)
placed, place = total("place", 0, 1)
waited, wait = total("wait", 0, 1)
handoffs, handoff = total("handoff", 1, 0)
_, server = total("server", 0, 1)
dios, dmean = total("disk", 0, 1)
_, dwait = total("disk", 0, 2)
nt = int(cfg.split("x")[1])
# what each place spends per read at the achieved rate (idle included);
# the places as the I/O nodes logged them (--read-places), else one per target
places = sum(int(v[0]) for (k, _), v in last.items() if k == "places") or nt * nio
cycle = places * 1e3 / achieved if achieved else 0.0
busy = (m1[0] - m0[0]) / max(1, m1[1] - m0[1])
reads = placed if placed else 1
print("%s,%s,%s,%.2f,%.2f,%.4f,%.4f,%.4f,%.4f,%d,%.4f,%d,%.4f,%d,%.4f,%.4f,%d,%.4f,%.4f,%.4f,%.4f,%.3f,%s,%.3f,%d,%.4f,%.4f" % (
    cfg, rate, cap, offered, achieved, mean, p50, p95, server, placed, place, waited, wait, handoffs, handoff,
    cycle, dios, dmean, dwait, (c1 - c0) / tck / reads * 1e3, ccpu / reads * 1e3, busy, load1, lag, infl, post_ms, test_ms))
PY
done
ipvfs_stop_cluster
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/$name.txt"
rm -rf "$IPVFS_CLUSTER_DIR"
