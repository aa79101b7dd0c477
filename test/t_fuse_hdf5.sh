#!/bin/bash
# h5dump of an HDF5 file written by a parallel HDF5 program (collective
# MPI-IO, 2 ranks) on ipvfs:, read through the FUSE mount and through
# ipvfs-ctl cp: the same dataset and attribute as the same program's file
# on the local file system.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/fuse_lib.sh"
fuse_require
e2e_require
[ -x "$E2E_PROGS/h5_write" ] || { echo "skip: test/mpi/h5_write not built (libhdf5-mpich-dev missing)"; exit 77; }
command -v h5dump >/dev/null || { echo "skip: h5dump missing (hdf5-tools)"; exit 77; }
E2E_NP=2
work=$(mktemp -d "${TMPDIR:-/tmp}/t_fuse_hdf5.XXXXXX") || ipvfs_fail "no scratch directory"
FUSE_MNT=$work/mnt FUSE_LOG=$work/fuse.log
ipvfs_test_cleanup() {
    fuse_cleanup
    rm -rf "$work"
}
cd "$work" && mkdir "$FUSE_MNT" || ipvfs_fail "cannot set up $work"
# h5dump's output without its first line (which names the file)
dump() { h5dump "$1" | tail -n +2; }

e2e_run 60 h5_write "$work/ref.h5" 300 70 || ipvfs_fail "h5_write on the local file system failed"
dump ref.h5 >ref.txt || ipvfs_fail "h5dump of the reference failed"
grep -q '(299,0): 299000, 299001' ref.txt || ipvfs_fail "the reference dump lacks the last row"

ipvfs_start_cluster 2 1
e2e_run 60 h5_write ipvfs:/h5/out.h5 300 70 || ipvfs_fail "h5_write on ipvfs: failed"
fuse_mount
dump "$FUSE_MNT/h5/out.h5" >mount.txt || ipvfs_fail "h5dump through the mount failed"
diff ref.txt mount.txt || ipvfs_fail "h5dump through the mount differs from the local file's"
ipvfs-ctl cp ipvfs:/h5/out.h5 copied.h5 || ipvfs_fail "cp of the HDF5 file out failed"
dump copied.h5 >copied.txt || ipvfs_fail "h5dump of the copy failed"
diff ref.txt copied.txt || ipvfs_fail "h5dump of the copy differs from the local file's"
fusermount3 -u "$FUSE_MNT" && fuse_wait 20 || ipvfs_fail "unmount failed"
ipvfs_stop_cluster
echo "PASS t_fuse_hdf5"
