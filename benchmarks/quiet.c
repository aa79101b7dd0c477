/* bench_quiet_barrier: see quiet.h. */
#include "benchmarks/quiet.h"

#include <time.h>

int bench_quiet_barrier(MPI_Comm comm)
{
    struct timespec nap = { 0, 20 * 1000 };
    MPI_Request req;
    int done = 0, rc;

    if ((rc = MPI_Ibarrier(comm, &req)) != MPI_SUCCESS)
        return rc;
    while ((rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done) {
        nanosleep(&nap, NULL);
        if (2 * nap.tv_nsec <= QUIET_NAP_MAX_NS)
            nap.tv_nsec *= 2;
    }
    return rc;
}
