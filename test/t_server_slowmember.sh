#!/bin/bash
# One slow volume does not hold back what needs nothing from it (issue
# 31): every target of the I/O node (rank 0, also the metadata rank) is
# stopped (SIGSTOP), and 12 copies of 16 MiB files into new files (their
# first writes) fill the server's bound on the write data it holds while
# they wait for the volume.  On fresh connections, then, a metadata op
# (stat) and a READ of a hole (a file that has no block on the volume)
# must each be answered while every one of those writes is still stuck.  Before, the server stopped
# reading every connection at its one bound on bytes held, so a fresh
# connection's HELLO waited with the writes until the targets were given
# up on (10 s).
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
stopped=
cp_pids=()
ipvfs_test_cleanup() {
    local p
    # shellcheck disable=SC2086
    [ -n "$stopped" ] && kill -CONT $stopped 2>/dev/null
    for p in "${cp_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "${work:-}"
}
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-slowmember.XXXXXX") || ipvfs_fail "mktemp"
ipvfs_start_cluster 1 3 --target-size 256M --no-bind

truncate -s 8M "$work/hole" || ipvfs_fail "truncate"
ipvfs_ctl cp "$work/hole" ipvfs:/hole >/dev/null || ipvfs_fail "cp of the sparse file"
head -c 16M /dev/urandom >"$work/big" || ipvfs_fail "making the big file"

# every target of the I/O node stops answering (no NOP-In either): the
# I/O node gives them up after its 5 s member timeout, and the writes
# stuck on them fail then
pids=$(ipvfs_serving_pids) || ipvfs_fail "no pids from status"
rank0=${pids%% *}
stopped=$(echo "$pids" | cut -d' ' -f2-4)
rss_mib() { awk '$1 == "VmRSS:" { print int($2 / 1024) }' "/proc/$rank0/status"; }
base=$(rss_mib)
# shellcheck disable=SC2086
kill -STOP $stopped || ipvfs_fail "cannot stop the targets"
start=$(date +%s%N)
for ((i = 0; i < 12; i++)); do
    "$IPVFS_CTL_BIN" cp "$work/big" "ipvfs:/w$i" >"$work/cp$i.out" 2>&1 &
    cp_pids+=($!)
done
# The copies' windows (8 MiB each, common/proto.h) add up to more than the
# server's bound on WRITE data (64 MiB): it holds that much once its
# resident set grew by it (the bodies it read and keeps).
for ((i = 0; i < 100; i++)); do
    [ "$(rss_mib)" -ge $((base + 60)) ] && break
    sleep 0.05
done
held_ms=$((($(date +%s%N) - start) / 1000000))
[ "$(rss_mib)" -ge $((base + 60)) ] ||
    ipvfs_fail "the server holds only $(($(rss_mib) - base)) MiB more after $held_ms ms"
echo "the server holds $(($(rss_mib) - base)) MiB more, $held_ms ms after the targets stopped"

still_stuck() {
    local p
    for p in "${cp_pids[@]}"; do
        kill -0 "$p" 2>/dev/null || return 1
    done
}
check() {   # WHAT COMMAND...
    local what=$1 t0 ms
    shift
    still_stuck || ipvfs_fail "the writes ended before $what was asked: too slow a machine?"
    t0=$(date +%s%N)
    timeout 30 "$@" >"$work/out" 2>&1 || ipvfs_fail "$what failed: $(tail -n 2 "$work/out")"
    ms=$((($(date +%s%N) - t0) / 1000000))
    still_stuck || ipvfs_fail "$what was answered only after a stuck write ended (${ms} ms)"
    echo "$what answered in $ms ms while the writes were stuck"
}
check "stat" "$IPVFS_CTL_BIN" stat ipvfs:/hole
check "a hole READ" "$IPVFS_CTL_BIN" cp ipvfs:/hole "$work/hole.back"
cmp -s "$work/hole" "$work/hole.back" || ipvfs_fail "the hole read back wrong"
echo "all answered $((($(date +%s%N) - start) / 1000000)) ms after the targets stopped"
# shellcheck disable=SC2086
kill -CONT $stopped
stopped=
for p in "${cp_pids[@]}"; do wait "$p"; done
cp_pids=()
ipvfs_kill_cluster
echo "t_server_slowmember: ok"
