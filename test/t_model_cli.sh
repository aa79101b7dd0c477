#!/bin/bash
# ipvfs-model on the command line: `ipvfs-model --csv` alone prints the
# first paper's default curve (header, 40 rates from 0 up to the higher
# saturation rate, the response times rising with the rate, PVFS past its
# saturation left empty); at rate 0 iPVFS's mean is the sum of the
# service times worked out by hand; --splits names the best split (the
# one with the highest saturation rate) and agrees with the curve's
# saturation; a ipvfs-cachesim --json file feeds the hit ratios; a
# calibration file is read, and a bad one, bad values and impossible
# splits are refused with status 2 or 1 and a message.
# timeout: 60
set -u
model=$(command -v ipvfs-model) || { echo "FAIL: ipvfs-model not on PATH"; exit 1; }
sim=$(command -v ipvfs-cachesim) || { echo "FAIL: ipvfs-cachesim not on PATH"; exit 1; }
command -v python3 >/dev/null || { echo "skip: python3 is needed to read the CSV"; exit 77; }
work=$(mktemp -d /tmp/ipvfs-model.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$model" --csv >"$work/default.csv" 2>"$work/err" || fail "ipvfs-model --csv: $(cat "$work/err")"
head -3 "$work/default.csv"
python3 - "$work/default.csv" <<'PY' || fail "the default curve is wrong (above)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0].keys()) == ["lambda_per_s", "pvfs_ms", "ipvfs_ms", "pvfs_rho", "ipvfs_rho", "ipvfs_iraid_ms",
                                "ipvfs_ionet_ms", "ipvfs_reqin_ms", "ipvfs_client_ms"], rows[0]
assert len(rows) == 40, len(rows)
lam = [float(r["lambda_per_s"]) for r in rows]
assert lam[0] == 0 and all(b > a for a, b in zip(lam, lam[1:]))
# At rate 0 every queue is empty: iPVFS 6 x (1 + 2), 64 KiB, h 0.5, the
# paper's machine: W_ionet = 65536/6/75e6, W_ioc = 65536/6/500e6,
# target pieces 65536/6/2 B, disk 5.8 ms + 5461.33/51e6,
# T = 0.145636 + 0.021845 + 0.5 (0.072818 + 0.010923 + 0.5 * 5.907085) ms
t0 = 0.145636 + 0.021845 + 0.5 * (0.072818 + 0.010923 + 0.5 * (5.8 + 5461.333 / 51e3))
assert abs(float(rows[0]["ipvfs_ms"]) - t0) < 1e-3, (rows[0]["ipvfs_ms"], t0)
for col in ("pvfs_ms", "ipvfs_ms"):
    vals = [float(r[col]) for r in rows if r[col]]
    assert all(b > a for a, b in zip(vals, vals[1:])), col + " does not rise with the rate"
assert rows[-1]["ipvfs_ms"] == "" and float(rows[-1]["ipvfs_rho"]) > 0.999, rows[-1]
assert any(r["pvfs_ms"] == "" for r in rows), "PVFS never saturates on the default curve"
PY

"$model" --splits >"$work/splits.txt" || fail "--splits failed"
cat "$work/splits.txt"
best=$(sed -n 's/^# best split of 18 nodes (highest saturation rate): \([0-9]*\) I\/O nodes x \([0-9]*\) targets.*/\1x\2/p' "$work/splits.txt")
[ -n "$best" ] || fail "--splits named no best split"
"$model" --splits --csv >"$work/splits.csv" || fail "--splits --csv failed"
python3 - "$work/splits.csv" "$best" "$work/default.csv" <<'PY' || fail "--splits disagrees (above)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ip = [r for r in rows if r["system"] == "ipvfs"]
assert [int(r["io_nodes"]) for r in ip] == [1, 2, 3, 6, 9], ip
top = max(ip, key=lambda r: float(r["saturation_per_s"]))
assert "%sx%s" % (top["io_nodes"], top["targets_per_io"]) == sys.argv[2], (top, sys.argv[2])
six = [r for r in ip if r["io_nodes"] == "6"][0]
curve = list(csv.DictReader(open(sys.argv[3])))
# the curve ends at the higher saturation rate, iPVFS 6 x (1 + 2)'s here
assert abs(float(curve[-1]["lambda_per_s"]) - float(six["saturation_per_s"])) < 0.01, six
PY

# Hit ratios from the cache simulator: a higher hit ratio, a lower mean.
"$sim" --workload httpd --requests 20000 --json >"$work/h.json" || fail "ipvfs-cachesim failed"
"$model" --hits "$work/h.json" --nodes 6 --io-nodes 2 --csv --rate-steps 1 >"$work/h.csv" ||
    fail "--hits refused ipvfs-cachesim's output"
"$model" --hit-io 0 --hit-target 0 --hit-pvfs 0 --nodes 6 --io-nodes 2 --csv --rate-steps 1 \
    >"$work/h0.csv" || fail "hit ratios 0 refused"
python3 - "$work/h.csv" "$work/h0.csv" <<'PY' || fail "--hits made no difference"
import csv, sys
a = list(csv.DictReader(open(sys.argv[1])))[0]
b = list(csv.DictReader(open(sys.argv[2])))[0]
assert float(a["ipvfs_ms"]) < float(b["ipvfs_ms"]) and float(a["pvfs_ms"]) < float(b["pvfs_ms"]), (a, b)
PY

# A calibration file: twice the positioning time, a lower saturation.
printf '# measured\ndisk_seek_ms 7.6\ndisk_rot_ms 4\nt_node_ms 0.1\n' >"$work/p.params"
s1=$("$model" --splits --csv | awk -F, '$1=="ipvfs" && $2==6 {print $4}')
s2=$("$model" --params "$work/p.params" --splits --csv | awk -F, '$1=="ipvfs" && $2==6 {print $4}')
python3 -c "import sys; a, b = map(float, sys.argv[1:]); assert b < 0.6 * a, (a, b)" "$s1" "$s2" ||
    fail "--params did not slow the disk: $s1 -> $s2"

# --clients: the corrected variant's client queue, a longer mean and a
# lower saturation with fewer clients; the papers' variants ignore it.
for v in corrected lcn2005; do
    for n in 0 4; do
        "$model" --variant "$v" --clients "$n" --nodes 6 --io-nodes 3 --hit-io 0 --hit-target 0 \
            --hit-pvfs 0 --rate-min 100 --rate-steps 1 --csv >"$work/c-$v-$n.csv" ||
            fail "--variant $v --clients $n failed"
        "$model" --variant "$v" --clients "$n" --nodes 6 --splits --csv >"$work/cs-$v-$n.csv" ||
            fail "--splits --clients $n failed"
    done
done
python3 - "$work" <<'PY' || fail "--clients is off (above)"
import csv, sys
w = sys.argv[1]
row = lambda f: list(csv.DictReader(open(f)))[0]
sat = lambda f: {r["io_nodes"]: float(r["saturation_per_s"]) for r in csv.DictReader(open(f))
                 if r["system"] == "ipvfs"}
c0, c4 = row(w + "/c-corrected-0.csv"), row(w + "/c-corrected-4.csv")
assert float(c4["ipvfs_ms"]) > float(c0["ipvfs_ms"]), (c0, c4)
assert c4["ipvfs_iraid_ms"] == c0["ipvfs_iraid_ms"], (c0, c4)
# the client queue is the whole difference, and none without --clients
assert float(c0["ipvfs_client_ms"]) == 0, c0
assert abs(float(c4["ipvfs_ms"]) - float(c0["ipvfs_ms"]) - float(c4["ipvfs_client_ms"])) < 2e-4, (c0, c4)
s0, s4 = sat(w + "/cs-corrected-0.csv"), sat(w + "/cs-corrected-4.csv")
assert all(s4[k] < s0[k] for k in s0), (s0, s4)
assert row(w + "/c-lcn2005-0.csv") == row(w + "/c-lcn2005-4.csv")
assert sat(w + "/cs-lcn2005-0.csv") == sat(w + "/cs-lcn2005-4.csv")
PY
"$model" --clients 1.5 2>/dev/null && fail "--clients 1.5 was taken"

# --plot: a PNG through gnuplot, when there is one.
if command -v gnuplot >/dev/null; then
    "$model" --splits --plot "$work/s.png" >/dev/null || fail "--splits --plot failed"
    "$model" --plot "$work/c.png" >/dev/null || fail "--plot failed"
    for f in s c; do
        [ "$(head -c 4 "$work/$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$f.png is no PNG"
    done
fi

# Bad input: a clear message, status 2 (usage) or 1 (a file), no output.
expect() {
    local want=$1 pattern=$2; shift 2
    "$model" "$@" >"$work/out" 2>"$work/err"
    local rc=$?
    [ "$rc" = "$want" ] || fail "ipvfs-model $*: status $rc, expected $want"
    grep -q -- "$pattern" "$work/err" || fail "ipvfs-model $*: no '$pattern' in: $(cat "$work/err")"
    echo "refused as expected: ipvfs-model $*: $(head -1 "$work/err")"
}
expect 2 "does not split" --nodes 7
expect 2 "hit ratio from 0 to 1" --hit-io 1.5
expect 2 "non-negative number" --rate-max -3
expect 2 "lcn2005, journal or corrected" --variant papers
expect 2 "st318452lw" --disk fast
expect 2 "bytes, or a number" --size 12Q
expect 2 "below --rate-min" --rate-min 10 --rate-max 5
expect 1 "not the output of ipvfs-cachesim" --hits "$work/p.params"
printf 'disk_speed 3\n' >"$work/bad.params"
expect 1 "bad.params:1: expected a known key" --params "$work/bad.params"
expect 1 "No such file" --params "$work/none.params"
echo "PASS"
