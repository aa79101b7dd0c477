#!/bin/bash
# Optional: a one-host Slurm (slurmctld + slurmd + munge from Debian) for
# trying the srun launch here and for test/t_survive_slurm.sh.  Needs root.
# Installs slurm-wlm and munge when missing, writes /etc/slurm/slurm.conf
# for this host only (partition "ipvfs", all its CPUs, oversubscribed so a
# server job and its clients fit on a small machine), starts the daemons
# and waits until the node is idle.  Running it again restarts them.
#   scripts/setup-slurm.sh          set up and start
#   scripts/setup-slurm.sh stop     stop the daemons it started
set -eu
conf=/etc/slurm/slurm.conf
if [ "${1:-}" = stop ]; then
    for d in slurmd slurmctld munged; do
        [ -f "/run/ipvfs-slurm/$d.pid" ] && kill "$(cat "/run/ipvfs-slurm/$d.pid")" 2>/dev/null || true
    done
    exit 0
fi
[ "$(id -u)" = 0 ] || { echo "setup-slurm: run as root" >&2; exit 1; }
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge
fi
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024) - 512 }' /proc/meminfo)
mkdir -p /run/ipvfs-slurm /var/spool/slurmd /var/lib/slurm/slurmctld /var/log/slurm /etc/munge \
    /run/munge
chown slurm: /var/lib/slurm/slurmctld /var/log/slurm 2>/dev/null || true
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge: /etc/munge/munge.key /run/munge 2>/dev/null || true
chmod 0400 /etc/munge/munge.key
cat >"$conf" <<CONF
# written by iPVFS scripts/setup-slurm.sh: one host, for tests
ClusterName=ipvfs
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/ipvfs-slurm/slurmctld.pid
SlurmdPidFile=/run/ipvfs-slurm/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
KillWait=5
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=ipvfs Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
for d in slurmd slurmctld; do
    [ -f "/run/ipvfs-slurm/$d.pid" ] && kill "$(cat "/run/ipvfs-slurm/$d.pid")" 2>/dev/null || true
done
pgrep -x munged >/dev/null || su -s /bin/sh munge -c "munged --pid-file=/run/munge/munged.pid" ||
    munged --force
cp /run/munge/munged.pid /run/ipvfs-slurm/munged.pid 2>/dev/null || true
slurmctld -i
slurmd
for ((i = 0; i < 300; i++)); do
    state=$(sinfo -h -o %t 2>/dev/null | head -1)
    case $state in idle|mix|alloc) echo "setup-slurm: node $host $state"; exit 0 ;; esac
    sleep 0.1
done
echo "setup-slurm: the node did not become idle within 30 s (sinfo: $(sinfo 2>&1 | tail -1))" >&2
exit 1
