#!/bin/bash
# The README's five-minute tour, typed as written: every fenced block
# after a "<!-- tour -->" line, in order, in one bash (set -e, so every
# command must succeed), from a scratch directory that stands for the top
# of the source tree: `_install` is a `make install` of this build (into
# a DESTDIR), `_build` the build.  The tour starts a loopback cluster,
# writes with MPI-IO, runs ipvfs-ctl status, ls, stat and cp, mounts with
# ipvfs-fuse and compares, shuts the cluster down and removes _tour.
# Also checked: the server job ended (the tour's `wait` returned), the
# copy and the mount showed the whole file, the tour left nothing behind.
# Skips (77) without /dev/fuse or fusermount3, or when the MPI-IO pieces
# are not built.
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -c /dev/fuse ] || { echo "skip: /dev/fuse is missing"; exit 77; }
command -v fusermount3 >/dev/null || { echo "skip: no fusermount3"; exit 77; }
[ -x "$IPVFS_BUILDDIR/benchmarks/ipvfs-ior" ] || { echo "skip: ipvfs-ior is not built"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-tour.XXXXXX") || ipvfs_fail "mktemp"
work=$tmp/work
tour_pgid=
# Whatever the tour left running, in every case (a failed command stops
# it with the cluster up and maybe the mount in place): the mount, then
# the cluster (a shutdown, then kill -9 of each rank's process group: its
# supervisor and serving process), then the tour's own process group
# (mpiexec, which setsid below put there).
ipvfs_test_cleanup() {
    local map=$work/_tour/data/ipvfs.map sups= p
    mountpoint -q "$work/_tour/mnt" 2>/dev/null && fusermount3 -u -z "$work/_tour/mnt"
    if [ -s "$map" ]; then
        sups=$(awk '$1 == "rank" { print $9 }' "$map")
        for p in $sups; do
            if kill -0 "$p" 2>/dev/null; then
                timeout 30 "$IPVFS_CTL_BIN" --map "$map" shutdown >/dev/null 2>&1
                break
            fi
        done
        for p in $sups; do
            kill -9 -- "-$p" "$p" 2>/dev/null
        done
    fi
    [ -n "$tour_pgid" ] && kill -9 -- "-$tour_pgid" 2>/dev/null
    rm -rf "$tmp"
}

# The tour, from the README's marked blocks.
awk '/^<!-- tour -->/ { want = 1; next }
     want && /^```/ { if (inside) { inside = 0; want = 0 } else inside = 1; next }
     inside' "$IPVFS_SRCDIR/README" >"$tmp/tour.sh"
nblocks=$(grep -c '^<!-- tour -->' "$IPVFS_SRCDIR/README")
[ "$nblocks" -ge 5 ] || ipvfs_fail "the README marks $nblocks tour blocks (<!-- tour -->), expected 5 or more"
for cmd in ipvfs-server ipvfs-ior 'ipvfs-ctl status' 'ipvfs-ctl cp' ipvfs-fuse 'ipvfs-ctl shutdown'; do
    grep -q -- "$cmd" "$tmp/tour.sh" || ipvfs_fail "the README's tour has no '$cmd'"
done
bash -n "$tmp/tour.sh" || ipvfs_fail "the README's tour does not parse"
echo "README: $nblocks tour blocks, $(grep -cv '^ *#\|^$' "$tmp/tour.sh") lines:"
sed 's/^/    /' "$tmp/tour.sh"

# _install as make install lays it out, _build as it is.
prefix=$(sed -n 's/^prefix = //p' "$IPVFS_BUILDDIR/Makefile")
[ -n "$prefix" ] || ipvfs_fail "no prefix in $IPVFS_BUILDDIR/Makefile"
make -s -C "$IPVFS_BUILDDIR" install DESTDIR="$tmp/stage" >"$tmp/install.log" 2>&1 ||
    { tail -20 "$tmp/install.log"; ipvfs_fail "make install failed"; }
mkdir -p "$work"
ln -s "$tmp/stage$prefix" "$work/_install"
ln -s "$IPVFS_BUILDDIR" "$work/_build"

# setsid: the tour's processes in a group of their own, for the cleanup.
(cd "$work" && exec setsid bash -e -x "$tmp/tour.sh") >"$tmp/tour.log" 2>&1 &
tour_pid=$!
tour_pgid=$tour_pid
# Until it ends, 90 s at most; a server that cannot start says so on
# mpiexec's output (its only errors there are fatal), while the tour would
# wait for the map for good.
for ((i = 0; i < 900; i++)); do
    kill -0 "$tour_pid" 2>/dev/null || break
    if grep -qE '^ipvfs(-server: |\[[^]]*\] error: )' "$tmp/tour.log"; then
        cat "$tmp/tour.log"
        ipvfs_fail "the tour's servers did not start"
    fi
    sleep 0.1
done
if kill -0 "$tour_pid" 2>/dev/null; then
    cat "$tmp/tour.log"
    ipvfs_fail "the tour did not end within 90 s"
fi
wait "$tour_pid"
rc=$?
cat "$tmp/tour.log"
[ "$rc" = 0 ] || ipvfs_fail "the tour failed (status $rc): the last command above"

# What the tour showed.
grep -q 'cluster ready' "$tmp/tour.log" || ipvfs_fail "no 'cluster ready' from the servers"
[ "$(grep -c '^RESULT .*errors=0' "$tmp/tour.log")" = 2 ] ||
    ipvfs_fail "ipvfs-ior did not report a write and a read without errors"
[ "$(grep -cE '^[0-9]+ +(metadata\+io|io|target) .* serving ' "$tmp/tour.log")" = 6 ] ||
    ipvfs_fail "ipvfs-ctl status did not show 6 ranks serving"
grep -q '^ *Size: 67108864$' "$tmp/tour.log" || ipvfs_fail "ipvfs-ctl stat did not show the 64 MiB file"
grep -qE '^-.* 67108864 .* ior$' "$tmp/tour.log" || ipvfs_fail "ls on the mount did not show the 64 MiB file"
grep -q '^cluster stopped' "$tmp/tour.log" || ipvfs_fail "no 'cluster stopped' from ipvfs-ctl shutdown"
[ ! -e "$work/_tour" ] || ipvfs_fail "the tour left _tour behind"
echo "PASS: the README's tour runs as written"
