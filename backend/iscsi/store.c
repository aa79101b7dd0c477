/* The asynchronous I/O engine of the backing stores.
 *
 * A store is a small template (struct tgt_store_ops) registered in
 * store_lun.c's table under its enum tgt_backing kind.  File and block
 * stores (store_fd.c) share this descriptor engine: io_uring when the
 * kernel gives us a ring, else (or with IPVFS_TARGET_NO_URING=1) a pool of
 * worker threads running the blocking syscalls.  Both signal one eventfd
 * on the server's evloop, whose handler runs every callback on the loop
 * thread.  The memory store (store_mem.c) copies and completes inline.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#include "common/evloop.h"
#include "common/log.h"

#define AIO_RING_DEPTH 256
#define AIO_POOL_THREADS 4

/* Engine state.  inflight and the ring belong to the loop thread; the
 * pool's queues (todo, done) are shared with the workers under lock. */
struct tgt_aio {
    struct tgt_server *srv;
    const struct tgt_aio_hooks *hooks;
    int inflight;          /* submitted ios whose callback has not run */
    int efd;               /* completions wake the loop through it */
    int ring_ok;
    int batch;             /* tgt_aio_batch_begin() depth */
    int ring_pending;      /* prepared SQEs the kernel has not taken */
    uint64_t retry_timer;  /* a refused io_uring_submit() is retried */
#ifdef HAVE_LIBURING
    struct io_uring ring;
#endif
    pthread_mutex_t lock;
    pthread_cond_t work;   /* todo gained an io, or stop was set */
    struct tgt_io *todo, *todo_tail;
    struct tgt_io *done, *done_tail;
    int stop;
    int nthreads;
    pthread_t threads[AIO_POOL_THREADS];
};

/* ---- blocking syscalls, run only on pool workers ---- */

static int sync_rw(int fd, struct tgt_io *io)
{
    while (io->done < io->len) {
        ssize_t n;
        struct iovec v = { io->buf + io->done, io->len - io->done };
        off_t off = (off_t)(io->off + io->done);

        if (io->op == TGT_IO_READ)
            n = preadv2(fd, &v, 1, off, 0);
        else
            n = pwritev2(fd, &v, 1, off, io->fua ? RWF_DSYNC : 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0 && io->op == TGT_IO_READ) {
            /* Past the end of a short file reads as zeros. */
            memset(io->buf + io->done, 0, io->len - io->done);
            io->done = io->len;
        } else if (n == 0) {
            return -EIO;
        }
        io->done += (size_t)n;
    }
    return 0;
}

static int sync_exec(int fd, struct tgt_io *io)
{
    switch (io->op) {
    case TGT_IO_READ:
    case TGT_IO_WRITE:
        return sync_rw(fd, io);
    case TGT_IO_FLUSH:
        return fdatasync(fd) < 0 ? -errno : 0;
    case TGT_IO_PUNCH:
        return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)io->off,
                         (off_t)io->len) < 0 ? -errno : 0;
    case TGT_IO_WRITEBACK:
        return sync_file_range(fd, (off_t)io->off, (off_t)io->len, SYNC_FILE_RANGE_WRITE) < 0
                   ? -errno : 0;
    }
    return -EINVAL;
}

/* ---- worker-thread pool ---- */

static void queue_push(struct tgt_io **head, struct tgt_io **tail, struct tgt_io *io)
{
    io->next = NULL;
    if (*tail)
        (*tail)->next = io;
    else
        *head = io;
    *tail = io;
}

static void wake_loop(struct tgt_aio *aio)
{
    uint64_t one = 1;

    /* EAGAIN: the counter is saturated, so the loop is woken already. */
    if (write(aio->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        log_warn("target: waking the loop for a backing io: %s", strerror(errno));
}

static void *pool_worker(void *arg)
{
    struct tgt_aio *aio = arg;

    pthread_mutex_lock(&aio->lock);
    for (;;) {
        struct tgt_io *io;

        while (!aio->todo && !aio->stop)
            pthread_cond_wait(&aio->work, &aio->lock);
        if (!aio->todo)
            break;
        io = aio->todo;
        aio->todo = io->next;
        if (!aio->todo)
            aio->todo_tail = NULL;
        pthread_mutex_unlock(&aio->lock);
        io->res = sync_exec(io->fd, io);
        pthread_mutex_lock(&aio->lock);
        queue_push(&aio->done, &aio->done_tail, io);
        wake_loop(aio);
    }
    pthread_mutex_unlock(&aio->lock);
    return NULL;
}

static void pool_submit(struct tgt_aio *aio, int fd, struct tgt_io *io)
{
    io->fd = fd;
    pthread_mutex_lock(&aio->lock);
    queue_push(&aio->todo, &aio->todo_tail, io);
    pthread_cond_signal(&aio->work);
    pthread_mutex_unlock(&aio->lock);
}

/* Runs the callbacks of the ios the workers have finished (loop thread). */
static void pool_reap(struct tgt_aio *aio)
{
    struct tgt_io *io, *next;

    pthread_mutex_lock(&aio->lock);
    io = aio->done;
    aio->done = aio->done_tail = NULL;
    pthread_mutex_unlock(&aio->lock);
    for (; io; io = next) {
        next = io->next;
        aio->inflight--;
        io->cb(io, io->res);
    }
}

static void pool_stop(struct tgt_aio *aio)
{
    pthread_mutex_lock(&aio->lock);
    aio->stop = 1;
    pthread_cond_broadcast(&aio->work);
    pthread_mutex_unlock(&aio->lock);
    for (int i = 0; i < aio->nthreads; i++)
        pthread_join(aio->threads[i], NULL);
    aio->nthreads = 0;
}

static int pool_start(struct tgt_aio *aio)
{
    for (int i = 0; i < AIO_POOL_THREADS; i++) {
        int rc = pthread_create(&aio->threads[i], NULL, pool_worker, aio);

        if (rc != 0) {
            pool_stop(aio);
            return -rc;
        }
        aio->nthreads++;
    }
    return 0;
}

/* ---- io_uring engine ---- */

#ifdef HAVE_LIBURING
static void ring_push(struct tgt_aio *aio);

static void ring_retry(struct evloop *loop, uint64_t id, void *user)
{
    struct tgt_aio *aio = user;

    aio->retry_timer = 0;
    ring_push(aio);
}

/* Hands the prepared SQEs to the kernel.  A refusal (memory, completion
 * queue overflow) leaves them in the ring, so nothing would wake us to
 * try again: a timer does, 1 ms later. */
static void ring_push(struct tgt_aio *aio)
{
    int rc;

    if (!aio->ring_pending)
        return;
    rc = io_uring_submit(&aio->ring);
    if (rc >= 0) {
        aio->ring_pending = 0;
        return;
    }
    if (aio->retry_timer)
        return;
    log_warn("target: io_uring refused %d backing ios (%s), retrying", aio->ring_pending,
             strerror(-rc));
    aio->retry_timer = evloop_add_timer(aio->srv->loop, 1, ring_retry, aio);
    if (!aio->retry_timer)
        log_error("target: no timer to retry the backing io submission");
}

/* Prepares one SQE for io.  Inside a batch (tgt_aio_batch_begin) the
 * kernel gets the SQEs at the end of the batch, in one io_uring_enter for
 * all the commands of a loop turn; outside one, at once.  -EAGAIN: the
 * ring has no room (nothing was prepared), the pool takes io instead. */
static int ring_prep(struct tgt_aio *aio, int fd, struct tgt_io *io)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&aio->ring);

    if (!sqe) {
        ring_push(aio);
        sqe = io_uring_get_sqe(&aio->ring);
        if (!sqe)
            return -EAGAIN;
    }
    switch (io->op) {
    case TGT_IO_READ:
        io_uring_prep_read(sqe, fd, io->buf + io->done, (unsigned)(io->len - io->done),
                           io->off + io->done);
        break;
    case TGT_IO_WRITE:
        io_uring_prep_write(sqe, fd, io->buf + io->done, (unsigned)(io->len - io->done),
                            io->off + io->done);
        if (io->fua)
            sqe->rw_flags = RWF_DSYNC;
        break;
    case TGT_IO_FLUSH:
        io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
        break;
    case TGT_IO_PUNCH:
        io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                io->off, io->len);
        break;
    case TGT_IO_WRITEBACK:
        /* the SQE's length is 32 bits; 0 means to the end of the file */
        io_uring_prep_sync_file_range(sqe, fd, io->len > UINT32_MAX ? 0 : (unsigned)io->len,
                                      io->off, SYNC_FILE_RANGE_WRITE);
        break;
    }
    io_uring_sqe_set_data(sqe, io);
    aio->ring_pending++;
    if (!aio->batch)
        ring_push(aio);
    return 0;
}

/* One completion: finish short transfers, then tell the owner.  A rest
 * the ring cannot take goes to the pool, which stays off the loop. */
static void ring_complete(struct tgt_aio *aio, struct tgt_io *io, int res)
{
    int fd = io->fd;

    if (res >= 0 && (io->op == TGT_IO_READ || io->op == TGT_IO_WRITE)) {
        if (res == 0 && io->op == TGT_IO_READ) {
            memset(io->buf + io->done, 0, io->len - io->done);
            io->done = io->len;
        } else if (res == 0) {
            res = -EIO;
        } else {
            io->done += (size_t)res;
        }
        if (res >= 0 && io->done < io->len) {
            if (ring_prep(aio, fd, io) < 0)
                pool_submit(aio, fd, io);
            return;
        }
    }
    aio->inflight--;
    io->cb(io, res < 0 ? res : 0);
}

static void ring_reap(struct tgt_aio *aio)
{
    struct io_uring_cqe *cqe;

    while (io_uring_peek_cqe(&aio->ring, &cqe) == 0) {
        struct tgt_io *io = io_uring_cqe_get_data(cqe);
        int res = cqe->res;

        io_uring_cqe_seen(&aio->ring, cqe);
        ring_complete(aio, io, res);
    }
}

static int ring_setup(struct tgt_aio *aio)
{
    int rc = io_uring_queue_init(AIO_RING_DEPTH, &aio->ring, 0);

    if (rc < 0)
        return rc;
    rc = io_uring_register_eventfd(&aio->ring, aio->efd);
    if (rc < 0) {
        io_uring_queue_exit(&aio->ring);
        return rc;
    }
    aio->ring_ok = 1;
    return 0;
}

static void ring_teardown(struct tgt_aio *aio)
{
    if (aio->retry_timer)
        evloop_del_timer(aio->srv->loop, aio->retry_timer);
    aio->retry_timer = 0;
    if (aio->ring_ok)
        io_uring_queue_exit(&aio->ring);
    aio->ring_ok = 0;
}
#else
static void ring_push(struct tgt_aio *aio)
{
}

static void ring_reap(struct tgt_aio *aio)
{
}

static int ring_setup(struct tgt_aio *aio)
{
    return -ENOSYS;
}

static void ring_teardown(struct tgt_aio *aio)
{
}
#endif

/* ---- the engine: one eventfd for both the ring and the pool ---- */

static void aio_event(struct evloop *loop, int fd, int events, void *user)
{
    struct tgt_aio *aio = user;
    uint64_t cnt;

    if (read(aio->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
        log_warn("target: reading the backing-io eventfd: %s", strerror(errno));
    /* Callbacks queue responses and start follow-up ios: one send per
     * connection and one submission for all of them. */
    aio->hooks->round_begin(aio->srv);
    if (aio->ring_ok)
        ring_reap(aio);
    pool_reap(aio);
    aio->hooks->round_end(aio->srv);
}

void tgt_aio_round_begin(struct tgt_aio *aio)
{
    aio->hooks->round_begin(aio->srv);
}

void tgt_aio_round_end(struct tgt_aio *aio)
{
    aio->hooks->round_end(aio->srv);
}

void tgt_aio_batch_begin(struct tgt_aio *aio)
{
    aio->batch++;
}

void tgt_aio_batch_end(struct tgt_aio *aio)
{
    if (--aio->batch == 0 && aio->ring_ok)
        ring_push(aio);
}

/* io_uring unless the kernel refuses a ring or the environment asks for
 * the pool (to test it, or where io_uring is distrusted). */
static void choose_engine(struct tgt_aio *aio)
{
    const char *no_uring = getenv("IPVFS_TARGET_NO_URING");
    int rc;

    if (no_uring && *no_uring && strcmp(no_uring, "0") != 0) {
        log_info("target: IPVFS_TARGET_NO_URING is set, backing I/O runs on %d threads",
                 AIO_POOL_THREADS);
        return;
    }
    rc = ring_setup(aio);
    if (rc < 0)
        log_info("target: io_uring unavailable (%s), backing I/O runs on %d threads",
                 strerror(-rc), AIO_POOL_THREADS);
}

static void aio_free(struct tgt_aio *aio)
{
    pthread_cond_destroy(&aio->work);
    pthread_mutex_destroy(&aio->lock);
    free(aio);
}

int tgt_aio_create(struct tgt_server *srv, const struct tgt_aio_hooks *hooks,
                   struct tgt_aio **out)
{
    struct tgt_aio *aio = calloc(1, sizeof(*aio));
    int rc;

    if (!aio)
        return -ENOMEM;
    aio->srv = srv;
    aio->hooks = hooks;
    rc = -pthread_mutex_init(&aio->lock, NULL);
    if (rc < 0)
        goto undo_alloc;
    rc = -pthread_cond_init(&aio->work, NULL);
    if (rc < 0)
        goto undo_mutex;
    aio->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (aio->efd < 0) {
        rc = -errno;
        goto undo_cond;
    }
    /* Started even beside a ring: it takes what the ring cannot. */
    rc = pool_start(aio);
    if (rc < 0)
        goto undo_efd;
    choose_engine(aio);
    rc = evloop_set_fd(srv->loop, aio->efd, EV_READ, aio_event, aio);
    if (rc < 0)
        goto undo_engines;
    *out = aio;
    return 0;
undo_engines:
    ring_teardown(aio);
    pool_stop(aio);
undo_efd:
    close(aio->efd);
undo_cond:
    pthread_cond_destroy(&aio->work);
undo_mutex:
    pthread_mutex_destroy(&aio->lock);
undo_alloc:
    free(aio);
    return rc;
}

const char *tgt_aio_name(const struct tgt_aio *aio)
{
    return aio->ring_ok ? "io_uring" : "thread pool";
}

void tgt_aio_submit(struct tgt_aio *aio, int fd, struct tgt_io *io)
{
    io->done = 0;
    io->fd = fd;
    aio->inflight++;
#ifdef HAVE_LIBURING
    if (aio->ring_ok && ring_prep(aio, fd, io) == 0)
        return;
#endif
    pool_submit(aio, fd, io);
}

/* Sleeps until the ring or a worker signals the eventfd, then runs the
 * callbacks that are due, as the loop would. */
static void wait_completions(struct tgt_aio *aio)
{
    struct pollfd p = { .fd = aio->efd, .events = POLLIN };

    /* SQEs the kernel refused are retried here: the loop's timer no
     * longer runs. */
    if (aio->ring_ok)
        ring_push(aio);
    if (poll(&p, 1, aio->ring_pending ? 1 : -1) < 0 && errno != EINTR)
        log_warn("target: waiting for backing ios: %s", strerror(errno));
    aio_event(aio->srv->loop, aio->efd, EV_READ, aio);
}

void tgt_aio_destroy(struct tgt_aio *aio)
{
    if (!aio)
        return;
    /* Owners of ios in flight are waiting for their callbacks, which may
     * submit more; the workers are needed until the last one is back. */
    while (aio->inflight > 0)
        wait_completions(aio);
    pool_stop(aio);
    evloop_del_fd(aio->srv->loop, aio->efd);
    ring_teardown(aio);
    close(aio->efd);
    aio_free(aio);
}
