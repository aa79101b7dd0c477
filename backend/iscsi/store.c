/* Backing stores and the asynchronous I/O engine.
 *
 * A store is a small template (struct tgt_store_ops) registered in
 * store_table[] under its enum tgt_backing kind.  File and block stores
 * share the descriptor engine: io_uring when the kernel gives us a ring,
 * else (or with IPVFS_TARGET_NO_URING=1) a pool of worker threads running
 * the blocking syscalls.  Both signal one eventfd on the server's evloop,
 * whose handler runs every callback on the loop thread.  The memory store
 * copies and completes inline.
 *
 * File and block LUNs are also mapped read-only: a READ whose range
 * tgt_lun_cached() finds in the page cache is sent from the mapping (see
 * "Reads from the page cache" in tgt.h).
 */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* ---- store templates ---- */

static int fd_store_flush(struct tgt_lun *lun)
{
    return fdatasync(lun->fd) < 0 ? -errno : 0;
}

/* Write-behind.  A buffered WRITE only dirties the page cache, and the
 * kernel starts writing dirty pages out only past
 * vm.dirty_background_ratio (10% of memory: gigabytes here) or once they
 * are 30 s old.  So the SYNCHRONIZE CACHE that ends a large write would
 * wait for the disk to take all of it, after the transfer instead of
 * during it.  Every TGT_WRITEBEHIND_BYTES of buffered writes completed on
 * a LUN, the span they cover is handed to sync_file_range: the disk works
 * while data still arrives, and the FLUSH finds little left.  Nothing
 * waits for it and it makes nothing durable (FLUSH and FUA still do);
 * pages rewritten after their writeback are written again, which is the
 * cost.  Not for O_DIRECT (an L2) nor for FUA writes, which leave no
 * dirty pages; the memory store has none either. */
#define TGT_WRITEBEHIND_BYTES (8u << 20)

static void writebehind_done(struct tgt_io *io, int err);

/* Starts writeback of the span written since the last start, when it
 * holds enough and no start is in flight. */
static void writebehind_start(struct tgt_lun *lun)
{
    struct tgt_io *io = &lun->wb_io;

    if (lun->wb_busy || lun->wb_off || lun->wb_bytes < TGT_WRITEBEHIND_BYTES)
        return;
    *io = (struct tgt_io){ .op = TGT_IO_WRITEBACK, .off = lun->wb_lo,
                           .len = (size_t)(lun->wb_hi - lun->wb_lo), .lun = lun,
                           .cb = writebehind_done };
    lun->wb_starts++;
    lun->wb_started_bytes += lun->wb_bytes;
    lun->wb_bytes = 0;
    lun->wb_busy = 1;
    tgt_aio_submit(lun->srv->aio, lun->fd, io);
}

static void writebehind_done(struct tgt_io *io, int err)
{
    struct tgt_lun *lun = io->lun;

    lun->wb_busy = 0;
    if (err < 0) {
        /* the file system has no writeback to start: FLUSH does it all */
        log_warn("target: LUN %d: sync_file_range refused (%s): no write-behind", lun->index,
                 strerror(-err));
        lun->wb_off = 1;
        return;
    }
    writebehind_start(lun);
}

/* A buffered WRITE's completion: its span joins the next writeback. */
static void written(struct tgt_io *io, int err)
{
    struct tgt_lun *lun = io->lun;

    io->cb = io->store_cb;
    if (err == 0 && io->len) {
        if (lun->wb_bytes == 0 || io->off < lun->wb_lo)
            lun->wb_lo = io->off;
        if (lun->wb_bytes == 0 || io->off + io->len > lun->wb_hi)
            lun->wb_hi = io->off + io->len;
        lun->wb_bytes += io->len;
        writebehind_start(lun);
    }
    io->cb(io, err);
}

/* O_DIRECT wants the buffer, offset and length aligned to the device's
 * logical block; 4 KiB covers every device we meet.  Other ios (a
 * connection's odd buffer, a 512-byte write) take the buffered
 * descriptor, whose pages l2cache.c then drops. */
#define DIRECT_ALIGN 4096u

static void fd_store_submit(struct tgt_lun *lun, struct tgt_io *io)
{
    int aligned = ((uintptr_t)io->buf | io->off | io->len) % DIRECT_ALIGN == 0;
    int fd = lun->dfd >= 0 && aligned && io->op != TGT_IO_PUNCH ? lun->dfd : lun->fd;

    if (io->op == TGT_IO_WRITE && !io->fua && !lun->direct && !lun->wb_off) {
        io->store_cb = io->cb;
        io->cb = written;
    }
    tgt_aio_submit(lun->srv->aio, fd, io);
}

static void fd_store_close(struct tgt_lun *lun)
{
    if (lun->dfd >= 0)
        close(lun->dfd);
    lun->dfd = -1;
    if (lun->fd >= 0)
        close(lun->fd);
    lun->fd = -1;
}

/* With an L2 the kernel's page cache must not be a hidden third level:
 * a second descriptor with O_DIRECT.  A file system that refuses it
 * (EINVAL: tmpfs before Linux 6.6, some FUSE ones) is said in the log,
 * and I/O stays buffered with its pages dropped after each io. */
static void open_direct(struct tgt_lun *lun, const char *path)
{
    lun->dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
    if (lun->dfd >= 0) {
        log_info("target: LUN %d: %s opened with O_DIRECT", lun->index, path);
        return;
    }
    log_warn("target: LUN %d: the file system of %s refuses O_DIRECT (%s): falling back to "
             "buffered I/O with posix_fadvise(DONTNEED)", lun->index, path, strerror(errno));
}

static int file_open(struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    struct stat st;
    int fd, rc;

    fd = open(cfg->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        goto undo_open;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        goto undo_open;
    }
    if (cfg->size > (uint64_t)st.st_size && ftruncate(fd, (off_t)cfg->size) < 0) {
        rc = -errno;
        goto undo_open;
    }
    lun->size = cfg->size ? cfg->size : (uint64_t)st.st_size;
    lun->fd = fd;
    lun->can_punch = 1;
    if (lun->direct)
        open_direct(lun, cfg->path);
    return 0;
undo_open:
    close(fd);
    return rc;
}

/* GET LBA STATUS of a sparse file: holes are deallocated blocks.  lseek
 * asks the file system's extent map, a metadata lookup that does not wait
 * for data, so it runs on the loop thread.  Offsets are rounded to whole
 * blocks: a block partly in a hole still holds data, so it is mapped. */
static int file_lba_status(struct tgt_lun *lun, uint64_t lba, uint64_t *nblocks, int *mapped)
{
    uint64_t bs = lun->block_size, pos = lba * bs, end = lun->size;
    off_t d = lseek(lun->fd, (off_t)pos, SEEK_DATA), h;

    if (d < 0 && errno != ENXIO)
        return -errno;
    if (d < 0 || (uint64_t)d >= end)
        d = (off_t)end;   /* ENXIO: only a hole up to the end of the file */
    if ((uint64_t)d / bs > lba) {
        *mapped = 0;
        *nblocks = (uint64_t)d / bs - lba;
        return 0;
    }
    h = lseek(lun->fd, (off_t)pos, SEEK_HOLE);
    if (h < 0)
        return -errno;
    if ((uint64_t)h > end)
        h = (off_t)end;
    *mapped = 1;
    *nblocks = ((uint64_t)h + bs - 1) / bs - lba;
    if (*nblocks == 0)
        *nblocks = 1;
    return 0;
}

/* UNMAP of a block LUN is fallocate(PUNCH_HOLE) on the device, which the
 * kernel turns into WRITE ZEROES with unmapping allowed and never emulates
 * (so it is quick, and the blocks read as zeros after, as LBPRZ says).
 * It needs a device that takes WRITE ZEROES and whose logical blocks are
 * no larger than ours, since our ranges are aligned only to 512 bytes.
 * Without that the LUN reports no logical block provisioning. */
static int block_can_punch(int fd, const struct stat *st)
{
    static const char *const where[] = { "queue", "../queue" };   /* disk, partition */
    char path[96];
    unsigned long long max = 0;
    int lbs;

    if (ioctl(fd, BLKSSZGET, &lbs) < 0 || lbs > (int)TGT_BLOCK_SIZE)
        return 0;
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        FILE *f;
        int ok;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s/write_zeroes_max_bytes",
                 major(st->st_rdev), minor(st->st_rdev), where[i]);
        f = fopen(path, "re");
        if (!f)
            continue;
        ok = fscanf(f, "%llu", &max) == 1;
        fclose(f);
        return ok && max > 0;
    }
    return 0;
}

static int block_open(struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    uint64_t bytes;
    struct stat st;
    int fd, rc;

    fd = open(cfg->path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        goto undo_open;
    }
    if (!S_ISBLK(st.st_mode)) {
        rc = -ENOTBLK;
        goto undo_open;
    }
    if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
        rc = -errno;
        goto undo_open;
    }
    lun->size = cfg->size && cfg->size < bytes ? cfg->size : bytes;
    lun->fd = fd;
    if (lun->direct)
        open_direct(lun, cfg->path);
    lun->can_punch = block_can_punch(fd, &st);
    if (!lun->can_punch)
        log_info("target: LUN %d: %s cannot zero ranges (WRITE ZEROES), UNMAP is not offered",
                 lun->index, cfg->path);
    return 0;
undo_open:
    close(fd);
    return rc;
}

static const struct tgt_store_ops file_store = {
    .name = "file", .open = file_open, .close = fd_store_close,
    .submit = fd_store_submit, .flush = fd_store_flush, .lba_status = file_lba_status,
};
static const struct tgt_store_ops block_store = {
    .name = "block", .open = block_open, .close = fd_store_close,
    .submit = fd_store_submit, .flush = fd_store_flush,
};

static const struct tgt_store_ops *const store_table[] = {
    [TGT_BACKING_FILE] = &file_store,
    [TGT_BACKING_BLOCK] = &block_store,
    [TGT_BACKING_MEMORY] = &tgt_mem_store,
};

const struct tgt_store_ops *tgt_store_lookup(enum tgt_backing kind)
{
    if ((unsigned)kind >= sizeof(store_table) / sizeof(store_table[0]))
        return NULL;
    return store_table[kind];
}

/* Without the mapping every READ goes through a buffer. */
static void lun_map(struct tgt_lun *lun)
{
    void *p = mmap(NULL, lun->size, PROT_READ, MAP_SHARED, lun->fd, 0);

    if (p == MAP_FAILED) {
        log_info("target: LUN %d: cannot map the store (%s), reads are buffered",
                 lun->index, strerror(errno));
        return;
    }
    lun->map = p;
}

int tgt_lun_cached(const struct tgt_lun *lun, uint64_t off, size_t len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t pos = off & ~(page - 1), end = off + len;
    unsigned char vec[256];

    if (!lun->map || end > lun->size)
        return 0;
    while (pos < end) {
        size_t pages = (size_t)((end - pos + page - 1) / page);

        if (pages > sizeof(vec))
            pages = sizeof(vec);
        if (mincore(lun->map + pos, pages * page, vec) < 0)
            return 0;
        for (size_t i = 0; i < pages; i++)
            if (!(vec[i] & 1))
                return 0;
        pos += pages * page;
    }
    return 1;
}

int tgt_lun_open(struct tgt_server *srv, struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    const struct tgt_store_ops *ops = tgt_store_lookup(cfg->kind);
    const char *what = cfg->kind == TGT_BACKING_MEMORY ? "memory" : cfg->path;
    int rc;

    lun->srv = srv;
    lun->fd = -1;
    lun->dfd = -1;
    lun->direct = srv->l2 != NULL && cfg->kind != TGT_BACKING_MEMORY;
    if (!ops || (cfg->kind != TGT_BACKING_MEMORY && !cfg->path)) {
        log_error("target: LUN %d: invalid backing store description", lun->index);
        return -EINVAL;
    }
    rc = ops->open(lun, cfg);
    if (rc < 0) {
        log_error("target: LUN %d: cannot open %s store %s: %s", lun->index, ops->name, what,
                  strerror(-rc));
        return rc;
    }
    lun->ops = ops;
    lun->block_size = TGT_BLOCK_SIZE;
    lun->nblocks = lun->size / TGT_BLOCK_SIZE;
    lun->size = lun->nblocks * TGT_BLOCK_SIZE;
    if (lun->nblocks == 0) {
        log_error("target: LUN %d: %s store %s is smaller than one block", lun->index,
                  ops->name, what);
        ops->close(lun);
        lun->ops = NULL;
        return -EINVAL;
    }
    /* Pages sent from the mapping would be the page cache again. */
    if (lun->fd >= 0 && !lun->direct)
        lun_map(lun);
    return 0;
}

void tgt_lun_close(struct tgt_lun *lun)
{
    if (!lun->ops)
        return;
    int rc = lun->ops->flush(lun);

    if (rc < 0)
        log_error("target: LUN %d: flush at close failed: %s", lun->index, strerror(-rc));
    if (lun->wb_starts)
        log_info("target: LUN %d: write-behind started writeback %llu times, %llu MiB",
                 lun->index, (unsigned long long)lun->wb_starts,
                 (unsigned long long)(lun->wb_started_bytes >> 20));
    if (lun->map && munmap(lun->map, lun->size) < 0)
        log_warn("target: LUN %d: unmapping: %s", lun->index, strerror(errno));
    lun->map = NULL;
    lun->ops->close(lun);
    lun->ops = NULL;
}
