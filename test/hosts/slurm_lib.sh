# shellcheck shell=bash disable=SC2015,SC2086
# A multi-node Slurm inside the emulated hosts of test/hosts_lib.sh (bash;
# source it after test/lib.sh and test/hosts_lib.sh).  Needs root.
#
#   . "$IPVFS_SRCDIR/test/hosts/slurm_lib.sh"
#   slurm_require                        # skip (77) without Slurm and munge here
#   hosts_up 2
#   slurm_up node1 node2                 # waits (30 s at most) until every node is idle
#   hosts_exec node1 srun --mpi=pmi2 -N 2 -n 4 ./prog
#   slurm_down                           # stops it all (hosts_down does it too)
#
# What runs: one munged, in the switch namespace (no host: a host crash
# must not take it), with its own key and socket in the Slurm directory
# (a system munged, if any, is left alone); slurmctld on the first host
# given (as nodeK, at 198.18.0.K:6817) and a slurmd on every host given
# (slurmd -N nodeK), each in its host's namespace and under its name.
# Every file is under SLURM_HOSTS_DIR (a fresh ${TMPDIR:-/tmp}/ipvfs-slurm-
# <test pid>.XXXXXX, removed by slurm_down unless IPVFS_KEEP is set):
# slurm.conf, munge/ (key, socket, log), state/ (slurmctld), spool/nodeK/,
# run/ (pid files), log/ (slurmctld.log, slurmd-nodeK.log).
#
# slurm_up exports SLURM_CONF (every Slurm command reads it: srun, sbatch,
# sinfo, scancel...).  Those must run inside a host (hosts_exec): only
# there is 198.18.0.1 reachable.
#
# The configuration: partition "ipvfs" (the default) of the hosts given;
# each node claims SLURM_HOSTS_CPUS CPUs (8 unless set; slurmd reports
# the configuration's, not the machine's, SlurmdParameters=config_overrides)
# and the partition is OverSubscribe=FORCE:8, so that a server job step
# and client steps or jobs fit beside each other on two real cores.  Two
# steps in one allocation each need their own CPUs of it: `srun --exact`
# (by default a step takes every CPU the allocation has on its nodes) or
# `srun --overlap`; ask for an even spread (--ntasks-per-node), as the
# default fills node1 first.  MpiDefault=none (ask for --mpi=pmi2: Debian's MPICH
# takes its PMI-2 from srun), proctrack/linuxproc, task/none, no
# accounting.  SlurmdTimeout=20: a crashed host is marked down within
# about 20 s.  SLURM_HOSTS_CONF_EXTRA, when set, is appended to slurm.conf.

declare -F hosts_exec >/dev/null ||
    { echo "test/hosts/slurm_lib.sh: source test/hosts_lib.sh first" >&2; exit 1; }
SLURM_HOSTS_DIR=
_slurm_hosts=()
# slurmd (22.05) will not start without a cgroup file system at
# /sys/fs/cgroup, even with proctrack/linuxproc and task/none, and
# `ip netns exec` mounts a fresh /sys, which has none: this gives the
# host's mount namespace (ip netns exec's own) a v1 "name=systemd"
# hierarchy there, the existing one, which nothing here uses (so the
# kernel needs cgroup v1: slurm_require skips without it).
_slurm_cgroup='mount -t tmpfs -o mode=0755 slurm-cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/systemd && mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd'

# slurm_require: exits 77 (skip) unless Slurm's daemons, srun and munged are installed.
slurm_require() {
    local c
    for c in slurmctld slurmd slurmstepd srun sinfo scancel munged; do
        command -v "$c" >/dev/null ||
            { echo "skip: no $c here (Debian slurm-wlm, munge: scripts/setup-deps.sh)"; exit 77; }
    done
    grep -qw cgroup /proc/filesystems ||
        { echo "skip: no cgroup v1 file system in this kernel (slurmd needs one)"; exit 77; }
}

# Directories of tests killed before their cleanup: ipvfs-slurm-<pid>.*
# with no process <pid> (their daemons died with their namespaces).
_slurm_reap_stale() {
    local d p
    for d in "${TMPDIR:-/tmp}"/ipvfs-slurm-*.*; do
        [ -d "$d" ] || continue
        p=${d##*/ipvfs-slurm-}
        p=${p%%.*}
        [[ $p =~ ^[0-9]+$ ]] && [ "$p" != "$$" ] && ! _hosts_alive "$p" && rm -rf "$d"
    done
}

# The daemons' pids, from their pid files.
_slurm_daemon_pids() {
    local f
    for f in "$SLURM_HOSTS_DIR"/run/*.pid; do
        [ -s "$f" ] && cat "$f"
    done
}

_slurm_descendants() {
    local c
    for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        echo "$c"
        _slurm_descendants "$c"
    done
}

# _slurm_alive_of PID...: prints those alive; true when there is one.
_slurm_alive_of() {
    local p r=1
    for p in "$@"; do
        _hosts_alive "$p" && echo "$p" && r=0
    done
    return "$r"
}

_slurm_fail() {
    local f
    for f in "$SLURM_HOSTS_DIR"/log/*.log "$SLURM_HOSTS_DIR"/munge/munged.log; do
        [ -f "$f" ] || continue
        echo "--- last lines of $f:" >&2
        tail -n 8 "$f" >&2
    done
    ipvfs_fail "$@"
}

# slurm_up HOST...: Slurm on these hosts (see the top); the first one also
# runs slurmctld.
slurm_up() {
    local h i out idle first=${1:?slurm_up HOST...} d
    [ -z "$SLURM_HOSTS_DIR" ] || ipvfs_fail "slurm_up: Slurm is up already"
    for h in "$@"; do
        _hosts_known "$h"
    done
    _slurm_reap_stale
    d=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-slurm-$$.XXXXXX") || ipvfs_fail "slurm_up: mktemp"
    SLURM_HOSTS_DIR=$d
    _slurm_hosts=("$@")
    mkdir -p "$d/munge" "$d/state" "$d/run" "$d/log" || ipvfs_fail "slurm_up: mkdir in $d"
    for h in "$@"; do
        mkdir -p "$d/spool/$h" || ipvfs_fail "slurm_up: mkdir in $d"
    done
    # munged refuses a key or socket directory that others may write to.
    chmod 0700 "$d" "$d/munge"
    head -c 1024 /dev/urandom >"$d/munge/munge.key" && chmod 0400 "$d/munge/munge.key" ||
        ipvfs_fail "slurm_up: munge key"
    {
        echo "# written by iPVFS test/hosts/slurm_lib.sh for test $$"
        echo "ClusterName=ipvfs"
        echo "SlurmctldHost=$first($(hosts_addr "$first"))"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "AuthInfo=socket=$d/munge/munge.socket"
        echo "MpiDefault=none"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "ReturnToService=2"
        echo "SlurmdParameters=config_overrides"
        echo "SlurmdTimeout=20"
        echo "KillWait=5"
        echo "SchedulerType=sched/backfill"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "StateSaveLocation=$d/state"
        echo "SlurmctldPidFile=$d/run/slurmctld.pid"
        echo "SlurmctldLogFile=$d/log/slurmctld.log"
        echo "SlurmdPidFile=$d/run/slurmd-%n.pid"
        echo "SlurmdSpoolDir=$d/spool/%n"
        echo "SlurmdLogFile=$d/log/slurmd-%n.log"
        for h in "$@"; do
            echo "NodeName=$h NodeAddr=$(hosts_addr "$h") CPUs=${SLURM_HOSTS_CPUS:-8} State=UNKNOWN"
        done
        echo "PartitionName=ipvfs Nodes=$(IFS=,; echo "$*") Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
        [ -z "${SLURM_HOSTS_CONF_EXTRA:-}" ] || echo "$SLURM_HOSTS_CONF_EXTRA"
    } >"$d/slurm.conf"
    export SLURM_CONF=$d/slurm.conf
    # Every daemon forks into the background once ready and writes its pid file.
    ip netns exec "${HOSTS_PREFIX}sw" munged --force --socket="$d/munge/munge.socket" \
        --key-file="$d/munge/munge.key" --pid-file="$d/run/munged.pid" \
        --log-file="$d/munge/munged.log" --seed-file="$d/munge/munged.seed" ||
        _slurm_fail "slurm_up: munged did not start"
    hosts_exec "$first" slurmctld -f "$SLURM_CONF" || _slurm_fail "slurm_up: slurmctld did not start"
    for h in "$@"; do
        # shellcheck disable=SC2016
        hosts_exec "$h" sh -c "$_slurm_cgroup"' && exec "$@"' slurmd-on-"$h" \
            slurmd -f "$SLURM_CONF" -N "$h" || _slurm_fail "slurm_up: slurmd on $h did not start"
    done
    for ((i = 0; i < 150; i++)); do
        out=$(hosts_exec "$first" sinfo -h -N -o '%N %t' 2>/dev/null)
        idle=$(awk '$2 == "idle"' <<<"$out" | sort -u | wc -l)
        [ "$idle" = $# ] && return 0
        sleep 0.2
    done
    _slurm_fail "slurm_up: not every node idle within 30 s; sinfo: ${out//$'\n'/, }" \
        "$(hosts_exec "$first" sinfo -h -R 2>&1 | head -3)"
}

# slurm_down: cancels every job, stops every daemon slurm_up started and
# waits until they are gone (kill -9 after 10 s), with any slurmstepd
# left in the hosts.  Never exits (it runs in the EXIT trap): returns 1
# when something stays.
slurm_down() {
    local d=$SLURM_HOSTS_DIR first=${_slurm_hosts[0]:-} i p pids ns rc=0
    [ -n "$d" ] || return 0
    # Jobs first: a slurmstepd and its tasks outlive slurmd.  Skipped
    # when the controller is gone (its host crashed or removed).
    if [ -n "$first" ] && _hosts_alive "$(cat "$d/run/slurmctld.pid" 2>/dev/null)" &&
        timeout 10 ip netns exec "$HOSTS_PREFIX$first" scancel --partition=ipvfs 2>/dev/null; then
        for ((i = 0; i < 100; i++)); do
            [ -z "$(timeout 5 ip netns exec "$HOSTS_PREFIX$first" squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    pids=$(_slurm_daemon_pids)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -TERM $pids 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        _slurm_alive_of $pids >/dev/null || break
        sleep 0.1
    done
    # What is left: daemons stuck, slurmstepd (and the tasks under them)
    # of steps that did not end.
    for ns in "${_slurm_hosts[@]}" sw; do
        for p in $(ip netns pids "$HOSTS_PREFIX$ns" 2>/dev/null); do
            case $(cat "/proc/$p/comm" 2>/dev/null) in
            slurmctld|slurmscriptd|slurmd|munged) pids="$pids $p" ;;
            slurmstepd) pids="$pids $p $(_slurm_descendants "$p")" ;;
            esac
        done
    done
    pids=$(_slurm_alive_of $pids)
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086
        kill -9 $pids 2>/dev/null
        for ((i = 0; i < 50; i++)); do
            _slurm_alive_of $pids >/dev/null || break
            sleep 0.1
        done
        pids=$(_slurm_alive_of $pids) && { echo "slurm_down: processes survive: $pids" >&2; rc=1; }
    fi
    unset SLURM_CONF
    SLURM_HOSTS_DIR=
    _slurm_hosts=()
    [ -n "${IPVFS_KEEP:-}" ] || rm -rf "$d"
    return "$rc"
}
