/* Volume I/O of one datafile store operation, issued in rounds: a read's
 * block reads, a write's reads of the old sectors a read-modify-write
 * keeps (RMW_READ), and its block writes (WRITE).  A round sends all its
 * requests at once; when the last one completed, it calls the done
 * function it was given, with op->status holding the first error.
 *
 * Who owns what: the operation is the store's, with its pieces and
 * blk_ios (planned by plan.c); a round hangs bounce buffers and write
 * vectors on it, which the store frees with the operation, and counts
 * the requests in flight in op->pending.  Which rounds an operation runs,
 * and what happens after, is the store's decision (dfstore.c). */
#include "backend/dfstore/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/internal.h"
#include "backend/dfstore/plan.h"

/* ---- requests ---- */

static void blk_cb(struct iraid_volume *vol, int status, void *user)
{
    struct df_op *op = user;

    if (status < 0 && op->status == 0)
        op->status = status;
    if (--op->pending == 0)
        op->round_done(op);
}

/* Whether the L1 may hold back first writes into new blocks: every
 * member's target vouches for room for them (asked at each member's
 * login, so a member replaced or down at start counts once it answers). */
static int l1_keeps_new(const struct dfstore *ds)
{
    return iraid_room_for_new_blocks(ds->vol);
}

/* Nonzero when op writes a block it allocated and the volume does not
 * vouch for the room (dfstore_set_l1): its writes go through the L1 to
 * the volume, so a full backing store fails the write itself (l1cache.h). */
static int op_allocates(const struct df_op *op)
{
    if (l1_keeps_new(op->ds))
        return 0;
    for (uint32_t i = 0; i < op->nios; i++)
        if (op->ios[i].is_new)
            return 1;
    return 0;
}

static void op_io(struct df_op *op, int write, uint64_t off, struct iovec *iov, int niov)
{
    int rc = write ? df_l1_writev(&op->ds->l1, off, iov, niov, op_allocates(op), op->stream,
                                  blk_cb, op)
                   : df_l1_readv(&op->ds->l1, off, iov, niov,
                                 (op->stream ? DF_L1_STREAM : 0) |
                                     (op->kind == OP_WRITE ? DF_L1_OLD : 0),
                                 op->kind == OP_READ ? op->loans : NULL, blk_cb, op);

    if (rc < 0) {
        if (op->status == 0)
            op->status = rc;
        return;
    }
    op->pending++;
}

/* ---- read ---- */

static void read_issue(struct df_op *op)
{
    struct dfstore *ds = op->ds;
    struct datafile *df = op->df;
    uint8_t *out = op->rdata;

    for (uint32_t p = 0; p < op->npairs; p++) {
        uint64_t off = op->pairs[p].offset, len = op->pairs[p].len;
        while (len > 0) {
            uint64_t fb = off / DFSTORE_BLOCK, in = off % DFSTORE_BLOCK;
            uint64_t n = DFSTORE_BLOCK - in < len ? DFSTORE_BLOCK - in : len;
            uint64_t vb = u64map_get(&df->blocks, fb);
            uint64_t valid = off >= df->size ? 0 : df->size - off < n ? df->size - off : n;

            memset(out + valid, 0, n - valid);
            if (valid > 0 && vb == DF_NO_BLOCK)
                memset(out, 0, valid);
            else if (valid > 0) {
                /* Sector-aligned read; the unwanted edges go to discard. */
                uint64_t head = in % ds->vbs, end = in + valid;
                uint64_t tail = (ds->vbs - end % ds->vbs) % ds->vbs;
                struct iovec iov[3];
                int niov = 0;
                if (head)
                    iov[niov++] = (struct iovec){ ds->discard, head };
                iov[niov++] = (struct iovec){ out, valid };
                if (tail)
                    iov[niov++] = (struct iovec){ ds->discard, tail };
                op_io(op, 0, vb * DFSTORE_BLOCK + in - head, iov, niov);
            }
            out += n;
            off += n;
            len -= n;
        }
    }
}

/* ---- write ---- */

static uint32_t align_down(uint32_t v, uint32_t a) { return v / a * a; }
static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* Round one of a write: read the sectors a read-modify-write keeps. */
static void rmw_read_issue(struct df_op *op)
{
    struct dfstore *ds = op->ds;

    for (uint32_t i = 0; i < op->nios && op->status == 0; i++) {
        struct blk_io *io = &op->ios[i];
        uint32_t lo = align_down(io->lo, ds->vbs), hi = align_up(io->hi, ds->vbs);
        struct iovec iov;
        if (!df_plan_needs_rmw(ds, io))
            continue;
        if (io->npieces > 1) {
            if (!(io->buf = malloc(hi - lo))) {
                op->status = -ENOMEM;
                return;
            }
            iov = (struct iovec){ io->buf, hi - lo };
            op_io(op, 0, io->vblock * DFSTORE_BLOCK + lo, &iov, 1);
            continue;
        }
        /* One piece: only the first and last sector are needed. */
        if (!(io->edge = malloc(2 * (size_t)ds->vbs))) {
            op->status = -ENOMEM;
            return;
        }
        if (io->lo % ds->vbs) {
            iov = (struct iovec){ io->edge, ds->vbs };
            op_io(op, 0, io->vblock * DFSTORE_BLOCK + lo, &iov, 1);
        }
        if (io->hi % ds->vbs) {
            /* The last sector goes to edge[1], or to edge[0] when it is
             * also the first (then read here only if not read above). */
            int same = align_down(io->hi, ds->vbs) == lo;
            if (same && io->lo % ds->vbs)
                continue;
            iov = (struct iovec){ io->edge + (same ? 0 : ds->vbs), ds->vbs };
            op_io(op, 0, io->vblock * DFSTORE_BLOCK + hi - ds->vbs, &iov, 1);
        }
    }
}

/* Counts the zeros a write takes from the store's zero buffer (stats). */
static void count_zeros(struct dfstore *ds, const struct iovec *iov, int n)
{
    for (int i = 0; i < n; i++)
        if (iov[i].iov_base == ds->zeros)
            ds->zero_fill_bytes += iov[i].iov_len;
}

/* Whether a new block that still holds the volume's first zeros gets only
 * the sectors written: always (issue 27).  The L1 keeps part of a block
 * as well as all of it (its sectors, l1cache.h), so writing the zeros too
 * only cost a copy of them and, below, half again the bytes of a tile
 * row's first write (a 32 KiB row into a new 64 KiB block went out as the
 * whole block, then its neighbour's row again).  On RAID-5 the rows
 * written back together still make whole stripes. */
static int zeroed_part(const struct dfstore *ds, const struct blk_io *io)
{
    (void)ds;
    return io->zeroed;
}

/* Builds the iovecs of one block write.  New blocks are written whole with
 * zeros around the data (zero-fill), unless they still hold the volume's
 * first zeros (zeroed_part); those and existing ones over [lo, hi) rounded to
 * sectors, existing ones with the old bytes read in round one. */
static int io_build(struct dfstore *ds, struct blk_io *io, uint64_t *out_off)
{
    const struct piece *pcs = &io->op->pieces[io->first];
    uint32_t lo = align_down(io->lo, ds->vbs), hi = align_up(io->hi, ds->vbs);

    if (io->is_new && !zeroed_part(ds, io)) {
        lo = 0;
        hi = DFSTORE_BLOCK;
    }
    *out_off = io->vblock * DFSTORE_BLOCK + lo;
    io->niov = 0;
    if (io->npieces > 1) {
        /* merged: later pieces win */
        if (!io->buf) {
            if (!(io->buf = calloc(1, DFSTORE_BLOCK)))
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < io->npieces; i++)
            memcpy(io->buf + pcs[i].in_off - lo, pcs[i].data, pcs[i].len);
        io->iov[io->niov++] = (struct iovec){ io->buf, hi - lo };
        return 0;
    }
    if (io->npieces == 0) {             /* prealloc: a zeroed block */
        io->iov[io->niov++] = (struct iovec){ ds->zeros, DFSTORE_BLOCK };
        count_zeros(ds, io->iov, io->niov);
        return 0;
    }
    if (io->lo > lo)
        io->iov[io->niov++] = (struct iovec){ io->is_new ? ds->zeros : io->edge, io->lo - lo };
    io->iov[io->niov++] = (struct iovec){ (void *)pcs[0].data, pcs[0].len };
    if (hi > io->hi) {
        uint8_t *tail_sector = align_down(io->hi, ds->vbs) == align_down(io->lo, ds->vbs)
                                   ? io->edge : io->edge + ds->vbs;
        io->iov[io->niov++] = (struct iovec){
            io->is_new ? ds->zeros : tail_sector + io->hi % ds->vbs, hi - io->hi };
    }
    count_zeros(ds, io->iov, io->niov);
    return 0;
}

/* Volume writes of one op that continue each other go out as one: a
 * tile row crossing from one block into the next (blocks of a datafile
 * mostly lie in a row on the volume) is then one iSCSI command, not two.
 * wb_add appends a write (iraid copies the vectors, so the batch array is
 * reused); wb_flush sends what is batched. */
static void wb_flush(struct df_op *op)
{
    if (op->wn > 0)
        op_io(op, 1, op->woff, op->wiov, op->wn);
    op->wn = 0;
}

static int wb_add(struct df_op *op, uint64_t off, const struct iovec *iov, int n)
{
    if (op->wn > 0 && (off != op->wend || op->wn + n > GATHER_MAX_IOV))
        wb_flush(op);
    if (op->wn + n > op->wcap) {
        int cap = op->wn + n > 2 * op->wcap ? op->wn + n : 2 * op->wcap;
        struct iovec *a = realloc(op->wiov, (size_t)cap * sizeof(*a));
        if (!a)
            return -ENOMEM;
        op->wiov = a;
        op->wcap = cap;
    }
    if (op->wn == 0)
        op->woff = op->wend = off;
    for (int i = 0; i < n; i++) {
        op->wiov[op->wn++] = iov[i];
        op->wend += iov[i].iov_len;
    }
    return 0;
}

/* Writes a gathered block (see can_gather): a new one whole in one
 * volume write, zeros in its gaps; a zeroed one (still the volume's
 * zeros) in one write per run of pieces whose gaps hold no whole sector,
 * rounded out to sectors with zeros; an existing one in one write per run
 * of adjacent pieces, the gaps left as they are. */
static int gather_issue(struct df_op *op, struct blk_io *io)
{
    const struct piece *pcs = &op->pieces[io->first];
    uint64_t base = io->vblock * DFSTORE_BLOCK;
    uint32_t vbs = op->ds->vbs;
    int zeroed = zeroed_part(op->ds, io);
    uint32_t pos = zeroed ? align_down(io->lo, vbs) : 0, start = pos;
    uint32_t end = zeroed ? align_up(io->hi, vbs) : DFSTORE_BLOCK;
    int n = 0, run = 0, rc = 0;
    struct iovec *iov = malloc((3 * (size_t)io->npieces + 2) * sizeof(*iov));

    if (!iov)
        return -ENOMEM;
    for (uint32_t i = 0; i < io->npieces && rc == 0; i++) {
        uint32_t off = pcs[i].in_off;
        if (off > pos && !io->is_new) {
            if (n > run)
                rc = wb_add(op, base + start, iov + run, n - run);
            run = n;
            start = off;
        } else if (off > pos && zeroed && align_up(pos, vbs) < align_down(off, vbs)) {
            /* whole sectors of the gap are zeros already: a new run */
            if (align_up(pos, vbs) > pos)
                iov[n++] = (struct iovec){ op->ds->zeros, align_up(pos, vbs) - pos };
            rc = wb_add(op, base + start, iov + run, n - run);
            run = n;
            start = align_down(off, vbs);
            if (off > start)
                iov[n++] = (struct iovec){ op->ds->zeros, off - start };
        } else if (off > pos) {
            iov[n++] = (struct iovec){ op->ds->zeros, off - pos };
        }
        iov[n++] = (struct iovec){ (void *)pcs[i].data, pcs[i].len };
        pos = off + pcs[i].len;
    }
    if (io->is_new && pos < end)
        iov[n++] = (struct iovec){ op->ds->zeros, end - pos };
    count_zeros(op->ds, iov, n);
    if (rc == 0)
        rc = wb_add(op, base + start, iov + run, n - run);
    free(iov);
    return rc;
}

static void write_issue(struct df_op *op)
{
    struct dfstore *ds = op->ds;

    for (uint32_t i = 0; i < op->nios && op->status == 0; i++) {
        struct blk_io *io = &op->ios[i];
        uint64_t off = 0;
        int rc;
        if (io->gather) {
            if ((rc = gather_issue(op, io)) < 0)
                op->status = rc;
            continue;
        }
        if ((rc = io_build(ds, io, &off)) < 0 || (rc = wb_add(op, off, io->iov, io->niov)) < 0) {
            op->status = rc;
            break;
        }
    }
    wb_flush(op);
}

/* ---- rounds ---- */

/* Issues the round's I/O holding one extra count, so that a round
 * finishing early cannot end while issuing. */
void df_io_round(struct df_op *op, enum df_io_round kind, void (*done)(struct df_op *op))
{
    op->round_done = done;
    op->pending++;
    switch (kind) {
    case DF_IO_READ: read_issue(op); break;
    case DF_IO_RMW_READ: rmw_read_issue(op); break;
    case DF_IO_WRITE: write_issue(op); break;
    }
    if (--op->pending == 0)
        done(op);
}
