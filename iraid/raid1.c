/* RAID-1 (every member a full copy) as stripe-op plans: a read comes
 * from one current copy, a write goes to every current member, resync
 * copies the first current member over the others, rebuild copies it to
 * the target and scrub compares every copy with the first.  Called by
 * stripe.c through iraid_raid1_ops with the stripe's lock held; no state
 * of its own. */
#include <errno.h>
#include <string.h>

#include "iraid/internal.h"

/* First member holding current data of stripe other than skip, starting
 * the search at from; -1 when none. */
static int ok_member_from(const struct iraid_volume *vol, uint64_t stripe, uint32_t from,
                          int skip)
{
    for (uint32_t i = 0; i < vol->nmembers; i++) {
        uint32_t m = (from + i) % vol->nmembers;
        if ((int)m != skip && member_ok(&vol->members[m], stripe))
            return (int)m;
    }
    return -1;
}

static int raid1_sop_plan(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    struct iov_cursor cur;
    int src = ok_member_from(vol, op->stripe, (uint32_t)(op->stripe % vol->nmembers),
                             op->kind == SOP_REBUILD ? (int)op->target
                             : op->kind == SOP_READ  ? op->avoid : -1);
    int rc = 0;

    if (src < 0)
        return -EIO;
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
    if (op->kind == SOP_SCRUB && stripe_missing(vol, op->stripe) > 0) {
        op->skipped = 1;
        op->phase = 1;
        return 0;
    }
    if ((rc = sop_buffers(op)) < 0)
        return rc;
    if (op->kind != SOP_SCRUB)
        return sop_read_rows(req, op, (uint32_t)src, 0, vol->layout.chunk);
    for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++)
        rc = sop_read_rows(req, op, m, 0, vol->layout.chunk);
    return rc;
}

static int raid1_sop_after_read(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    uint64_t chunk = vol->layout.chunk;
    int src = ok_member_from(vol, op->stripe, (uint32_t)(op->stripe % vol->nmembers),
                             op->kind == SOP_REBUILD ? (int)op->target : -1);
    int rc = 0;

    op->phase = 1;
    if (src < 0)
        return -EIO;
    switch (op->kind) {
    case SOP_SCRUB:
        for (uint32_t m = 1; m < vol->nmembers; m++)
            if (memcmp(sop_mbuf(op, 0), sop_mbuf(op, m), chunk) != 0) {
                op->mismatches++;
                break;
            }
        return 0;
    case SOP_REBUILD:
        return sop_write_rows(req, op, op->target, sop_mbuf(op, (uint32_t)src), 0, chunk);
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
