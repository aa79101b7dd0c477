#!/usr/bin/env python3
"""tc-backlog.py: the mean queue of shaped links while a load runs.

    tc-backlog.py INTERVAL_S NAME=NETNS:DEV [NAME=NETNS:DEV ...]

Reads `tc -s -n NETNS qdisc show dev DEV` (the root qdisc: the tbf that
test/hosts_lib.sh's hosts_shape puts on a host's eth0, what it sends, and
on its switch port, what it receives) at random intervals of mean
INTERVAL_S (exponential: samples at Poisson instants see the time average,
and a load with a period cannot alias them) until SIGTERM or SIGINT, then
prints one line per queue:

    NAME samples=N backlog_bytes=B busy=F sent_bytes=S

backlog_bytes, the mean bytes queued; busy, the fraction of samples with
a backlog; sent_bytes, what the qdisc sent between the first and the last
sample.  The mean wait of a byte entering the queue is backlog_bytes over
the link's rate (Little's law), the link's queueing delay that
ipvfs-model's corrected link terms (M/D/1) predict.  No figure for a queue that never answered."""
import random
import re
import signal
import subprocess
import sys
import time

PAT = re.compile(r"Sent (\d+) bytes .*?backlog (\d+)b", re.S)


def sample(ns, dev):
    try:
        out = subprocess.run(["tc", "-s", "-n", ns, "qdisc", "show", "dev", dev],
                             capture_output=True, text=True, timeout=2).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = PAT.search(out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    try:
        interval = float(sys.argv[1])
        queues = []
        for arg in sys.argv[2:]:
            name, spec = arg.split("=", 1)
            ns, dev = spec.split(":", 1)
            queues.append((name, ns, dev))
        if interval <= 0:
            raise ValueError
    except ValueError:
        sys.exit("tc-backlog.py: expected INTERVAL_S > 0 and NAME=NETNS:DEV arguments\n" + __doc__)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    acc = {q[0]: [0, 0, 0, None, None] for q in queues}   # n, backlog sum, busy, first, last sent
    while not stop:
        for name, ns, dev in queues:
            s = sample(ns, dev)
            if s is None:
                continue
            a = acc[name]
            a[0] += 1
            a[1] += s[1]
            a[2] += s[1] > 0
            a[3] = s[0] if a[3] is None else a[3]
            a[4] = s[0]
        time.sleep(random.expovariate(1 / interval))
    for name, _, _ in queues:
        n, total, busy, first, last = acc[name]
        if n:
            print("%s samples=%d backlog_bytes=%.0f busy=%.3f sent_bytes=%d" % (
                name, n, total / n, busy / n, last - first))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
