#!/bin/bash
# POSIX conformance of the ipvfs-fuse mount beside a tmpfs
# (test/posix-conformance/run.sh): open flags, O_APPEND, O_EXCL, rename
# over existing names, unlink of an open file, readdir during changes,
# mtime updates, links.  Fails on a check that is wrong on the tmpfs or a
# difference that test/posix-conformance/expected-differences does not
# explain.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/fuse_lib.sh"
fuse_require
work=$(mktemp -d "${TMPDIR:-/tmp}/t_fuse_posix.XXXXXX") || ipvfs_fail "no scratch directory"
FUSE_MNT=$work/mnt FUSE_LOG=$work/fuse.log
ref=
ipvfs_test_cleanup() {
    fuse_cleanup
    [ -z "$ref" ] || rm -rf "$ref"
    rm -rf "$work"
}
mkdir "$FUSE_MNT"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || ipvfs_fail "/dev/shm is not a tmpfs"
ref=$(mktemp -d /dev/shm/t_fuse_posix.XXXXXX) || ipvfs_fail "no tmpfs directory"

ipvfs_start_cluster 2 1
fuse_mount
mkdir "$FUSE_MNT/posix" || ipvfs_fail "mkdir on the mount failed"
"$IPVFS_SRCDIR/test/posix-conformance/run.sh" "$ref" "$FUSE_MNT/posix" ||
    ipvfs_fail "POSIX conformance: unexplained differences (above)"
fusermount3 -u "$FUSE_MNT" && fuse_wait 20 || ipvfs_fail "unmount failed"
ipvfs_stop_cluster
echo "PASS t_fuse_posix"
