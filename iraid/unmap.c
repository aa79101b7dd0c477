/* iRAID discards: the public iraid_unmap() and iraid_unmap_granularity()
 * (contract in volume.h).  Freed volume ranges are UNMAPped on the members
 * so that thin targets give their space back.
 *
 * RAID-0: every chunk of the range goes to its member as an UNMAP,
 * adjacent chunks of one member merged, like a write without data.
 *
 * RAID-1/5: whole stripes only, in stripe ops (stripe.c) that hold their
 * stripes' lock and their region's write-intent bit as a write does, and
 * UNMAP the stripes' chunks on every member, parity included.  On RAID-5
 * a run of whole stripes inside one bitmap region is one op (as a
 * multi-stripe write is) with one UNMAP per member: each member's chunks
 * of consecutive stripes are adjacent.  One op per stripe made removing a
 * 256 MiB file 1000 stripe ops and 3000 UNMAPs of 64 KiB per I/O node,
 * which held the next writes back 60-100 ms (benchmarks/results).  A run
 * with a member not current at its last stripe is skipped whole.  Members
 * read unmapped blocks as zeros (LBPRZ, checked at login), and the parity
 * of all-zero data is zero, so the stripe stays consistent; a crash in the
 * middle leaves the region's bit set and the resync at open recomputes the
 * parity.  A partial stripe is skipped rather than zeroed: zeros written
 * allocate backing space on a thin target instead of freeing it, and cost
 * a parity read-modify-write for blocks nobody reads.  A stripe with a
 * member not current (down, being rebuilt there) is skipped too: the
 * missing member would keep data that the others' zeros do not match.  A
 * stripe whose unmap fails on some member may be half unmapped: it is
 * resynced at once (parity recomputed from the data, a resync stripe op).
 *
 * A call is a struct iraid_io of io.c without data: its pieces are the
 * RAID-0 request or the stripe ops, io_piece_done() counts them and calls
 * back (never inside iraid_unmap), iraid_close() ends it like any I/O. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "iraid/internal.h"

/* Whether every member said it takes UNMAP and reads unmapped blocks as
 * zeros (a member down since open never said: no). */
static int members_unmap_zeroes(const struct iraid_volume *vol)
{
    for (uint32_t i = 0; i < vol->nmembers; i++)
        if (!vol->members[i].unmap_zeroes)
            return 0;
    return 1;
}

uint64_t iraid_unmap_granularity(const struct iraid_volume *vol)
{
    if (!vol || !members_unmap_zeroes(vol))
        return 0;
    if (vol->layout.level == 0)
        return vol->block_size;
    return (uint64_t)iraid_layout_data_per_stripe(&vol->layout) * vol->layout.chunk;
}

/* ---- RAID-0 ---- */

static void unmap_req_done(struct iraid_volume *vol, int status, void *user)
{
    io_piece_done(user, status);
}

static int unmap_striped(struct iraid_io *io)
{
    struct iraid_volume *vol = io->vol;
    struct iraid_req *req = req_new(vol, unmap_req_done, io);
    uint64_t off = io->off, len = io->len;

    if (!req)
        return -ENOMEM;
    while (len > 0) {
        struct iraid_loc loc;
        struct iraid_part *p;
        uint64_t n;

        iraid_layout_map(&vol->layout, off, &loc);
        n = loc.run < len ? loc.run : len;
        if (!(p = part_for(req, loc.member, PART_UNMAP, vol->data_off + loc.member_off, n))) {
            req_free(req);
            return -ENOMEM;
        }
        p->len += n;
        off += n;
        len -= n;
    }
    io->pending++;
    req_launch(req);
    return 0;
}

/* ---- RAID-1/5: whole stripes ---- */

/* stripe.c's plan for an SOP_UNMAP op, with the lock and the intent held. */
static int unmap_plan(struct stripe_op *op, struct iraid_req *req)
{
    struct iraid_volume *vol = op->vol;
    uint64_t pos = vol->data_off + op->stripe * vol->layout.chunk;

    op->phase = 1;                 /* one round, no reads */
    /* a REBUILDING member is missing from its rebuild_next up: the last
     * stripe is the one missing the most members */
    if (stripe_missing(vol, sop_last(op)) > 0) {
        op->skipped = 1;
        return 0;
    }
    for (uint32_t m = 0; m < vol->nmembers; m++) {
        struct iraid_part *p = part_new(req, m, PART_UNMAP, pos);
        if (!p)
            return -ENOMEM;
        p->len = vol->layout.chunk * op->nstripes;
    }
    return 0;
}

static void unmap_resynced(struct stripe_op *op, int status)
{
    if (status < 0)
        log_error("iraid: stripe %" PRIu64 ": resync after a failed unmap failed (%s); "
                  "`ipvfs-ctl scrub` tells whether its parity is right", op->stripe,
                  strerror(-status));
    io_piece_done(op->user, 0);
}

/* A failed unmap may have reached some members only: recompute each
 * stripe of the op from its data (the io waits for that too). */
static void unmap_stripe_done(struct stripe_op *op, int status)
{
    struct iraid_io *io = op->user;
    struct stripe_op *rs;

    for (uint64_t s = op->stripe; status < 0 && !op->vol->closing && s <= sop_last(op); s++) {
        if (!(rs = sop_new(op->vol, SOP_RESYNC, s, unmap_resynced, io))) {
            log_error("iraid: stripe %" PRIu64 ": unmap failed (%s), no memory to resync it; "
                      "`ipvfs-ctl scrub` tells whether its parity is right", s,
                      strerror(-status));
            continue;
        }
        log_warn("iraid: stripe %" PRIu64 ": unmap failed (%s); resyncing it", s,
                 strerror(-status));
        io->pending++;
        sop_start(rs);
    }
    io_piece_done(io, status);
}

/* Whole stripes from stripe s (before end) that one op unmaps: a run
 * inside one bitmap region on RAID-5, at most one part's bytes per member;
 * 1 on RAID-1. */
static uint64_t unmap_run(const struct iraid_volume *vol, uint64_t s, uint64_t end)
{
    uint64_t sbytes = iraid_unmap_granularity(vol), n;

    if (vol->layout.level != 5)
        return 1;
    n = iraid_layout_stripe_run(&vol->layout, s * sbytes, (end - s) * sbytes,
                                meta_region_stripes(vol), IRAID_MAX_PART / vol->layout.chunk);
    return n > 1 ? n : 1;
}

/* Stripe ops over the whole stripes of the range (unmap_run).  Stops at
 * the first allocation failure: the ops started end on their own, and the
 * failure is the call's status. */
static void unmap_stripes(struct iraid_io *io)
{
    struct iraid_volume *vol = io->vol;
    uint64_t sbytes = iraid_unmap_granularity(vol);
    uint64_t first = (io->off + sbytes - 1) / sbytes, end = (io->off + io->len) / sbytes, n;

    for (uint64_t s = first; s < end; s += n) {
        struct stripe_op *op = sop_new(vol, SOP_UNMAP, s, unmap_stripe_done, io);
        if (!op) {
            io->status = -ENOMEM;
            return;
        }
        op->nstripes = n = unmap_run(vol, s, end);
        op->plan = unmap_plan;
        io->pending++;
        sop_start(op);
    }
}

int iraid_unmap(struct iraid_volume *vol, uint64_t offset, uint64_t len, iraid_cb cb, void *user)
{
    struct iraid_io *io;
    int rc = 0;

    if (!vol || !cb || len == 0 || offset % vol->block_size || len % vol->block_size ||
        offset > iraid_size(vol) || len > iraid_size(vol) - offset)
        return -EINVAL;
    if (vol->closing)
        return -ECANCELED;
    if (!members_unmap_zeroes(vol))
        return -EOPNOTSUPP;
    if (members_not_live(vol) > vol_redundancy(vol))
        return -EIO;
    if (!(io = calloc(1, sizeof(*io))))
        return -ENOMEM;
    *io = (struct iraid_io){ .vol = vol, .cb = cb, .user = user, .off = offset,
                             .len = len, .submitting = 1, .pending = 1 };
    if (vol->layout.level == 0)
        rc = unmap_striped(io);
    else
        unmap_stripes(io);
    if (rc < 0) {
        free(io);
        return rc;
    }
    /* The submission's own count: the last piece may have ended already
     * (stripes skipped), then the callback is deferred to the loop. */
    if (io->pending > 1) {
        io->pending--;
        io->submitting = 0;
        return 0;
    }
    io_piece_done(io, 0);
    return 0;
}
