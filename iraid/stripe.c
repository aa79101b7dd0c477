/* Stripe operations of the redundant levels (RAID-1, RAID-5) and the
 * background sweeps built on them (rebuild, scrub, resync).
 *
 * A stripe op serves one stripe: a user read or write's share of it, or
 * one stripe of a sweep.  Life of an op:
 *
 *   sop_start --stripe busy--> queued behind the holder (FIFO)
 *       \--free--> LOCKED --write--> meta_intent_begin (region bit durable)
 *                    |                         |
 *                    v                         v
 *                  RUN: level's sop_plan (reads, or writes straight away)
 *                    --reads done--> sop_after_read (compute, plan writes)
 *                    --round failed in the read phase, member lost--> RUN again
 *                    --done, stripe degraded--> wait for the superblock
 *                  FINISH: intent end, lock to the next waiter, done callback
 *
 * The lock makes every read-compute-write of one stripe atomic with
 * respect to the others (parity never sees two writers), and makes the
 * rebuild of a stripe atomic with respect to writes to it.  Whether a
 * member holds current data for a stripe is member_ok(), decided at plan
 * time while the lock is held.  In the write phase, parts lost with their
 * member are tolerated: the parity written alongside stays consistent with
 * the data written, so the stripe is degraded, not wrong. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/raid.h>

#include "common/log.h"
#include "iraid/internal.h"

#define SOP_MAX_RETRIES 3

enum raid5_mode { R5_FULL, R5_NOPARITY, R5_RMW, R5_RCW, R5_RECON };

/* ---- geometry ---- */

static uint32_t per_stripe(const struct iraid_volume *vol)
{
    return iraid_layout_data_per_stripe(&vol->layout);
}

static uint64_t member_pos(const struct iraid_volume *vol, uint64_t stripe, uint64_t in_chunk)
{
    return vol->data_off + stripe * vol->layout.chunk + in_chunk;
}

static uint32_t parity_of(const struct iraid_volume *vol, uint64_t stripe)
{
    return iraid_layout_parity_member(&vol->layout, stripe);
}

/* RAID-5: member holding data index k of stripe. */
static uint32_t data_member(const struct iraid_volume *vol, uint64_t stripe, uint32_t k)
{
    return (parity_of(vol, stripe) + 1 + k) % vol->nmembers;
}

uint32_t stripe_missing(const struct iraid_volume *vol, uint64_t stripe)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < vol->nmembers; i++)
        n += !member_ok(&vol->members[i], stripe);
    return n;
}

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

/* member_ok for a READ op: a member whose read failed is read around. */
static int op_member_ok(const struct stripe_op *op, uint32_t m)
{
    return (int)m != op->avoid && member_ok(&op->vol->members[m], op->stripe);
}

/* Members a READ op cannot use: missing ones and the one it avoids. */
static uint32_t op_missing(const struct stripe_op *op)
{
    uint32_t n = stripe_missing(op->vol, op->stripe);

    return n + (op->avoid >= 0 && member_ok(&op->vol->members[op->avoid], op->stripe));
}

static uint8_t *mbuf(const struct stripe_op *op, uint32_t member)
{
    return op->buf + (uint64_t)member * op->vol->layout.chunk;
}

static uint8_t *ndbuf(const struct stripe_op *op, uint32_t k)
{
    return op->nd + (uint64_t)k * op->vol->layout.chunk;
}

/* dst = XOR of nsrc vectors of len bytes (ISA-L; one source is a copy). */
static int xor_rows(uint8_t *dst, uint8_t *const *src, int nsrc, uint64_t len)
{
    void *v[2 * IRAID_MAX_MEMBERS + 2];

    if (nsrc == 1) {
        memcpy(dst, src[0], len);
        return 0;
    }
    for (int i = 0; i < nsrc; i++)
        v[i] = src[i];
    v[nsrc] = dst;
    if (xor_gen(nsrc + 1, (int)len, v) != 0) {
        log_error("iraid: xor_gen refused %d vectors of %" PRIu64 " bytes", nsrc, len);
        return -EINVAL;
    }
    return 0;
}

/* ---- parts of a stripe op ---- */

static int read_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member, uint64_t lo,
                     uint64_t hi)
{
    struct iraid_part *p;

    if (lo >= hi)
        return 0;
    if (!(p = part_new(req, member, PART_READ, member_pos(op->vol, op->stripe, lo))))
        return -ENOMEM;
    p->len = hi - lo;
    return part_add_iov(p, mbuf(op, member) + lo, hi - lo);
}

static int write_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member,
                      uint8_t *rows, uint64_t lo, uint64_t hi)
{
    struct iraid_part *p;

    if (lo >= hi)
        return 0;
    if (!(p = part_new(req, member, PART_WRITE, member_pos(op->vol, op->stripe, lo))))
        return -ENOMEM;
    p->len = hi - lo;
    return part_add_iov(p, rows, hi - lo);
}

/* Part moving the caller's bytes straight to or from member. */
static int direct_rows(struct iraid_req *req, struct stripe_op *op, uint32_t member,
                       enum part_op opc, struct iov_cursor *cur, uint64_t lo, uint64_t hi)
{
    struct iraid_part *p = part_new(req, member, opc, member_pos(op->vol, op->stripe, lo));

    if (!p)
        return -ENOMEM;
    return part_take(p, cur, hi - lo);
}

static int sop_buffers(struct stripe_op *op)
{
    uint64_t chunk = op->vol->layout.chunk, n = op->vol->nmembers;
    void *mem;

    if (op->buf)
        return 0;
    if (posix_memalign(&mem, 64, 2 * n * chunk) != 0)
        return -ENOMEM;
    op->buf = mem;
    op->nd = op->buf + n * chunk;
    op->par = op->nd + (n - 1) * chunk;
    return 0;
}

/* ---- RAID-5 ---- */

static int touched(const struct stripe_op *op, uint32_t k)
{
    return op->lo[k] < op->hi[k];
}

/* Bytes read by read-modify-write (old data and old parity) and by
 * reconstruct-write (the untouched rows of every data chunk); -1 where
 * the missing member x makes the method impossible. */
static int64_t rmw_cost(const struct stripe_op *op, int x)
{
    const struct iraid_volume *vol = op->vol;
    int64_t cost = (int64_t)(op->rhi - op->rlo);

    for (uint32_t k = 0; k < per_stripe(vol); k++) {
        if (!touched(op, k))
            continue;
        if ((int)data_member(vol, op->stripe, k) == x)
            return -1;
        cost += (int64_t)(op->hi[k] - op->lo[k]);
    }
    return cost;
}

static int64_t rcw_cost(const struct stripe_op *op, int x)
{
    const struct iraid_volume *vol = op->vol;
    int64_t cost = 0;

    for (uint32_t k = 0; k < per_stripe(vol); k++) {
        uint64_t mine = touched(op, k) ? op->hi[k] - op->lo[k] : 0;
        uint64_t need = (op->rhi - op->rlo) - mine;
        if (need && (int)data_member(vol, op->stripe, k) == x)
            return -1;
        cost += (int64_t)need;
    }
    return cost;
}

static int full_stripe(const struct stripe_op *op)
{
    for (uint32_t k = 0; k < per_stripe(op->vol); k++)
        if (op->lo[k] != 0 || op->hi[k] != op->vol->layout.chunk)
            return 0;
    return 1;
}

/* Picks how to write: no reads for a full stripe or a missing parity
 * member; else read-modify-write or reconstruct-write, whichever reads
 * less; reconstruct the missing chunk first when neither can do without
 * it. */
static int raid5_write_mode(const struct stripe_op *op, int x)
{
    int64_t rmw, rcw;

    if (full_stripe(op))
        return R5_FULL;
    if (x >= 0 && (uint32_t)x == parity_of(op->vol, op->stripe))
        return R5_NOPARITY;
    rmw = rmw_cost(op, x);
    rcw = rcw_cost(op, x);
    if (rmw < 0 && rcw < 0)
        return R5_RECON;
    if (rmw < 0)
        return R5_RCW;
    if (rcw < 0)
        return R5_RMW;
    return rcw < rmw ? R5_RCW : R5_RMW;
}

/* Only member not current for this stripe, or -1. */
static int missing_member(const struct stripe_op *op)
{
    for (uint32_t m = 0; m < op->vol->nmembers; m++)
        if (!member_ok(&op->vol->members[m], op->stripe))
            return (int)m;
    return -1;
}

static int raid5_plan_reads_for_write(struct stripe_op *op, struct iraid_req *req, int x)
{
    const struct iraid_volume *vol = op->vol;
    uint32_t pm = parity_of(vol, op->stripe);
    int rc = 0;

    for (uint32_t k = 0; k < per_stripe(vol) && rc == 0; k++) {
        uint32_t mk = data_member(vol, op->stripe, k);
        if (op->mode == R5_RMW && touched(op, k))
            rc = read_rows(req, op, mk, op->lo[k], op->hi[k]);
        else if (op->mode == R5_RCW && (int)mk != x && !touched(op, k))
            rc = read_rows(req, op, mk, op->rlo, op->rhi);
        else if (op->mode == R5_RCW && (int)mk != x) {
            if ((rc = read_rows(req, op, mk, op->rlo, op->lo[k])) == 0)
                rc = read_rows(req, op, mk, op->hi[k], op->rhi);
        }
    }
    if (rc == 0 && op->mode == R5_RMW)
        rc = read_rows(req, op, pm, op->rlo, op->rhi);
    for (uint32_t m = 0; m < vol->nmembers && rc == 0 && op->mode == R5_RECON; m++)
        if ((int)m != x)
            rc = read_rows(req, op, m, op->rlo, op->rhi);
    return rc;
}

/* The caller's bytes of this stripe, into the new-data chunks. */
static void raid5_take_new_data(struct stripe_op *op)
{
    struct iov_cursor cur = op->cur;

    for (uint32_t k = 0; k < per_stripe(op->vol); k++)
        if (touched(op, k))
            cursor_copy(&cur, ndbuf(op, k) + op->lo[k], op->hi[k] - op->lo[k], 1);
}

static int raid5_sop_after_read(struct stripe_op *op, struct iraid_req *req);

static int raid5_plan_write(struct stripe_op *op, struct iraid_req *req)
{
    int x = missing_member(op), rc;

    if ((rc = sop_buffers(op)) < 0)
        return rc;
    op->mode = raid5_write_mode(op, x);
    raid5_take_new_data(op);
    if (op->mode == R5_FULL || op->mode == R5_NOPARITY)
        return raid5_sop_after_read(op, req);
    return raid5_plan_reads_for_write(op, req, x);
}

/* A read: chunks on current members straight into the caller's buffers;
 * the chunk of a missing member rebuilt from the same rows of all others. */
static int raid5_plan_read(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    struct iov_cursor cur = op->cur;
    int rc = 0;

    op->xmember = -1;
    for (uint32_t k = 0; k < per_stripe(vol) && rc == 0; k++) {
        uint32_t mk = data_member(vol, op->stripe, k);
        if (!touched(op, k))
            continue;
        if (op_member_ok(op, mk)) {
            rc = direct_rows(req, op, mk, PART_READ, &cur, op->lo[k], op->hi[k]);
            continue;
        }
        op->xmember = (int)mk;
        op->xcur = cur;
        op->rlo = op->lo[k];
        op->rhi = op->hi[k];
        cursor_skip(&cur, op->hi[k] - op->lo[k]);
    }
    if (rc < 0 || op->xmember < 0)
        return rc;
    if ((rc = sop_buffers(op)) < 0)
        return rc;
    for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++)
        if ((int)m != op->xmember)
            rc = read_rows(req, op, m, op->rlo, op->rhi);
    return rc;
}

/* Rows [rlo, rhi) of member x from the same rows of every other member. */
static int raid5_reconstruct(struct stripe_op *op, uint32_t x)
{
    uint8_t *src[IRAID_MAX_MEMBERS];
    int nsrc = 0;

    for (uint32_t m = 0; m < op->vol->nmembers; m++)
        if (m != x)
            src[nsrc++] = mbuf(op, m) + op->rlo;
    return xor_rows(mbuf(op, x) + op->rlo, src, nsrc, op->rhi - op->rlo);
}

/* New parity by read-modify-write, row segment by row segment: the old
 * parity XOR the old and new bytes of every chunk written in that
 * segment. */
static int raid5_parity_rmw(struct stripe_op *op)
{
    const struct iraid_volume *vol = op->vol;
    uint32_t pm = parity_of(vol, op->stripe), D = per_stripe(vol), nb = 0;
    uint64_t cut[2 * IRAID_MAX_MEMBERS + 2];

    cut[nb++] = op->rlo;
    cut[nb++] = op->rhi;
    for (uint32_t k = 0; k < D; k++)
        if (touched(op, k)) {
            cut[nb++] = op->lo[k];
            cut[nb++] = op->hi[k];
        }
    for (uint32_t i = 1; i < nb; i++)
        for (uint32_t j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
            uint64_t t = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = t;
        }
    for (uint32_t i = 0; i + 1 < nb; i++) {
        uint64_t a = cut[i], b = cut[i + 1];
        uint8_t *src[2 * IRAID_MAX_MEMBERS + 1];
        int nsrc = 0, rc;

        if (a == b)
            continue;
        src[nsrc++] = mbuf(op, pm) + a;
        for (uint32_t k = 0; k < D; k++)
            if (op->lo[k] <= a && b <= op->hi[k]) {
                src[nsrc++] = mbuf(op, data_member(vol, op->stripe, k)) + a;
                src[nsrc++] = ndbuf(op, k) + a;
            }
        if ((rc = xor_rows(op->par + a, src, nsrc, b - a)) < 0)
            return rc;
    }
    return 0;
}

/* New parity from whole rows: the untouched rows of each data chunk come
 * from what was read (or reconstructed). */
static int raid5_parity_rows(struct stripe_op *op)
{
    const struct iraid_volume *vol = op->vol;
    uint8_t *src[IRAID_MAX_MEMBERS];
    uint32_t D = per_stripe(vol);

    for (uint32_t k = 0; k < D; k++) {
        uint8_t *old = mbuf(op, data_member(vol, op->stripe, k)), *nd = ndbuf(op, k);
        if (!touched(op, k)) {
            memcpy(nd + op->rlo, old + op->rlo, op->rhi - op->rlo);
        } else {
            memcpy(nd + op->rlo, old + op->rlo, op->lo[k] - op->rlo);
            memcpy(nd + op->hi[k], old + op->hi[k], op->rhi - op->hi[k]);
        }
        src[k] = nd + op->rlo;
    }
    return xor_rows(op->par + op->rlo, src, (int)D, op->rhi - op->rlo);
}

static int raid5_compute_write(struct stripe_op *op)
{
    int x = missing_member(op), rc;
    uint8_t *src[IRAID_MAX_MEMBERS];

    switch (op->mode) {
    case R5_FULL:
        for (uint32_t k = 0; k < per_stripe(op->vol); k++)
            src[k] = ndbuf(op, k);
        return xor_rows(op->par, src, (int)per_stripe(op->vol), op->vol->layout.chunk);
    case R5_NOPARITY:
        return 0;
    case R5_RMW:
        return raid5_parity_rmw(op);
    case R5_RECON:
        if ((rc = raid5_reconstruct(op, (uint32_t)x)) < 0)
            return rc;
        return raid5_parity_rows(op);
    default:
        return raid5_parity_rows(op);
    }
}

static int raid5_plan_writes(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    uint32_t pm = parity_of(vol, op->stripe);
    int rc = 0;

    req->tolerate_down = 1;
    for (uint32_t k = 0; k < per_stripe(vol) && rc == 0; k++) {
        uint32_t mk = data_member(vol, op->stripe, k);
        if (touched(op, k) && member_ok(&vol->members[mk], op->stripe))
            rc = write_rows(req, op, mk, ndbuf(op, k) + op->lo[k], op->lo[k], op->hi[k]);
    }
    if (rc == 0 && op->mode != R5_NOPARITY && member_ok(&vol->members[pm], op->stripe))
        rc = write_rows(req, op, pm, op->par + op->rlo, op->rlo, op->rhi);
    return rc;
}

static int raid5_sop_plan(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    int rc = 0;

    switch (op->kind) {
    case SOP_READ:
        return raid5_plan_read(op, req);
    case SOP_WRITE:
        return raid5_plan_write(op, req);
    default:
        break;
    }
    if (op->kind != SOP_REBUILD && stripe_missing(vol, op->stripe) > 0) {
        /* Parity cannot be checked or recomputed without all the data. */
        op->skipped = 1;
        op->phase = 1;
        return 0;
    }
    if ((rc = sop_buffers(op)) < 0)
        return rc;
    op->rlo = 0;
    op->rhi = vol->layout.chunk;
    for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++) {
        /* Resync needs the data only; scrub everything; rebuild all but
         * the target. */
        if (op->kind == SOP_RESYNC && m == parity_of(vol, op->stripe))
            continue;
        if (op->kind == SOP_REBUILD && m == op->target)
            continue;
        rc = read_rows(req, op, m, 0, vol->layout.chunk);
    }
    return rc;
}

static int raid5_sop_after_read(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    uint32_t pm = parity_of(vol, op->stripe);
    uint64_t chunk = vol->layout.chunk;
    uint8_t *src[IRAID_MAX_MEMBERS];
    int rc;

    op->phase = 1;
    switch (op->kind) {
    case SOP_READ:
        if (op->xmember < 0)
            return 0;
        if ((rc = raid5_reconstruct(op, (uint32_t)op->xmember)) == 0)
            cursor_copy(&op->xcur, mbuf(op, (uint32_t)op->xmember) + op->rlo,
                        op->rhi - op->rlo, 0);
        return rc;
    case SOP_WRITE:
        if ((rc = raid5_compute_write(op)) < 0)
            return rc;
        return raid5_plan_writes(op, req);
    case SOP_RESYNC:
        for (uint32_t k = 0; k < per_stripe(vol); k++)
            src[k] = mbuf(op, data_member(vol, op->stripe, k));
        if ((rc = xor_rows(mbuf(op, pm), src, (int)per_stripe(vol), chunk)) < 0)
            return rc;
        req->tolerate_down = 1;
        return write_rows(req, op, pm, mbuf(op, pm), 0, chunk);
    case SOP_SCRUB:
        for (uint32_t m = 0; m < vol->nmembers; m++)
            src[m] = mbuf(op, m);
        op->mismatches += xor_check((int)vol->nmembers, (int)chunk, (void **)src) != 0;
        return 0;
    case SOP_REBUILD:
        if ((rc = raid5_reconstruct(op, op->target)) < 0)
            return rc;
        return write_rows(req, op, op->target, mbuf(op, op->target), 0, chunk);
    }
    return -EINVAL;
}

/* ---- RAID-1 ---- */

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
        return direct_rows(req, op, (uint32_t)src, PART_READ, &cur, op->lo[0], op->hi[0]);
    case SOP_WRITE:
        op->phase = 1;
        req->tolerate_down = 1;
        for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++) {
            cur = op->cur;
            if (member_ok(&vol->members[m], op->stripe))
                rc = direct_rows(req, op, m, PART_WRITE, &cur, op->lo[0], op->hi[0]);
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
        return read_rows(req, op, (uint32_t)src, 0, vol->layout.chunk);
    for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++)
        rc = read_rows(req, op, m, 0, vol->layout.chunk);
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
            if (memcmp(mbuf(op, 0), mbuf(op, m), chunk) != 0) {
                op->mismatches++;
                break;
            }
        return 0;
    case SOP_REBUILD:
        return write_rows(req, op, op->target, mbuf(op, (uint32_t)src), 0, chunk);
    case SOP_RESYNC:
        req->tolerate_down = 1;
        for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++)
            if ((int)m != src && member_ok(&vol->members[m], op->stripe))
                rc = write_rows(req, op, m, mbuf(op, (uint32_t)src), 0, chunk);
        return rc;
    default:
        return 0;
    }
}

const struct iraid_level_ops iraid_raid1_ops = { "raid1", iraid_striped_read, NULL,
                                                 raid1_sop_plan, raid1_sop_after_read };
const struct iraid_level_ops iraid_raid5_ops = { "raid5", iraid_striped_read, NULL,
                                                 raid5_sop_plan, raid5_sop_after_read };

/* ---- stripe op machinery ---- */

static struct stripe_op *sop_new(struct iraid_volume *vol, enum sop_kind kind, uint64_t stripe,
                                 sop_done_fn done, void *user)
{
    struct stripe_op *op = calloc(1, sizeof(*op));

    if (!op)
        return NULL;
    op->vol = vol;
    op->kind = kind;
    op->stripe = stripe;
    op->done = done;
    op->user = user;
    op->xmember = -1;
    op->read_err = -1;
    op->avoid = -1;
    return op;
}

static void sop_free(struct stripe_op *op)
{
    free(op->buf);
    free(op);
}

static void sop_locked(struct stripe_op *op);

/* Releases the stripe lock to the next waiter, reports, frees. */
static void sop_finish(struct stripe_op *op, int status)
{
    struct iraid_volume *vol = op->vol;
    struct stripe_op *next = op->wait_next;

    if (op->in_region)
        meta_intent_end(op);
    if (op->prev)
        op->prev->next = op->next;
    else
        vol->active = op->next;
    if (op->next)
        op->next->prev = op->prev;
    if (next) {
        next->prev = NULL;
        next->next = vol->active;
        if (vol->active)
            vol->active->prev = next;
        vol->active = next;
    }
    op->done(op, status);
    sop_free(op);
    if (next)
        sop_locked(next);
}

static void sop_complete(struct stripe_op *op)
{
    sop_finish(op, 0);
}

static void sop_run(struct stripe_op *op);

static void sop_retry_timer(struct evloop *loop, uint64_t id, void *user)
{
    struct stripe_op *op = user;

    op->retry_timer = 0;
    sop_run(op);
}

/* Runs op again after a tick, holding its stripe lock meanwhile: a read
 * that failed on a member whose session is breaking reaches us before
 * that member is marked down (member_service does so once libiscsi
 * returns), so an immediate retry would plan the same reads again. */
static int sop_retry_later(struct stripe_op *op)
{
    op->retry_timer = evloop_add_timer(op->vol->loop, IRAID_TICK_MS, sop_retry_timer, op);
    return op->retry_timer ? 0 : -ENOMEM;
}

static void sop_next_phase(struct iraid_req *req)
{
    struct stripe_op *op = req->owner;
    int rc = op->vol->ops->sop_after_read(op, req);

    if (rc < 0)
        req->status = rc;
}

/* A round ended.  A read-phase failure caused by a member going down is
 * retried with the new set of members (nothing was written yet); a write
 * that left the stripe degraded completes only once the superblock saying
 * so is durable. */
static void sop_io_done(struct iraid_volume *vol, int status, void *user)
{
    struct stripe_op *op = user;
    uint32_t missing = stripe_missing(vol, op->stripe);

    /* A live member failed a read of this stripe (medium error): read
     * around it once, from the mirror or by reconstruction. */
    if (status < 0 && !vol->closing && op->kind == SOP_READ && op->read_err >= 0 &&
        op->avoid < 0 && member_ok(&vol->members[op->read_err], op->stripe) &&
        missing + 1 <= vol_redundancy(vol)) {
        op->avoid = op->read_err;
        vol->read_repairs++;
        log_warn("iraid: stripe %" PRIu64 ": member %d (%s) failed a read (%s); serving it "
                 "from the other members", op->stripe, op->avoid, vol->members[op->avoid].url,
                 strerror(-status));
        sop_run(op);
        return;
    }
    if (status < 0 && !vol->closing && op->phase == 0 && missing > 0 &&
        missing <= vol_redundancy(vol) && op->retries++ < SOP_MAX_RETRIES) {
        log_warn("iraid: stripe %" PRIu64 ": %s; retrying without the missing member",
                 op->stripe, strerror(-status));
        sop_run(op);
        return;
    }
    /* A write's reads failed on a member still up: it is most likely
     * failing (see sop_retry_later); a read error of its own persists and
     * fails the write after the retries.  Nothing was written yet. */
    if (status < 0 && !vol->closing && op->kind == SOP_WRITE && op->phase == 0 &&
        op->read_err >= 0 && op->retries++ < SOP_MAX_RETRIES) {
        log_warn("iraid: stripe %" PRIu64 ": reading member %d before writing failed (%s); "
                 "retrying", op->stripe, op->read_err, strerror(-status));
        if (sop_retry_later(op) == 0)
            return;
    }
    if (status == 0 && missing > vol_redundancy(vol) && op->kind == SOP_WRITE)
        status = -EIO;
    if (status == 0 && missing > 0 && op->kind == SOP_WRITE) {
        op->resume = sop_complete;
        if (meta_wait_sb(op))
            return;
    }
    sop_finish(op, status);
}

static void sop_run(struct stripe_op *op)
{
    struct iraid_volume *vol = op->vol;
    struct iraid_req *req;
    int rc;

    op->phase = 0;
    if (vol->closing) {
        sop_finish(op, -ECANCELED);
        return;
    }
    if (op_missing(op) > vol_redundancy(vol) ||
        (op->kind == SOP_REBUILD && !member_live(&vol->members[op->target]))) {
        log_error("iraid: stripe %" PRIu64 ": too many members missing", op->stripe);
        sop_finish(op, -EIO);
        return;
    }
    if (!(req = req_new(vol, sop_io_done, op))) {
        sop_finish(op, -ENOMEM);
        return;
    }
    req->owner = op;
    op->read_err = -1;
    req->read_err_member = &op->read_err;
    if ((rc = vol->ops->sop_plan(op, req)) < 0) {
        req_free(req);
        sop_finish(op, rc);
        return;
    }
    if (op->phase == 0)
        req->next_phase = sop_next_phase;
    req_launch(req);
}

void sop_resume(struct stripe_op *op, int status)
{
    if (status < 0)
        sop_finish(op, status);
    else
        op->resume(op);
}

static void sop_locked(struct stripe_op *op)
{
    if (op->vol->closing) {
        sop_finish(op, -ECANCELED);
        return;
    }
    op->resume = sop_run;
    if (op->kind == SOP_WRITE && meta_intent_begin(op))
        return;
    sop_run(op);
}

/* Takes the stripe's lock (or queues behind its holder) and runs op. */
void sop_start(struct stripe_op *op)
{
    struct iraid_volume *vol = op->vol;

    for (struct stripe_op *h = vol->active; h; h = h->next)
        if (h->stripe == op->stripe) {
            while (h->wait_next)
                h = h->wait_next;
            h->wait_next = op;
            return;
        }
    op->next = vol->active;
    if (vol->active)
        vol->active->prev = op;
    vol->active = op;
    sop_locked(op);
}

/* iraid_close: every libiscsi command is cancelled already; what is left
 * are ops waiting for metadata.  Finishing a holder hands the lock to its
 * waiters, which end at once because the volume is closing. */
void sop_cancel_waiting(struct iraid_volume *vol)
{
    while (vol->active) {
        struct stripe_op *op = vol->active;
        meta_cancel_waiter(vol, op);
        if (op->retry_timer)
            evloop_del_timer(vol->loop, op->retry_timer);
        sop_finish(op, -ECANCELED);
    }
    for (struct iraid_sweep *sw = &vol->rebuild; sw <= &vol->resync; sw++)
        if (sw->timer) {
            evloop_del_timer(vol->loop, sw->timer);
            sw->timer = 0;
        }
}

/* ---- user requests ---- */

static void sop_io_piece(struct stripe_op *op, int status)
{
    io_piece_done(op->user, status);
}

/* Cuts io into stripe ops, each with its share of the caller's buffers. */
int io_submit_stripes(struct iraid_io *io)
{
    struct iraid_volume *vol = io->vol;
    uint64_t chunk = vol->layout.chunk, sbytes = per_stripe(vol) * chunk;
    uint64_t off = io->off, end = io->off + io->len;
    struct iov_cursor cur = { .iov = io->iov, .iovcnt = io->iovcnt };

    while (off < end) {
        uint64_t s = off / sbytes, base = s * sbytes;
        uint64_t stop = end < base + sbytes ? end : base + sbytes;
        struct stripe_op *op = sop_new(vol, io->write ? SOP_WRITE : SOP_READ, s, sop_io_piece, io);

        if (!op)
            return -ENOMEM;
        op->cur = cur;
        op->rlo = chunk;
        for (uint32_t k = 0; k < per_stripe(vol); k++) {
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

/* ---- sweeps: rebuild, scrub, resync ---- */

static void sweep_step(struct iraid_volume *vol, struct iraid_sweep *sw);

static void sweep_timer(struct evloop *loop, uint64_t id, void *user)
{
    struct iraid_sweep *sw = user;

    sw->timer = 0;
    sweep_step(sw->vol, sw);
}

/* One stripe done.  The next one starts from a timer, never from here:
 * stripes that finish without I/O would otherwise recurse. */
static void sweep_op_done(struct stripe_op *op, int status)
{
    struct iraid_sweep *sw = op->user;
    struct iraid_volume *vol = op->vol;
    struct iraid_member *t = &vol->members[sw->target];

    if (status < 0) {
        sw->status = status;
    } else {
        sw->mismatches += op->mismatches;
        sw->skipped += op->skipped;
        sw->next++;
        /* Still holding the stripe lock: writers planning after this see
         * the stripe as current on the target. */
        if (sw->kind == SOP_REBUILD) {
            if (t->epoch == sw->epoch && t->state == IRAID_MEMBER_REBUILDING)
                t->rebuild_next = sw->next;
            else
                sw->status = -ESTALE;
        }
    }
    if (vol->closing || !(sw->timer = evloop_add_timer(vol->loop, 0, sweep_timer, sw))) {
        if (sw->status == 0)
            sw->status = vol->closing ? -ECANCELED : -ENOMEM;
        sw->running = 0;
        sw->finished(vol, sw);
    }
}

static int sweep_can_scrub(const struct iraid_volume *vol, uint64_t stripe)
{
    return stripe_missing(vol, stripe) == 0;
}

static void sweep_step(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    struct stripe_op *op;

    while (sw->status == 0 && sw->next < sw->end &&
           ((sw->want && !sw->want(vol, sw->next)) ||
            (sw->kind == SOP_SCRUB && !sweep_can_scrub(vol, sw->next)))) {
        sw->skipped += sw->kind == SOP_SCRUB;
        sw->next++;
    }
    if (sw->status < 0 || sw->next >= sw->end || vol->closing) {
        if (sw->status == 0 && vol->closing)
            sw->status = -ECANCELED;
        sw->running = 0;
        sw->finished(vol, sw);
        return;
    }
    if (!(op = sop_new(vol, sw->kind, sw->next, sweep_op_done, sw))) {
        sw->status = -ENOMEM;
        sw->running = 0;
        sw->finished(vol, sw);
        return;
    }
    op->target = sw->target;
    sop_start(op);
}

static void sweep_report(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    log_info("iraid: scrub done: %" PRIu64 " stripes disagree, %" PRIu64 " skipped%s%s",
             sw->mismatches, sw->skipped, sw->status < 0 ? ": " : "",
             sw->status < 0 ? strerror(-sw->status) : "");
    sw->cb(vol, sw->status, sw->mismatches, sw->skipped, sw->user);
}

static void rebuild_flushed(struct iraid_volume *vol, int status, void *user)
{
    struct iraid_member *t = user;

    if (status == 0 && t->state == IRAID_MEMBER_REBUILDING && t->epoch == vol->rebuild.epoch) {
        member_rebuilt(t);
        return;
    }
    if (!vol->closing)
        vol->rebuild_retry_at = evloop_now_ms() + 1000;
}

static void rebuild_finished(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    struct iraid_member *t = &vol->members[sw->target];
    struct iraid_req *req;

    if (sw->status < 0) {
        if (!vol->closing) {
            log_warn("iraid: rebuild of member %u stopped at stripe %" PRIu64 ": %s",
                     t->idx, sw->next, strerror(-sw->status));
            vol->rebuild_retry_at = evloop_now_ms() + 1000;
        }
        return;
    }
    /* Current on the target only once its cache is on its medium. */
    if (!(req = req_new(vol, rebuild_flushed, t)) || !part_new(req, t->idx, PART_FLUSH, 0)) {
        if (req)
            req_free(req);
        vol->rebuild_retry_at = evloop_now_ms() + 1000;
        return;
    }
    req_launch(req);
}

/* From the tick: start (or restart) the rebuild of a REBUILDING member. */
void rebuild_kick(struct iraid_volume *vol)
{
    struct iraid_member *t = NULL;

    if (vol->rebuild.running || !vol->rebuild_retry_at || evloop_now_ms() < vol->rebuild_retry_at)
        return;
    vol->rebuild_retry_at = 0;
    for (uint32_t i = 0; i < vol->nmembers && !t; i++)
        if (vol->members[i].state == IRAID_MEMBER_REBUILDING)
            t = &vol->members[i];
    if (!t)
        return;
    log_info("iraid: rebuilding member %u (%s) from stripe %" PRIu64 " of %" PRIu64, t->idx,
             t->url, t->rebuild_next, vol->layout.stripes);
    vol->rebuild = (struct iraid_sweep){ .kind = SOP_REBUILD, .next = t->rebuild_next,
                                         .end = vol->layout.stripes, .target = t->idx,
                                         .epoch = t->epoch, .finished = rebuild_finished };
    sweep_start(vol, &vol->rebuild);
}

void sweep_start(struct iraid_volume *vol, struct iraid_sweep *sw)
{
    sw->vol = vol;
    sw->running = 1;
    sw->status = 0;
    if (!sw->finished)
        sw->finished = sweep_report;
    sweep_step(vol, sw);
}
