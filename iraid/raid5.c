/* RAID-5 (left-symmetric rotated parity, layout.h) as stripe-op plans:
 * what a stripe op of each kind reads, computes and writes.  Called by
 * stripe.c through iraid_raid5_ops, one round at a time, with the stripe's
 * lock held; it keeps no state but the op's own (mode, rows, buffers).
 *
 * A write picks its mode (enum raid5_mode) once per round from which
 * member is missing: FULL (whole stripe: no reads), NOPARITY (the parity
 * member is missing: write the data only), RMW (read old data and parity),
 * RCW (read the untouched rows), RECON (reconstruct the missing member's
 * rows first).  Parity is XOR through ISA-L.  A multi-stripe WRITE
 * (op->nstripes > 1, whole stripes only: io.c) is FULL for every stripe
 * and goes out as one WRITE per member (raid5_plan_multi). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/raid.h>

#include "common/log.h"
#include "iraid/internal.h"

enum raid5_mode { R5_FULL, R5_NOPARITY, R5_RMW, R5_RCW, R5_RECON };

/* ---- geometry ---- */

static uint32_t per_stripe(const struct iraid_volume *vol)
{
    return iraid_layout_data_per_stripe(&vol->layout);
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

/* member_ok for a READ op: a member whose read failed is read around. */
static int op_member_ok(const struct stripe_op *op, uint32_t m)
{
    return (int)m != op->avoid && member_ok(&op->vol->members[m], op->stripe);
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

/* ---- plans ---- */

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
            rc = sop_read_rows(req, op, mk, op->lo[k], op->hi[k]);
        else if (op->mode == R5_RCW && (int)mk != x && !touched(op, k))
            rc = sop_read_rows(req, op, mk, op->rlo, op->rhi);
        else if (op->mode == R5_RCW && (int)mk != x) {
            if ((rc = sop_read_rows(req, op, mk, op->rlo, op->lo[k])) == 0)
                rc = sop_read_rows(req, op, mk, op->hi[k], op->rhi);
        }
    }
    if (rc == 0 && op->mode == R5_RMW)
        rc = sop_read_rows(req, op, pm, op->rlo, op->rhi);
    for (uint32_t m = 0; m < vol->nmembers && rc == 0 && op->mode == R5_RECON; m++)
        if ((int)m != x)
            rc = sop_read_rows(req, op, m, op->rlo, op->rhi);
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

/* ---- multi-stripe writes of whole stripes ---- */

/* Start of data chunk `chunk` bytes long at cur, contiguous and aligned
 * as xor_gen needs it: in place in the caller's buffer, else copied into
 * scratch.  Advances cur past it. */
static uint8_t *chunk_src(struct iov_cursor *cur, uint8_t *scratch, uint64_t chunk)
{
    uint8_t *p = (uint8_t *)cur->iov[cur->i].iov_base + cur->off;

    if (cur->iov[cur->i].iov_len - cur->off >= chunk && ((uintptr_t)p & 31) == 0) {
        cursor_skip(cur, chunk);
        return p;
    }
    cursor_copy(cur, scratch, chunk, 1);
    return scratch;
}

/* One stripe of a multi-stripe op: its parity into par, then its chunks
 * appended to each current member's single part (part_for joins the rows
 * of consecutive stripes: one WRITE per member for the whole op). */
static int raid5_multi_stripe(struct stripe_op *op, struct iraid_req *req, uint64_t s,
                              struct iov_cursor *cur, uint8_t *par, uint8_t *scratch)
{
    const struct iraid_volume *vol = op->vol;
    uint64_t chunk = vol->layout.chunk, moff = vol->data_off + s * chunk;
    uint32_t pm = parity_of(vol, s), D = per_stripe(vol);
    struct iov_cursor c = *cur;
    uint8_t *src[IRAID_MAX_MEMBERS];
    struct iraid_part *p;
    int rc;

    for (uint32_t k = 0; k < D; k++)
        src[k] = chunk_src(&c, scratch + (uint64_t)k * chunk, chunk);
    if ((rc = xor_rows(par, src, (int)D, chunk)) < 0)
        return rc;
    for (uint32_t k = 0; k < D; k++) {
        uint32_t mk = data_member(vol, s, k);
        if (!member_ok(&vol->members[mk], s)) {
            cursor_skip(cur, chunk);
            continue;
        }
        if (!(p = part_for(req, mk, PART_WRITE, moff, chunk)))
            return -ENOMEM;
        if ((rc = part_take(p, cur, chunk)) < 0)
            return rc;
    }
    if (!member_ok(&vol->members[pm], s))
        return 0;
    if (!(p = part_for(req, pm, PART_WRITE, moff, chunk)))
        return -ENOMEM;
    p->len += chunk;
    return part_add_iov(p, par, chunk);
}

/* A WRITE of op->nstripes whole stripes: no reads; parity of each stripe
 * computed once into the op's parity buffer (nstripes chunks, plus one
 * stripe of scratch for caller bytes xor_gen cannot use in place), the
 * caller's bytes sent from where they are.  A member not current for a
 * stripe gets none of its rows (the stripe is degraded, as with FULL). */
static int raid5_plan_multi(struct stripe_op *op, struct iraid_req *req)
{
    const struct iraid_volume *vol = op->vol;
    uint64_t chunk = vol->layout.chunk;
    struct iov_cursor cur = op->cur;
    void *mem;
    int rc = 0;

    if (!op->buf) {
        if (posix_memalign(&mem, 64, (op->nstripes + per_stripe(vol)) * chunk) != 0)
            return -ENOMEM;
        op->buf = mem;
        op->par = op->buf;
        op->nd = op->buf + op->nstripes * chunk;
    }
    op->mode = R5_FULL;
    op->phase = 1;
    req->tolerate_down = 1;
    for (uint64_t i = 0; i < op->nstripes && rc == 0; i++)
        rc = raid5_multi_stripe(op, req, op->stripe + i, &cur, op->par + i * chunk, op->nd);
    return rc;
}

static int raid5_sop_after_read(struct stripe_op *op, struct iraid_req *req);

/* The volume's write counters (iraid_status.writes), per stripe. */
static void count_write(struct iraid_volume *vol, int mode, uint64_t nstripes)
{
    struct iraid_write_counts *w = &vol->writes;

    switch (mode) {
    case R5_FULL: w->full_stripe += nstripes; break;
    case R5_RMW: w->rmw += nstripes; break;
    case R5_RCW: w->rcw += nstripes; break;
    default: w->degraded += nstripes; break;
    }
}

static int raid5_plan_write(struct stripe_op *op, struct iraid_req *req)
{
    int x = missing_member(op), rc;

    if (op->nstripes > 1) {
        count_write(op->vol, R5_FULL, op->nstripes);
        return raid5_plan_multi(op, req);
    }
    if ((rc = sop_buffers(op)) < 0)
        return rc;
    op->mode = raid5_write_mode(op, x);
    count_write(op->vol, op->mode, 1);
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
            rc = sop_direct_rows(req, op, mk, PART_READ, &cur, op->lo[k], op->hi[k]);
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
            rc = sop_read_rows(req, op, m, op->rlo, op->rhi);
    return rc;
}

/* Rows [rlo, rhi) of member x from the same rows of every other member. */
static int raid5_reconstruct(struct stripe_op *op, uint32_t x)
{
    uint8_t *src[IRAID_MAX_MEMBERS];
    int nsrc = 0;

    for (uint32_t m = 0; m < op->vol->nmembers; m++)
        if (m != x)
            src[nsrc++] = sop_mbuf(op, m) + op->rlo;
    return xor_rows(sop_mbuf(op, x) + op->rlo, src, nsrc, op->rhi - op->rlo);
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
        src[nsrc++] = sop_mbuf(op, pm) + a;
        for (uint32_t k = 0; k < D; k++)
            if (op->lo[k] <= a && b <= op->hi[k]) {
                src[nsrc++] = sop_mbuf(op, data_member(vol, op->stripe, k)) + a;
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
        uint8_t *old = sop_mbuf(op, data_member(vol, op->stripe, k)), *nd = ndbuf(op, k);
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
            rc = sop_write_rows(req, op, mk, ndbuf(op, k) + op->lo[k], op->lo[k], op->hi[k]);
    }
    if (rc == 0 && op->mode != R5_NOPARITY && member_ok(&vol->members[pm], op->stripe))
        rc = sop_write_rows(req, op, pm, op->par + op->rlo, op->rlo, op->rhi);
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
    if (op->kind != SOP_REBUILD && stripe_missing(vol, sop_last(op)) > 0) {
        /* Parity cannot be checked or recomputed without all the data. */
        op->skipped = 1;
        op->phase = 1;
        return 0;
    }
    if ((rc = sop_buffers(op)) < 0)
        return rc;
    /* A rebuild or scrub of several stripes (sweep.c) reads each member's
     * chunks of them as one run: what it computes does not depend on
     * which member holds parity.  A resync's does: one stripe each. */
    op->rlo = 0;
    op->rhi = vol->layout.chunk * op->nstripes;
    for (uint32_t m = 0; m < vol->nmembers && rc == 0; m++) {
        /* Resync needs the data only; scrub everything; rebuild all but
         * the target. */
        if (op->kind == SOP_RESYNC && m == parity_of(vol, op->stripe))
            continue;
        if (op->kind == SOP_REBUILD && m == op->target)
            continue;
        rc = sop_read_rows(req, op, m, 0, op->rhi);
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
            cursor_copy(&op->xcur, sop_mbuf(op, (uint32_t)op->xmember) + op->rlo,
                        op->rhi - op->rlo, 0);
        return rc;
    case SOP_WRITE:
        if ((rc = raid5_compute_write(op)) < 0)
            return rc;
        return raid5_plan_writes(op, req);
    case SOP_RESYNC:
        for (uint32_t k = 0; k < per_stripe(vol); k++)
            src[k] = sop_mbuf(op, data_member(vol, op->stripe, k));
        if ((rc = xor_rows(sop_mbuf(op, pm), src, (int)per_stripe(vol), chunk)) < 0)
            return rc;
        req->tolerate_down = 1;
        return sop_write_rows(req, op, pm, sop_mbuf(op, pm), 0, chunk);
    case SOP_SCRUB:
        /* every stripe's chunks XOR to zero, whichever holds parity */
        for (uint64_t i = 0; i < op->nstripes; i++) {
            for (uint32_t m = 0; m < vol->nmembers; m++)
                src[m] = sop_mbuf(op, m) + i * chunk;
            op->mismatches += xor_check((int)vol->nmembers, (int)chunk, (void **)src) != 0;
        }
        return 0;
    case SOP_REBUILD:
        /* the missing chunk of every stripe: the XOR of the others' */
        if ((rc = raid5_reconstruct(op, op->target)) < 0)
            return rc;
        return sop_write_rows(req, op, op->target, sop_mbuf(op, op->target), 0, op->rhi);
    case SOP_UNMAP:            /* planned by unmap.c (op->plan), never here */
        break;
    }
    return -EINVAL;
}

/* The rows of the avoided member were reconstructed into its row buffer
 * (raid5_plan_read made it the op's xmember). */
static int raid5_sop_repair(struct stripe_op *op, struct iraid_req *req)
{
    if (op->xmember < 0 || op->xmember != op->avoid)
        return -EINVAL;
    return sop_write_rows(req, op, (uint32_t)op->avoid,
                          sop_mbuf(op, (uint32_t)op->avoid) + op->rlo, op->rlo, op->rhi);
}

const struct iraid_level_ops iraid_raid5_ops = { "raid5", iraid_striped_read, NULL,
                                                 raid5_sop_plan, raid5_sop_after_read,
                                                 raid5_sop_repair };
