/* The emulated disk: a file LUN that takes a disk's time (a benchmark and
 * test feature: ipvfs-target/ipvfs-server --emulate-disk).
 *
 * So that experiments on one machine reproduce the disk-bound regime of
 * the iPVFS papers instead of RAM speed, each READ and WRITE is given the
 * service time of a disk (struct tgt_disk_params, target.h):
 *
 *   seek      15/8 seek sqrt(d), d the distance from the end of the
 *             previous io as a fraction of the LUN (mean: seek, for
 *             uniformly placed ios; 0 for an io that starts where the
 *             previous one ended)
 *   rotation  uniform over a turn [0, 2 rot), from a per-LUN generator
 *   transfer  len / rate
 *
 * One io at a time, in arrival order: an io arriving at t starts at
 * max(t, the end of the previous one) and is due service time later.  The
 * io itself runs at once on the file store (store_fd.c); its completion is
 * then held until it is due, by a timerfd (the evloop's timers count in
 * whole milliseconds, too coarse for a 6 ms service time).  FLUSH, UNMAP
 * and writeback take no disk time but stay in order.  So the disk is an
 * M/G/1 server whatever the engine does underneath.  The counters (ios,
 * mean and second moment of the service time, mean wait) go to the log at
 * close, where benchmarks/model-calibrate.sh reads them.
 *
 * State machine of an io: submitted (due time fixed) -> running on the
 * file store -> held (done, not yet due; in the due-ordered list) ->
 * completed (its callback run, from the timer's round, or at once when it
 * was due already or the LUN is draining). */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/evloop.h"
#include "common/log.h"

struct tgt_disk {
    struct tgt_disk_params p;
    struct tgt_lun *lun;
    int tfd;                  /* timerfd, armed for the first held io */
    uint64_t busy_until;      /* ns: the end of the last io given time */
    uint64_t head;            /* byte where the last io ended */
    uint64_t rng;             /* xorshift64* state */
    struct tgt_io *held, *held_tail;
    int draining;
    /* counters for the log */
    uint64_t ios;
    double sum_s, sum_s2, sum_wait;
};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Uniform on [0, 1). */
static double uniform(struct tgt_disk *d)
{
    d->rng ^= d->rng >> 12;
    d->rng ^= d->rng << 25;
    d->rng ^= d->rng >> 27;
    return (double)((d->rng * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* Seconds of disk time for io (0 for what moves no data). */
static double service_time(struct tgt_disk *d, const struct tgt_io *io)
{
    double dist, t;

    if (io->op != TGT_IO_READ && io->op != TGT_IO_WRITE)
        return 0;
    dist = io->off > d->head ? (double)(io->off - d->head) : (double)(d->head - io->off);
    t = dist > 0 ? 15.0 / 8.0 * d->p.seek * sqrt(dist / (double)d->lun->size) : 0;
    t += 2 * d->p.rot * uniform(d) + (double)io->len / d->p.rate;
    d->head = io->off + io->len;
    return t;
}

static void arm(struct tgt_disk *d)
{
    struct itimerspec its = { { 0, 0 }, { 0, 0 } };

    if (d->held) {
        its.it_value.tv_sec = (time_t)(d->held->disk_due_ns / 1000000000u);
        its.it_value.tv_nsec = (long)(d->held->disk_due_ns % 1000000000u);
    }
    if (timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        log_warn("target: LUN %d: arming the emulated disk's timer: %s", d->lun->index,
                 strerror(errno));
}

static void complete(struct tgt_io *io)
{
    io->cb = io->disk_cb;
    io->cb(io, io->disk_res);
}

/* Completes the held ios that are due (all of them when draining). */
static void release_due(struct tgt_disk *d)
{
    uint64_t now = now_ns();

    while (d->held && (d->draining || d->held->disk_due_ns <= now)) {
        struct tgt_io *io = d->held;

        d->held = io->disk_next;
        if (!d->held)
            d->held_tail = NULL;
        complete(io);
    }
    arm(d);
}

static void disk_timer(struct evloop *loop, int fd, int events, void *user)
{
    struct tgt_disk *d = user;
    uint64_t expirations;

    (void)loop;
    (void)events;
    if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
        log_warn("target: LUN %d: reading the emulated disk's timer: %s", d->lun->index,
                 strerror(errno));
    tgt_aio_round_begin(d->lun->srv->aio);
    release_due(d);
    tgt_aio_round_end(d->lun->srv->aio);
}

/* The file store is done with io: complete it if due, else hold it.  Due
 * times grow in submission order, but the file store may finish ios out
 * of order: held in due order. */
static void disk_done(struct tgt_io *io, int err)
{
    struct tgt_disk *d = io->lun->disk;
    struct tgt_io **at = &d->held;

    io->disk_res = err;
    if (d->draining || io->disk_due_ns <= now_ns()) {
        complete(io);
        return;
    }
    while (*at && (*at)->disk_due_ns <= io->disk_due_ns)
        at = &(*at)->disk_next;
    io->disk_next = *at;
    *at = io;
    if (!io->disk_next)
        d->held_tail = io;
    if (d->held == io)
        arm(d);
}

static void disk_submit(struct tgt_lun *lun, struct tgt_io *io)
{
    struct tgt_disk *d = lun->disk;
    uint64_t now = now_ns(), start = d->busy_until > now ? d->busy_until : now;
    double s = service_time(d, io);

    io->disk_due_ns = start + (uint64_t)(s * 1e9);
    d->busy_until = io->disk_due_ns;
    if (s > 0) {
        d->ios++;
        d->sum_s += s;
        d->sum_s2 += s * s;
        d->sum_wait += (double)(start - now) / 1e9;
    }
    io->disk_cb = io->cb;
    io->cb = disk_done;
    tgt_file_store.submit(lun, io);
}

static int disk_open(struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    struct tgt_disk *d = calloc(1, sizeof(*d));
    int rc;

    if (!d)
        return -ENOMEM;
    if (cfg->disk->rate <= 0 || cfg->disk->seek < 0 || cfg->disk->rot < 0) {
        rc = -EINVAL;
        goto undo_alloc;
    }
    d->p = *cfg->disk;
    d->lun = lun;
    d->rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)lun->index + 1);
    d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (d->tfd < 0) {
        rc = -errno;
        goto undo_alloc;
    }
    rc = evloop_set_fd(lun->srv->loop, d->tfd, EV_READ, disk_timer, d);
    if (rc < 0)
        goto undo_timer;
    rc = tgt_file_store.open(lun, cfg);
    if (rc < 0)
        goto undo_watch;
    lun->disk = d;
    log_info("target: LUN %d: emulated disk %s: %.1f MB/s, %.2f ms mean seek, %.2f ms mean "
             "rotational latency, one io at a time", lun->index, d->p.name, d->p.rate / 1e6,
             d->p.seek * 1e3, d->p.rot * 1e3);
    return 0;
undo_watch:
    evloop_del_fd(lun->srv->loop, d->tfd);
undo_timer:
    close(d->tfd);
undo_alloc:
    free(d);
    return rc;
}

static void disk_drain(struct tgt_lun *lun)
{
    struct tgt_disk *d = lun->disk;

    if (!d)
        return;
    d->draining = 1;
    release_due(d);
}

static void disk_close(struct tgt_lun *lun)
{
    struct tgt_disk *d = lun->disk;

    if (d)
        disk_drain(lun);
    tgt_file_store.close(lun);
    if (!d)
        return;
    if (d->ios) {
        double mean = d->sum_s / (double)d->ios, second = d->sum_s2 / (double)d->ios;

        log_info("target: LUN %d: emulated disk %s: %llu ios, service mean %.4f ms, second "
                 "moment %.4f ms^2 (sd %.4f ms), wait mean %.4f ms", lun->index, d->p.name,
                 (unsigned long long)d->ios, mean * 1e3, second * 1e6,
                 sqrt(fmax(second - mean * mean, 0)) * 1e3, d->sum_wait / (double)d->ios * 1e3);
    }
    evloop_del_fd(lun->srv->loop, d->tfd);
    close(d->tfd);
    free(d);
    lun->disk = NULL;
}

static int disk_flush(struct tgt_lun *lun)
{
    return tgt_file_store.flush(lun);
}

static int disk_lba_status(struct tgt_lun *lun, uint64_t lba, uint64_t *nblocks, int *mapped)
{
    return tgt_file_store.lba_status(lun, lba, nblocks, mapped);
}

const struct tgt_store_ops tgt_disk_store = {
    .name = "emulated disk", .open = disk_open, .close = disk_close, .submit = disk_submit,
    .flush = disk_flush, .drain = disk_drain, .lba_status = disk_lba_status,
};

int tgt_disk_preset(const char *name, struct tgt_disk_params *out)
{
    if (strcmp(name, "st318452lw") != 0)
        return -EINVAL;
    *out = (struct tgt_disk_params){ .rate = 51e6, .seek = 3.8e-3, .rot = 2e-3 };
    snprintf(out->name, sizeof(out->name), "%s", name);
    return 0;
}
