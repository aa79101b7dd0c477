#!/bin/bash
# ipvfs-target's L2 cache (--cache-l2, uCache's second level): with it the
# file LUN is opened with O_DIRECT (the kernel's page cache keeps none of
# it: fincore), reads of cached 64 KiB blocks are hits, a write updates
# what is cached (the next hit returns the new bytes), and under the
# "demote" policy a READ with the DPO bit gives a cached block up (a DPO
# miss is not kept) while under "lru" it does not.  Exact counts come
# from the counters the target logs at shutdown.  Bad sizes and policies
# are refused with the option named.  The vendor DEMOTE command puts a
# block in an L2 that takes demotions (VPD page 0xC0 says which), where a
# DPO read then finds and gives it up; an LRU L2 ignores it.
set -u
b=${IPVFS_BUILDDIR:?run through test/run-suite.sh}
work=$(mktemp -d /tmp/ipvfs-tl2.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$work/log" 2>/dev/null; exit 1; }
command -v iscsi-inq >/dev/null || { echo "libiscsi-bin missing"; exit 77; }
target=$(command -v ipvfs-target) || fail "ipvfs-target not on PATH"
bio=$b/test/iscsi_blockio
iqn=iqn.2026-01.org.ipvfs:l2

for bad in 12Q 1000 -1 99999T; do
    out=$("$target" --portal 127.0.0.1:0 --iqn $iqn --lun "$work/bad.img:16M" --cache-l2 "$bad" 2>&1) &&
        fail "--cache-l2 $bad accepted"
    echo "$out" | grep -q -- '--cache-l2' || fail "--cache-l2 $bad: no clear error: $out"
done
out=$("$target" --portal 127.0.0.1:0 --iqn $iqn --lun "$work/bad.img:16M" --cache-l2 1M \
      --cache-l2-policy fifo 2>&1) && fail "--cache-l2-policy fifo accepted"
echo "$out" | grep -q -- '--cache-l2-policy' || fail "bad policy: no clear error: $out"
echo "ok: bad --cache-l2 sizes and policies refused"

# start POLICY: a target with a 1 MiB L2 (16 blocks) on a new 16 MiB file.
start() {
    rm -f "$work/f.img"
    "$target" --portal 127.0.0.1:0 --iqn $iqn --lun "$work/f.img:16M" --cache-l2 1M \
        --cache-l2-policy "$1" >"$work/out" 2>"$work/log" &
    pid=$!
    for _ in $(seq 100); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
    port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/out")
    [ -n "$port" ] || fail "no 'listening on' line"
    url="iscsi://127.0.0.1:$port/$iqn/0"
    grep -q 'opened with O_DIRECT' "$work/log" || fail "the LUN was not opened with O_DIRECT"
}
# stop: ends the target and sets line to its L2 counter line.
stop() {
    kill -TERM "$pid"; wait "$pid"; local rc=$?; pid=
    [ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
    line=$(grep 'L2 cache .*hits' "$work/log")
}
# rd MODE FILE: reads the first 128 KiB (2 blocks of the L2) and compares.
rd() { "$bio" "$url" "$1" 0 256 >"$work/got" || fail "$1"; cmp -s "$work/got" "$2" || fail "$1: wrong data"; }

head -c 131072 /dev/urandom >"$work/a"
head -c 131072 /dev/urandom >"$work/b"
start demote
"$bio" "$url" write 0 256 <"$work/a" || fail "write A"
rd read "$work/a"       # 2 misses, kept
rd read "$work/a"       # 2 hits
"$bio" "$url" write 0 256 <"$work/b" || fail "write B"
rd read "$work/b"       # 2 hits: the write updated the cached blocks
"$bio" "$url" read 1 1 >"$work/got1" || fail "read of one sector"
cmp -s "$work/got1" <(tail -c +513 "$work/b" | head -c 512) || fail "partial hit: wrong data"
rd readdpo "$work/b"    # 2 hits, given up (DPO)
rd readdpo "$work/b"    # 2 misses, not kept
rd read "$work/b"       # 2 misses, kept
pages=$(fincore -n -b -o PAGES "$work/f.img" 2>/dev/null | tr -d ' ')
[ "${pages:-0}" = 0 ] || fail "$pages pages of the LUN file in the page cache despite O_DIRECT"
stop
echo "$line" | grep -q 'demote: 7 hits, 6 misses, 2 dropped (DPO)' || fail "demote counters: $line"
echo "ok: demote: hits, write update, DPO drop ($line)"

start lru
"$bio" "$url" write 0 256 <"$work/a" || fail "write A"
rd read "$work/a"       # 2 misses
rd readdpo "$work/a"    # 2 hits, kept: LRU ignores DPO
rd read "$work/a"       # 2 hits
stop
echo "$line" | grep -q 'lru: 4 hits, 2 misses, 0 dropped (DPO)' || fail "lru counters: $line"
echo "ok: lru keeps DPO reads ($line)"

start demote
# flags: 1 = takes DEMOTE, 2 = the file LUN's backing room is given
[ "$("$bio" "$url" vpdc0 0 0)" = 3 ] || fail "VPD 0xC0 of a demote L2 does not say it takes DEMOTE"
"$bio" "$url" write 0 256 <"$work/a" || fail "write A"   # writes allocate nothing
"$bio" "$url" demote 0 256 <"$work/a" || fail "DEMOTE"     # 2 blocks kept
"$bio" "$url" demote 1 2 < <(head -c 1024 "$work/b") || fail "DEMOTE of a partial block"
rd readdpo "$work/a"    # 2 hits, given up: never in both levels
rd readdpo "$work/a"    # 2 misses
[ "$(fincore -n -b -o PAGES "$work/f.img" | tr -d ' ')" = 0 ] || fail "page cache used"
stop
echo "$line" | grep -q 'demote: 2 hits, 2 misses, 2 dropped (DPO), 2 demoted' ||
    fail "DEMOTE counters: $line"
echo "ok: DEMOTE into a demote L2, DPO read takes it back ($line)"

start lru
[ "$("$bio" "$url" vpdc0 0 0)" = 2 ] || fail "VPD 0xC0 of an LRU L2 says it takes DEMOTE"
"$bio" "$url" write 0 256 <"$work/a" || fail "write A"
"$bio" "$url" demote 0 256 <"$work/a" || fail "DEMOTE to lru"
rd read "$work/a"       # 2 misses: the demotion was ignored
stop
echo "$line" | grep -q 'lru: 0 hits, 2 misses, 0 dropped (DPO), 0 demoted' ||
    fail "lru DEMOTE counters: $line"
echo "ok: an LRU L2 ignores DEMOTE"
