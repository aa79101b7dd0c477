# Helpers of the ipvfs-fuse tests (test/t_fuse_*.sh); source after
# test/lib.sh.  One mount at a time, at $FUSE_MNT.
#
#   fuse_require                 exit 77 unless /dev/fuse exists
#   fuse_mount [OPTIONS...]      ipvfs-fuse $FUSE_MNT -f OPTIONS, waits (20 s)
#   fuse_wait SECONDS            waits for ipvfs-fuse to exit: its status
#   fuse_cleanup                 unmounts and kills what is left (call it
#                                from ipvfs_test_cleanup)
FUSE_BIN=$IPVFS_BUILDDIR/fuse/ipvfs-fuse
FUSE_MNT=${FUSE_MNT:-}
FUSE_LOG=${FUSE_LOG:-/dev/null}
fuse_pid=

fuse_require() {
    [ -c /dev/fuse ] || { echo "skip: /dev/fuse is missing"; exit 77; }
    [ -x "$FUSE_BIN" ] || { echo "skip: $FUSE_BIN is not built"; exit 77; }
}

fuse_mount() {
    local i
    [ -n "$FUSE_MNT" ] || ipvfs_fail "FUSE_MNT is not set"
    "$FUSE_BIN" "$FUSE_MNT" -f "$@" >>"$FUSE_LOG" 2>&1 &
    fuse_pid=$!
    for ((i = 0; i < 200; i++)); do
        mountpoint -q "$FUSE_MNT" && return 0
        kill -0 "$fuse_pid" 2>/dev/null || ipvfs_fail "ipvfs-fuse exited: $(tail -3 "$FUSE_LOG")"
        sleep 0.1
    done
    ipvfs_fail "the mount did not appear within 20 s"
}

fuse_wait() {
    local i rc
    for ((i = 0; i < $1 * 10; i++)); do
        if ! kill -0 "$fuse_pid" 2>/dev/null; then
            wait "$fuse_pid"
            rc=$?
            fuse_pid=
            return $rc
        fi
        sleep 0.1
    done
    return 124
}

fuse_cleanup() {
    [ -n "$fuse_pid" ] || return 0
    fusermount3 -u -z "$FUSE_MNT" 2>/dev/null
    kill -9 "$fuse_pid" 2>/dev/null
    wait "$fuse_pid" 2>/dev/null
    fuse_pid=
}
