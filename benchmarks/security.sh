#!/bin/bash
# security.sh: what the security of issue 26 costs, side by side in one
# run.  Three variants take turns in every trial, on a 2 I/O node x 2
# target RAID-0 cluster on this host (4 client ranks):
#   base       BASE_BUILD (the main before it), as root: the key, no
#              capabilities, no permission checks;
#   new-key    NEW_BUILD as root: the key (checks skipped for it);
#   new-user   NEW_BUILD as a user made here: kernel credentials at the
#              metadata rank, POSIX checks, capabilities shown to every
#              I/O node and checked on every request.
#
#   benchmarks/security.sh [--trials N] [--out DIR] BASE_BUILD NEW_BUILD
#
# Cases: ipvfs-ior 1 MiB write (with fsync) and read of 64 MiB per rank;
# 4 KiB random reads (ipvfs-ior -z) over 16 MiB per rank; and the
# connection set-up (connect, HELLO, AUTH; the kernel's claim for
# new-user) in microseconds, median of 200 connections to the metadata
# rank.  CPU seconds per GiB moved: the clients' from ipvfs-ior, the
# serving processes' from /proc (less disturbed by other load than MiB/s).
# Output (DIR, default benchmarks/results): security-trials.csv,
# security.csv (case, metric, the medians of the three variants, and
# new-key/base, new-user/base), security.txt (table, command, date, load)
# and security.png.  Needs root (useradd, runuser).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
trials=3 out=$srcdir/benchmarks/results
while [ $# -gt 0 ]; do
    case $1 in
    --trials) trials=${2:?--trials needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "security.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: security.sh [--trials N] [--out DIR] BASE_BUILD NEW_BUILD" >&2; exit 2; }
case $trials in ''|*[!0-9]*|0) echo "security.sh: --trials needs a number above 0" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "security.sh: needs root (it makes a user)" >&2; exit 2; }
base=$(cd "$1" && pwd) && new=$(cd "$2" && pwd) || exit 2
base_src=$(cd "$base/.." && pwd)
for b in "$base" "$new"; do
    [ -x "$b/benchmarks/ipvfs-ior" ] && [ -x "$b/backend/ipvfs-server" ] ||
        { echo "security.sh: $b is not a built tree (scripts/build.sh)" >&2; exit 2; }
done
user=ipvfs-bench made_user=
if ! id "$user" >/dev/null 2>&1; then
    useradd -M -s /bin/sh "$user" || exit 1
    made_user=1
fi
mkdir -p "$out" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-security.XXXXXX") || exit 1
chmod 755 "$work"
trap 'rm -rf "$work"; [ -z "$made_user" ] || userdel "$user"' EXIT
trials_csv=$out/security-trials.csv
echo "trial,variant,case,metric,value" >"$trials_csv"
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# one VARIANT TRIAL: a cluster of the variant's build, its cases, rows on stdout
one() {
    local variant=$1 trial=$2 build=$new src=$srcdir as=() o
    [ "$variant" = base ] && build=$base src=$base_src
    [ "$variant" = new-user ] && as=(runuser -u "$user" --)
    IPVFS_BUILDDIR=$build IPVFS_SRCDIR=$src VARIANT=$variant TRIAL=$trial \
        AS="${as[*]}" WORK="$work" bash -c '
        . "$IPVFS_SRCDIR/test/lib.sh"
        ipvfs_start_cluster 2 2 --raid 0 --target-size 2G
        chmod 755 "$IPVFS_CLUSTER_DIR"
        lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
        run() { $AS env HOME="$WORK" IPVFS_MAP="$IPVFS_MAP" timeout -k 5 600 \
                    mpiexec -n 4 env LD_PRELOAD="$lib" "$ior" "$@"; }
        f=ipvfs:/sec-$VARIANT-$TRIAL
        res() { sed -n "s/^RESULT op=$1 .* MiBps=\([0-9.]*\).*cpu_s=\([0-9.]*\).*/\1 \2/p"; }
        row() { echo "$TRIAL,$VARIANT,$1,$2,$3"; }
        pids=$(ipvfs_serving_pids)
        # the serving processes CPU seconds so far (utime + stime)
        srv_cpu() {
            local p t=0
            for p in $pids; do
                t=$((t + $(awk '"'"'{ print $14 + $15 }'"'"' "/proc/$p/stat")))
            done
            echo "$t / $(getconf CLK_TCK)" | bc -l
        }
        for op in write read; do
            flags=(-r) && [ $op = write ] && flags=(-w -e)
            c0=$(srv_cpu)
            o=$(run -f "$f" -b 64m -t 1m "${flags[@]}" -k) || { echo "$o" >&2; exit 1; }
            c1=$(srv_cpu)
            read -r mibs cpu <<<"$(res $op <<<"$o")"
            [ -n "$mibs" ] || { echo "no $op result: $o" >&2; exit 1; }
            row ior-1m "${op}_MiBps" "$mibs"
            row ior-1m "${op}_client_cpu_s_per_GiB" "$(echo "$cpu * 4" | bc -l)"   # 256 MiB moved
            row ior-1m "${op}_server_cpu_s_per_GiB" "$(echo "($c1 - $c0) * 4" | bc -l)"
        done
        o=$(run -f "$f" -b 16m -t 4k -r -z -k) || { echo "$o" >&2; exit 1; }
        read -r mibs cpu <<<"$(res read <<<"$o")"
        row rand-4k read_MiBps "$mibs"
        row rand-4k read_IOPS "$(echo "$mibs * 256" | bc -l)"
        us=$($AS env IPVFS_SRCDIR="$IPVFS_SRCDIR" python3 - "$IPVFS_MAP" "$VARIANT" <<'"'"'PY'"'"'
import os, socket, statistics, struct, sys, time
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
secret, ranks = P.read_map(sys.argv[1])
meta = ranks[0][:2]
def user_hello(s):
    st, body = P.call(s, P.OP["HELLO"], struct.pack("<II", 1, 0) + os.urandom(16))
    u = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    u.connect(b"\0ipvfs-cred:%d" % meta[1])
    u.send(body[32:48])
    assert struct.unpack("<I", u.recv(4))[0] == 0
    u.close()
    st, _ = P.call(s, P.OP["AUTH"], P.auth_body(P.D["IPVFS_AUTH_KERNEL"]))
    assert st == 0
times = []
for i in range(200):
    t = time.perf_counter()
    s = P.connect(meta)
    if sys.argv[2] == "new-user":
        user_hello(s)
    else:
        assert P.hello(s, secret)[0] == 0
    times.append((time.perf_counter() - t) * 1e6)
    s.close()
print("%.1f" % statistics.median(times))
PY
) || exit 1
        row connect setup_us "$us"
        ipvfs_stop_cluster >/dev/null
    '
}

for ((t = 1; t <= trials; t++)); do
    # the order turns every trial, so that a drift of the machine's load
    # weighs on every variant alike
    case $((t % 3)) in
    1) order="base new-key new-user" ;;
    2) order="new-key new-user base" ;;
    0) order="new-user base new-key" ;;
    esac
    for v in $order; do
        echo "security.sh: trial $t, $v" >&2
        one "$v" "$t" >>"$trials_csv" || { echo "security.sh: trial $t of $v failed" >&2; exit 1; }
    done
done

# medians per case, metric and variant
python3 - "$trials_csv" "$out/security.csv" <<'PY'
import collections, csv, statistics, sys
vals = collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    vals[(r["case"], r["metric"], r["variant"])].append(float(r["value"]))
keys = sorted({(c, m) for c, m, _ in vals}, key=lambda k: (k[0] != "ior-1m", k))
with open(sys.argv[2], "w") as f:
    f.write("case,metric,base,new_key,new_user,new_key_over_base,new_user_over_base\n")
    for c, m in keys:
        b, k, u = (statistics.median(vals[(c, m, v)]) for v in ("base", "new-key", "new-user"))
        f.write("%s,%s,%.2f,%.2f,%.2f,%.3f,%.3f\n" % (c, m, b, k, u, k / b, u / b))
PY
{
    echo "# security.sh: the cost of issue 26's security, medians of $trials trials"
    echo "# command: benchmarks/security.sh --trials $trials $1 $2"
    echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# base: $(git -C "$base_src" log -1 --format='%h %s' 2>/dev/null | cut -c1-70)"
    echo "# new:  $(git -C "$srcdir" log -1 --format='%h %s' 2>/dev/null | cut -c1-70)"
    column -s, -t <"$out/security.csv"
} >"$out/security.txt"
cat "$out/security.txt"
if command -v gnuplot >/dev/null; then
    # every figure as a ratio to the base, with the 3% band of the goal
    tail -n +2 "$out/security.csv" >"$work/ratios.csv"
    gnuplot <<EOF || echo "security.sh: gnuplot failed; no plot" >&2
set terminal png size 1100,500 noenhanced
set output "$out/security.png"
set datafile separator ","
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set ylabel "ratio to the previous main (median of $trials)"
set title "iPVFS security: this tree as root (key) and as a user (kernel credentials + capabilities) / previous main"
set xtics rotate by -20
set key top right
set arrow from graph 0, first 0.97 to graph 1, first 0.97 nohead dt 2
set arrow from graph 0, first 1.03 to graph 1, first 1.03 nohead dt 2
plot "$work/ratios.csv" using 6:xticlabels(stringcolumn(1)." ".stringcolumn(2)) title "new, key / base", \\
     "" using 7 title "new, user / base"
EOF
fi
