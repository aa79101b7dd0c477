/* A barrier for the benchmark programs that naps instead of spinning.
 * The clients share the cores with the servers here, and a rank done
 * early that waits in MPI_Barrier (UCX polls) takes a core from the
 * servers still doing the other ranks' I/O: the figures would measure the
 * barrier, not the I/O.  A waiting rank tests an MPI_Ibarrier and sleeps
 * between tests, from 20 us growing to QUIET_NAP_MAX_NS: the barrier
 * returns at most that much later than a spinning one would. */
#ifndef IPVFS_BENCH_QUIET_H
#define IPVFS_BENCH_QUIET_H

#include <mpi.h>

#define QUIET_NAP_MAX_NS (200 * 1000)

/* MPI_Barrier(comm)'s result, reached without spinning a core. */
int bench_quiet_barrier(MPI_Comm comm);

#endif
