#!/bin/bash
# timeout: 180
# Each rank logs to its own bounded, rotated file (--log-dir, --log-size),
# and mpiexec's output gets only the start-up lines:
#  1. --log-size 16K with IPVFS_LOG=debug (a line per connection): after
#     500 namespace calls (some 45 KiB of lines) rank 0's log has been
#     rotated twice: rank-0.log and rank-0.log.1, each within 16 KiB, its
#     first lines gone; mpiexec's output holds no line of those calls.
#  2. (root: a tmpfs) mpiexec's output and the ranks' logs on a disk that
#     is full: the calls go on, status answers, the job survives (Hydra
#     ends the job when it cannot write a rank's output), and shutdown is
#     clean.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
export IPVFS_LOG=debug

small=
mounted=
ipvfs_test_cleanup() {
    if [ -n "$_ipvfs_pid" ]; then
        ipvfs_kill_cluster
        wait "$_ipvfs_pid" 2>/dev/null
        _ipvfs_pid=
    fi
    [ -z "$mounted" ] || umount "$small" || echo "cleanup: cannot unmount $small" >&2
    [ -z "$small" ] || rmdir "$small" 2>/dev/null
}

# calls N PREFIX: N mkdirs through ipvfs-ctl, each a connection to rank 0
# (a debug line of some 90 bytes when it closes)
calls() {
    local i
    for ((i = 0; i < $1; i++)); do
        ipvfs-ctl mkdir "/$2/$i" || ipvfs_fail "mkdir /$2/$i"
    done
}

# -- 1. rotation at the bound
ipvfs_start_cluster 1 1 --target-size 64M --no-bind --log-size 16K
logdir=$IPVFS_CLUSTER_DIR/log
head -n 1 "$logdir/rank-0.log" | grep -q "info: rank 0 logs to $logdir/rank-0.log" ||
    ipvfs_fail "rank 0's log does not start with its start-up line: $(head -n 1 "$logdir/rank-0.log")"
calls 500 rot
[ -f "$logdir/rank-0.log.1" ] || ipvfs_fail "rank 0's log was not rotated: $(ls -l "$logdir")"
for f in "$logdir"/rank-0.log "$logdir"/rank-0.log.1; do
    size=$(stat -c %s "$f")
    [ "$size" -le 16384 ] || ipvfs_fail "$f holds $size bytes, over the 16 KiB bound"
done
grep -q "logs to" "$logdir/rank-0.log" "$logdir/rank-0.log.1" &&
    ipvfs_fail "the oldest lines were kept: the start-up line is still there"
ipvfs-ctl mkdir /rot/last || ipvfs_fail "mkdir /rot/last"
ipvfs_wait_log "debug: connection .*" || ipvfs_fail "no connection lines"
grep -q "debug: connection" "$IPVFS_CLUSTER_DIR/server.log" &&
    ipvfs_fail "mpiexec's output got the ranks' log lines"
echo "rotated: $(stat -c '%n %s' "$logdir"/rank-0.log* | tr '\n' ' ')"
ipvfs_stop_cluster

# -- 2. a full disk under mpiexec's output and the logs
if ! small=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-logs.XXXXXX") ||
    ! mount -t tmpfs -o size=1m tmpfs "$small" 2>/dev/null; then
    echo "part 2 skipped: cannot mount a tmpfs (needs root)"
    echo "t_server_logs: ok"
    exit 0
fi
mounted=1
rm -f "$IPVFS_CLUSTER_DIR/server.log"
ln -s "$small/server.log" "$IPVFS_CLUSTER_DIR/server.log" || ipvfs_fail "ln"
ipvfs_start_cluster 1 1 --target-size 64M --no-bind --log-dir "$small/log" --log-size 4M
dd if=/dev/zero of="$small/fill" bs=64k 2>/dev/null   # until the disk is full
[ "$(df --output=avail "$small" | tail -n 1)" -eq 0 ] || ipvfs_fail "the tmpfs is not full"
calls 100 full
ipvfs-ctl status >/dev/null || ipvfs_fail "status on a full log disk"
kill -0 "$_ipvfs_pid" || ipvfs_fail "the job ended on a full log disk"
rm -f "$small/fill"
ipvfs-ctl mkdir /after/full || ipvfs_fail "mkdir after the disk had room again"
for ((i = 0; i < 100; i++)); do
    grep -Eq "warn: [0-9]+ log line\(s\) lost: No space left on device" "$small/log/rank-0.log" && break
    sleep 0.1
done
[ "$i" -lt 100 ] || ipvfs_fail "rank 0's log does not say that lines were lost: $(tail -n 3 "$small/log/rank-0.log")"
ipvfs_stop_cluster
echo "a full log disk: 100 calls served, the job lived, the lost lines were counted"
echo "t_server_logs: ok"
