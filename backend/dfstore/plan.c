/* Write planning of the datafile store: a write's pairs cut into pieces
 * at block boundaries, the pieces grouped per volume block, new blocks
 * placed by file offset (each region of a datafile in its own run of
 * volume blocks: the rule is in space.h; the runs of a datafile are kept
 * here, in struct datafile.runs), and the writes queued behind it
 * gathered into its group.
 *
 * Write gathering: writes queued on one datafile behind a starting write
 * (the leader) join its volume I/O when no two of their bytes overlap and
 * the free blocks surely suffice; the leader's pieces then hold the
 * group's, each write keeps its own completion.  Overlapping writes stay
 * apart, in order.  Nothing here issues I/O or completes an operation:
 * the store (dfstore.c) runs the plan through io.c. */
#include "backend/dfstore/plan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "backend/dfstore/internal.h"
#include "common/log.h"
#include "iraid/volume.h"

static int piece_cmp(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;

    if (x->fblock != y->fblock)
        return x->fblock < y->fblock ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* By block, then offset in the block: for pieces known not to overlap. */
static int piece_off_cmp(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;

    if (x->fblock != y->fblock)
        return x->fblock < y->fblock ? -1 : 1;
    return x->in_off < y->in_off ? -1 : x->in_off > y->in_off;
}

/* Whether sorted pieces (piece_off_cmp order) overlap. */
static int pieces_overlap(const struct piece *pcs, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (pcs[i].fblock == pcs[i - 1].fblock && pcs[i].in_off < pcs[i - 1].in_off + pcs[i - 1].len)
            return 1;
    return 0;
}

/* Splits the op's pairs at block boundaries, sorted by block then order. */
static int plan_pieces(struct df_op *op, uint32_t *out_npieces)
{
    uint64_t count = 0, data_off = 0;
    uint32_t n = 0;

    for (uint32_t p = 0; p < op->npairs; p++) {
        const struct ipvfs_pair *pr = &op->pairs[p];
        if (pr->len)
            count += (pr->offset + pr->len - 1) / DFSTORE_BLOCK - pr->offset / DFSTORE_BLOCK + 1;
    }
    if (count == 0) {
        *out_npieces = 0;
        return 0;
    }
    if (!(op->pieces = malloc(count * sizeof(*op->pieces))))
        return -ENOMEM;
    for (uint32_t p = 0; p < op->npairs; p++) {
        uint64_t off = op->pairs[p].offset, len = op->pairs[p].len;
        while (len > 0) {
            uint64_t in = off % DFSTORE_BLOCK;
            uint64_t k = DFSTORE_BLOCK - in < len ? DFSTORE_BLOCK - in : len;
            op->pieces[n] = (struct piece){ off / DFSTORE_BLOCK, (uint32_t)in, (uint32_t)k, n,
                                            op->wdata + data_off };
            n++;
            off += k;
            len -= k;
            data_off += k;
        }
    }
    qsort(op->pieces, n, sizeof(*op->pieces), piece_cmp);
    *out_npieces = n;
    return 0;
}

/* Whether a block of several pieces can be written straight from the
 * request (iovecs, one volume write per run of adjacent pieces) instead of
 * merged in a bounce buffer after reading the old bytes: the pieces come
 * in offset order without overlap (list I/O sends them so), and the block
 * is new (its gaps are zeros) or every piece covers whole sectors (no old
 * byte is needed).  A tile row list would otherwise read back every block
 * it shares with another rank before writing it. */
static int can_gather(const struct dfstore *ds, const struct blk_io *io)
{
    const struct piece *pcs = &io->op->pieces[io->first];

    /* at most 2 vectors a piece in one volume write; more pieces are
     * tiny ones, cheap to merge */
    if (io->npieces < 2 || 2 * io->npieces + 1 > GATHER_MAX_IOV)
        return 0;
    for (uint32_t i = 0; i < io->npieces; i++) {
        if (i > 0 && pcs[i].in_off < pcs[i - 1].in_off + pcs[i - 1].len)
            return 0;
        if (!io->is_new && (pcs[i].in_off % ds->vbs || pcs[i].len % ds->vbs))
            return 0;
    }
    return 1;
}

/* Groups the pieces per block; finds or counts the blocks to allocate. */
static int plan_blocks(struct df_op *op, uint32_t npieces, uint32_t *out_new)
{
    struct datafile *df = op->df;
    uint32_t nios = 0, nnew = 0;

    for (uint32_t i = 0; i < npieces; i++)
        if (i == 0 || op->pieces[i].fblock != op->pieces[i - 1].fblock)
            nios++;
    if (nios && !(op->ios = calloc(nios, sizeof(*op->ios))))
        return -ENOMEM;
    for (uint32_t i = 0; i < npieces; i++) {
        struct blk_io *io;
        const struct piece *pc = &op->pieces[i];
        if (i == 0 || pc->fblock != op->pieces[i - 1].fblock) {
            io = &op->ios[op->nios++];
            *io = (struct blk_io){ .op = op, .fblock = pc->fblock, .first = i,
                                   .lo = pc->in_off, .hi = pc->in_off + pc->len };
            io->vblock = u64map_get(&df->blocks, pc->fblock);
            if (io->vblock == DF_NO_BLOCK) {
                io->is_new = 1;
                nnew++;
            }
        }
        io = &op->ios[op->nios - 1];
        io->npieces++;
        if (pc->in_off < io->lo)
            io->lo = pc->in_off;
        if (pc->in_off + pc->len > io->hi)
            io->hi = pc->in_off + pc->len;
    }
    for (uint32_t i = 0; i < op->nios; i++)
        op->ios[i].gather = can_gather(op->ds, &op->ios[i]);
    *out_new = nnew;
    return 0;
}

/* The volume block for new file block fb of df (space.h's rule); runs
 * only where the targets vouch for room (a thin target short of space
 * gets back blocks it held before, lowest first). */
static uint64_t place(struct dfstore *ds, struct datafile *df, uint64_t fb, int by_offset)
{
    uint64_t region = fb / DF_RUN_BLOCKS, run, was, vb;

    if (!by_offset)
        return df_space_place(&ds->space, NULL, fb);
    was = run = u64map_get(&df->runs, region);
    vb = df_space_place(&ds->space, &run, fb);
    /* no memory to remember a new run: its reserve goes back at once */
    if (run != was && u64map_put(&df->runs, region, run) < 0)
        df_space_unreserve_run(&ds->space, run);
    return vb;
}

int df_plan_alloc(struct dfstore *ds, struct df_op *op, uint32_t nnew)
{
    int by_offset = iraid_room_for_new_blocks(ds->vol);

    if (nnew > ds->space.total_blocks - ds->space.used_blocks) {
        log_warn("dfstore: datafile %" PRIu64 ": %u blocks needed, %" PRIu64 " free",
                 op->df->handle, nnew, ds->space.total_blocks - ds->space.used_blocks);
        return -ENOSPC;
    }
    for (uint32_t i = 0; i < op->nios; i++)
        if (op->ios[i].is_new) {
            op->ios[i].vblock = place(ds, op->df, op->ios[i].fblock, by_offset);
            op->ios[i].zeroed = df_space_take_zeroed(&ds->space, op->ios[i].vblock);
        }
    return 0;
}

void df_plan_drop_runs(struct dfstore *ds, struct datafile *df, uint64_t first_fblock)
{
    uint64_t first = (first_fblock + DF_RUN_BLOCKS - 1) / DF_RUN_BLOCKS;
    uint64_t *victims, n = 0, pos = 0, region, base;

    if (df->runs.count == 0)
        return;
    /* victims first: a delete moves entries round the table */
    if (!(victims = malloc(df->runs.count * sizeof(*victims)))) {
        /* no memory: every run is forgotten (a reserve left behind is a
         * hint that gives way when space runs short) */
        while (u64map_next(&df->runs, &pos, &region, &base))
            if (region >= first)
                df_space_unreserve_run(&ds->space, base);
        u64map_free(&df->runs);
        return;
    }
    while (u64map_next(&df->runs, &pos, &region, &base))
        if (region >= first) {
            df_space_unreserve_run(&ds->space, base);
            victims[n++] = region;
        }
    for (uint64_t i = 0; i < n; i++)
        u64map_del(&df->runs, victims[i]);
    free(victims);
    if (df->runs.count == 0)
        u64map_free(&df->runs);
}

int df_plan_note_run(struct datafile *df, uint64_t fblock, uint64_t vblock)
{
    uint64_t region = fblock / DF_RUN_BLOCKS;

    if (vblock % DF_RUN_BLOCKS != fblock % DF_RUN_BLOCKS ||
        u64map_get(&df->runs, region) != DF_NO_RUN)
        return 0;
    return u64map_put(&df->runs, region, vblock - vblock % DF_RUN_BLOCKS);
}

void df_plan_runs_loaded(struct dfstore *ds)
{
    uint64_t pos = 0, handle, v;

    while (u64map_next(&ds->files, &pos, &handle, &v)) {
        const struct datafile *df = (const struct datafile *)(uintptr_t)v;
        uint64_t rpos = 0, region, base;

        while (u64map_next(&df->runs, &rpos, &region, &base))
            df_space_reserve_run(&ds->space, base);
    }
}

/* Does this block need old bytes read first (existing, not sector-exact)? */
int df_plan_needs_rmw(const struct dfstore *ds, const struct blk_io *io)
{
    return !io->is_new && !io->gather &&
           (io->npieces > 1 || io->lo % ds->vbs || io->hi % ds->vbs);
}

/* Bytes and furthest end of a write's pairs. */
static void write_measure(struct df_op *op)
{
    op->value = 0;
    op->new_end = 0;
    for (uint32_t p = 0; p < op->npairs; p++) {
        uint64_t end = op->pairs[p].offset + op->pairs[p].len;
        op->value += op->pairs[p].len;
        if (op->pairs[p].len && end > op->new_end)
            op->new_end = end;
    }
}

/* Write gathering: most writes a group takes along, most pieces, and
 * most data bytes (what one volume operation may have in flight). */
#define GROUP_MAX_OPS 16u
#define GROUP_MAX_PIECES (4u * IPVFS_MAX_PAIRS)
#define GROUP_MAX_BYTES ((uint64_t)2 * IPVFS_MAX_IO_BYTES)

/* Takes one queued write f into leader's pieces (n of them, sorted by
 * offset, no overlap) if its pieces overlap neither each other nor the
 * leader's, and the group's blocks surely fit (at most one new block a
 * piece), so that no member can fail for another's sake.  Returns 1 when
 * taken, 0 when not (f untouched), or -ENOMEM. */
static int group_take(struct df_op *leader, uint32_t *n, struct df_op *f)
{
    struct dfstore *ds = leader->ds;
    struct piece *all;
    uint32_t fn;

    if (plan_pieces(f, &fn) < 0)
        return -ENOMEM;
    if (fn == 0 || *n + fn > GROUP_MAX_PIECES ||
        *n + fn > ds->space.total_blocks - ds->space.used_blocks)
        goto refuse;
    if (!(all = realloc(leader->pieces, (*n + fn) * sizeof(*all)))) {
        free(f->pieces);
        f->pieces = NULL;
        return -ENOMEM;
    }
    leader->pieces = all;
    for (uint32_t i = 0; i < fn; i++) {
        all[*n + i] = f->pieces[i];
        all[*n + i].order = *n + i;
    }
    qsort(all, *n + fn, sizeof(*all), piece_off_cmp);
    if (pieces_overlap(all, *n + fn)) {
        /* drop f's pieces again: the group's are numbered below *n */
        uint32_t k = 0;
        for (uint32_t i = 0; i < *n + fn; i++)
            if (all[i].order < *n)
                all[k++] = all[i];
        goto refuse;
    }
    *n += fn;
    free(f->pieces);
    f->pieces = NULL;
    return 1;
refuse:
    free(f->pieces);
    f->pieces = NULL;
    return 0;
}

/* Gathers the writes queued right behind the leader (see the top of the
 * file) while the leader's own pieces do not overlap.  Followers are
 * marked started and wait for the leader; *n grows to the group's pieces. */
static void gather_group(struct df_op *leader, uint32_t *n)
{
    uint64_t bytes = leader->value;

    qsort(leader->pieces, *n, sizeof(*leader->pieces), piece_off_cmp);
    if (pieces_overlap(leader->pieces, *n)) {
        qsort(leader->pieces, *n, sizeof(*leader->pieces), piece_cmp);
        return;
    }
    for (struct df_op *f = leader->next; f && leader->nfollow < GROUP_MAX_OPS; f = f->next) {
        if (f->kind != OP_WRITE || f->started)
            return;
        write_measure(f);
        if (bytes + f->value > GROUP_MAX_BYTES || group_take(leader, n, f) != 1)
            return;
        bytes += f->value;
        f->started = PHASE_WRITE;
        if (f->new_end > leader->new_end)
            leader->new_end = f->new_end;
        leader->nfollow++;
        leader->ds->writes_gathered++;
    }
}

int df_plan_write(struct df_op *op)
{
    uint32_t npieces, nnew;
    int rc;

    write_measure(op);
    if ((rc = plan_pieces(op, &npieces)) < 0)
        return rc;
    if (npieces > 0)
        gather_group(op, &npieces);
    if ((rc = plan_blocks(op, npieces, &nnew)) < 0)
        return rc;
    return df_plan_alloc(op->ds, op, nnew);
}
