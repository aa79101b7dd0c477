#!/bin/bash
# scale.sh: aggregate bandwidth against the number of I/O nodes and of
# targets per I/O node, on emulated hosts with shaped links
# (test/hosts_lib.sh: network namespaces on one bridge, tbf both ways), next
# to the links' limit measured in the same run.  Builds nothing: runs on a
# built tree.  Needs root.
#
#   benchmarks/scale.sh [--quick] [--out DIR] [--trials N] [--secs S] [--xfer MIB] [BUILDDIR]
#
# Hosts (each its own network namespace, link shaped both ways):
#   node1..node4    client hosts, one ipvfs-ior rank each    CLIENT_RATE
#   node5..node8    I/O node hosts, one I/O node rank each   IO_RATE
#   node9..node14   target hosts, one target rank each       TARGET_RATE
#                   (node9..node20 with SCALE_NT_IONODES=3)
# The server job starts as the README says (mpiexec -hosts, Hydra through
# test/hosts/netns-ssh, test/multihost_lib.sh), --raid 0 (no parity on the
# wire), --no-bind (all hosts share this machine's cores), --cache-l1 0:
# the I/O nodes keep nothing, so every read goes to the targets over their
# links (checked: the bytes crossing the target hosts' links are counted).
# Placement is checked against ipvfs-ctl status --json (node per rank).
# Series:
#   ionodes  NIO = 1, 2, 4 I/O nodes, 1 target each (SCALE_NT_IONODES);
#            every link 200mbit:
#            limit min(4 x client link, NIO x I/O node link,
#                      NIO x NT x target link)
#   targets  1 I/O node, NT = 1, 2, 3, 4, 6 targets; targets 50mbit, the
#            I/O node and the clients 200mbit: the targets' links bound
#            until NT x 50 reaches the I/O node's 200 (NT = 4), then the
#            I/O node's link does, as the papers' model says
# Each point: write (ipvfs-ior -F -e, file per process, fsync timed) then
# read of the same files, 4 ranks (one per client host), -t XFER (--xfer
# MiB, default 1), each rank
# BLOCK = SECS x limit / 4 (rounded to XFER), so each phase lasts about
# SECS at the limit; TRIALS times on the same cluster, each trial its own
# fresh files; the median is kept.  Per phase:
#   cpu      clients: cpu_s of ipvfs-ior's RESULT line (all ranks);
#            I/O node hosts and target hosts: utime + stime of every
#            process in those hosts' namespaces (servers, supervisors,
#            Hydra's proxy), /proc before and after: CPU s per GiB moved
#   busy     this machine's busy fraction of all its cores over the phase
#            (/proc/stat; other users' work too), and ours: the CPU time
#            above over the phase's seconds and the cores, to show the
#            cores were not the limit
#   wire     bytes through the target hosts' links (tx + rx of their eth0)
#            and the I/O node hosts' links, per byte moved
# Limits: iperf3 between two hosts, each direction alone and both at
# once (--bidir), 4 s with the first left out: the client/I/O node pair
# (node1 <-> node5) and an I/O node host with a target host (node5 <->
# node9) before the ionodes series, that pair again with the target at
# its slower rate before the targets series.  A client's or target's link
# limit is the smaller direction alone (their traffic goes one way in a
# phase), an I/O node's the smaller direction both at once (it receives
# in one direction what it sends on in the other).
# Output in DIR (default benchmarks/results): scale-trials.csv (every
# phase), scale.csv (medians, both series), scale.txt (table, command,
# limits), scale.png (ionodes) and scale-targets.png (targets), gnuplot.
# --quick: 1 trial of 3 s per phase, NT = 6 left out (about 2 minutes);
# default 3 trials of 6 s (about 7 minutes).
# Environment: CLIENT_RATE, IO_RATE (200mbit), TARGET_RATE_IONODES
# (200mbit), TARGET_RATE (50mbit), SCALE_NIOS ("1 2 4"), SCALE_NTS
# ("1 2 3 4 6"), SCALE_NT_IONODES (targets per I/O node in the ionodes
# series, 1), TMPDIR.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
out=$srcdir/benchmarks/results quick=0 trials='' secs='' xfer=1
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --trials) trials=${2:?--trials needs a number}; shift 2 ;;
    --secs) secs=${2:?--secs needs a number}; shift 2 ;;
    --xfer) xfer=${2:?--xfer needs a number of MiB}; shift 2 ;;
    -*) echo "scale.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
usage="usage: scale.sh [--quick] [--out DIR] [--trials N] [--secs S] [--xfer MIB] [BUILDDIR]"
[ $# -le 1 ] || { echo "$usage" >&2; exit 2; }
if [ "$quick" = 1 ]; then
    : "${trials:=1}" "${secs:=3}"
    nts_default="1 2 3 4"
else
    : "${trials:=3}" "${secs:=6}"
    nts_default="1 2 3 4 6"
fi
for v in "$trials" "$secs" "$xfer"; do
    case $v in ''|*[!0-9]*|0) echo "scale.sh: --trials, --secs and --xfer need numbers above 0" >&2; exit 2 ;; esac
done
client_rate=${CLIENT_RATE:-200mbit} io_rate=${IO_RATE:-200mbit}
tgt_rate_io=${TARGET_RATE_IONODES:-200mbit} tgt_rate=${TARGET_RATE:-50mbit}
nios=${SCALE_NIOS:-1 2 4} nts=${SCALE_NTS:-$nts_default} nt_io=${SCALE_NT_IONODES:-1}
case $nt_io in 1|2|3) ;; *) echo "scale.sh: SCALE_NT_IONODES: 1 to 3 targets" >&2; exit 2 ;; esac
for n in $nios; do ((n >= 1 && n <= 4)) || { echo "scale.sh: SCALE_NIOS: 1 to 4 I/O nodes" >&2; exit 2; }; done
for n in $nts; do ((n >= 1 && n <= 6)) || { echo "scale.sh: SCALE_NTS: 1 to 6 targets" >&2; exit 2; }; done

IPVFS_SRCDIR=$srcdir
IPVFS_BUILDDIR=$(cd "${1:-$srcdir/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
for t in iperf3 python3 tc ip; do
    command -v $t >/dev/null || { echo "scale.sh: $t is missing (scripts/setup-deps.sh)" >&2; exit 1; }
done
[ -x "$ior" ] || { echo "scale.sh: $ior is not built" >&2; exit 1; }
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
. "$srcdir/test/lib.sh" || exit 1
. "$srcdir/test/mpi/e2e_lib.sh" || exit 1
. "$srcdir/test/hosts_lib.sh" || exit 1
. "$srcdir/test/multihost_lib.sh" || exit 1
e2e_require
hosts_require

work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-scale.XXXXXX") || exit 1
ipvfs_test_cleanup() {
    rm -rf "$work"
}
t_start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
trials_csv=$out/scale-trials.csv
echo "series,trial,nio,nt,op,block_mib,mib_s,seconds,gib,client_cpu_s,ionode_cpu_s,target_cpu_s,busy,ours,ionode_wire,target_wire" >"$trials_csv"

client_hosts=(node1 node2 node3 node4)
io_hosts=(node5 node6 node7 node8)
ntgt=$((4 * nt_io > 6 ? 4 * nt_io : 6)) tgt_hosts=()
for ((k = 9; k < 9 + ntgt; k++)); do tgt_hosts+=("node$k"); done
echo "hosts: clients ${client_hosts[*]} ($client_rate), I/O nodes ${io_hosts[*]} ($io_rate), targets ${tgt_hosts[*]}"
hosts_up $((8 + ntgt))
for h in "${client_hosts[@]}"; do hosts_shape "$h" "$client_rate"; done
for h in "${io_hosts[@]}"; do hosts_shape "$h" "$io_rate"; done

# shape_targets RATE: every target host's link at RATE, both ways; checks
# that tc says so on both sides (the host's eth0 and its switch port).
shape_targets() {
    local h
    for h in "${tgt_hosts[@]}"; do
        hosts_shape "$h" "$1"
        if ! tc -n "$HOSTS_PREFIX$h" qdisc show dev eth0 | grep -qi "tbf.*rate ${1%bit}bit" ||
            ! tc -n "${HOSTS_PREFIX}sw" qdisc show dev "v${h#node}" | grep -qi "tbf.*rate ${1%bit}bit"; then
            ipvfs_fail "$h is not shaped at $1 both ways: $(tc -n "$HOSTS_PREFIX$h" qdisc show dev eth0)"
        fi
    done
}

# ---- limits ----

# iperf_run A B [-R|--bidir]: iperf3 for 4 s, its first second left out
# (slow start), client on A, server on B; prints "A->B B->A" as MiB/s
# received (-R: only B->A flows, --bidir: both at once; 0 for no flow).
iperf_run() {
    local a=$1 b=$2 mode=${3:-} port=5201 srv i
    hosts_exec "$b" timeout 30 iperf3 -s -1 -p $port >/dev/null 2>&1 &
    srv=$!
    for ((i = 0; i < 50; i++)); do
        hosts_exec "$b" ss -Hltn "sport = :$port" | grep -q . && break
        sleep 0.1
    done
    # shellcheck disable=SC2086
    hosts_exec "$a" timeout 30 iperf3 -c "$(hosts_addr "$b")" -p $port -t 4 -O 1 $mode -J \
        >"$work/iperf.json" 2>&1 || ipvfs_fail "iperf3 $a <-> $b $mode: $(tail -c 300 "$work/iperf.json")"
    wait "$srv"
    python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["end"]
m = lambda k: e[k]["bits_per_second"] / 8 / 2**20 if k in e else 0
fwd, rev = m("sum_received"), m("sum_received_bidir_reverse")
if sys.argv[2] == "-R":
    fwd, rev = 0, fwd
print("%.2f %.2f" % (fwd, rev))' "$work/iperf.json" "$mode" || ipvfs_fail "no rates in iperf3's output"
}

limits_txt=$work/limits.txt
# measure_link NAME A B: iperf3 between hosts A and B, each direction
# alone and both at once (--bidir: the two tbf of each link, the host's
# eth0 and its switch port, act apart, so both directions should keep
# their rate); recorded in $limits_txt; prints "ONEWAY BIDIR", the smaller
# direction of each, MiB/s.
measure_link() {
    local name=$1 a=$2 b=$3 ab ba r1 r2
    read -r ab _ < <(iperf_run "$a" "$b")
    read -r _ ba < <(iperf_run "$a" "$b" -R)
    read -r r1 r2 < <(iperf_run "$a" "$b" --bidir)
    echo "$name: one way $a->$b $ab $b->$a $ba; both at once $a->$b $r1 $b->$a $r2" >>"$limits_txt"
    echo "limit $name: one way $a -> $b $ab MiB/s, $b -> $a $ba MiB/s; both at once $r1 and $r2 MiB/s" >&2
    awk -v a="$ab" -v b="$ba" -v c="$r1" -v d="$r2" \
        'BEGIN { printf "%.2f %.2f", (a < b ? a : b), (c < d ? c : d) }'
}

# ---- one point ----

# ns_cpu HOST...: utime + stime (seconds) of every process in these hosts.
ns_cpu() {
    local h p sum=0 tck
    tck=$(getconf CLK_TCK)
    for h in "$@"; do
        for p in $(ip netns pids "$HOSTS_PREFIX$h" 2>/dev/null); do
            # fields 14 and 15 after the command name, which may hold spaces
            sum=$((sum + $(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 } END { if (!NR) print 0 }')))
        done
    done
    awk -v s="$sum" -v t="$tck" 'BEGIN { printf "%.3f", s / t }'
}

# ns_bytes HOST...: bytes sent + received on these hosts' eth0.
ns_bytes() {
    local h sum=0 tx rx
    for h in "$@"; do
        read -r tx rx < <(ip -n "$HOSTS_PREFIX$h" -s -j link show dev eth0 | python3 -c '
import json, sys
s = json.load(sys.stdin)[0]["stats64"]
print(s["tx"]["bytes"], s["rx"]["bytes"])')
        sum=$((sum + tx + rx))
    done
    echo "$sum"
}

# cpu_ticks: "busy total" jiffies of the whole machine.
cpu_ticks() {
    awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t }' /proc/stat
}

# phase SERIES TRIAL NIO NT OP BLOCK_MIB IOR_ARGS...: one timed ipvfs-ior
# run on the client hosts, with CPU, busy and wire figures.
phase() {
    local series=$1 trial=$2 nio=$3 nt=$4 op=$5 block=$6 o line
    local ci0 ci1 ct0 ct1 b0 b1 tot0 tot1 wi0 wi1 wt0 wt1
    shift 6
    ci0=$(ns_cpu "${cur_io[@]}") ct0=$(ns_cpu "${cur_tgt[@]}")
    wi0=$(ns_bytes "${cur_io[@]}") wt0=$(ns_bytes "${cur_tgt[@]}")
    read -r b0 tot0 < <(cpu_ticks)
    o=$(e2e_run 300 "$ior" "$@" 2>&1) || ipvfs_fail "ipvfs-ior $* failed: $(echo "$o" | tail -n 5)"
    read -r b1 tot1 < <(cpu_ticks)
    ci1=$(ns_cpu "${cur_io[@]}") ct1=$(ns_cpu "${cur_tgt[@]}")
    wi1=$(ns_bytes "${cur_io[@]}") wt1=$(ns_bytes "${cur_tgt[@]}")
    line=$(grep '^RESULT' <<<"$o")
    grep -q ' errors=0 ' <<<"$line" || ipvfs_fail "ipvfs-ior $* reported errors: $line"
    python3 - "$line" "$series,$trial,$nio,$nt,$op,$block" "$ci0" "$ci1" "$ct0" "$ct1" \
        "$((b1 - b0))" "$((tot1 - tot0))" "$((wi1 - wi0))" "$((wt1 - wt0))" "$(nproc)" >>"$trials_csv" <<'EOF'
import sys
kv = dict(f.split("=", 1) for f in sys.argv[1].split() if "=" in f)
a = sys.argv
by = int(kv["bytes"])
io, tg = float(a[4]) - float(a[3]), float(a[6]) - float(a[5])
ours = (float(kv["cpu_s"]) + io + tg) / float(kv["seconds"]) / int(a[11])
print("%s,%s,%s,%.6f,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f" % (
    a[2], kv["MiBps"], kv["seconds"], by / 2**30, kv["cpu_s"], io, tg,
    int(a[7]) / max(int(a[8]), 1), ours, int(a[9]) / by, int(a[10]) / by))
EOF
    echo "  $series NIO=$nio NT=$nt trial $trial $op: $(sed 's/.*MiBps=\([0-9.]*\).*/\1/' <<<"$line") MiB/s" \
        "(cores busy: $(tail -n 1 "$trials_csv" | cut -d, -f14) ours, $(tail -n 1 "$trials_csv" | cut -d, -f13) all)"
}

# point SERIES NIO NT LIMIT_MIB_S: a cluster of NIO I/O nodes on their own
# hosts, each with NT targets on hosts of their own; TRIALS writes and
# reads; the cluster stopped.
point() {
    local series=$1 nio=$2 nt=$3 limit=$4 spec='' want='' g k r=0 h block t
    cur_io=() cur_tgt=()
    for ((g = 0; g < nio; g++)); do
        for ((k = 0; k <= nt; k++)); do
            if [ $k = 0 ]; then
                h=${io_hosts[$g]}
                cur_io+=("$h")
            else
                h=${tgt_hosts[$((g * nt + k - 1))]}
                cur_tgt+=("$h")
            fi
            spec="$spec${spec:+,}$h:1"
            want="$want$r: \"$h\", "
            r=$((r + 1))
        done
    done
    mh_servers_on "${io_hosts[0]}" "$spec"
    echo "$series: $nio I/O node(s) x $nt target(s), ranks on $spec"
    ipvfs_start_cluster "$nio" "$nt" --raid 0 --no-bind --cache-l1 0 --target-size 2G
    # every rank serving (a target may still be starting when the map appears)
    mh_wait_status 30 "
want = {$want}
assert len(ranks) == len(want), len(ranks)
for r in ranks:
    assert r['node'] == want[r['rank']], (r['rank'], r['node'], want[r['rank']])
    assert r['host'] == '198.18.0.' + want[r['rank']][4:], (r['rank'], r['host'])
    assert r['state'] == 'serving', r
    assert ('io' in r.get('services', [])) == (r['rank'] % ($nt + 1) == 0), r
" || ipvfs_fail "placement is not as meant ($spec): $(cat "$IPVFS_CLUSTER_DIR/status.json")"
    block=$(awk -v l="$limit" -v s="$secs" -v x="$xfer" \
        'BEGIN { b = x * int(l * s / 4 / x + 0.5); m = (4 > x ? 4 : x); print (b < m ? m : b) }')
    for ((t = 1; t <= trials; t++)); do
        phase "$series" "$t" "$nio" "$nt" write "$block" -f "ipvfs:/scale-t$t" -b "${block}m" -t "${xfer}m" -F -w -e -k
        phase "$series" "$t" "$nio" "$nt" read "$block" -f "ipvfs:/scale-t$t" -b "${block}m" -t "${xfer}m" -F -r -k
    done
    ipvfs_stop_cluster
    # the next point's cluster is a new one: this one's directory goes now
    rm -rf "$IPVFS_CLUSTER_DIR"
    unset IPVFS_CLUSTER_DIR
    echo "$series,$nio,$nt,$limit" >>"$work/limits.csv"
}

mh_clients_on "${client_hosts[0]}" "$(IFS=,; echo "${client_hosts[*]/%/:1}")"
export E2E_NP=4
echo "series,nio,nt,limit" >"$work/limits.csv"

# ---- series 1: I/O nodes ----
shape_targets "$tgt_rate_io"
# Limits of a point, MiB/s: a client's link one way (clients only send
# or only receive), an I/O node's link both ways at once (it receives
# what it sends on, in either phase), a target's link one way.
read -r link_client link_io < <(measure_link "client/ionode-$client_rate" "${client_hosts[0]}" "${io_hosts[0]}")
read -r link_tgt_io _ < <(measure_link "ionode/target-$tgt_rate_io" "${io_hosts[0]}" "${tgt_hosts[0]}")
for n in $nios; do
    lim=$(awk -v c="$link_client" -v i="$link_io" -v t="$link_tgt_io" -v n="$n" -v k="$nt_io" \
        'BEGIN { l = 4 * c; if (n * i < l) l = n * i; if (n * k * t < l) l = n * k * t; printf "%.2f", l }')
    point ionodes "$n" "$nt_io" "$lim"
done

# ---- series 2: targets per I/O node ----
shape_targets "$tgt_rate"
read -r link_tgt _ < <(measure_link "ionode/target-$tgt_rate" "${io_hosts[0]}" "${tgt_hosts[0]}")
for n in $nts; do
    lim=$(awk -v c="$link_client" -v i="$link_io" -v t="$link_tgt" -v n="$n" \
        'BEGIN { l = 4 * c; if (i < l) l = i; if (n * t < l) l = n * t; printf "%.2f", l }')
    point targets 1 "$n" "$lim"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
t_end=$(date +%s)

# ---- medians, limits, linearity ----
python3 - "$trials_csv" "$work/limits.csv" "$out/scale.csv" "$link_client" "$link_io" "$link_tgt_io" "$link_tgt" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lims = {(r["series"], int(r["nio"]), int(r["nt"])): float(r["limit"]) for r in csv.DictReader(open(sys.argv[2]))}
cli, ion, tgt_io, tgt = map(float, sys.argv[4:8])
med = statistics.median
groups = {}
for r in rows:
    groups.setdefault((r["series"], int(r["nio"]), int(r["nt"]), r["op"]), []).append(r)
base = {}
for (s, nio, nt, op), v in groups.items():
    if (s == "ionodes" and nio == 1) or (s == "targets" and nt == 1):
        base[(s, op)] = med(float(r["mib_s"]) for r in v)
with open(sys.argv[3], "w") as f:
    f.write("series,nio,nt,op,mib_s,mib_s_min,mib_s_max,limit_mib_s,bound,fraction,linear_mib_s,linearity,"
            "cpu_s_per_gib,client_cpu_s_per_gib,ionode_cpu_s_per_gib,target_cpu_s_per_gib,busy,ours,"
            "ionode_wire,target_wire,block_mib,trials\n")
    for k in sorted(groups, key=lambda k: (k[0] != "ionodes", k[1], k[2], k[3] != "write")):
        s, nio, nt, op = k
        v = groups[k]
        mibs = [float(r["mib_s"]) for r in v]
        m = med(mibs)
        lim = lims[(s, nio, nt)]
        t = tgt_io if s == "ionodes" else tgt
        cands = [(4 * cli, "clients"), (nio * ion, "ionode-links" if nio > 1 else "ionode-link"),
                 (nio * nt * t, "target-links")]
        bound = "+".join(n for l, n in cands if abs(l - lim) < 0.02 * lim)
        mult = nio if s == "ionodes" else nt
        lin = base[(s, op)] * mult
        per = lambda col: med(float(r[col]) / float(r["gib"]) for r in v)
        cl, io, tg = per("client_cpu_s"), per("ionode_cpu_s"), per("target_cpu_s")
        f.write(f"{s},{nio},{nt},{op},{m:.2f},{min(mibs):.2f},{max(mibs):.2f},{lim:.2f},{bound},"
                f"{m / lim:.3f},{lin:.2f},{m / lin:.3f},{cl + io + tg:.2f},{cl:.2f},{io:.2f},{tg:.2f},"
                f"{med(float(r['busy']) for r in v):.2f},{med(float(r['ours']) for r in v):.2f},{med(float(r['ionode_wire']) for r in v):.2f},"
                f"{med(float(r['target_wire']) for r in v):.2f},{v[0]['block_mib']},{len(v)}\n")
EOF
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load before $load0, after $load1; $((t_end - t_start)) s"
    echo "# command: benchmarks/scale.sh $([ $quick = 1 ] && echo "--quick ")--trials $trials --secs $secs --xfer $xfer --out $out $IPVFS_BUILDDIR"
    echo "# links: clients $client_rate, I/O nodes $io_rate, targets $tgt_rate_io (ionodes series) / $tgt_rate (targets series); tbf both ways"
    echo "# iperf3 between two hosts, MiB/s received, 4 s (first second left out):"
    sed 's/^/#   /' "$limits_txt"
    echo "# link limits used: client $client_rate one way $link_client, I/O node $io_rate both ways at once $link_io," \
        "target $tgt_rate_io one way $link_tgt_io, target $tgt_rate one way $link_tgt (MiB/s; smaller direction)"
    echo "# 4 client ranks (one per client host), -F -t ${xfer}m, --raid 0 --no-bind --cache-l1 0; median of $trials trial(s)"
    echo "# fraction = mib_s / limit_mib_s; linearity = mib_s / (points' multiple x mib_s of the first point)"
    echo "# cpu_s_per_gib = clients + I/O node hosts + target hosts; busy = share of this machine's cores busy"
    echo "#   (everything, other users too), ours = that CPU time / seconds / cores"
    echo "# *_wire = bytes through those hosts' links (tx + rx) per byte moved"
    column -t -s, "$out/scale.csv"
} >"$out/scale.txt"
cat "$out/scale.txt"

# ---- plots ----
if command -v gnuplot >/dev/null; then
    for s in ionodes targets; do
        if [ $s = ionodes ]; then
            png=$out/scale.png xcol=2 xlabel="I/O nodes ($nt_io target host(s) each; every rank on its own host)" xt="1,2,4"
            title="iPVFS scaling with I/O nodes: 4 client hosts; every link $io_rate (tbf both ways)"
        else
            png=$out/scale-targets.png xcol=3 xlabel="targets of the one I/O node (own hosts)" xt="1,2,3,4,5,6"
            title="iPVFS scaling with targets: 1 I/O node ($io_rate link), targets $tgt_rate each, 4 client hosts ($client_rate)"
        fi
        grep "^$s,.*,write," "$out/scale.csv" >"$work/w.csv"
        grep "^$s,.*,read," "$out/scale.csv" >"$work/r.csv"
        [ -s "$work/w.csv" ] || continue
        gnuplot <<EOF || echo "scale.sh: gnuplot failed; no $png" >&2
set terminal pngcairo size 1100,650 font ",11"
set output "$png"
set datafile separator ","
set title "$title\nlabels: CPU s per GiB moved (clients + I/O node hosts + target hosts)"
set xlabel "$xlabel"
set ylabel "aggregate MiB/s (median of $trials)"
set xtics ($xt)
set xrange [0.5:*]
set offsets 0, 0.6, 0, 0
set yrange [0:*]
set key bottom right box opaque
set grid ytics
plot "$work/w.csv" using $xcol:8 with lines lw 8 lc rgb "#c8c8c8" title "links' limit (iperf3, in this run)", \
     "$work/w.csv" using $xcol:11 with lines dt (8,6) lw 2 lc rgb "#1f77b4" title "linear from the first point, write", \
     "$work/r.csv" using $xcol:11 with lines dt (3,4) lw 2 lc rgb "#d62728" title "linear from the first point, read", \
     "$work/w.csv" using $xcol:5 with linespoints pt 7 ps 1.4 lw 2 lc rgb "#1f77b4" title "write (fsync timed)", \
     "$work/r.csv" using $xcol:5 with linespoints pt 5 ps 1.4 lw 2 lc rgb "#d62728" title "read", \
     "$work/w.csv" using $xcol:5:(sprintf("w %.1f s/GiB", \$13)) with labels left offset 1.5,-1.2 font ",9" tc rgb "#1f77b4" notitle, \
     "$work/r.csv" using $xcol:5:(sprintf("r %.1f s/GiB", \$13)) with labels right offset -1.5,1.2 font ",9" tc rgb "#d62728" notitle
EOF
    done
fi
