#!/bin/bash
# IPVFS_SERVER_WRAPPER for tests that kill -9 one rank of a server job.
# Hydra (MPICH 4.0.2) SIGKILLs every other rank as soon as it reaps a rank
# killed by a signal, even with -disable-auto-cleanup.  This wrapper runs
# the rank as a child (no exec) and exits normally when the child is killed,
# so Hydra takes its -disable-auto-cleanup path instead: it sends SIGUSR1 to
# the survivors, which serve on (control.c).  Signals meant for the rank
# (TERM, INT, and Hydra's USR1) are passed on to it.
"$@" &
child=$!
for sig in TERM INT USR1; do
    trap "kill -$sig $child 2>/dev/null" "$sig"
done
rc=0
while kill -0 "$child" 2>/dev/null; do
    wait "$child"
    rc=$?
done
# Killed by a signal (status > 128): a plain exit, see above.
exit $((rc > 128 ? 0 : rc))
