#!/bin/bash
# crash-torture.sh: crash consistency by torture (issue 31).  Many short
# cycles, each: a mixed write/sync/overwrite load from several MPI clients
# under CPU pressure (stress-ng), a kill -9 at a random moment of one of:
# a target, an I/O node, the metadata rank, or every server process at
# once; then the restart (a killed rank's supervisor starts it again; a
# killed cluster is started again on its directory), the wait until every
# volume is whole (resync at open, the member's rebuild), `ipvfs-ctl
# scrub`, and a check that every file whose write and MPI_File_sync
# succeeded, and which no later write touched, reads back exact.
#
#   benchmarks/crash-torture.sh [BUILDDIR] --cycles N [--seed S]
#       [--raid 5|1|both] [--clients C] [--stress W] [--fresh]
#
# The cluster is the documented launch (doc/launching.md, through
# test/lib.sh): RAID-5, 2 I/O nodes x 3 targets; RAID-1, 2 x 2; targets of
# 32 MiB.  It is reused from cycle to cycle while the level stays; with
# --raid both (the default) the level is drawn per cycle (2 in 3 RAID-5),
# and a change of level starts a new cluster.
#
# Cycle seeds: cycle 1's is S (default: the pid), each next one is drawn
# from the one before; every random choice of a cycle (level, what is
# killed, when, a second kill in the recovery, the load's files and
# seeds) comes from its seed alone, so `--seed SEED --cycles 1` replays a
# cycle (on a new cluster).  Each cycle prints its seed.
#
# What is killed (kind) and when (phase, in the CSV):
#   target  a random target's serving process (its supervisor restarts it:
#           the I/O node resyncs it from its write-intent bitmap)
#   io      the second I/O node's serving process (its volume is opened
#           again: the dirty regions resync, the store's journal replays)
#   meta    rank 0's serving process: the metadata rank, also I/O node 0
#   all     every server process at once (lib.sh's power cut), then a new
#           start on the same directory
# phase: "load" (the kill fell 0.3 to 3 s into the load) or "recovery" (a
# second kill of every server process, 0 to 1.5 s after the first kill's
# restart: during the resync, the rebuild, the journal replay); the
# CSV also says how many dirty regions the I/O nodes resynced at their
# restart and how many regions a returning member missed, i.e. whether
# the kill hit stripe writes and bitmap updates in flight.
#
# Output, benchmarks/results/: crash-torture.csv (one row per cycle, rows
# of earlier runs kept unless --fresh), crash-torture.png (over every row:
# cycles per kind killed under load, killed again in the recovery, and
# failed), crash-torture.cmd (the command lines, appended).
# Last line: `cycles N, mismatched stripes M, bytes lost L`; exit status 1
# when M or L is not 0 (or a cycle could not be checked), 2 on bad usage.
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cmdline="benchmarks/crash-torture.sh $*"
build=$IPVFS_SRCDIR/_build
cycles= seed=$$ raid=both clients=2 stress=2 fresh=0
usage() { echo "crash-torture.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --cycles) cycles=${2:-}; shift 2 || usage "--cycles takes a number" ;;
    --seed) seed=${2:-}; shift 2 || usage "--seed takes a number" ;;
    --raid) raid=${2:-}; shift 2 || usage "--raid takes 5, 1 or both" ;;
    --clients) clients=${2:-}; shift 2 || usage "--clients takes a number" ;;
    --stress) stress=${2:-}; shift 2 || usage "--stress takes a number" ;;
    --fresh) fresh=1; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) usage "unknown option $1" ;;
    *) build=$1; shift ;;
    esac
done
[ -n "$cycles" ] || usage "--cycles N is required"
[[ $cycles =~ ^[0-9]+$ && $cycles -ge 1 ]] || usage "--cycles takes a number >= 1, not '$cycles'"
[[ $seed =~ ^[0-9]+$ && ${#seed} -le 9 ]] || usage "--seed takes a number below 10^9, not '$seed'"
[[ $clients =~ ^[0-9]+$ && $clients -ge 1 && $clients -le 8 ]] ||
    usage "--clients takes 1 to 8, not '$clients'"
[[ $stress =~ ^[0-9]+$ && $stress -le 16 ]] || usage "--stress takes 0 to 16, not '$stress'"
case $raid in 5|1|both) ;; *) usage "--raid takes 5, 1 or both, not '$raid'" ;; esac
IPVFS_BUILDDIR=$(cd "$build" 2>/dev/null && pwd) || usage "no build directory $build"
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
for f in "$IPVFS_SERVER_BIN" "$IPVFS_CTL_BIN" "$E2E_ROMIO_LIB" "$E2E_PROGS/e2e_persist"; do
    [ -e "$f" ] || { echo "crash-torture.sh: $f is not built" >&2; exit 1; }
done
if [ "$stress" -gt 0 ] && ! command -v stress-ng >/dev/null; then
    echo "crash-torture.sh: stress-ng is not installed (scripts/setup-deps.sh installs it)" >&2
    exit 1
fi
export E2E_NP=2
# e2e_persist's file: each rank writes 1 MiB + 4099 bytes after 5 bytes of zeros
file_bytes=$((E2E_NP * (1048576 + 4099) + 5))
out=$IPVFS_SRCDIR/benchmarks/results
csv=$out/crash-torture.csv
mkdir -p "$out" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-torture.XXXXXX") || exit 1
stress_pid=
writer_pids=()
ipvfs_test_cleanup() {
    local p
    for p in "${writer_pids[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
    writer_pids=()
    [ -n "$stress_pid" ] && kill -- "-$stress_pid" 2>/dev/null
    stress_pid=
    rm -rf "$work"
}

# ---- the cluster ----

level=           # RAID level of the running cluster, empty: none
nio=2 nt=3
cluster_start_new() {   # LEVEL
    [ -n "$level" ] && { ipvfs_stop_cluster || ipvfs_kill_cluster; }
    [ -n "${IPVFS_CLUSTER_DIR:-}" ] && rm -rf "$IPVFS_CLUSTER_DIR"
    IPVFS_CLUSTER_DIR=
    level=$1
    nt=$([ "$level" = 5 ] && echo 3 || echo 2)
    ipvfs_start_cluster "$nio" "$nt" --raid "$level" --target-size 32M --no-bind
}

status_eval() {   # PYTHON expression on st (the status JSON); prints it
    ipvfs_ctl status --json 2>/dev/null | python3 -c '
import json, sys
st = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$1" 2>/dev/null
}

# Every rank serving and every volume whole: all members up, no rebuild.
whole() {
    [ "$(status_eval 'all(r["state"] == "serving" for r in st["ranks"]) and all(r["volume"]["missing"] == 0 and not r["volume"]["rebuild"]["active"] and all(m["state"] == "up" for m in r["volume"]["members"]) for r in st["ranks"] if "volume" in r)')" = True ]
}

wait_whole() {   # SECONDS
    local i
    for ((i = 0; i < $1 * 5; i++)); do
        whole && return 0
        sleep 0.2
    done
    return 1
}

# The pid of rank R's serving process (empty if it does not answer).
rank_pid() { status_eval "st['ranks'][$1]['pid']"; }

# ---- the load ----

# writer J DIR SEED: overwrites its files DIR/wJ-0..2 with e2e_persist, a
# new data seed each time, until DIR/stop exists (in the work directory).
# Its log: "start F S" before a write, "ok F S" after a write and sync that
# succeeded, "fail F S" after one that did not.
writer() {
    local j=$1 dir=$2 s=$3 f log=$work/w$1.log
    RANDOM=$s
    while [ ! -e "$work/stop" ]; do
        f=$((RANDOM % 3))
        s=$((RANDOM * 32768 + RANDOM))
        echo "start $f $s" >>"$log"
        if e2e_run 30 e2e_persist write "ipvfs:$dir/w$j-$f" "$s" >/dev/null 2>&1; then
            echo "ok $f $s" >>"$log"
        else
            echo "fail $f $s" >>"$log"
        fi
    done
}

load_start() {   # DIR SEED
    local j
    rm -f "$work/stop" "$work"/w*.log
    writer_pids=()
    for ((j = 0; j < clients; j++)); do
        set -m
        writer "$j" "$1" $(($2 + j)) &
        writer_pids+=($!)
        set +m
        disown $!   # killed on purpose: no job notice
    done
}

load_stop() {   # [now]: kill the writers at once instead of letting them finish
    local p i
    : >"$work/stop"
    if [ "${1:-}" = now ]; then
        for p in "${writer_pids[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
    fi
    for p in "${writer_pids[@]}"; do
        for ((i = 0; i < 400 && $(kill -0 "$p" 2>/dev/null && echo 1 || echo 0); i++)); do
            sleep 0.1
        done
        kill -9 -- "-$p" 2>/dev/null
    done
    writer_pids=()
}

# Waits until the load has synced a first file (or 30 s passed).
load_wait_first() {
    local i
    for ((i = 0; i < 300; i++)); do
        cat "$work"/w*.log 2>/dev/null | grep -q '^ok ' && return 0
        sleep 0.1
    done
    return 1
}

# Checks the files of DIR: prints "verified skipped lost" counts; each file
# whose last write succeeded (nothing started on it after) must read back
# exact; a file with a later write that failed or was cut by the crash may
# hold either write's bytes and is skipped.
check_files() {
    local dir=$1 j f line op s last_ok verified=0 skipped=0 lost=0
    for ((j = 0; j < clients; j++)); do
        for f in 0 1 2; do
            last_ok= line=
            while read -r op _ s; do
                case $op in
                start) line=$s ;;
                ok) last_ok=$s line= ;;
                fail) line=$s ;;
                esac
            done < <(grep -E "^[a-z]+ $f " "$work/w$j.log" 2>/dev/null)
            [ -n "$last_ok" ] || continue
            if [ -n "$line" ]; then
                skipped=$((skipped + 1))
            elif e2e_run 60 e2e_persist verify "ipvfs:$dir/w$j-$f" "$last_ok" >"$work/verify.out" 2>&1; then
                verified=$((verified + 1))
            else
                lost=$((lost + 1))
                echo "    LOST: $dir/w$j-$f (seed $last_ok) does not read back: $(grep -m1 -i 'differ\|error\|size' "$work/verify.out")" >&2
            fi
        done
    done
    echo "$verified $skipped $lost"
}

# Kills every server process, starts the cluster again on its directory.
kill_all_restart() {
    ipvfs_kill_cluster
    ipvfs_start_cluster "${_ipvfs_args[@]}"
}

# Kills rank R's serving process; its supervisor starts a new one.
kill_rank() {
    local pid
    pid=$(rank_pid "$1")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    kill -9 "$pid"
}

# "R/M": dirty regions the I/O nodes resynced at their opens and regions
# returning members missed, in the logs since the cycle's base_figures.
recovery_figures_raw() {
    local r m
    r=$(ipvfs_logs | grep -Eo "resyncing [0-9]+ dirty region" | awk '{ s += $2 } END { print s + 0 }')
    m=$(ipvfs_logs | grep -Eo "stripes \([0-9]+ region\(s\)\)" | tr -d '(' |
        awk '{ s += $2 } END { print s + 0 }')
    echo "$r $m"
}
base_figures() { read -r base_resync base_missed < <(recovery_figures_raw); }
recovery_figures() {
    local r m
    read -r r m < <(recovery_figures_raw)
    echo "$((r - base_resync))/$((m - base_missed))"
}

# Removes DIR and the load's files in it (their blocks are unmapped).
remove_dir() {
    local j f
    for ((j = 0; j < clients; j++)); do
        for f in 0 1 2; do
            ipvfs_ctl rm "ipvfs:$1/w$j-$f" >/dev/null 2>&1
        done
    done
    ipvfs_ctl rm "ipvfs:$1" >/dev/null 2>&1
}

# ---- one cycle ----

total_mism=0 total_lost=0 total_bad=0
next_seed() { echo $(((($1 * 1103515245 + 12345) / 65536) % 1000000000)); }

run_cycle() {   # N SEED
    local n=$1 cs=$2 lvl kind victim delay phase second t_start dir out mism rc
    local verified skipped lost figs note=
    RANDOM=$cs
    case $raid in
    both) lvl=$((RANDOM % 3 ? 5 : 1)) ;;
    *) lvl=$raid ;;
    esac
    kind=$(echo target io meta all | cut -d' ' -f$((RANDOM % 4 + 1)))
    delay=$(printf "%d.%02d" $((RANDOM % 3)) $((RANDOM % 100)))
    delay=$(echo "$delay + 0.3" | bc)
    second=$((RANDOM % 5 == 0))
    phase=$([ "$second" = 1 ] && echo recovery || echo load)
    t_start=$(date +%s.%N)
    [ "$level" = "$lvl" ] || cluster_start_new "$lvl"
    wait_whole 120 || { echo "cycle $n: the cluster is not whole before the load" >&2; return 1; }
    base_figures
    dir=/torture/c$n
    ipvfs_ctl mkdir "ipvfs:$dir" >/dev/null || { echo "cycle $n: mkdir $dir failed" >&2; return 1; }
    load_start "$dir" "$RANDOM"
    load_wait_first || note="nothing synced in 30 s;"
    sleep "$delay"
    case $kind in
    target) victim=$(( (RANDOM % nio) * (1 + nt) + 1 + RANDOM % nt )) ;;
    io) victim=$((1 + nt)) ;;
    meta) victim=0 ;;
    all) victim=all ;;
    esac
    if [ "$kind" = all ]; then
        load_stop now
        kill_all_restart
    else
        kill_rank "$victim" || note="$note rank $victim did not answer;"
    fi
    if [ "$second" = 1 ]; then
        # a second power cut while the first one's recovery runs
        if [ "$kind" != all ]; then
            for ((i = 0; i < 100; i++)); do
                [ "$(rank_pid "$victim")" != "" ] && break
                sleep 0.1
            done
        fi
        sleep "$(printf "%d.%02d" $((RANDOM % 2)) $((RANDOM % 100)))"
        load_stop now
        kill_all_restart
    fi
    rc=0
    wait_whole 180 || { note="$note not whole after 180 s;"; rc=1; }
    load_stop
    wait_whole 60 || { note="$note not whole after the load;"; rc=1; }
    figs=$(recovery_figures)
    out=$(ipvfs_ctl scrub 2>&1)
    mism=$(echo "$out" | awk '/mismatches/ { s += $4 } END { print s + 0 }')
    if ! echo "$out" | grep -q "mismatches"; then
        note="$note scrub failed: $(echo "$out" | tail -n 1);"
        rc=1
    fi
    read -r verified skipped lost < <(check_files "$dir")
    total_mism=$((total_mism + mism))
    total_lost=$((total_lost + lost * file_bytes))
    [ "$rc" = 0 ] || total_bad=$((total_bad + 1))
    printf "%s,%d,%d,%d,%s,%s,%s,%s,%s,%d,%d,%d,%d,%.1f,%s\n" "$run_id" "$n" "$cs" "$lvl" \
        "$kind" "$victim" "$delay" "$phase" "$figs" "$verified" "$skipped" "$mism" \
        "$((lost * file_bytes))" "$(echo "$(date +%s.%N) - $t_start" | bc)" "${note%;}" >>"$csv"
    echo "cycle $n seed $cs: raid $lvl, kill $kind$([ "$victim" = all ] || echo " (rank $victim)") after ${delay} s ($phase), resynced/missed regions $figs, files verified $verified skipped $skipped lost $lost, scrub mismatches $mism${note:+; $note}"
    # the files of the cycle before last go (their volume blocks are unmapped)
    [ "$n" -gt 2 ] && remove_dir "/torture/c$((n - 2))"
    if [ "$rc" != 0 ] || [ "$mism" != 0 ] || [ "$lost" != 0 ]; then
        # a damaged cluster is not reused: the next cycle starts anew
        if [ -n "${IPVFS_KEEP:-}" ]; then
            echo "    cluster directory kept: $IPVFS_CLUSTER_DIR" >&2
            ipvfs_kill_cluster
            IPVFS_CLUSTER_DIR=
            level=
        else
            cluster_start_new "$lvl"
        fi
    fi
    return 0
}

# ---- main ----

run_id=$seed
[ "$fresh" = 1 ] && rm -f "$csv"
[ -s "$csv" ] || echo "run,cycle,seed,raid,kind,victim,delay_s,phase,resynced_missed,files_verified,files_skipped,mismatched_stripes,bytes_lost,cycle_s,note" >"$csv"
echo "$cmdline  # $(date -u +%FT%TZ), first seed $seed, $clients clients, stress-ng --cpu $stress" >>"$out/crash-torture.cmd"
if [ "$stress" -gt 0 ]; then
    set -m
    stress-ng --cpu "$stress" --cpu-load 60 --timeout 0 --quiet &
    stress_pid=$!
    set +m
fi
echo "crash-torture: $cycles cycles, first seed $seed, raid $raid, $clients clients x $E2E_NP ranks, stress-ng --cpu $stress"
cs=$seed
for ((c = 1; c <= cycles; c++)); do
    run_cycle "$c" "$cs" || total_bad=$((total_bad + 1))
    cs=$(next_seed "$cs")
done
load_stop now
[ -n "$level" ] && { ipvfs_stop_cluster || true; }
# The plot counts every row of the CSV (earlier runs' too): per kind, the
# cycles killed under load, killed again in the recovery, and failed.
plot_csv() {
    local rows mism lost
    awk -F, 'NR > 1 { k[$5]; c[$5 "," $8]++; bad[$5] += ($12 > 0 || $13 > 0) }
        END { print "kind,killed under load,killed again in the recovery,mismatch or loss"
              for (x in k) print x "," c[x ",load"] + 0 "," c[x ",recovery"] + 0 "," bad[x] + 0 }' \
        "$csv" >"$work/plot.csv"
    read -r rows mism lost < <(awk -F, 'NR > 1 { n++; m += $12; l += $13 } END { print n + 0, m + 0, l + 0 }' "$csv")
    gnuplot <<GP
set terminal pngcairo size 900,480
set output "$out/crash-torture.png"
set datafile separator ","
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set title "crash-torture: $rows cycles (crash-torture.csv), $mism mismatched stripes, $lost bytes lost"
set ylabel "cycles"
set yrange [0:*]
set key top right
plot for [i = 2:4] "$work/plot.csv" using i:xtic(1) title columnheader(i)
GP
}
plot_csv >/dev/null 2>&1 || echo "crash-torture: gnuplot failed" >&2
ipvfs_test_cleanup
echo "crash-torture: results in $csv, $out/crash-torture.png"
echo "cycles $cycles, mismatched stripes $total_mism, bytes lost $total_lost"
[ "$total_mism" = 0 ] && [ "$total_lost" = 0 ] && [ "$total_bad" = 0 ]
