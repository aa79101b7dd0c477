#!/bin/bash
# ipvfs-target as a program: options and config file, port 0 with the
# "listening on" line, discovery and inquiry with libiscsi's tools, CHAP
# from the config file, bad options refused, clean exit on SIGTERM.
# timeout: 60
set -u
command -v iscsi-ls >/dev/null && command -v iscsi-inq >/dev/null || { echo "libiscsi-bin missing"; exit 77; }
target=$(command -v ipvfs-target) || { echo "ipvfs-target not on PATH"; exit 1; }
work=$(mktemp -d /tmp/ipvfs-tcli.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/err" 2>/dev/null | tail -20; exit 1; }

start() {
    "$target" "$@" >"$work/out" 2>"$work/err" &
    pid=$!
    for _ in $(seq 50); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
    port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/out")
    [ -n "$port" ] || fail "no 'listening on' line"
}
stop() {
    kill -TERM "$pid"; wait "$pid"; local rc=$?; pid=
    [ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
}

# refused: missing LUN size, bad portal, unknown option
"$target" --iqn iqn.x:a --lun "$work/new.img" >/dev/null 2>&1 && fail "new file without size accepted"
"$target" --iqn iqn.x:a --lun mem:1M --portal nonsense >/dev/null 2>&1 && fail "bad portal accepted"
"$target" --bogus >/dev/null 2>&1 && fail "unknown option accepted"

start --portal 127.0.0.1:0 --iqn iqn.2026-01.org.ipvfs:cli --lun mem:32M --lun "$work/f.img:16M"
iscsi-ls -s "iscsi://127.0.0.1:$port" >"$work/ls" || fail "iscsi-ls"
grep -q 'Target:iqn.2026-01.org.ipvfs:cli' "$work/ls" || fail "discovery lacks the target"
[ "$(grep -c 'DIRECT_ACCESS' "$work/ls")" -eq 2 ] || fail "expected two LUNs"
iscsi-inq -e 1 -c 128 "iscsi://127.0.0.1:$port/iqn.2026-01.org.ipvfs:cli/1" | grep -q 'Unit Serial' ||
    fail "serial number VPD"
stop
[ "$(stat -c %s "$work/f.img")" -eq $((16 << 20)) ] || fail "file LUN not created with its size"

cat >"$work/conf" <<CONF
# target with one-way CHAP
portal = 127.0.0.1:0
iqn = iqn.2026-01.org.ipvfs:cli
lun = mem:8M
chap-user = bob
chap-secret = bobs-secret-123
CONF
chmod 600 "$work/conf"
start --config "$work/conf"
iscsi-inq "iscsi://bob%bobs-secret-123@127.0.0.1:$port/iqn.2026-01.org.ipvfs:cli/0" >/dev/null ||
    fail "CHAP login with the right secret"
iscsi-inq "iscsi://bob%wrong-secret-1@127.0.0.1:$port/iqn.2026-01.org.ipvfs:cli/0" >/dev/null 2>&1 &&
    fail "CHAP login with a wrong secret accepted"
grep -q 'CHAP: wrong response' "$work/err" || fail "no log line for the failed CHAP login"
stop

# '#' starts a comment only at line start or after whitespace: a secret may
# hold one, and a comment may follow it
cat >"$work/conf" <<CONF
portal = 127.0.0.1:0   # loopback only
iqn = iqn.2026-01.org.ipvfs:cli
lun = mem:8M
chap-user = bob
chap-secret = bobs-secret#123	# tab before this comment
CONF
start --config "$work/conf"
iscsi-inq "iscsi://bob%bobs-secret#123@127.0.0.1:$port/iqn.2026-01.org.ipvfs:cli/0" >/dev/null ||
    fail "CHAP login with a secret containing '#'"
iscsi-inq "iscsi://bob%bobs-secret@127.0.0.1:$port/iqn.2026-01.org.ipvfs:cli/0" >/dev/null 2>&1 &&
    fail "CHAP login with the secret cut at '#' accepted"
stop
echo "ipvfs-target CLI: OK"
