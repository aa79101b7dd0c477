/* RAID-1 (every member a full copy) as stripe-op plans: a read comes
 * from one current copy, a write goes to every current member, resync
 * copies the first current member over the others, rebuild copies it to
 * the target and scrub compares every copy with the first.  A rebuild's
 * or scrub's op takes a run of stripes (sweep.c), each member's chunks of
 * them read as one command; its source is a member current in all of
 * them.  Called by stripe.c through iraid_raid1_ops with the stripes'
 * lock held; no state of its own. */
#include <errno.h>
#include <string.h>

#include "iraid/internal.h"

/* First member other than skip holding current data of every stripe of
 * op (a rebuild's or scrub's run: a member rebuilding by bitmap may be
 * current in some and not others), searched from the op's first stripe
 * modulo the members, so that reads spread over the copies; -1: none. */
static int ok_member_run(const struct stripe_op *op, int skip)
{
    const struct iraid_volume *vol = op->vol;
    uint32_t from = (uint32_t)(op->stripe % vol->nmembers);

    for (uint32_t i = 0; i < vol->nmembers; i++) {
        uint32_t m = (from + i) % vol->nmembers;
        uint64_t s = op->stripe;

        if ((int)m == skip)
            continue;
        while (s <= sop_last(op) && member_ok(&vol->members[m], s))
            s++;
        if (s > sop_last(op))
            return (int)m;
    }
    return -1;
}

/* 1 when some stripe of op's run misses a member. */
static int run_missing(const struct stripe_op *op)
{
    for (uint64_t s = op->stripe; s <= sop_last(op); s++)
        if (stripe_missing(op->vol, s) > 0)
            return 1;
    return 0;
}

static int raid1_sop_plan(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    struct iov_cursor cur;
    int src = ok_member_run(op, op->kind == SOP_REBUILD ? (int)op->target
                                : op->kind == SOP_READ  ? op->avoid : -1);
    uint64_t rows = vol->layout.chunk * op->nstripes;
    int rc = 0;

    if (src < 0)
        return -EIO;
    op->src = src;
    switch (op->kind) {
    case SOP_READ:
        cur = op->cur;
        return sop_direct_rows(req, op, (uint32_t)src, PART_READ, &cur, op->lo[0], op->hi[0]);
    case SOP_WRITE:
        op->phase = 1;
        req->tolerate_down = 1;
        for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++) {
            cur = op->cur;
            if (member_ok(&vol->members[m], op->stripe))
                rc = sop_direct_rows(req, op, m, PART_WRITE, &cur, op->lo[0], op->hi[0]);
        }
        return rc;
    default:
        break;
    }
    if (op->kind == SOP_SCRUB && run_missing(op)) {
        op->skipped = 1;
        op->phase = 1;
        return 0;
    }
    if ((rc = sop_buffers(op)) < 0)
        return rc;
    if (op->kind != SOP_SCRUB)
        return sop_read_rows(req, op, (uint32_t)src, 0, rows);
    for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++)
        rc = sop_read_rows(req, op, m, 0, rows);
    return rc;
}

static int raid1_sop_after_read(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    uint64_t chunk = vol->layout.chunk;
    /* the copy the plan read: asked again, a member that returned
     * meanwhile could answer, whose rows were never read */
    int src = op->src;
    int rc = 0;

    op->phase = 1;
    switch (op->kind) {
    case SOP_SCRUB:
        /* counted by stripe, as a one-stripe op would */
        for (uint64_t i = 0; i < op->nstripes; i++)
            for (uint32_t m = 1; m < vol->nmembers; m++)
                if (memcmp(sop_mbuf(op, 0) + i * chunk, sop_mbuf(op, m) + i * chunk, chunk) != 0) {
                    op->mismatches++;
                    break;
                }
        return 0;
    case SOP_REBUILD:
        return sop_write_rows(req, op, op->target, sop_mbuf(op, (uint32_t)src), 0,
                              chunk * op->nstripes);
    case SOP_RESYNC:
        req->tolerate_down = 1;
        for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++)
            if ((int)m != src && member_ok(&vol->members[m], op->stripe))
                rc = sop_write_rows(req, op, m, sop_mbuf(op, (uint32_t)src), 0, chunk);
        return rc;
    default:
        return 0;
    }
}

/* The mirror's rows went straight to the caller: copied for the rewrite,
 * since the caller's buffer is the caller's once the op completes. */
static int raid1_sop_repair(struct stripe_op *op, struct iraid_req *req)
{
    struct iov_cursor cur = op->cur;
    uint8_t *rows;
    int rc;

    if (op->avoid < 0 || (rc = sop_buffers(op)) < 0)
        return op->avoid < 0 ? -EINVAL : rc;
    rows = sop_mbuf(op, (uint32_t)op->avoid) + op->lo[0];
    cursor_copy(&cur, rows, op->hi[0] - op->lo[0], 1);
    return sop_write_rows(req, op, (uint32_t)op->avoid, rows, op->lo[0], op->hi[0]);
}

const struct iraid_level_ops iraid_raid1_ops = { "raid1", iraid_striped_read, NULL,
                                                 raid1_sop_plan, raid1_sop_after_read,
                                                 raid1_sop_repair };
