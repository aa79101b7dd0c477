"""Snapshots of `ipvfs-ctl stats --json` in the integration tests: what each
client did at each I/O node between two snapshots.  Import it from a test's
inline Python with:  sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
"""
import json

COUNTERS = ("requests", "bytes_in", "bytes_out")


def load(prefix, n):
    """Snapshots PREFIX.0.json .. PREFIX.(n-1).json."""
    return [json.load(open("%s.%d.json" % (prefix, i))) for i in range(n)]


def per_client(snap):
    """{(rank, client_id): counters} of the ranks that serve data."""
    out = {}
    for r in snap["ranks"]:
        if r["role"] not in ("io", "metadata"):
            continue
        for c in r.get("clients", []):
            out[(r["rank"], c["client_id"])] = c
    return out


def changes(before, after):
    """{(rank, client_id): {counter: growth}} from snapshot before to after,
    in (rank, client_id) order; pairs that did nothing are left out."""
    a, b = per_client(before), per_client(after)
    out = {}
    for key, now in sorted(b.items()):
        was = a.get(key, {})
        d = {c: now.get(c, 0) - was.get(c, 0) for c in COUNTERS}
        if any(d.values()):
            out[key] = d
    return out
