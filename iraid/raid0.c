/* RAID-0 planning, and the straight reads of the redundant levels while
 * every member is UP: each chunk goes to or comes from the member
 * iraid_layout_map() names, contiguous runs of one member merged into one
 * part.  No state of its own; calls request.c and layout.c only. */
#include <errno.h>
#include <stddef.h>

#include "iraid/internal.h"

/* Striped placement: each chunk from the member iraid_layout_map names. */
static int plan_striped(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur,
                        enum part_op op)
{
    const struct iraid_volume *vol = req->vol;

    while (len > 0) {
        struct iraid_loc loc;
        struct iraid_part *p;
        uint64_t n;
        int rc;

        iraid_layout_map(&vol->layout, off, &loc);
        n = loc.run < len ? loc.run : len;
        p = part_for(req, loc.member, op, vol->data_off + loc.member_off, n);
        if (!p)
            return -ENOMEM;
        if ((rc = part_take(p, cur, n)) < 0)
            return rc;
        off += n;
        len -= n;
    }
    return 0;
}

int iraid_striped_read(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur)
{
    return plan_striped(req, off, len, cur, PART_READ);
}

int iraid_striped_demote(struct iraid_req *req, uint64_t off, uint64_t len,
                         struct iov_cursor *cur)
{
    return plan_striped(req, off, len, cur, PART_DEMOTE);
}

static int raid0_write(struct iraid_req *req, uint64_t off, uint64_t len, struct iov_cursor *cur)
{
    return plan_striped(req, off, len, cur, PART_WRITE);
}

const struct iraid_level_ops iraid_raid0_ops = { "raid0", iraid_striped_read, raid0_write,
                                                 NULL, NULL, NULL };
