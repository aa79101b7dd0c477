#!/bin/bash
# timeout: 200
# ipvfs-fuse against MPI-IO on a 2 I/O node x 1 target cluster: a file an
# MPI program wrote read through the mount byte for byte and the other way
# round; a tree made with cp -r, tar x and mv read back through MPI;
# truncate, holes, appends, 0-byte files, odd names; links refused;
# chmod/touch seen by ipvfs-ctl stat; close-to-open (a reopen sees what MPI
# wrote meanwhile); allow_other refused to a user; fusermount3 -u; a hung
# server gives EIO to ls within the time limit; a killed one gives EIO to a
# reading cat; SIGTERM unmounts.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/fuse_lib.sh"
fuse_require
e2e_require
E2E_NP=2
work=$(mktemp -d "${TMPDIR:-/tmp}/t_fuse.XXXXXX") || ipvfs_fail "no scratch directory"
FUSE_MNT=$work/mnt FUSE_LOG=$work/fuse.log
mnt=$FUSE_MNT
ipvfs_test_cleanup() {
    fuse_cleanup
    rm -rf "$work"
}
cd "$work" || ipvfs_fail "cannot enter $work"
mkdir "$mnt"
fcopy() { e2e_run 60 mpi_fcopy "$@" >/dev/null || ipvfs_fail "mpi_fcopy $* failed"; }

ipvfs_start_cluster 2 1
fuse_mount
grep " $mnt " /proc/mounts | grep -q default_permissions || ipvfs_fail "no default_permissions"

# -- MPI writes, the mount reads; the mount writes, MPI reads
head -c 6000007 /dev/urandom >expected.bin
fcopy expected.bin ipvfs:/run1/out.bin 1000000
cmp expected.bin "$mnt/run1/out.bin" || ipvfs_fail "the mount shows other bytes than MPI wrote"
cp expected.bin "$mnt/written.bin" || ipvfs_fail "cp into the mount failed"
fcopy ipvfs:/written.bin back.bin
cmp expected.bin back.bin || ipvfs_fail "MPI reads other bytes than were written through the mount"

# -- a tree made with ordinary tools, read back through MPI
mkdir -p "tree/sub dir/ünïcødé" && cp expected.bin "tree/sub dir/ünïcødé/da'ta file.bin"
: >"tree/zero bytes"
printf 'small' >tree/small
tar cf tree.tar -C tree .
cp -r tree "$mnt/copied" || ipvfs_fail "cp -r into the mount failed"
mkdir "$mnt/tarred" && tar xf tree.tar -C "$mnt/tarred" || ipvfs_fail "tar x into the mount failed"
mv "$mnt/copied/small" "$mnt/copied/moved" || ipvfs_fail "mv in the mount failed"
mv tree/small tree/moved
for f in "sub dir/ünïcødé/da'ta file.bin" "zero bytes" moved; do
    rm -f back.bin
    fcopy "ipvfs:/copied/$f" back.bin
    cmp "tree/$f" back.bin || ipvfs_fail "MPI read of /copied/$f differs"
done
diff -r tree "$mnt/copied" || ipvfs_fail "cp -r tree differs through the mount"
diff -r tree "$mnt/tarred" >/dev/null 2>&1 || true   # tar's tree still has 'small'
cmp "tree/sub dir/ünïcødé/da'ta file.bin" "$mnt/tarred/sub dir/ünïcødé/da'ta file.bin" ||
    ipvfs_fail "tar x wrote other bytes"
ln -s x "$mnt/link" 2>err.txt && ipvfs_fail "a symbolic link was made"
grep -q "Operation not supported" err.txt || ipvfs_fail "ln -s: $(cat err.txt)"
ln "$mnt/written.bin" "$mnt/hard" 2>/dev/null && ipvfs_fail "a hard link was made"

# -- truncate, holes, appends, 0-byte files, mv over a name
cp expected.bin local.bin && cp expected.bin "$mnt/t.bin"
truncate -s 1000 local.bin && truncate -s 1000 "$mnt/t.bin"
truncate -s 3000000 local.bin && truncate -s 3000000 "$mnt/t.bin"
printf 'appended' >>local.bin && printf 'appended' >>"$mnt/t.bin"
printf 'hole' | dd of=local.bin bs=1 seek=9000000 conv=notrunc status=none
printf 'hole' | dd of="$mnt/t.bin" bs=1 seek=9000000 conv=notrunc status=none
cmp local.bin "$mnt/t.bin" || ipvfs_fail "truncate/append/hole through the mount differ"
fcopy ipvfs:/t.bin back2.bin && cmp local.bin back2.bin || ipvfs_fail "MPI sees other bytes after truncate/append/hole"
touch "$mnt/empty" && [ "$(stat -c %s "$mnt/empty")" = 0 ] || ipvfs_fail "0-byte file"
mv -f "$mnt/t.bin" "$mnt/written.bin" && cmp local.bin "$mnt/written.bin" || ipvfs_fail "mv over a name"
[ -e "$mnt/t.bin" ] && ipvfs_fail "the renamed name is still there"

# -- attributes reach the namespace
chmod 640 "$mnt/empty" && touch -m -d '2021-02-03 04:05:06 UTC' "$mnt/empty"
ipvfs-ctl stat /empty >stat.txt || ipvfs_fail "stat failed"
grep -q '^  Mode: 0640 ' stat.txt && grep -q '^Modify: 2021-02-03 04:05:06' stat.txt ||
    ipvfs_fail "chmod/touch not in the namespace: $(cat stat.txt)"

# -- close-to-open: a reopen sees what MPI wrote meanwhile (same size)
cmp expected.bin "$mnt/run1/out.bin" || ipvfs_fail "reread before the overwrite"
head -c 6000007 /dev/urandom >second.bin
fcopy second.bin ipvfs:/run1/out.bin 1000000
cmp second.bin "$mnt/run1/out.bin" || ipvfs_fail "a reopen shows stale cached data"

# -- allow_other is root's only
if id nobody >/dev/null 2>&1; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$FUSE_BIN" "$work" -f -o allow_other \
        --map "$IPVFS_MAP" 2>err.txt && ipvfs_fail "allow_other accepted from a user"
    grep -q "only root" err.txt || ipvfs_fail "allow_other: no clear refusal: $(cat err.txt)"
fi

# -- fusermount3 -u: a clean exit
fusermount3 -u "$mnt" || ipvfs_fail "fusermount3 -u failed"
fuse_wait 20 || ipvfs_fail "ipvfs-fuse did not exit cleanly after fusermount3 -u"

# -- a hung server: ls fails with EIO within the time limit
head -c 67108864 /dev/urandom >"$work/big.bin"
ipvfs-ctl cp "$work/big.bin" ipvfs:/big.bin || ipvfs_fail "staging big.bin failed"
IPVFS_TIMEOUT_MS=2000 fuse_mount
pids=$(ipvfs_serving_pids) || ipvfs_fail "no serving pids"
kill -STOP $pids
start=$(date +%s%N)
timeout 30 ls -l "$mnt/" >/dev/null 2>err.txt && { kill -CONT $pids; ipvfs_fail "ls on a hung cluster succeeded"; }
elapsed=$((($(date +%s%N) - start) / 1000000))
kill -CONT $pids
grep -q "Input/output error" err.txt || ipvfs_fail "ls on a hung cluster: $(cat err.txt)"
[ "$elapsed" -lt 10000 ] || ipvfs_fail "ls took $elapsed ms on a hung cluster (limit 2000 ms)"

# -- a killed server under a reading cat: EIO
mkfifo pipe
cat "$mnt/big.bin" >pipe 2>cat.err &
cat_pid=$!
exec 3<pipe
head -c 1048576 <&3 >/dev/null   # cat is reading, blocked on the pipe
ipvfs_kill_cluster
start=$(date +%s%N)
cat <&3 >/dev/null
exec 3<&-
wait "$cat_pid" && ipvfs_fail "cat read all of a file whose servers were killed"
elapsed=$((($(date +%s%N) - start) / 1000000))
grep -q "Input/output error" cat.err || ipvfs_fail "cat under a killed cluster: $(cat cat.err)"
[ "$elapsed" -lt 10000 ] || ipvfs_fail "cat took $elapsed ms to fail (limit 2000 ms)"

# -- SIGTERM: unmounts and exits cleanly
kill -TERM "$fuse_pid"
fuse_wait 20 || ipvfs_fail "ipvfs-fuse did not exit cleanly on SIGTERM (status $?): $(tail -3 "$FUSE_LOG")"
mountpoint -q "$mnt" && ipvfs_fail "still mounted after SIGTERM"
echo "PASS t_fuse_basic"
