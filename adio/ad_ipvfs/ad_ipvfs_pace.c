/* Pacing of generalized-request poll functions.
 *
 * MPICH 4's MPI_Wait on a generalized request with a poll function calls
 * that function in a tight loop and never the request's wait function
 * (MPI_Waitall does call it).  A rank waiting on a slow request would spin
 * a core, and here clients and servers often share the cores: a core taken
 * from the very servers doing that I/O.  So a poll function calls
 * ADIOI_IPVFS_Pace_poll() first: a call that comes within SPIN_GAP of the
 * previous one's return is such a loop (or a program's own MPI_Test loop)
 * and naps, from 20 us growing to 500 us; an MPI_Test after a while of
 * computing runs at once.  The price: a step that could follow at once may
 * wait up to 500 us.  ADIOI_IPVFS_Quiet_wait naps likewise, capped
 * shorter, for the driver's own nonblocking collectives. */
#include "ad_ipvfs.h"

#include <time.h>

#define SPIN_GAP 1e-3            /* seconds between polls that count as a loop */
#define NAP_FIRST_NS (20 * 1000)
#define NAP_MAX_NS (500 * 1000)
#define QUIET_NAP_MAX_NS (50 * 1000)

void ADIOI_IPVFS_Pace_poll(struct ADIOI_IPVFS_pace *p)
{
    struct timespec nap = { 0, p->nap_ns };

    if (MPI_Wtime() - p->last_poll > SPIN_GAP || p->nap_ns == 0) {
        p->nap_ns = NAP_FIRST_NS;
        return;
    }
    nanosleep(&nap, NULL);
    if (p->nap_ns < NAP_MAX_NS)
        p->nap_ns *= 2;
}

void ADIOI_IPVFS_Pace_done(struct ADIOI_IPVFS_pace *p)
{
    p->last_poll = MPI_Wtime();
}

/* Completes the nonblocking collective that rc started as req without
 * spinning: clients and servers often share the cores, and a rank that
 * waits for the aggregators' I/O in a blocking MPI call (UCX polls) takes
 * a core from the servers doing that I/O.  So: MPI_Test, then naps that
 * grow from 20 us to QUIET_NAP_MAX_NS.  That cap is short because a
 * collective moves only when its ranks poll: a rank napping 500 us held
 * each step of the decision's allgather (and of two-phase's exchanges)
 * that long, which halved collective-choice.sh's ior-strided writes (64
 * calls of 64 KiB per rank); at 50 us a waiting rank polls with a few
 * percent of a core. */
int ADIOI_IPVFS_Quiet_wait(int rc, MPI_Request * req)
{
    struct timespec nap = { 0, 20 * 1000 };
    int done = 0;

    while (rc == MPI_SUCCESS) {
        rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done)
            break;
        nanosleep(&nap, NULL);
        nap.tv_nsec = 2 * nap.tv_nsec < QUIET_NAP_MAX_NS ? 2 * nap.tv_nsec : QUIET_NAP_MAX_NS;
    }
    return rc;
}
