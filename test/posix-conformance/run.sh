#!/bin/bash
# POSIX conformance, side by side: runs checks.py in a directory of a
# reference file system (a tmpfs) and in one of the file system under test
# (an ipvfs-fuse mount), prints both results per check, and names every
# difference with its explanation from expected-differences.
#
#   test/posix-conformance/run.sh REFDIR TESTDIR
#
# Exit status 0 when every check passes on REFDIR (the checks are right)
# and every difference is explained; 1 otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
ref=${1:?usage: run.sh REFDIR TESTDIR} tst=${2:?usage: run.sh REFDIR TESTDIR}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
python3 "$here/checks.py" "$ref" >"$out/ref" || { echo "checks.py failed on $ref"; exit 1; }
python3 "$here/checks.py" "$tst" >"$out/tst" || { echo "checks.py failed on $tst"; exit 1; }
python3 - "$out/ref" "$out/tst" "$here/expected-differences" <<'PYEOF'
import sys
def load(path):
    res = {}
    for line in open(path):
        name, _, rest = line.rstrip("\n").partition(" ")
        res[name] = rest.strip()
    return res
ref, tst = load(sys.argv[1]), load(sys.argv[2])
explained = {}
for line in open(sys.argv[3]):
    if line.strip() and not line.startswith("#"):
        name, _, why = line.strip().partition(" ")
        explained[name] = why.strip()
bad = 0
print("%-26s %-6s %-6s %s" % ("check", "tmpfs", "mount", "difference"))
for name in ref:
    r, t = ref[name], tst.get(name, "MISSING")
    rw, tw = r.split()[0], t.split()[0]
    note = ""
    if rw != "PASS":
        note, bad = "CHECK WRONG on the reference: " + r, bad + 1
    elif tw != rw and name in explained:
        note = "explained: %s (%s)" % (explained[name], t)
    elif tw != rw:
        note, bad = "UNEXPLAINED: " + t, bad + 1
    elif name in explained:
        note = "listed as different but passes now: update expected-differences"
    print("%-26s %-6s %-6s %s" % (name, rw, tw, note))
print("%d checks, %d differences, %d unexplained or wrong" %
      (len(ref), sum(ref[n].split()[0] != tst.get(n, "X").split()[0] for n in ref), bad))
sys.exit(1 if bad else 0)
PYEOF
