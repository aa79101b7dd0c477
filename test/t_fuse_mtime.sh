#!/bin/bash
# mtime on a 2 I/O node x 1 target cluster, seen through ipvfs-fuse: MPI-IO
# writes change a file's mtime at close (each writing rank) and at
# MPI_File_sync (without a close); a read-only MPI open leaves it; adding,
# removing and renaming names change their directories' mtime and ctime
# (both directories of a rename across them).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/fuse_lib.sh"
fuse_require
e2e_require
E2E_NP=2
work=$(mktemp -d "${TMPDIR:-/tmp}/t_fuse_mtime.XXXXXX") || ipvfs_fail "no scratch directory"
FUSE_MNT=$work/mnt FUSE_LOG=$work/fuse.log
mnt=$FUSE_MNT
ipvfs_test_cleanup() {
    fuse_cleanup
    rm -rf "$work"
}
mkdir "$mnt" || ipvfs_fail "no mount point"
# mt PATH, ct PATH: mtime, ctime in ns (attributes are not cached: fresh)
mt() { python3 -c 'import os, sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$1"; }
ct() { python3 -c 'import os, sys; print(os.stat(sys.argv[1]).st_ctime_ns)' "$1"; }
# later WHAT OLD NEW: fails unless NEW > OLD
later() { [ "$3" -gt "$2" ] || ipvfs_fail "$1: time did not advance ($2 -> $3)"; }

ipvfs_start_cluster 2 1
fuse_mount
head -c 3000000 /dev/urandom >"$work/src.bin"

# -- MPI writes: at close
: >"$mnt/f" || ipvfs_fail "create through the mount failed"
m0=$(mt "$mnt/f")
e2e_run 60 mpi_fcopy "$work/src.bin" ipvfs:/f 1000000 >/dev/null || ipvfs_fail "mpi_fcopy failed"
m1=$(mt "$mnt/f")
later "MPI write and close" "$m0" "$m1"
cmp "$work/src.bin" "$mnt/f" || ipvfs_fail "the MPI-written bytes differ through the mount"
e2e_run 60 mpi_fcopy ipvfs:/f -null >/dev/null || ipvfs_fail "mpi_fcopy read failed"
[ "$(mt "$mnt/f")" = "$m1" ] || ipvfs_fail "a read-only MPI open changed mtime"

# -- MPI writes: at MPI_File_sync, the program exiting without a close
: >"$mnt/g" || ipvfs_fail "create through the mount failed"
m0=$(mt "$mnt/g")
e2e_run 60 e2e_persist write ipvfs:/g 1 >/dev/null || ipvfs_fail "e2e_persist write failed"
later "MPI write and sync" "$m0" "$(mt "$mnt/g")"

# -- directories: create, rename inside, remove, mkdir, rename across
mkdir "$mnt/d" "$mnt/e" || ipvfs_fail "mkdir through the mount failed"
d0=$(mt "$mnt/d") c0=$(ct "$mnt/d")
: >"$mnt/d/x" || ipvfs_fail "create in d failed"
d1=$(mt "$mnt/d"); later "create in a directory (mtime)" "$d0" "$d1"
later "create in a directory (ctime)" "$c0" "$(ct "$mnt/d")"
mv "$mnt/d/x" "$mnt/d/y" || ipvfs_fail "rename in d failed"
d2=$(mt "$mnt/d"); later "rename in a directory" "$d1" "$d2"
rm "$mnt/d/y" || ipvfs_fail "rm in d failed"
d3=$(mt "$mnt/d"); later "remove from a directory" "$d2" "$d3"
mkdir "$mnt/d/s" || ipvfs_fail "mkdir in d failed"
d4=$(mt "$mnt/d"); later "mkdir in a directory" "$d3" "$d4"
e0=$(mt "$mnt/e")
mv "$mnt/d/s" "$mnt/e/s" || ipvfs_fail "rename across directories failed"
later "rename out of a directory" "$d4" "$(mt "$mnt/d")"
later "rename into a directory" "$e0" "$(mt "$mnt/e")"
ipvfs-ctl mkdir /h/i || ipvfs_fail "ipvfs-ctl mkdir failed"
h0=$(mt "$mnt/h")
ipvfs-ctl rm /h/i || ipvfs_fail "ipvfs-ctl rm failed"
later "rmdir through ipvfs-ctl" "$h0" "$(mt "$mnt/h")"

fusermount3 -u "$mnt" || ipvfs_fail "unmount failed"
fuse_wait 20 || ipvfs_fail "ipvfs-fuse did not exit cleanly"
ipvfs_stop_cluster
