#!/usr/bin/env python3
"""qos-load.py: IOR-like writers of application classes against one I/O
node, for benchmarks/qos.sh (the vPFS paper's experiment, scaled down).

  qos-load.py MAP POLICY DURATION_S OUT_CSV APP...

POLICY labels the CSV's lines (the server's --qos, or another run label).

APP is NAME:CLASS:THREADS:PATTERN, PATTERN one of
  onoff:RATE:PERIOD   RATE MB/s during [2kP, 2kP+P), nothing otherwise
  ramp:R0:R1          from R0 to R1 MB/s over the run
  closed              as fast as the store serves (one request per thread
                      in flight)
Each thread is an IOR process: its own connection (HELLO, AUTH with the
cluster key, QOS_CLASS), 1 MiB WRITEs to its own datafile, one in flight,
issued at its share of the rate (a late one goes as soon as the previous
completes, catching up one request at most).  Latency is the client's (issue to reply).  The load's windows of 1 s
start on a boundary of the I/O node's (found by polling QOS_STATUS every
10 ms before the load starts; with --qos-window other than 1000 they are
not aligned), and just after each the node's QOS_STATUS gives its EDF
depth and overload verdict for the window starting and each class's p95
over the window that ended.  OUT_CSV gets one line per application and
window: policy,t,app,issue_mbps,served_mbps,p95_ms,requests,edf_depth,
overloaded,srv_p95_ms (the class's p95 at the I/O node over the same
second, from arrival there to reply: the controller's view, 0 without
requests)."""
import os
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
import ipvfs_proto as P  # noqa: E402

MIB = 1 << 20


def connect(mapfile, cls):
    secret, addr, s = P.io_node(mapfile, timeout=120)
    assert P.hello(s, secret, 77)[0] == 0, "HELLO/AUTH refused"
    if cls:
        st, body = P.call(s, P.OP["QOS_CLASS"], cls.encode())
        assert st == 0, body
    return s


def rate_at(pattern, t, duration):
    kind = pattern[0]
    if kind == "onoff":
        rate, period = float(pattern[1]), float(pattern[2])
        return rate if int(t // period) % 2 == 0 else 0.0
    if kind == "ramp":
        r0, r1 = float(pattern[1]), float(pattern[2])
        return r0 + (r1 - r0) * min(t / duration, 1.0)
    return float("inf")


def writer(mapfile, app, cls, pattern, nthreads, index, handle, t0, duration, log, lock):
    s = connect(mapfile, cls)
    data = bytes([handle & 0xff]) * MIB
    off = 0
    # the writers of an application start spread over one interval, not
    # all at once (in step, 8 writers would send bursts of 8)
    spread = index / nthreads
    next_issue = None
    while True:
        now = time.monotonic()
        if now - t0 >= duration:
            break
        rate = rate_at(pattern, now - t0, duration) / nthreads
        if rate <= 0:
            time.sleep(0.05)
            next_issue = None
            continue
        if next_issue is None:
            # (re)starting: this writer's place in the interval
            next_issue = now + (MIB / 1e6 / rate * spread if rate != float("inf") else 0)
        if rate != float("inf") and next_issue > now:
            time.sleep(min(next_issue - now, 0.2))
            continue
        body = struct.pack("<QII", handle, 1, 0) + struct.pack("<QQ", off, MIB) + data
        issued = time.monotonic()
        st, rbody = P.call(s, P.OP["WRITE"], body)
        done = time.monotonic()
        assert st == 0, (st, rbody[:200])
        off = (off + MIB) % (64 * MIB)
        with lock:
            log.append((app, issued - t0, done - t0))
        if rate != float("inf"):
            # a late writer catches up by one request at most (IOR: the
            # next request goes when the previous one is done)
            step = MIB / 1e6 / rate
            next_issue = max(next_issue + step, done - step)
    s.close()


def node_status(s):
    """The I/O node's QOS_STATUS: (windows closed, window ms, depth,
    overloaded, {class: p95 ms of its last complete window}) or None."""
    st, b = P.call(s, P.OP["QOS_STATUS"], b"")
    if st != 0:
        return None
    ncls, depth = struct.unpack_from("<II", b, 4)
    over = struct.unpack_from("<I", b, 20)[0]
    window_ms = struct.unpack_from("<Q", b, 24)[0]
    windows = struct.unpack_from("<Q", b, 48)[0]
    # each class's p95 at the I/O node in its last complete window
    # (arrival there to reply: the controller's view)
    p95s = {}
    for k in range(ncls):
        rec = b[56 + 144 * k:56 + 144 * (k + 1)]
        name = rec[:64].split(b"\0", 1)[0].decode()
        p95s[name] = struct.unpack_from("<Q", rec, 64 + 32)[0] / 1000.0
    return windows, window_ms, depth, over, p95s


def node_boundary(s):
    """When one of the I/O node's windows closed (polled every 10 ms, so
    that the idle node's windows close on time rather than at the next
    request), or None when its windows are not 1 s (no alignment)."""
    first = node_status(s)
    if not first or first[1] != 1000:
        return None
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        time.sleep(0.01)
        now = node_status(s)
        if now and now[0] != first[0]:
            return time.monotonic()
    return None


def poller(s, t0, duration, depths, p95s_of):
    """Just after each second of the load (on the I/O node's window
    boundaries when aligned): the depth and overload verdict now (those of
    the window starting) and each class's p95 in the node's last complete
    window, the load's window that just ended."""
    k = 0
    while time.monotonic() - t0 < duration + 0.5:
        wake = t0 + k + 0.05
        if wake > time.monotonic():
            time.sleep(wake - time.monotonic())
        st = node_status(s)
        if st:
            depths[k] = (st[2], st[3])
            p95s_of[k - 1] = st[4]
        k = int(time.monotonic() - t0) + 1
    s.close()


def p95(xs):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[max(0, -(-95 * len(xs) // 100) - 1)]


def main():
    mapfile, policy, duration, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    apps = [a.split(":") for a in sys.argv[5:]]
    log, lock, depths, p95s_of, threads = [], threading.Lock(), {}, {}, []
    # the load's windows start on the I/O node's window boundaries, so
    # that srv_p95_ms of a window is the node's p95 over the same second
    status = connect(mapfile, None)
    t0 = (node_boundary(status) or time.monotonic()) + 1.0
    # datafile handles apart per run label (policy, or any other label)
    labels = ["fifo", "dsfq", "two-level"]
    h = 1000 * (1 + (labels.index(policy) if policy in labels else len(labels)))
    for name, cls, n, *pattern in apps:
        for i in range(int(n)):
            h += 1
            threads.append(threading.Thread(target=writer, args=(
                mapfile, name, cls, pattern, int(n), i, h, t0, duration, log, lock)))
    threads.append(threading.Thread(target=poller, args=(status, t0, duration, depths, p95s_of)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(out, "a") as f:
        for w in range(int(duration)):
            depth, over = depths.get(w, (0, 0))
            p95s = p95s_of.get(w, {})
            for name, cls, *_ in apps:
                issued = [x for x in log if x[0] == name and w <= x[1] < w + 1]
                done = [x for x in log if x[0] == name and w <= x[2] < w + 1]
                f.write("%s,%d,%s,%.2f,%.2f,%.1f,%d,%d,%d,%.1f\n" % (
                    policy, w, name, len(issued) * MIB / 1e6, len(done) * MIB / 1e6,
                    p95([(x[2] - x[1]) * 1000 for x in done]), len(done), depth, over,
                    p95s.get(cls, 0.0)))


if __name__ == "__main__":
    main()
