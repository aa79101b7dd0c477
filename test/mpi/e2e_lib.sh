# Helpers of the client end-to-end tests (test/t_e2e_*.sh); source after
# test/lib.sh.  Runs MPI test programs with libipvfs-romio.so preloaded.

E2E_NP=${E2E_NP:-4}
E2E_ROMIO_LIB=${IPVFS_ROMIO_LIB:-$IPVFS_BUILDDIR/adio/libipvfs-romio.so}
E2E_PROGS=$IPVFS_BUILDDIR/test/mpi

# Skips (exit 77) unless the server, the preloadable ROMIO and the test
# programs are built.
e2e_require() {
    local f
    for f in "$IPVFS_SERVER_BIN" "$IPVFS_CTL_BIN" "$E2E_ROMIO_LIB" "$E2E_PROGS/e2e_io"; do
        [ -e "$f" ] || { echo "skip: $f is not built"; exit 77; }
    done
}

# e2e_run SECONDS PROGRAM ARGS...: runs PROGRAM (a test program's name, or
# a path from /) on $E2E_NP ranks with the
# library preloaded, under a time limit; on the hosts E2E_MPIEXEC_FLAGS
# names (-hosts ...) from the host E2E_ON_HOST runs commands on, when set
# (test/multihost_lib.sh).
e2e_run() {
    local limit=$1 prog=$2
    shift 2
    [[ $prog == /* ]] || prog=$E2E_PROGS/$prog
    # shellcheck disable=SC2086
    timeout -k 5 "$limit" ${E2E_ON_HOST:-} mpiexec ${E2E_MPIEXEC_FLAGS:-} -n "$E2E_NP" \
        env LD_PRELOAD="$E2E_ROMIO_LIB" \
        "$prog" "$@"
}

# e2e_wait_output FILE PATTERN [SECONDS]: waits (default 60 s) until FILE
# (a program's output) has a line matching the extended regex PATTERN.
e2e_wait_output() {
    local file=$1 pattern=$2 limit=${3:-60} i
    for ((i = 0; i < limit * 10; i++)); do
        grep -Eq -- "$pattern" "$file" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# e2e_rank_field RANK KEY: one field of a rank in `ipvfs-ctl status --json`.
e2e_rank_field() {
    ipvfs_ctl status --json 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["ranks"][int(sys.argv[1])].get(sys.argv[2], ""))' "$1" "$2"
}

# e2e_wait_restarted RANK RESTARTS [SECONDS]: waits (default 60 s) until
# the rank's supervisor restarted its serving process RESTARTS times and
# the new one serves.
e2e_wait_restarted() {
    local rank=$1 want=$2 limit=${3:-60} i
    for ((i = 0; i < limit * 5; i++)); do
        ipvfs_ctl status --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"][int(sys.argv[1])]
sys.exit(0 if r["restarts"] >= int(sys.argv[2]) and r["state"] in ("serving", "degraded") else 1)
' "$rank" "$want" && return 0
        sleep 0.2
    done
    return 1
}
