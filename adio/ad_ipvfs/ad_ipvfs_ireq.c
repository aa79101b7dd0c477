/* Nonblocking independent I/O as MPI generalized requests, sent in
 * bounded pieces (the contract and the state machine are in ad_ipvfs.h,
 * "Nonblocking independent I/O").
 *
 * An I* call plans its access (a planner, ad_ipvfs_strided.c, walks the
 * memory type and the file view) and queues a struct ADIOI_IPVFS_ireq on
 * the file's queue; the pump starts pieces of the queued requests, oldest
 * request first, while the file's window has room (ADIOI_IPVFS_NB_PIECES
 * pieces and ADIOI_IPVFS_NB_BYTES bytes outstanding), so the first piece
 * leaves during the I* call and the rest as earlier pieces complete.
 * Nothing works behind the program's back: MPI_Test calls poll_fn, which
 * finishes the pieces the sockets completed and starts the next ones
 * (paced, ad_ipvfs_pace.c: MPICH's MPI_Wait calls it in a loop);
 * MPI_Waitall calls wait_fn, which blocks in poll(2) on the oldest piece
 * of the file and pumps again until its request is done.  A request is
 * completed (MPI_Grequest_complete) once its pieces are all started and
 * finished; query_fn then gives MPI_Wait the byte count and the error. */
#include "ad_ipvfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct ADIOI_IPVFS_ireq {
    struct ADIOI_IPVFS_nbq *q;  /* the file's queue while queued, else NULL */
    struct ADIOI_IPVFS_ireq *next;      /* in the queue */
    const struct ADIOI_IPVFS_plan_ops *ops;
    void *plan;                 /* owned; ops->free frees it */
    uint64_t total;             /* bytes of the access */
    uint64_t planned;           /* bytes handed to the client so far */
    int stop;                   /* no more pieces (a failure) */
    struct ipvfs_aio **aio;     /* started pieces, in start order */
    uint64_t *aio_bytes;        /* each one's bytes, for the window */
    size_t naio;
    size_t cap;
    size_t next_done;           /* aio[0 .. next_done-1] are finished */
    MPI_Count bytes;            /* reads: bytes before EOF; writes: all */
    int error_code;             /* MPI code of the first failure */
    int cancelled;              /* MPI_Cancel took it before any piece left */
    int completed;              /* MPI_Grequest_complete was called */
    MPI_Request req;
    struct ADIOI_IPVFS_pace pace;
};

struct ADIOI_IPVFS_ireq *ADIOI_IPVFS_Ireq_new(const struct ADIOI_IPVFS_plan_ops *ops, void *plan,
                                              uint64_t total)
{
    struct ADIOI_IPVFS_ireq *r = calloc(1, sizeof(*r));

    if (!r)
        return NULL;
    r->error_code = MPI_SUCCESS;
    r->ops = ops;
    r->plan = plan;
    r->total = total;
    return r;
}

static void fail(struct ADIOI_IPVFS_ireq *r, const struct ipvfs_error *err, int line)
{
    static char myname[] = "ADIOI_IPVFS_IREQ";

    if (r->error_code == MPI_SUCCESS)
        r->error_code = ADIOI_IPVFS_Error(myname, line, err);
    r->stop = 1;
}

static int all_started(const struct ADIOI_IPVFS_ireq *r)
{
    return r->stop || r->planned >= r->total;
}

static int all_finished(const struct ADIOI_IPVFS_ireq *r)
{
    return all_started(r) && r->next_done == r->naio;
}

static void dequeue(struct ADIOI_IPVFS_ireq *r)
{
    struct ADIOI_IPVFS_nbq *q = r->q;
    struct ADIOI_IPVFS_ireq **p;

    if (!q)
        return;
    for (p = &q->head; *p && *p != r; p = &(*p)->next)
        continue;
    if (*p)
        *p = r->next;
    r->next = NULL;
    r->q = NULL;
}

/* Finishes piece next_done (it must be complete, or this waits for it). */
static void finish_one(struct ADIOI_IPVFS_ireq *r)
{
    struct ipvfs_error err;
    uint64_t got = 0;
    size_t i = r->next_done;

    if (ipvfs_aio_finish(r->aio[i], &got, &err) < 0)
        fail(r, &err, __LINE__);
    else
        r->bytes += (MPI_Count) got;
    r->aio[i] = NULL;
    r->next_done++;
    if (r->q) {
        r->q->out_pieces--;
        r->q->out_bytes -= r->aio_bytes[i];
    }
}

static int grow(struct ADIOI_IPVFS_ireq *r)
{
    size_t cap = r->cap ? 2 * r->cap : 4;
    struct ipvfs_aio **a = realloc(r->aio, cap * sizeof(*a));
    uint64_t *b;

    if (!a)
        return -ENOMEM;
    r->aio = a;
    b = realloc(r->aio_bytes, cap * sizeof(*b));
    if (!b)
        return -ENOMEM;
    r->aio_bytes = b;
    r->cap = cap;
    return 0;
}

/* Starts r's next piece.  0 when one left, -1 when r stopped instead. */
static int start_piece(struct ADIOI_IPVFS_ireq *r)
{
    struct ADIOI_IPVFS_nbq *q = r->q;
    struct ipvfs_error err = { 0 };
    struct ipvfs_aio *aio;
    uint64_t n = 0;

    if (r->naio == r->cap && grow(r) < 0) {
        err.code = ENOMEM;
        snprintf(err.msg, sizeof(err.msg), "ipvfs: nonblocking I/O failed: out of memory");
        fail(r, &err, __LINE__);
        return -1;
    }
    if (r->ops->start_next(r->plan, ADIOI_IPVFS_NB_PIECE, &aio, &n, &err) < 0) {
        fail(r, &err, __LINE__);
        return -1;
    }
    r->aio[r->naio] = aio;
    r->aio_bytes[r->naio++] = n;
    r->planned += n;
    q->out_pieces++;
    q->out_bytes += n;
    return 0;
}

static int window_open(const struct ADIOI_IPVFS_nbq *q)
{
    return q->out_pieces < ADIOI_IPVFS_NB_PIECES && q->out_bytes < ADIOI_IPVFS_NB_BYTES;
}

/* Moves the file's queue on without blocking: finishes the pieces that
 * are complete, starts pieces while the window has room (oldest request
 * first: a later request starts only once the earlier ones have all of
 * theirs started), and takes finished requests off the queue. */
static void pump(struct ADIOI_IPVFS_nbq *q)
{
    struct ADIOI_IPVFS_ireq *r = q->head, *next;

    for (; r; r = next) {
        next = r->next;
        while (r->next_done < r->naio && ipvfs_aio_test(r->aio[r->next_done]))
            finish_one(r);
        while (!all_started(r) && window_open(q))
            if (start_piece(r) < 0)
                break;
        if (all_finished(r))
            dequeue(r);
        else if (!all_started(r))
            break;
    }
}

/* Blocks until the oldest piece of the queue is finished, then pumps. */
static void wait_step(struct ADIOI_IPVFS_nbq *q)
{
    for (struct ADIOI_IPVFS_ireq *r = q->head; r; r = r->next)
        if (r->next_done < r->naio) {
            finish_one(r);
            break;
        }
    pump(q);
}

/* Drives r until all its pieces are started and finished. */
static void ireq_drive(struct ADIOI_IPVFS_ireq *r)
{
    while (r->q && !all_finished(r))
        wait_step(r->q);
    /* a request with nothing to move may wait behind an unstarted one */
    if (all_finished(r))
        dequeue(r);
    /* taken off the queue unfinished (a failed post): finish in place */
    while (r->next_done < r->naio)
        finish_one(r);
}

void ADIOI_IPVFS_Nbq_drain(struct ADIOI_IPVFS_nbq *q)
{
    while (q->head)
        ireq_drive(q->head);
}

void ADIOI_IPVFS_Ireq_free(struct ADIOI_IPVFS_ireq *r)
{
    if (!r)
        return;
    ireq_drive(r);
    dequeue(r);
    r->ops->free(r->plan);
    free(r->aio);
    free(r->aio_bytes);
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
    int ok = r->error_code == MPI_SUCCESS && !r->cancelled;

    MPI_Status_set_elements_x(status, MPI_BYTE, ok ? r->bytes : 0);
    MPI_Status_set_cancelled(status, r->cancelled);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return r->cancelled ? MPI_SUCCESS : r->error_code;
}

static int ireq_free_fn(void *state)
{
    ADIOI_IPVFS_Ireq_free(state);
    return MPI_SUCCESS;
}

/* MPI_Cancel: a request none of whose pieces has been started leaves the
 * queue and completes cancelled; one that has started a piece completes
 * normally, all of it (the MPI standard allows that), since bytes on the
 * wire cannot be taken back and a half-done access would be neither. */
static int ireq_cancel(void *state, int complete)
{
    struct ADIOI_IPVFS_ireq *r = state;

    if (complete || r->completed || r->naio > 0 || r->stop)
        return MPI_SUCCESS;
    dequeue(r);
    r->stop = 1;
    r->cancelled = 1;
    return ireq_complete(r);
}

/* MPI_Test: moves the file's pieces without blocking. */
static int ireq_poll(void *state, MPI_Status * status)
{
    struct ADIOI_IPVFS_ireq *r = state;

    (void) status;
    if (r->completed)
        return MPI_SUCCESS;
    ADIOI_IPVFS_Pace_poll(&r->pace);
    if (r->q)
        pump(r->q);
    ADIOI_IPVFS_Pace_done(&r->pace);
    return all_finished(r) ? ireq_complete(r) : MPI_SUCCESS;
}

/* MPI_Wait and friends: blocks in poll(2) until every request given is
 * complete, pumping its file's queue between pieces. */
static int ireq_wait(int count, void **states, double timeout, MPI_Status * status)
{
    int rc = MPI_SUCCESS;

    (void) timeout;
    (void) status;
    for (int i = 0; i < count; i++) {
        struct ADIOI_IPVFS_ireq *r = states[i];

        if (r->completed)
            continue;
        ireq_drive(r);
        if (ireq_complete(r) != MPI_SUCCESS)
            rc = MPI_ERR_INTERN;
    }
    return rc;
}

int ADIOI_IPVFS_Ireq_post(struct ADIOI_IPVFS_ireq *r, struct ADIOI_IPVFS_nbq *q,
                          MPI_Request * request)
{
    struct ADIOI_IPVFS_ireq **tail;
    int rc = MPIX_Grequest_start(ireq_query, ireq_free_fn, ireq_cancel, ireq_poll, ireq_wait,
                                 r, request);

    if (rc != MPI_SUCCESS)
        return rc;
    r->req = *request;
    for (tail = &q->head; *tail; tail = &(*tail)->next)
        continue;
    *tail = r;
    r->q = q;
    pump(q);
    return MPI_SUCCESS;
}
