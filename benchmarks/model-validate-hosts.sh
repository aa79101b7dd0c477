#!/bin/bash
# model-validate-hosts.sh: benchmarks/model-validate.sh with every server
# rank on an emulated host of its own and shaped links, so that the
# model's network terms decide the answer.  Needs root.
#
#   benchmarks/model-validate-hosts.sh IO_RATE TARGET_RATE [BUILDDIR]
#
# Hosts (test/hosts_lib.sh: network namespaces on one bridge):
#   node1..node6   one server rank each, in rank order (rank r is an I/O
#                  node when r % (NT + 1) == 0, else a target), each link
#                  shaped both ways (tbf on the host's eth0, what it
#                  sends, and on its switch port, what it receives): an
#                  I/O node's to IO_RATE, a target's to TARGET_RATE (tc's
#                  units, 40mbit; "none": not shaped); the shaping
#                  follows each configuration's roles
#   node7          the client ranks (benchmarks/ipvfs-openload), its link
#                  not shaped: the clients are not what is measured
# The tbf bucket is MVH_BURST bytes (default 4000: under three packets,
# so that an idle link sends a 64 KiB piece no faster than its rate, and
# a low-rate calibration sees what a loaded link gives), its queue
# MVH_LIMIT bytes (default 4 MiB: no drop, the queue is the model's).
# The servers run with --no-bind (the hosts share this machine's cores)
# and --read-places MVH_READ_PLACES (default auto, the server's default:
# every target is on another host, so 2 per target), the model with
# --read-places the same count (auto: 2).
# MVH_IO_SHAPE=in: an I/O node's link shaped only as it receives (its
# switch port), not as it sends (default both): whether the replies'
# queue slows what comes in (the ACKs of its targets' transfers leave
# through that queue).
# MVH_PLACES="RATES": instead of the sweep, benchmarks/model-places.sh
# per configuration on the same hosts and links (a cluster per rate, so
# that each rate's I/O node counters stand alone: where a read's time
# goes), into MP_NAME (default MV_NAME-places).csv, the I/O nodes' shaped
# links' queues both ways (benchmarks/tc-backlog.py) into MP_NAME-tc.csv;
# MVH_PLACES_CAL=1 also calibrates first (the params file that
# benchmarks/model-hops-report.py reads).
# Per configuration (MV_CONFIGS, default "1x5 2x2 3x1"), calibration
# measures bw_net on the shaped links (the I/O node's: L1 hits of 4 and
# 64 KiB; a target's: misses of 4 and 64 KiB) and the validation sweeps
# the rate as model-validate.sh does.  Output in BENCH_OUT (default
# benchmarks/results), named MV_NAME (default model-hosts-ioIO_RATE-
# tTARGET_RATE): .csv, -sat.csv, -trials.csv, -report.txt, -NIOxNT.png
# (the shaped links' capacity marked), .txt and the params files.  Every
# MV_* variable of model-validate.sh applies (MV_APPEND=1: add to an
# earlier run's trials).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: model-validate-hosts.sh IO_RATE TARGET_RATE [BUILDDIR] (rates as tc's 40mbit, or none)"
io_rate=${1:?$usage} tgt_rate=${2:?$usage}
IPVFS_SRCDIR=$srcdir
IPVFS_BUILDDIR=$(cd "${3:-$srcdir/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$srcdir/test/lib.sh" || exit 1
. "$srcdir/test/hosts_lib.sh" || exit 1
. "$srcdir/test/multihost_lib.sh" || exit 1
bps() {   # RATE: bytes/s, 0 for none
    local bits
    [ "$1" = none ] && { echo 0; return 0; }
    bits=$(_hosts_rate_bits "$1") || { echo "model-validate-hosts.sh: bad rate '$1' ($usage)" >&2; exit 2; }
    echo $((bits / 8))
}
io_bps=$(bps "$io_rate") || exit 2
tgt_bps=$(bps "$tgt_rate") || exit 2
places=${MVH_READ_PLACES:-auto}
case "$places" in
auto) MV_READ_PLACES=2 ;;   # every target on another host (ionode_store.c)
[1-9] | 1[0-6]) MV_READ_PLACES=$places ;;
*) echo "model-validate-hosts.sh: bad MVH_READ_PLACES '$places' (auto or 1 to 16)" >&2; exit 2 ;;
esac
io_shape=${MVH_IO_SHAPE:-both}
case "$io_shape" in
both | in) ;;
*) echo "model-validate-hosts.sh: bad MVH_IO_SHAPE '$io_shape' (both or in)" >&2; exit 2 ;;
esac
hosts_require
burst=${MVH_BURST:-4000} limit=${MVH_LIMIT:-4194304}
configs=${MV_CONFIGS:-1x5 2x2 3x1}

# shape HOST RATE: tbf both ways, or none
shape() {
    if [ "$2" = none ]; then
        hosts_unshape "$1"
    else
        hosts_shape "$1" "$2" "$burst" "$limit"
    fi
}

hosts_up 7
mh_servers_on node1 node1:1,node2:1,node3:1,node4:1,node5:1,node6:1
MV_CLIENT_ON="$HOSTS_NETNS_SSH node7"
MV_SERVER_ARGS="--no-bind --read-places $places"
export MV_READ_PLACES
MV_NAME=${MV_NAME:-model-hosts-io$io_rate-t$tgt_rate}
MV_TITLE="hosts: I/O node links $io_rate, target links $tgt_rate"
MV_IO_LINK_BPS=$io_bps MV_T_LINK_BPS=$tgt_bps
BENCH_OUT=${BENCH_OUT:-$srcdir/benchmarks/results}
export MV_CLIENT_ON MV_SERVER_ARGS MV_NAME MV_TITLE MV_IO_LINK_BPS MV_T_LINK_BPS BENCH_OUT
append=${MV_APPEND:-0}
for cfg in $configs; do
    nt=${cfg#*x}
    for r in 0 1 2 3 4 5; do
        if ((r % (nt + 1) == 0)); then
            shape "node$((r + 1))" "$io_rate"
            # MVH_IO_SHAPE=in: only what the I/O node receives is shaped
            # (its replies and its ACKs to the targets leave at once)
            [ "$io_shape" = in ] && { tc -n "${HOSTS_PREFIX}node$((r + 1))" qdisc del dev eth0 root ||
                ipvfs_fail "unshaping node$((r + 1))'s eth0"; }
        else
            shape "node$((r + 1))" "$tgt_rate"
        fi
    done
    echo "=== $cfg: links $(for k in 1 2 3 4 5 6; do
        printf 'node%s %s; ' "$k" "$(tc -n "${HOSTS_PREFIX}node$k" qdisc show dev eth0 | awk '{ print $2, $8 }')"
    done)"
    if [ -n "${MVH_PLACES:-}" ]; then
        if [ "${MVH_PLACES_CAL:-0}" = 1 ]; then
            MC_FILE_MIB=${MV_FILE_MIB:-256} "$srcdir/benchmarks/model-calibrate.sh" "${cfg%x*}" "$nt" \
                "$BENCH_OUT/$MV_NAME-$cfg.params" "$IPVFS_BUILDDIR" >"$BENCH_OUT/$MV_NAME-$cfg.calibrate.log" 2>&1 ||
                ipvfs_fail "model-calibrate.sh for $cfg"
        fi
        # the I/O nodes' links, both ways: where the replies and the
        # targets' data queue
        queues=
        for r in 0 1 2 3 4 5; do
            ((r % (nt + 1) == 0)) || continue
            queues="$queues send$r=${HOSTS_PREFIX}node$((r + 1)):eth0 recv$r=${HOSTS_PREFIX}sw:v$((r + 1))"
        done
        MP_TC_QUEUES=$queues MP_NAME=${MP_NAME:-$MV_NAME-places} "$srcdir/benchmarks/model-places.sh" "$cfg" "$MVH_PLACES" \
            "$IPVFS_BUILDDIR" || ipvfs_fail "model-places.sh for $cfg"
    else
        MV_CONFIGS=$cfg MV_APPEND=$append "$srcdir/benchmarks/model-validate.sh" "$IPVFS_BUILDDIR" ||
            ipvfs_fail "model-validate.sh for $cfg"
    fi
    append=1
done
