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

# e2e_run SECONDS PROGRAM ARGS...: runs PROGRAM on $E2E_NP ranks with the
# library preloaded, under a time limit.
e2e_run() {
    local limit=$1 prog=$2
    shift 2
    timeout -k 5 "$limit" mpiexec -n "$E2E_NP" env LD_PRELOAD="$E2E_ROMIO_LIB" \
        "$E2E_PROGS/$prog" "$@"
}
