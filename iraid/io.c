/* iRAID user reads and writes: the public iraid_readv()/iraid_writev().
 * RAID-0 plans one request straight from the layout (raid0.c); the
 * redundant levels serve a user I/O (struct iraid_io) as stripe ops, one
 * per stripe touched (stripe.c), or, for a read while every member is UP,
 * as one straight request that falls back to stripe ops when it fails.
 *
 * States of an iraid_io:
 *
 *   SUBMITTING  inside the public call (io->submitting): its pieces (the
 *               stripe ops, or the straight read) are being started
 *   SUBMITTING --every piece started--> RUNNING
 *   SUBMITTING --a piece cannot start--> freed; the call returns the error
 *               and cb never runs (pieces already started end on their own)
 *   RUNNING --straight read failed, a member down or failing reads and
 *               the volume still redundant enough--> RUNNING as stripe ops
 *   any --last piece ended inside the public call--> DEFERRED (a zero
 *               timer; vol->deferred lists it) --timer--> DONE
 *   RUNNING --last piece ended--> DONE: cb(first error or 0), freed
 *   DEFERRED --iraid_close()--> DONE at once (io_cancel_deferred)
 *
 * Ownership: an iraid_io owns its copy of the caller's iovec array (not
 * the buffers) and is freed right after its cb. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"

/* ---- completion ---- */

static void io_complete(struct iraid_io *io)
{
    io->cb(io->vol, io->status, io->user);
    free(io->iov);
    free(io);
}

static void io_undefer(struct iraid_io *io)
{
    struct iraid_io **pp = &io->vol->deferred;

    while (*pp != io)
        pp = &(*pp)->dnext;
    *pp = io->dnext;
}

static void io_deferred(struct evloop *loop, uint64_t timer_id, void *user)
{
    io_undefer(user);
    io_complete(user);
}

/* One piece of io (a stripe op, or the direct read; or a piece of an
 * unmap, unmap.c) ended.  The caller's callback never runs inside the
 * public call that submitted io. */
void io_piece_done(struct iraid_io *io, int status)
{
    if (status < 0 && io->status == 0)
        io->status = status;
    if (--io->pending > 0)
        return;
    if (io->submitting && !io->vol->closing &&
        (io->timer = evloop_defer(io->vol->loop, io_deferred, io))) {
        io->dnext = io->vol->deferred;
        io->vol->deferred = io;
        return;
    }
    io_complete(io);
}


/* iraid_close(): the completions still waiting for their timer run now
 * (every command is cancelled already, so nothing else will end them). */
void io_cancel_deferred(struct iraid_volume *vol)
{
    while (vol->deferred) {
        struct iraid_io *io = vol->deferred;
        vol->deferred = io->dnext;
        evloop_del_timer(vol->loop, io->timer);
        io_complete(io);
    }
}

/* ---- the redundant levels: stripe ops, or a straight read ---- */

static void sop_io_piece(struct stripe_op *op, int status)
{
    io_piece_done(op->user, status);
}

/* Whole stripes a RAID-5 write at off may send as one multi-stripe op
 * (raid5.c: one WRITE per member), or 1: RAID-1 stripes are one chunk,
 * and a run of one stripe is an ordinary op. */
static uint64_t io_stripe_run(const struct iraid_io *io, uint64_t off)
{
    const struct iraid_volume *vol = io->vol;
    uint64_t max = IRAID_MULTI_MAX_BYTES / vol->layout.chunk, n;

    if (!io->write || vol->layout.level != 5)
        return 1;
    n = iraid_layout_stripe_run(&vol->layout, off, io->off + io->len - off,
                                meta_region_stripes(vol), max);
    return n > 1 ? n : 1;
}

/* Cuts io into stripe ops, each with its share of the caller's buffers:
 * one per stripe, except runs of whole RAID-5 stripes written, one op
 * each (cut at bitmap regions: one write-intent bit per op). */
static int io_submit_stripes(struct iraid_io *io)
{
    struct iraid_volume *vol = io->vol;
    uint32_t per = iraid_layout_data_per_stripe(&vol->layout);
    uint64_t chunk = vol->layout.chunk, sbytes = per * chunk;
    uint64_t off = io->off, end = io->off + io->len;
    struct iov_cursor cur = { .iov = io->iov, .iovcnt = io->iovcnt };

    while (off < end) {
        uint64_t s = off / sbytes, base = s * sbytes, n = io_stripe_run(io, off);
        uint64_t stop = end < base + n * sbytes ? end : base + n * sbytes;
        struct stripe_op *op = sop_new(vol, io->write ? SOP_WRITE : SOP_READ, s, sop_io_piece, io);

        if (!op)
            return -ENOMEM;
        op->nstripes = n;
        op->cur = cur;
        op->rlo = chunk;
        for (uint32_t k = 0; k < per; k++) {
            uint64_t cb = base + k * chunk, lo = off > cb ? off - cb : 0;
            uint64_t hi = stop < cb + chunk ? (stop > cb ? stop - cb : 0) : chunk;
            op->lo[k] = lo < hi ? lo : 0;
            op->hi[k] = lo < hi ? hi : 0;
            if (lo < hi && lo < op->rlo)
                op->rlo = lo;
            if (lo < hi && hi > op->rhi)
                op->rhi = hi;
        }
        cursor_skip(&cur, stop - off);
        off = stop;
        io->pending++;
        sop_start(op);
    }
    return 0;
}

/* The direct read (every member was UP) failed: if a member went down
 * meanwhile, or a live one failed a read, serve it again stripe by stripe,
 * reconstructing (a stripe op that meets the read error again reads
 * around that member). */
static void io_direct_done(struct iraid_volume *vol, int status, void *user)
{
    struct iraid_io *io = user;

    if (status < 0 && !vol->closing && (!all_members_up(vol) || io->read_err >= 0) &&
        members_not_live(vol) <= vol_redundancy(vol)) {
        log_warn("iraid: read %" PRIu64 "+%" PRIu64 " failed (%s); retrying degraded", io->off,
                 io->len, strerror(-status));
        /* The direct piece stays counted while the stripe ops are
         * submitted (none can end io meanwhile); its end then leaves io to
         * them.  (It was counted twice here: a retried read never ended.) */
        if (io_submit_stripes(io) == 0) {
            io_piece_done(io, 0);
            return;
        }
    }
    io_piece_done(io, status);
}

static int io_direct_read(struct iraid_io *io)
{
    struct iov_cursor cur = { .iov = io->iov, .iovcnt = io->iovcnt };
    struct iraid_req *req = req_new(io->vol, io_direct_done, io);
    int rc;

    if (!req)
        return -ENOMEM;
    req->dpo = io->dpo;
    io->read_err = -1;
    req->read_err_member = &io->read_err;
    if ((rc = iraid_striped_read(req, io->off, io->len, &cur)) < 0) {
        req_free(req);
        return rc;
    }
    io->pending = 1;
    req_launch(req);
    return 0;
}

static int redundant_rw(struct iraid_volume *vol, int write, unsigned flags, uint64_t offset,
                        const struct iovec *iov, int iovcnt, uint64_t len, iraid_cb cb,
                        void *user)
{
    struct iraid_io *io;
    int rc;

    if (members_not_live(vol) > vol_redundancy(vol)) {
        log_error("iraid: %u members missing: the volume cannot serve", members_not_live(vol));
        return -EIO;
    }
    if (!(io = calloc(1, sizeof(*io))))
        return -ENOMEM;
    *io = (struct iraid_io){ .vol = vol, .cb = cb, .user = user, .write = write, .off = offset,
                             .len = len, .iovcnt = iovcnt, .submitting = 1,
                             .dpo = !write && (flags & IRAID_READ_DPO) };
    if (!(io->iov = malloc((size_t)iovcnt * sizeof(*iov)))) {
        rc = -ENOMEM;
        goto free_io;
    }
    memcpy(io->iov, iov, (size_t)iovcnt * sizeof(*iov));
    rc = !write && all_members_up(vol) ? io_direct_read(io) : io_submit_stripes(io);
    if (rc < 0)
        goto free_iov;
    io->submitting = 0;
    if (io->pending == 0)
        io_complete(io);
    return 0;

free_iov:
    free(io->iov);
free_io:
    free(io);
    return rc;
}

/* ---- public I/O ---- */

/* Whether [offset, offset + len) is whole blocks inside the volume. */
static int range_ok(const struct iraid_volume *vol, uint64_t offset, uint64_t len)
{
    uint64_t size = iraid_layout_capacity(&vol->layout);    /* iraid_size() */

    return len > 0 && offset % vol->block_size == 0 && len % vol->block_size == 0 &&
           offset <= size && len <= size - offset;
}

static int volume_rw(struct iraid_volume *vol, int write, unsigned flags, uint64_t offset,
                     const struct iovec *iov, int iovcnt, iraid_cb cb, void *user)
{
    struct iov_cursor cur = { .iov = iov, .iovcnt = iovcnt };
    struct iraid_req *req;
    uint64_t len = 0;
    int rc;

    if (!vol || !cb || iovcnt < 0 || (iovcnt > 0 && !iov))
        return -EINVAL;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (!range_ok(vol, offset, len))
        return -EINVAL;
    if (vol->closing)
        return -ECANCELED;
    if (!vol->ops->plan_write)
        return redundant_rw(vol, write, flags, offset, iov, iovcnt, len, cb, user);
    if (!(req = req_new(vol, cb, user)))
        return -ENOMEM;
    req->dpo = !write && (flags & IRAID_READ_DPO);
    rc = write ? vol->ops->plan_write(req, offset, len, &cur)
               : vol->ops->plan_read(req, offset, len, &cur);
    if (rc < 0) {
        req_free(req);
        return rc;
    }
    return req_start(req);
}

int iraid_readv(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov, int iovcnt,
                iraid_cb cb, void *user)
{
    return volume_rw(vol, 0, 0, offset, iov, iovcnt, cb, user);
}

int iraid_readv_flags(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov,
                      int iovcnt, unsigned flags, iraid_cb cb, void *user)
{
    return volume_rw(vol, 0, flags, offset, iov, iovcnt, cb, user);
}

int iraid_writev(struct iraid_volume *vol, uint64_t offset, const struct iovec *iov, int iovcnt,
                 iraid_cb cb, void *user)
{
    return volume_rw(vol, 1, 0, offset, iov, iovcnt, cb, user);
}

/* ---- DEMOTE (volume.h) ---- */

static void demote_done(struct iraid_volume *vol, int status, void *user)
{
    free(user);   /* the copy; a failed demotion is only a lost hint */
}

static int any_member_ucache(const struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->layout.nmembers; i++)
        if (vol->members[i].ucache && member_live(&vol->members[i]))
            return 1;
    return 0;
}

/* Drops the parts whose member does not take DEMOTE or is not live. */
static void demote_keep_able(struct iraid_req *req)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < req->nparts; i++) {
        struct iraid_part *p = &req->parts[i];

        if (p->m->ucache && member_live(p->m))
            req->parts[n++] = *p;
        else
            free(p->iov);
    }
    req->nparts = n;
}

int iraid_demote(struct iraid_volume *vol, uint64_t offset, const void *buf, size_t len)
{
    struct iovec v;
    struct iov_cursor cur = { .iov = &v, .iovcnt = 1 };
    struct iraid_req *req;
    void *copy;
    int rc;

    if (!vol || !buf || !range_ok(vol, offset, len))
        return -EINVAL;
    if (vol->closing)
        return -ECANCELED;
    if (!any_member_ucache(vol))
        return 0;
    if (!(copy = malloc(len)))
        return -ENOMEM;
    memcpy(copy, buf, len);
    v = (struct iovec){ copy, len };
    if (!(req = req_new(vol, demote_done, copy))) {
        free(copy);
        return -ENOMEM;
    }
    rc = iraid_striped_demote(req, offset, len, &cur);
    demote_keep_able(req);
    if (rc < 0 || req->nparts == 0) {
        req_free(req);
        free(copy);
        return rc;
    }
    /* A refused start ends req without its callback: the copy is ours. */
    if ((rc = req_start(req)) < 0) {
        free(copy);
        return rc;
    }
    return 1;
}
