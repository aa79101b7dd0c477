#!/bin/bash
# model-calibrate.sh: measures the queuing model's parameters on the
# running system and writes them as an ipvfs-model --params file.
#
#   benchmarks/model-calibrate.sh NIO NT OUT.params [BUILDDIR]
#
# On a cluster of NIO I/O nodes x NT targets whose targets serve the
# emulated disk (--emulate-disk st318452lw), MC_CLIENTS client ranks
# (default 4), each measurement at a low rate (MC_RATE, default 20
# requests/s in all, open loop, benchmarks/ipvfs-openload) so that
# nothing queues.  Not one rank: a rank with several nonblocking reads
# in flight stretches each of them (on 40 Mbit/s links 72 ms at 20/s from
# one rank, 40 ms from four, the I/O nodes' own time 19-21 ms in both),
# and that is the client's, not the servers' node time:
#   bw_cache_mbs   memory copy bandwidth (benchmarks/memcpy-bw, the best of
#                  3: on a shared machine a run may get a fraction of a
#                  core), decimal MB/s
#   bw_net_mbs     the 60 KiB more that a 64 KiB read hitting the I/O
#                  node's L1 moves than a 4 KiB one, over the extra time it
#                  takes beyond the memory copy (a small file just written,
#                  --cache-l1 on, read back to back by ipvfs-ior: the
#                  medians); 10000 when the difference drowns in the
#                  noise (loopback: the network is a memory copy)
#   bw_tnet_mbs    a target's own link: what the places of 64 KiB misses
#                  last more than those of 4 KiB ones (a cluster of their
#                  own; the I/O nodes log the place time) beyond the
#                  disk's transfer and the copy is the way back from the
#                  target, over the slower of its link and the I/O node's
#                  (they pipeline); bw_net_mbs unless that is over 1 ms
#                  more than the I/O node's link gives
#   t_node_ms      what is left of the mean response of random 64 KiB
#                  reads that miss (below) after the disk's mean service
#                  time and the network and copy terms, per node visited
#                  (an I/O node and a target): the model's response at
#                  rate 0 is then the measured one by construction, and
#                  the validation tests how it grows with the load
#   disk_*         the emulated disk's service time as it served the
#                  random 64 KiB reads of a cluster restarted with
#                  --cache-l1 0 (each target logs the mean and second
#                  moment at stop; less those of the ios that opening the
#                  iRAID volume makes, which a life with the opening
#                  alone measures): disk_seek_ms = mean - 2 ms rotation -
#                  64 KiB / 51 MB/s, disk_pos_var_ms2 = second - mean^2
#   t_place_ms     the part of the two nodes' 2 t_node that a read spends
#                  holding its place in the I/O node's store (each I/O
#                  node logs the mean place time at stop): that time less
#                  the target's copy, the disk's mean and the way back
#   node_cpu_ms    the CPU time of every serving process over those reads,
#                  per read and per node it visits (an I/O node and a
#                  target): the part of t_node that is work, not waiting
# and, as a comment, the mean response of those reads (the model's
# response at rate 0; the lowest of MC_TRIALS runs, default 3, of 8 s:
# the machine's other work only ever adds to it).  MC_FILE_MIB (default 256): the file of random
# reads; MC_TARGET_SIZE (default: 1.25 x its share of a target, at least
# 64M) the targets' LUN size, so that the data spans most of each
# emulated disk.  The machine may be shared: every figure is a mean of a
# few hundred requests; rerun for a second opinion.
set -u
nio=${1:?usage: model-calibrate.sh NIO NT OUT.params [BUILDDIR]}
nt=${2:?NT}
outp=${3:?OUT.params}
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${4:-${IPVFS_BUILDDIR:-_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$IPVFS_SRCDIR/test/lib.sh"
b=$IPVFS_BUILDDIR
rate=${MC_RATE:-20}
clients=${MC_CLIENTS:-4}
trials=${MC_TRIALS:-3}
mib=${MC_FILE_MIB:-256}
tsize=${MC_TARGET_SIZE:-$(python3 -c "import sys; n, t, m = map(int, sys.argv[1:]); print(max(64, -(-m * 5 // (4 * n * t))) + 16, end='M')" "$nio" "$nt" "$mib")}
romio=$b/adio/libipvfs-romio.so
[ -x "$b/benchmarks/ipvfs-openload" ] && [ -f "$romio" ] || ipvfs_fail "build first: no ipvfs-openload or libipvfs-romio.so in $b"

# the client's mpiexec, on an emulated host when MV_CLIENT_ON names a
# command prefix that runs there (benchmarks/model-validate-hosts.sh)
climpi() {
    ${MV_CLIENT_ON:-} mpiexec "$@"
}
openload() {   # ARGS...: MC_CLIENTS client ranks; prints the RESULT line
    climpi -n "$clients" env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-openload" "$@" 2>&1 |
        grep '^RESULT' || ipvfs_fail "ipvfs-openload $* failed"
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# memory copy bandwidth
cache_mibs=$(for _ in 1 2 3; do "$b/benchmarks/memcpy-bw" 64 1; done |
    sed -n 's/.*MiBps=\([0-9.]*\).*/\1/p' | sort -g | tail -1)
[ -n "$cache_mibs" ] || ipvfs_fail "memcpy-bw printed nothing"

# L1 hits: a small file, written then read back at a low rate
ipvfs_start_cluster "$nio" "$nt" --target-size "$tsize" --emulate-disk st318452lw ${MV_SERVER_ARGS:-}
climpi -n 1 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/cal/small -b 8m -t 1m \
    -w -k >/dev/null 2>&1 || ipvfs_fail "writing the small file"
climpi -n 2 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/cal/big \
    -b $((mib / 2))m -t 1m -w -e -k >/dev/null 2>&1 || ipvfs_fail "writing the big file"
# read back 64 KiB at a time: every block in the L1 (1 MiB pieces left
# part of the file out, and 16% of the "hits" below missed)
climpi -n 1 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/cal/small -b 8m -t 64k \
    -r -k >/dev/null 2>&1 || ipvfs_fail "reading the small file"
l1() {   # "HITS MISSES" of the I/O nodes' L1s so far
    ipvfs_ctl stats | sed -n 's/.*(\([0-9]*\) hits, \([0-9]*\) misses,.*/\1 \2/p' |
        awk '{ h += $1; m += $2 } END { print h + 0, m + 0 }'
}
read -r h0 m0 < <(l1)
hit4=$(openload -f ipvfs:/cal/small -s 4K -S 8M -r "$rate" -t 5 -W 1)
hit64=$(openload -f ipvfs:/cal/small -s 64K -S 8M -r "$rate" -t 5 -W 1)
read -r h1 m1 < <(l1)
echo "L1 hits, 4 KiB:  $hit4"
echo "L1 hits, 64 KiB: $hit64"
echo "L1 over those two runs: $((h1 - h0)) hits, $((m1 - m0)) misses"
# The same hits read back to back, blocking (ipvfs-ior): the link's time
# for 60 KiB, without the open-loop client's way of waiting for its
# nonblocking reads (over a slow link it stretches a 64 KiB reply by
# half again and more: a delay of the client's, not a busy link)
iorp50() {   # XFER: the median ms of one read of the small file
    climpi -n 1 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/cal/small -b 8m -t "$1" \
        -r -k 2>&1 | sed -n 's/^RESULT.* p50_us=\([0-9.]*\).*/\1/p' | awk '{ print $1 / 1e3 }'
}
seq4=$(iorp50 4k)
seq64=$(iorp50 64k)
[ -n "$seq4" ] && [ -n "$seq64" ] || ipvfs_fail "ipvfs-ior gave no p50 for the small file"
echo "L1 hits read back to back, p50: 4 KiB $seq4 ms, 64 KiB $seq64 ms"
ipvfs_stop_cluster

# disk: restart without the L1, random reads of the big file.  Opening an
# iRAID volume reads from its members (RAID-5: 10 short ios per target,
# 50 at 1x5's start, which took the disk's mean from 5.65 to 5.05 ms;
# RAID-0: none): restarted once, so that each target logs a life with the
# opening alone (no line when it made no io), to take out of the next
# one's counters (below); the logs' lines from this start on only.
disk_since=$(date -u +%Y-%m-%dT%H:%M:%S.%3N)
ipvfs_start_cluster "$nio" "$nt" --target-size "$tsize" --emulate-disk st318452lw --cache-l1 0 \
    ${MV_SERVER_ARGS:-}
ipvfs_restart_cluster
cpu_ticks() {
    local t=0 p
    for p in $(ipvfs_serving_pids); do
        t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}
c0=$(cpu_ticks)
miss_means='' reads=0
for _ in $(seq "$trials"); do
    miss=$(openload -f ipvfs:/cal/big -s 64K -r "$rate" -t 8 -W 1)
    echo "misses, 64 KiB:  $miss"
    miss_means="$miss_means $(field mean_ms <<<"$miss")"
    reads=$(python3 -c "import sys; print(float(sys.argv[1]) + float(sys.argv[2]) * 8)" "$reads" \
        "$(field offered_per_s <<<"$miss")")
done
c1=$(cpu_ticks)
# The least disturbed run: other work on a shared machine only adds to a
# mean (a core taken for seconds shows as a mean ten times the others').
miss_mean=$(python3 -c "import sys; print(min(map(float, sys.argv[1:])))" $miss_means)
server_cpu_s=$(python3 -c "import sys; print((int(sys.argv[1]) - int(sys.argv[2])) / int(sys.argv[3]))" \
    "$c1" "$c0" "$(getconf CLK_TCK)")
ipvfs_stop_cluster
disk=$(grep -h 'emulated disk st318452lw: [0-9]* ios, service mean' "$IPVFS_CLUSTER_DIR"/log/rank-*.log |
    python3 -c '
import re, sys
lives = {}
for line in sys.stdin:
    if line[:23] < sys.argv[1]:
        continue   # from an earlier cluster
    m = re.search(r"\[(target[\d.]+)\].*: (\d+) ios, service mean ([\d.]+) ms, second moment ([\d.]+)", line)
    if m:
        lives.setdefault(m.group(1), []).append((int(m.group(2)), float(m.group(3)), float(m.group(4))))
# each target: its last life (opening and reads) less the one before (the
# opening alone), as sums of times and of their squares
n = s1 = s2 = 0
for v in lives.values():
    a = v[-1]
    b = v[-2] if len(v) > 1 else (0, 0.0, 0.0)
    n += a[0] - b[0]
    s1 += a[0] * a[1] - b[0] * b[1]
    s2 += a[0] * a[2] - b[0] * b[2]
if n <= 0:
    sys.exit(1)
print(n, s1 / n, s2 / n)' "$disk_since") || ipvfs_fail "no emulated disk counters in the targets' logs"
# how long those reads held their places in the I/O nodes' stores (each
# I/O node logs it at stop; the last line of each is this cluster's)
place_mean() {
    grep -h 'READs held a place in the store for' "$IPVFS_CLUSTER_DIR"/log/rank-*.log |
        python3 -c '
import re, sys
last = {}
for line in sys.stdin:
    m = re.search(r"I/O node (\d+): (\d+) READs held a place in the store for ([\d.]+) ms", line)
    if m:
        last[m.group(1)] = (int(m.group(2)), float(m.group(3)))
n = sum(v[0] for v in last.values())
print(sum(v[0] * v[1] for v in last.values()) / n if n else -1)'
}
place=$(place_mean)

# 4 KiB misses on a cluster of their own (the disk counters above are the
# 64 KiB reads'): the difference of their place time to the 64 KiB
# misses', beyond the disk's transfer and the copy, is the way back from
# the target, over the slower of its link and the I/O node's
ipvfs_start_cluster "$nio" "$nt" --target-size "$tsize" --emulate-disk st318452lw --cache-l1 0 \
    ${MV_SERVER_ARGS:-}
miss4=$(openload -f ipvfs:/cal/big -s 4K -r "$rate" -t 8 -W 1)
echo "misses, 4 KiB:   $miss4"
ipvfs_stop_cluster
place4=$(place_mean)

python3 - "$cache_mibs" "$seq4" "$seq64" \
    "$miss_mean" $disk "$nio" "$nt" "$tsize" "$server_cpu_s" "$reads" "${miss_means# }" \
    "$(field mean_ms <<<"$miss4")" "$place" "$place4" "$clients" \
    >"$outp" <<'PY' || ipvfs_fail "computing the parameters"
import sys
cache_mibs, r4, r64, r0, n, dmean, dsecond = map(float, sys.argv[1:8])
nio, nt, tsize = sys.argv[8:11]
cpu_s, reads = float(sys.argv[11]), float(sys.argv[12])
bw_cache = cache_mibs * 1.048576                      # decimal MB/s
extra = 61440 / (bw_cache * 1e3)                      # ms to copy the 60 KiB more
bw_net = 61440 / ((r64 - r4 - extra) * 1e3) if r64 - r4 > extra * 1.05 else 10000.0
bw_net = min(bw_net, 10000.0)
xfer = 65536 / 51e3                                   # ms at the preset's 51 MB/s
# 64 KiB against 4 KiB misses' place times: 60 KiB more of disk transfer,
# the target's copy and the way back from the target, which takes the
# slower of the target's and the I/O node's links (they pipeline); the
# client's response times would hold its own delays too
m4, place, place4 = float(sys.argv[14]), float(sys.argv[15]), float(sys.argv[16])
back = (place - place4) - 61440 / 51e3 - extra
bw_tnet = 61440 / (back * 1e3) if place4 > 0 and back > 61440 / (bw_net * 1e3) + 1.0 else bw_net
bw_tnet = min(bw_tnet, bw_net)
hops = 65536 / (bw_net * 1e3) + 65536 / (bw_tnet * 1e3) + 2 * 65536 / (bw_cache * 1e3)
t_node = max((r0 - dmean - hops) / 2, 0.0)
# the part of the two nodes' time inside a place: the place's time less
# the target's copy, the disk and the way back
t_place = min(max(place - 65536 / (bw_cache * 1e3) - dmean - 65536 / (bw_tnet * 1e3), 0.0), 2 * t_node)
print("# ipvfs-model --params: measured by benchmarks/model-calibrate.sh %s %s" % (nio, nt))
print("# (--target-size %s, emulated disk st318452lw, %s client ranks at a low rate)" % (tsize, sys.argv[-1]))
print("bw_cache_mbs %.1f" % bw_cache)
print("bw_net_mbs %.1f" % bw_net)
print("bw_tnet_mbs %.1f" % bw_tnet)
print("t_node_ms %.4f" % t_node)
print("node_cpu_ms %.4f" % min(cpu_s / reads / 2 * 1e3, t_node))
if place >= 0:
    print("t_place_ms %.4f" % t_place)
print("disk_rate_mbs 51")
print("disk_rot_ms 2")
print("disk_seek_ms %.4f" % max(dmean - 2 - xfer, 0.0))
print("disk_pos_var_ms2 %.4f" % max(dsecond - dmean * dmean, 0.0))
print("# L1 hits back to back, p50: 4 KiB %.4f ms, 64 KiB %.4f ms; 64 KiB misses %.4f ms (the lowest of %s); 4 KiB misses %.4f ms" % (r4, r64, r0, sys.argv[13], m4))
print("# emulated disk: %d ios, service mean %.4f ms, second moment %.4f ms^2" % (n, dmean, dsecond))
print("# a READ held its place in the I/O node's store %.4f ms (64 KiB), %.4f ms (4 KiB)" % (place, place4))
PY
# t_node above holds whatever the miss runs waited for at MC_RATE besides
# the modelled terms (with a client that sends one read at a time, its own
# queue: on 40 Mbit/s links 4-9 ms of a 40 ms mean, which the model adds
# again as W_client with --clients): lower t_node until the corrected
# model, at that rate with those clients (and --read-places
# MV_READ_PLACES), gives the measured mean
# (MC_MODEL_CLIENTS: the model's client processes, default 0: a process
# keeps several reads in flight; MC_CLIENTS for a client that sends one at
# a time)
python3 - "$outp" "$b/tools/ipvfs-model" "$nio" "$nt" "$rate" "${MC_MODEL_CLIENTS:-0}" "${MV_READ_PLACES:-1}" \
    "$miss_mean" <<'PY' || ipvfs_fail "fitting t_node to the model's client queue"
import re, subprocess, sys
outp, model, nio, nt, rate, clients, places, r0 = sys.argv[1:9]
nio, nt, r0 = int(nio), int(nt), float(r0)
text = open(outp).read()
get = lambda k: float(re.search(r"^%s ([\d.]+)$" % k, text, re.M).group(1))
t_node0, cpu0 = get("t_node_ms"), get("node_cpu_ms")
place0 = get("t_place_ms") if re.search(r"^t_place_ms ", text, re.M) else None
def params(t):
    out = re.sub(r"^t_node_ms .*$", "t_node_ms %.4f" % t, text, flags=re.M)
    out = re.sub(r"^node_cpu_ms .*$", "node_cpu_ms %.4f" % min(cpu0, t), out, flags=re.M)
    if place0 is not None:
        out = re.sub(r"^t_place_ms .*$", "t_place_ms %.4f" % min(place0, 2 * t), out, flags=re.M)
    return out
def mean(t):
    with open(outp, "w") as f:
        f.write(params(t))
    csv = subprocess.run([model, "--variant", "corrected", "--params", outp, "--nodes",
                          str(nio * (1 + nt)), "--io-nodes", str(nio), "--hit-io", "0",
                          "--hit-target", "0", "--hit-pvfs", "0", "--clients", clients,
                          "--read-places", places, "--rate-min", rate, "--rate-steps", "1",
                          "--csv"], check=True, capture_output=True, text=True).stdout.splitlines()
    v = dict(zip(csv[0].split(","), csv[1].split(",")))["ipvfs_ms"]
    return float(v) if v else float("inf")
lo, hi = 0.0, t_node0
if mean(lo) >= r0:
    hi = lo
else:
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean(mid) < r0 else (lo, mid)
with open(outp, "w") as f:
    f.write(params(hi))
    f.write("# t_node_ms %.4f before the model's client queue at %s/s from %s ranks was taken out\n"
            % (t_node0, rate, clients))
PY
cat "$outp"
