#!/bin/bash
# A slow member is not a dead one.  RAID-0 over two of our own
# ipvfs-target, member 0's LUN on an ext4 filesystem (a loop device) that
# is frozen (fsfreeze: what a snapshot does; a disk far behind on writeback
# looks the same) for longer than the volume's 5 s liveness timeout while a
# 1 MiB write is in flight: the target's event loop still answers the
# initiator's NOP-Outs, so the write must wait for the thaw and succeed,
# then read back byte-exact (iraid/member.c, member_check_alive).  Before,
# every command had the 5 s limit and the write failed with ETIMEDOUT.
# A hung target (SIGSTOP: no NOP-In either) is still given up on within
# the timeout: t_iraid_flushlose, t_raid_degraded.
# Needs root, loop devices, mkfs.ext4 and fsfreeze; skips without them.
# timeout: 120
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
tool=$build/test/storage-volume-tool
[ -x "$tool" ] && command -v ipvfs-target >/dev/null ||
    { echo "build storage-volume-tool and ipvfs-target first"; exit 1; }
for p in losetup mkfs.ext4 fsfreeze mount umount; do
    command -v $p >/dev/null || { echo "$p not installed"; exit 77; }
done
[ "$(id -u)" = 0 ] && [ -e /dev/loop-control ] || { echo "needs root and loop devices"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=$(mktemp -d /tmp/ipvfs-slow.XXXXXX)
dev= mounted= frozen=
cleanup() {
    [ -n "$frozen" ] && fsfreeze -u "$dir/mnt"
    iraid_targets_stop
    [ -n "$mounted" ] && umount "$dir/mnt"
    [ -n "$dev" ] && losetup -d "$dev"
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; tail -5 "$dir"/target*.log "$dir/tool.err" 2>/dev/null; exit 1; }

truncate -s 96M "$dir/fs.img" || fail "creating the filesystem image"
dev=$(losetup -f --show "$dir/fs.img" 2>"$dir/losetup.err") || {
    dev=; echo "cannot attach a loop device: $(cat "$dir/losetup.err")"; exit 77; }
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 $dev"
mkdir "$dir/mnt" && mount "$dev" "$dir/mnt" || fail "mounting $dev"
mounted=1

# Member 0's LUN on the filesystem to freeze; the targets' logs stay
# outside it (a log write would stall a target as a whole).
iraid_ipvfs_target_one "$dir" 0 16 "$dir/mnt/member0.img" || fail "starting target 0"
iraid_ipvfs_target_one "$dir" 1 16 || fail "starting target 1"
urls=("${IRAID_URLS[0]}:-" "${IRAID_URLS[1]}:-")

coproc SLOW { exec timeout 90 "$tool" --slow 0 65536 "${urls[@]}" 2>"$dir/tool.err"; }
tool_pid=$SLOW_PID
# Our own copies of the pipes: bash drops SLOW once the tool has exited,
# which it may do before its output is read.
exec 5<&"${SLOW[0]}" 6>&"${SLOW[1]}"
read -r -t 30 line <&5
[ "$line" = ready ] || fail "the tool did not start: $line"
fsfreeze -f "$dir/mnt" || fail "fsfreeze -f"
frozen=1
start=$(date +%s%N)
echo go >&6
# Hold the freeze past the 5 s liveness timeout: the point of the test,
# not a wait for a condition.
sleep 7
fsfreeze -u "$dir/mnt" || fail "fsfreeze -u"
frozen=
held=$(( ($(date +%s%N) - start) / 1000000 ))
out=$(cat <&5)
wait "$tool_pid" || fail "the write across the frozen member failed: $out $(cat "$dir/tool.err")"
echo "$out"
took=$(sed -n 's/^slow write completed after \([0-9]*\) ms$/\1/p' <<<"$out")
[ -n "$took" ] || fail "no completion time in the tool's output"
# It must really have waited for the thaw, or the freeze did not stall it
# and the test proved nothing.
[ "$took" -ge $((held - 1000)) ] || fail "the write took $took ms, the freeze lasted $held ms"
grep -q "byte-exact" <<<"$out" || fail "no byte-exact read back"
echo "t_storage_slowmember: passed (write held $took ms by a ${held} ms freeze)"
