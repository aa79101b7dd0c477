/* Nonblocking independent I/O as MPI generalized requests.
 *
 * An I* call plans its access, starts it on the client (ipvfs_aio_start:
 * the first bytes leave at once) and returns a generalized request whose
 * extra state is a struct ADIOI_IPVFS_ireq.  Nothing works behind the
 * program's back: MPI_Test calls poll_fn, which moves what the sockets
 * take without blocking (and is paced, ad_ipvfs_pace.c: MPICH's MPI_Wait
 * calls it in a loop); MPI_Waitall calls wait_fn, which blocks in poll(2)
 * on the client's sockets.  Either completes the request
 * (MPI_Grequest_complete) once all its accesses are finished; query_fn
 * then gives MPI_Wait the byte count and the error code. */
#include "ad_ipvfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct ADIOI_IPVFS_ireq {
    struct ipvfs_aio **aio;     /* accesses not yet finished, in post order */
    size_t naio;
    size_t cap;
    size_t next_done;           /* aio[0 .. next_done-1] are finished */
    MPI_Count bytes;            /* reads: bytes before EOF; writes: all */
    int error_code;             /* MPI code of the first failure */
    int completed;              /* MPI_Grequest_complete was called */
    MPI_Request req;
    struct ADIOI_IPVFS_pace pace;
};

struct ADIOI_IPVFS_ireq *ADIOI_IPVFS_Ireq_new(void)
{
    struct ADIOI_IPVFS_ireq *r = calloc(1, sizeof(*r));

    if (r)
        r->error_code = MPI_SUCCESS;
    return r;
}

int ADIOI_IPVFS_Ireq_add(struct ADIOI_IPVFS_ireq *r, struct ipvfs_aio *aio)
{
    if (r->naio == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 4;
        struct ipvfs_aio **a = realloc(r->aio, cap * sizeof(*a));

        if (!a)
            return -ENOMEM;
        r->aio = a;
        r->cap = cap;
    }
    r->aio[r->naio++] = aio;
    return 0;
}

/* Finishes access next_done (it must be complete, or we wait for it). */
static void ireq_finish_one(struct ADIOI_IPVFS_ireq *r)
{
    static char myname[] = "ADIOI_IPVFS_IREQ";
    struct ipvfs_error err;
    uint64_t got = 0;

    if (ipvfs_aio_finish(r->aio[r->next_done], &got, &err) < 0) {
        if (r->error_code == MPI_SUCCESS)
            r->error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
    } else {
        r->bytes += (MPI_Count) got;
    }
    r->aio[r->next_done++] = NULL;
}

void ADIOI_IPVFS_Ireq_drain(struct ADIOI_IPVFS_ireq *r)
{
    while (r->next_done < r->naio)
        ireq_finish_one(r);
}

void ADIOI_IPVFS_Ireq_free(struct ADIOI_IPVFS_ireq *r)
{
    if (!r)
        return;
    ADIOI_IPVFS_Ireq_drain(r);
    free(r->aio);
    free(r);
}

static int ireq_complete(struct ADIOI_IPVFS_ireq *r)
{
    r->completed = 1;
    return MPI_Grequest_complete(r->req);
}

static int ireq_query(void *state, MPI_Status * status)
{
    struct ADIOI_IPVFS_ireq *r = state;

    MPI_Status_set_elements_x(status, MPI_BYTE, r->error_code == MPI_SUCCESS ? r->bytes : 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return r->error_code;
}

static int ireq_free_fn(void *state)
{
    ADIOI_IPVFS_Ireq_free(state);
    return MPI_SUCCESS;
}

/* A request on the wire cannot be taken back: cancel does nothing and
 * the request completes normally. */
static int ireq_cancel(void *state, int complete)
{
    (void) state;
    (void) complete;
    return MPI_SUCCESS;
}

/* MPI_Test: moves data without blocking, finishing accesses in order. */
static int ireq_poll(void *state, MPI_Status * status)
{
    struct ADIOI_IPVFS_ireq *r = state;

    (void) status;
    if (r->completed)
        return MPI_SUCCESS;
    ADIOI_IPVFS_Pace_poll(&r->pace);
    while (r->next_done < r->naio && ipvfs_aio_test(r->aio[r->next_done]))
        ireq_finish_one(r);
    ADIOI_IPVFS_Pace_done(&r->pace);
    return r->next_done == r->naio ? ireq_complete(r) : MPI_SUCCESS;
}

/* MPI_Wait and friends: blocks in poll(2) until every request given is
 * complete.  The client drives its accesses oldest first, so waiting on
 * one request in turn finishes the earlier ones on the way. */
static int ireq_wait(int count, void **states, double timeout, MPI_Status * status)
{
    int rc = MPI_SUCCESS;

    (void) timeout;
    (void) status;
    for (int i = 0; i < count; i++) {
        struct ADIOI_IPVFS_ireq *r = states[i];

        if (r->completed)
            continue;
        ADIOI_IPVFS_Ireq_drain(r);
        if (ireq_complete(r) != MPI_SUCCESS)
            rc = MPI_ERR_INTERN;
    }
    return rc;
}

int ADIOI_IPVFS_Ireq_post(struct ADIOI_IPVFS_ireq *r, MPI_Request * request)
{
    int rc = MPIX_Grequest_start(ireq_query, ireq_free_fn, ireq_cancel, ireq_poll, ireq_wait,
                                 r, request);

    if (rc == MPI_SUCCESS)
        r->req = *request;
    return rc;
}
