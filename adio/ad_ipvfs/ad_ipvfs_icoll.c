/* Nonblocking collective I/O (MPI_File_iwrite_all, iread_all and their
 * _at_all forms).
 *
 * ROMIO's generic state machine (ADIOI_GEN_I{read,write}StridedColl) does
 * the two-phase work; its steps wait on nonblocking MPI collectives and on
 * our nonblocking list I/O, and move on only when its poll function runs.
 * Its own wait function calls that poll function in a loop with no pause,
 * so a rank waiting for the others (or for the servers) burns a core: on
 * a machine where clients and servers share the cores, a core taken from
 * the servers doing that very I/O.  So the request the program gets is our
 * generalized request around ROMIO's, whose poll function is paced
 * (ad_ipvfs_pace.c: it naps when MPI_Wait calls it in a loop).
 * The inner request's status (byte count) and error code come out through
 * query_fn. */
#include "ad_ipvfs.h"

#include <stdlib.h>
#include <time.h>

#define NAP_FIRST_NS (20 * 1000)  /* icoll_wait's naps, as ADIOI_IPVFS_Pace_poll's */
#define NAP_MAX_NS (500 * 1000)

struct icoll {
    MPI_Request inner;          /* ROMIO's request; MPI_REQUEST_NULL once done */
    MPI_Request outer;          /* the program's request */
    MPI_Count bytes;
    int error_code;
    int completed;
    struct ADIOI_IPVFS_pace pace;
};

static int icoll_query(void *state, MPI_Status * status)
{
    struct icoll *c = state;

    MPI_Status_set_elements_x(status, MPI_BYTE, c->bytes);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return c->error_code;
}

/* The inner request is done before MPI frees the outer one (it completes
 * only after the inner did). */
static int icoll_free(void *state)
{
    free(state);
    return MPI_SUCCESS;
}

/* Collective I/O on the wire cannot be taken back: cancel does nothing. */
static int icoll_cancel(void *state, int complete)
{
    (void) state;
    (void) complete;
    return MPI_SUCCESS;
}

/* One step: tests the inner request; once done, completes the outer. */
static int icoll_step(struct icoll *c)
{
    MPI_Status st;
    int done = 0, rc;

    if (c->completed)
        return MPI_SUCCESS;
    rc = MPI_Test(&c->inner, &done, &st);
    if (rc != MPI_SUCCESS) {
        c->error_code = rc;
        done = 1;
    } else if (done) {
        MPI_Get_elements_x(&st, MPI_BYTE, &c->bytes);
    }
    if (!done)
        return MPI_SUCCESS;
    c->completed = 1;
    return MPI_Grequest_complete(c->outer);
}

/* MPI_Test, and MPI_Wait's loop: one step, after a nap when looping. */
static int icoll_poll(void *state, MPI_Status * status)
{
    struct icoll *c = state;
    int rc;

    (void) status;
    if (c->completed)
        return MPI_SUCCESS;
    ADIOI_IPVFS_Pace_poll(&c->pace);
    rc = icoll_step(c);
    ADIOI_IPVFS_Pace_done(&c->pace);
    return rc;
}

/* MPI_Waitall and friends: steps every request given until done, napping
 * between rounds instead of spinning (see the top of this file). */
static int icoll_wait(int count, void **states, double timeout, MPI_Status * status)
{
    struct timespec nap = { 0, NAP_FIRST_NS };
    int pending = 1, rc = MPI_SUCCESS;

    (void) timeout;
    (void) status;
    while (pending) {
        pending = 0;
        for (int i = 0; i < count; i++) {
            struct icoll *c = states[i];
            int prc = icoll_step(c);

            if (prc != MPI_SUCCESS)
                rc = prc;
            pending |= !c->completed;
        }
        if (!pending || rc != MPI_SUCCESS)
            break;
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < NAP_MAX_NS)
            nap.tv_nsec *= 2;
    }
    return rc;
}

/* Wraps ROMIO's started request *request into ours; on failure the inner
 * request is waited for and *error_code says why. */
static void icoll_wrap(MPI_Request * request, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_ICOLL";
    struct icoll *c = calloc(1, sizeof(*c));
    int rc;

    if (!c) {
        rc = MPI_ERR_NO_MEM;
        goto fail_wait_inner;
    }
    c->inner = *request;
    c->error_code = MPI_SUCCESS;
    rc = MPIX_Grequest_start(icoll_query, icoll_free, icoll_cancel, icoll_poll, icoll_wait, c,
                             &c->outer);
    if (rc != MPI_SUCCESS)
        goto fail_free_state;
    *request = c->outer;
    return;

  fail_free_state:
    free(c);
  fail_wait_inner:
    /* The collective is under way on every rank: finish our part of it. */
    MPI_Wait(request, MPI_STATUS_IGNORE);
    *request = MPI_REQUEST_NULL;
    *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                       rc, "**io", "**fail %s",
                                       "cannot make the request of a nonblocking collective");
}

void ADIOI_IPVFS_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                                  int *error_code)
{
    ADIOI_GEN_IreadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, request,
                               error_code);
    if (*error_code == MPI_SUCCESS)
        icoll_wrap(request, error_code);
}

void ADIOI_IPVFS_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   MPI_Request * request, int *error_code)
{
    ADIOI_GEN_IwriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, request,
                                error_code);
    if (*error_code == MPI_SUCCESS)
        icoll_wrap(request, error_code);
}
