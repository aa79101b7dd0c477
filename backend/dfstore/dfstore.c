/* Datafile store: datafiles in DFSTORE_BLOCK blocks on an iRAID volume,
 * block maps and sizes in LMDB (see dfstore.h for the contract).
 *
 * Memory holds the truth while running: per datafile its size and a hash
 * of file block -> volume block, plus the bitmap of volume blocks in use
 * (space.h).  Every metadata change is also appended to the journal's log
 * of pending changes (journal.h), and only after the data it points to
 * was written (a MAP is logged when the write of its block completed).
 * The commit path (commit.h) makes them durable: it flushes the volume
 * first and then commits the entries that existed when the flush was
 * issued, so committed metadata never points at data that is not durable.
 * Blocks freed by truncate or remove keep their bit in the bitmap until
 * the round that commits the UNMAP, so they cannot be reused before the
 * freeing is durable.
 *
 * Invariant that makes zero-fill cheap: bytes of an allocated block at or
 * past the datafile's size are zero.  New blocks are written whole (zeros
 * around the data); shrinking truncate zeroes the tail of the block that
 * holds the new end.
 *
 * Operations: each datafile has a FIFO of operations and runs one at a
 * time (the head), so operations on one datafile complete in order and a
 * read-modify-write never races another write of the same datafile; one
 * operation sends all its block I/O at once.  Writes queued behind a
 * starting write ride along with it (write gathering, see gather_group):
 * the leader does the block I/O of all of them, so that the rows two
 * clients write into the same blocks become one volume write instead of
 * one per row; all complete, in order, when the leader's I/O is done.
 * dfstore_sync(0) waits in a global list (all operations in submission
 * order) until everything submitted before it is done.  A sync waits for
 * the first commit round issued after it became ready; the commit path
 * reports each finished round to commit_round_done.  Completions are
 * delivered from a zero-delay timer, never inside the submitting call. */
#include "backend/dfstore/dfstore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/commit.h"
#include "backend/dfstore/journal.h"
#include "backend/dfstore/space.h"
#include "common/log.h"
#include "common/u64map.h"

#define DF_MAX_SIZE (1ull << 50)          /* largest datafile (1 PiB) */
/* No volume block: also what a block map lookup of a hole gives. */
#define DF_NO_BLOCK U64MAP_NONE

/* ---- structures ---- */

enum op_kind { OP_WRITE, OP_READ, OP_TRUNCATE, OP_PREALLOC, OP_REMOVE, OP_SYNC };

struct datafile {
    uint64_t handle;
    uint64_t size;
    int exists;                      /* has a record (committed or pending) */
    struct u64map blocks;            /* file block -> volume block */
    struct df_op *head, *tail;       /* FIFO; head is running */
};

/* One volume block an operation writes or reads. */
struct blk_io {
    struct df_op *op;
    uint64_t fblock, vblock;
    int is_new;
    int gather;                      /* pieces in order, written in place */
    uint32_t first, npieces;         /* into op->pieces */
    uint32_t lo, hi;                 /* in-block byte range written */
    uint8_t *buf;                    /* bounce: RMW span or merged pieces */
    uint8_t *edge;                   /* head/tail sectors for one piece */
    struct iovec iov[3];
    int niov;
};

struct piece {
    uint64_t fblock;
    uint32_t in_off, len;
    uint32_t order;
    const uint8_t *data;
};

struct df_op {
    struct dfstore *ds;
    struct datafile *df;             /* NULL: sync of every datafile */
    enum op_kind kind;
    struct df_op *next;              /* datafile FIFO */
    struct df_op *gprev, *gnext;     /* global list, submission order */
    struct df_op *done_next;         /* delivery list */
    const struct ipvfs_pair *pairs;
    uint32_t npairs;
    const uint8_t *wdata;
    uint8_t *rdata;
    uint64_t arg;                    /* truncate/prealloc size */
    dfstore_cb cb;
    void *user;
    int started;
    int status;
    uint64_t value;
    uint32_t pending;                /* volume requests in flight */
    struct piece *pieces;
    struct blk_io *ios;
    uint32_t nios;
    uint64_t new_end;                /* write: end of the furthest byte */
    struct iovec *wiov;              /* write: the volume write being built */
    int wn, wcap;
    uint64_t woff, wend;             /* its volume range */
    uint64_t need_gen;               /* sync: commit round to wait for */
    uint32_t nfollow;                /* write leader: followers behind it */
};

struct dfstore {
    struct evloop *loop;
    struct iraid_volume *vol;
    uint32_t vbs;                    /* volume block size */
    struct df_journal journal;
    struct df_space space;
    struct df_commit commit;
    struct u64map files;             /* handle -> struct datafile * */
    uint64_t writes;                 /* write operations submitted */
    uint64_t writes_gathered;        /* followers taken into write groups */
    uint64_t deliver_timer;
    struct df_op *gfirst, *glast;    /* unfinished operations */
    struct df_op *done_first, *done_last;
    uint8_t *zeros;                  /* DFSTORE_BLOCK zero bytes, never written */
    uint8_t *discard;                /* sink for unwanted sector bytes */
};

/* ---- operation delivery ---- */

static void op_start(struct df_op *op);

static void deliver(struct evloop *loop, uint64_t timer_id, void *user);

static void op_complete(struct df_op *op)
{
    struct dfstore *ds = op->ds;

    op->done_next = NULL;
    if (ds->done_last)
        ds->done_last->done_next = op;
    else
        ds->done_first = op;
    ds->done_last = op;
    if (!ds->deliver_timer && !(ds->deliver_timer = evloop_add_timer(ds->loop, 0, deliver, ds)))
        log_error("dfstore: cannot arm the completion timer; completions wait for the next "
                  "commit tick");
}

static void op_free(struct df_op *op)
{
    if (op->ios)
        for (uint32_t i = 0; i < op->nios; i++) {
            free(op->ios[i].buf);
            free(op->ios[i].edge);
        }
    free(op->wiov);
    free(op->ios);
    free(op->pieces);
    free(op);
}

static void df_maybe_free(struct dfstore *ds, struct datafile *df)
{
    if (df->exists || df->head)
        return;
    u64map_del(&ds->files, df->handle);
    u64map_free(&df->blocks);
    free(df);
}

/* A sync of every datafile is ready once nothing submitted before it is
 * still running: it is then the first unfinished operation. */
static void global_kick(struct dfstore *ds)
{
    struct df_op *op = ds->gfirst;

    if (op && !op->df && !op->started)
        op_start(op);
}

static void deliver_one(struct dfstore *ds, struct df_op *op)
{
    struct datafile *df = op->df;

    if (op->gprev)
        op->gprev->gnext = op->gnext;
    else
        ds->gfirst = op->gnext;
    if (op->gnext)
        op->gnext->gprev = op->gprev;
    else
        ds->glast = op->gprev;
    if (df) {
        df->head = op->next;
        if (!df->head)
            df->tail = NULL;
    }
    op->cb(op->status, op->value, op->user);
    op_free(op);
    if (df) {
        if (df->head && !df->head->started)
            op_start(df->head);
        else
            df_maybe_free(ds, df);
    }
}

static void deliver(struct evloop *loop, uint64_t timer_id, void *user)
{
    struct dfstore *ds = user;
    struct df_op *op;

    ds->deliver_timer = 0;
    while ((op = ds->done_first)) {
        ds->done_first = op->done_next;
        if (!ds->done_first)
            ds->done_last = NULL;
        deliver_one(ds, op);
    }
    global_kick(ds);
}

/* ---- block I/O of one operation ---- */

static void ios_done(struct df_op *op);

static void blk_cb(struct iraid_volume *vol, int status, void *user)
{
    struct df_op *op = user;

    if (status < 0 && op->status == 0)
        op->status = status;
    if (--op->pending == 0)
        ios_done(op);
}

static void op_io(struct df_op *op, int write, uint64_t off, struct iovec *iov, int niov)
{
    int rc = write ? iraid_writev(op->ds->vol, off, iov, niov, blk_cb, op)
                   : iraid_readv(op->ds->vol, off, iov, niov, blk_cb, op);

    if (rc < 0) {
        if (op->status == 0)
            op->status = rc;
        return;
    }
    op->pending++;
}

/* Issues I/O through fn for the op, holding one extra count so that a
 * round finishing early cannot complete the op while issuing. */
static void op_round(struct df_op *op, void (*issue)(struct df_op *op))
{
    op->pending++;
    issue(op);
    if (--op->pending == 0)
        ios_done(op);
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

/* ---- write planning ---- */

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

/* Vectors in one volume write of a gathered block: writev takes at most
 * IOV_MAX (1024) and iSCSI adds its own. */
#define GATHER_MAX_IOV 256

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

static int alloc_new_blocks(struct dfstore *ds, struct df_op *op, uint32_t nnew)
{
    if (nnew > ds->space.total_blocks - ds->space.used_blocks) {
        log_warn("dfstore: datafile %" PRIu64 ": %u blocks needed, %" PRIu64 " free",
                 op->df->handle, nnew, ds->space.total_blocks - ds->space.used_blocks);
        return -ENOSPC;
    }
    for (uint32_t i = 0; i < op->nios; i++)
        if (op->ios[i].is_new)
            op->ios[i].vblock = df_space_alloc(&ds->space);
    return 0;
}

/* Does this block need old bytes read first (existing, not sector-exact)? */
static int io_needs_rmw(const struct dfstore *ds, const struct blk_io *io)
{
    return !io->is_new && !io->gather &&
           (io->npieces > 1 || io->lo % ds->vbs || io->hi % ds->vbs);
}

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
        if (!io_needs_rmw(ds, io))
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

/* Builds the iovecs of one block write.  New blocks are written whole with
 * zeros around the data (zero-fill); existing ones over [lo, hi) rounded
 * to sectors, with the old bytes read in round one. */
static int io_build(struct dfstore *ds, struct blk_io *io, uint64_t *out_off)
{
    const struct piece *pcs = &io->op->pieces[io->first];
    uint32_t lo = align_down(io->lo, ds->vbs), hi = align_up(io->hi, ds->vbs);

    if (io->is_new) {
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
 * volume write, zeros in its gaps; an existing one in one write per run of
 * adjacent pieces, the gaps left as they are. */
static int gather_issue(struct df_op *op, struct blk_io *io)
{
    const struct piece *pcs = &op->pieces[io->first];
    uint64_t base = io->vblock * DFSTORE_BLOCK;
    uint32_t pos = 0, start = 0;
    int n = 0, run = 0, rc = 0;
    struct iovec *iov = malloc((2 * (size_t)io->npieces + 1) * sizeof(*iov));

    if (!iov)
        return -ENOMEM;
    for (uint32_t i = 0; i < io->npieces && rc == 0; i++) {
        uint32_t off = pcs[i].in_off;
        if (off > pos && !io->is_new) {
            if (n > run)
                rc = wb_add(op, base + start, iov + run, n - run);
            run = n;
            start = off;
        } else if (off > pos) {
            iov[n++] = (struct iovec){ op->ds->zeros, off - pos };
        }
        iov[n++] = (struct iovec){ (void *)pcs[i].data, pcs[i].len };
        pos = off + pcs[i].len;
    }
    if (io->is_new && pos < DFSTORE_BLOCK)
        iov[n++] = (struct iovec){ op->ds->zeros, DFSTORE_BLOCK - pos };
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

/* ---- operation bodies ---- */

enum { PHASE_NONE, PHASE_RMW_READ, PHASE_WRITE, PHASE_READ };

static void op_finish_write(struct df_op *op);

/* Every request of the op's current round is done. */
static void ios_done(struct df_op *op)
{
    if (op->kind == OP_READ) {
        if (op->status == 0)
            for (uint32_t p = 0; p < op->npairs; p++)
                op->value += op->pairs[p].len;
        op_complete(op);
        return;
    }
    /* write-like ops: started == PHASE_RMW_READ, then PHASE_WRITE */
    if (op->started == PHASE_RMW_READ && op->status == 0) {
        op->started = PHASE_WRITE;
        op_round(op, write_issue);
        return;
    }
    op_finish_write(op);
}

static int set_size(struct dfstore *ds, struct datafile *df, uint64_t size)
{
    int rc;

    if (df->exists && df->size == size)
        return 0;
    if ((rc = df_journal_add(&ds->journal, LOG_SIZE, df->handle, 0, 0, size)) < 0)
        return rc;
    df->size = size;
    df->exists = 1;
    return 0;
}

/* Drops file blocks >= first_fblock: unmapped now, freed after commit.
 * Victims are collected first: deleting shifts entries round the table. */
static int unmap_from(struct dfstore *ds, struct datafile *df, uint64_t first_fblock)
{
    struct u64map *m = &df->blocks;
    uint64_t *victims, n = 0, pos = 0, fb, vb;
    int rc = 0;

    if (m->count == 0)
        return 0;
    if (!(victims = malloc(m->count * sizeof(*victims))))
        return -ENOMEM;
    while (u64map_next(m, &pos, &fb, &vb))
        if (fb >= first_fblock)
            victims[n++] = fb;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        vb = u64map_get(m, victims[i]);
        if ((rc = df_journal_add(&ds->journal, LOG_UNMAP, df->handle, victims[i], vb, 0)) == 0)
            u64map_del(m, victims[i]);
    }
    free(victims);
    return rc;
}

/* Completes a write-like op and the writes that rode along with it, in
 * queue order, all with its status. */
static void op_finish_group(struct df_op *op)
{
    struct df_op *f = op->next;

    op_complete(op);
    for (uint32_t i = 0; i < op->nfollow; i++, f = f->next) {
        f->status = op->status;
        op_complete(f);
    }
}

static void op_finish_write(struct df_op *op)
{
    struct dfstore *ds = op->ds;
    struct datafile *df = op->df;
    int rc = 0;

    if (op->status < 0) {
        /* Nothing points at the new blocks: give them back at once. */
        for (uint32_t i = 0; i < op->nios; i++)
            if (op->ios[i].is_new)
                df_space_clear(&ds->space, op->ios[i].vblock);
        op_finish_group(op);
        return;
    }
    ds->commit.dirty = 1;
    for (uint32_t i = 0; i < op->nios && rc == 0; i++) {
        struct blk_io *io = &op->ios[i];
        if (!io->is_new)
            continue;
        if ((rc = u64map_put(&df->blocks, io->fblock, io->vblock)) == 0)
            rc = df_journal_add(&ds->journal, LOG_MAP, df->handle, io->fblock, io->vblock, 0);
        if (rc == 0)
            io->is_new = 0;   /* now owned by the map */
    }
    if (rc == 0) {
        if (op->kind == OP_TRUNCATE)
            rc = set_size(ds, df, op->arg);
        else if (op->new_end > df->size || !df->exists)
            rc = set_size(ds, df, op->new_end > df->size ? op->new_end : df->size);
    }
    if (rc < 0) {
        log_error("dfstore: datafile %" PRIu64 ": cannot record metadata: %s", df->handle,
                  strerror(-rc));
        op->status = rc;
    }
    op->value = op->kind == OP_WRITE ? op->value : df->size;
    op_finish_group(op);
}

static void start_io_rounds(struct df_op *op)
{
    int rmw = 0;

    for (uint32_t i = 0; i < op->nios; i++)
        rmw |= io_needs_rmw(op->ds, &op->ios[i]);
    op->started = rmw ? PHASE_RMW_READ : PHASE_WRITE;
    op_round(op, rmw ? rmw_read_issue : write_issue);
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
    if (fn == 0 || *n + fn > GROUP_MAX_PIECES || *n + fn > ds->space.total_blocks - ds->space.used_blocks)
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

static void write_start(struct df_op *op)
{
    uint32_t npieces, nnew;
    int rc;

    write_measure(op);
    if ((rc = plan_pieces(op, &npieces)) < 0)
        goto fail;
    if (npieces > 0)
        gather_group(op, &npieces);
    if ((rc = plan_blocks(op, npieces, &nnew)) < 0 || (rc = alloc_new_blocks(op->ds, op, nnew)) < 0)
        goto fail;
    start_io_rounds(op);
    return;
fail:
    op->status = rc;
    op_finish_group(op);
}

/* Truncate: unmap whole blocks past the end, zero the tail of the block
 * holding the new end (keeps the zero-past-EOF invariant). */
static void truncate_start(struct df_op *op)
{
    struct dfstore *ds = op->ds;
    struct datafile *df = op->df;
    uint64_t size = op->arg, fb = size / DFSTORE_BLOCK, in = size % DFSTORE_BLOCK;
    uint64_t vb;
    int rc;

    if ((rc = unmap_from(ds, df, (size + DFSTORE_BLOCK - 1) / DFSTORE_BLOCK)) < 0)
        goto fail;
    vb = u64map_get(&df->blocks, fb);
    if (size >= df->size || in == 0 || vb == DF_NO_BLOCK) {
        op_finish_write(op);
        return;
    }
    /* A one-piece write of zeros over [in, block end). */
    if (!(op->pieces = malloc(sizeof(*op->pieces))) || !(op->ios = calloc(1, sizeof(*op->ios)))) {
        rc = -ENOMEM;
        goto fail;
    }
    op->pieces[0] = (struct piece){ fb, (uint32_t)in, (uint32_t)(DFSTORE_BLOCK - in), 0,
                                    ds->zeros };
    op->ios[0] = (struct blk_io){ .op = op, .fblock = fb, .vblock = vb, .npieces = 1,
                                  .lo = (uint32_t)in, .hi = DFSTORE_BLOCK };
    op->nios = 1;
    start_io_rounds(op);
    return;
fail:
    op->status = rc;
    op_complete(op);
}

/* Prealloc: zeroed blocks for every hole below size; size grows to it. */
static void prealloc_start(struct df_op *op)
{
    struct datafile *df = op->df;
    uint64_t nblocks = (op->arg + DFSTORE_BLOCK - 1) / DFSTORE_BLOCK;
    uint32_t nnew = 0;
    int rc = 0;

    for (uint64_t fb = 0; fb < nblocks; fb++)
        nnew += u64map_get(&df->blocks, fb) == DF_NO_BLOCK;
    if (nnew && !(op->ios = calloc(nnew, sizeof(*op->ios))))
        rc = -ENOMEM;
    for (uint64_t fb = 0; fb < nblocks && rc == 0; fb++)
        if (u64map_get(&df->blocks, fb) == DF_NO_BLOCK)
            op->ios[op->nios++] = (struct blk_io){ .op = op, .fblock = fb, .is_new = 1 };
    if (rc == 0)
        rc = alloc_new_blocks(op->ds, op, nnew);
    if (rc < 0) {
        op->status = rc;
        op_complete(op);
        return;
    }
    op->new_end = op->arg;
    start_io_rounds(op);
}

static void remove_start(struct df_op *op)
{
    struct dfstore *ds = op->ds;
    struct datafile *df = op->df;
    int rc = unmap_from(ds, df, 0);

    if (rc == 0 && df->exists)
        rc = df_journal_add(&ds->journal, LOG_REMOVE, df->handle, 0, 0, 0);
    if (rc == 0) {
        df->exists = 0;
        df->size = 0;
    }
    op->status = rc;
    op_complete(op);
}

/* A sync waits for the first commit round issued after it became ready. */
static void sync_start(struct df_op *op)
{
    struct dfstore *ds = op->ds;

    op->need_gen = ds->commit.gen_issued + 1;
    df_commit_start(&ds->commit);
}

static void op_start(struct df_op *op)
{
    op->started = PHASE_READ;
    switch (op->kind) {
    case OP_READ: op_round(op, read_issue); break;
    case OP_WRITE: write_start(op); break;
    case OP_TRUNCATE: truncate_start(op); break;
    case OP_PREALLOC: prealloc_start(op); break;
    case OP_REMOVE: remove_start(op); break;
    case OP_SYNC: sync_start(op); break;
    }
}

/* ---- commit rounds (run by commit.c) ---- */

static void syncs_wake(struct dfstore *ds, int status)
{
    for (struct df_op *op = ds->gfirst; op; op = op->gnext)
        if (op->kind == OP_SYNC && op->started && op->need_gen &&
            op->need_gen <= ds->commit.gen_done) {
            op->status = status;
            op->value = op->df ? op->df->size : 0;
            op->need_gen = 0;
            op_complete(op);
        }
}

static int syncs_waiting(const struct dfstore *ds)
{
    for (const struct df_op *op = ds->gfirst; op; op = op->gnext)
        if (op->kind == OP_SYNC && op->need_gen > ds->commit.gen_done)
            return 1;
    return 0;
}

/* A commit round ended: wake the syncs it was for; another round when
 * some wait for a later one. */
static int commit_round_done(void *user, int status)
{
    struct dfstore *ds = user;

    syncs_wake(ds, status);
    return syncs_waiting(ds);
}

/* ---- submission ---- */

static struct datafile *df_get(struct dfstore *ds, uint64_t handle)
{
    uint64_t v = u64map_get(&ds->files, handle);
    struct datafile *df;

    if (v != DF_NO_BLOCK)
        return (struct datafile *)(uintptr_t)v;
    if (!(df = calloc(1, sizeof(*df))))
        return NULL;
    df->handle = handle;
    if (u64map_put(&ds->files, handle, (uintptr_t)df) < 0) {
        free(df);
        return NULL;
    }
    return df;
}

static int submit(struct dfstore *ds, uint64_t handle, enum op_kind kind, struct df_op tmpl)
{
    struct df_op *op = malloc(sizeof(*op));
    struct datafile *df = NULL;

    if (!op)
        return -ENOMEM;
    if (handle && !(df = df_get(ds, handle))) {
        free(op);
        return -ENOMEM;
    }
    *op = tmpl;
    op->ds = ds;
    op->df = df;
    op->kind = kind;
    op->gnext = NULL;
    op->gprev = ds->glast;
    if (ds->glast)
        ds->glast->gnext = op;
    else
        ds->gfirst = op;
    ds->glast = op;
    if (!df) {
        global_kick(ds);
        return 0;
    }
    if (df->tail)
        df->tail->next = op;
    else
        df->head = op;
    df->tail = op;
    if (df->head == op)
        op_start(op);
    return 0;
}

static int check_pairs(const struct ipvfs_pair *pairs, uint32_t npairs, const void *buf)
{
    uint64_t total = 0;

    if (npairs > IPVFS_MAX_PAIRS || (npairs && !pairs))
        return -EINVAL;
    for (uint32_t i = 0; i < npairs; i++) {
        if (pairs[i].offset > DF_MAX_SIZE || pairs[i].len > DF_MAX_SIZE - pairs[i].offset)
            return -EFBIG;
        total += pairs[i].len;
    }
    if (total > IPVFS_MAX_IO_BYTES)
        return -EINVAL;
    return total && !buf ? -EINVAL : 0;
}

int dfstore_write(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                  uint32_t npairs, const void *data, dfstore_cb cb, void *user)
{
    int rc;

    if (!ds || !handle || !cb)
        return -EINVAL;
    if ((rc = check_pairs(pairs, npairs, data)) < 0)
        return rc;
    rc = submit(ds, handle, OP_WRITE, (struct df_op){ .pairs = pairs, .npairs = npairs,
                                                       .wdata = data, .cb = cb, .user = user });
    if (rc == 0)
        ds->writes++;
    return rc;
}

int dfstore_read(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                 uint32_t npairs, void *out, dfstore_cb cb, void *user)
{
    int rc;

    if (!ds || !handle || !cb)
        return -EINVAL;
    if ((rc = check_pairs(pairs, npairs, out)) < 0)
        return rc;
    return submit(ds, handle, OP_READ, (struct df_op){ .pairs = pairs, .npairs = npairs,
                                                        .rdata = out, .cb = cb, .user = user });
}

int dfstore_truncate(struct dfstore *ds, uint64_t handle, uint64_t size, dfstore_cb cb,
                     void *user)
{
    if (!ds || !handle || !cb)
        return -EINVAL;
    if (size > DF_MAX_SIZE)
        return -EFBIG;
    return submit(ds, handle, OP_TRUNCATE, (struct df_op){ .arg = size, .cb = cb, .user = user });
}

int dfstore_prealloc(struct dfstore *ds, uint64_t handle, uint64_t size, dfstore_cb cb,
                     void *user)
{
    if (!ds || !handle || !cb)
        return -EINVAL;
    if (size > DF_MAX_SIZE)
        return -EFBIG;
    return submit(ds, handle, OP_PREALLOC, (struct df_op){ .arg = size, .cb = cb, .user = user });
}

int dfstore_remove(struct dfstore *ds, uint64_t handle, dfstore_cb cb, void *user)
{
    if (!ds || !handle || !cb)
        return -EINVAL;
    return submit(ds, handle, OP_REMOVE, (struct df_op){ .cb = cb, .user = user });
}

int dfstore_sync(struct dfstore *ds, uint64_t handle, dfstore_cb cb, void *user)
{
    if (!ds || !cb)
        return -EINVAL;
    return submit(ds, handle, OP_SYNC, (struct df_op){ .cb = cb, .user = user });
}

uint64_t dfstore_size(const struct dfstore *ds, uint64_t handle)
{
    uint64_t v = u64map_get(&ds->files, handle);

    return v == DF_NO_BLOCK ? 0 : ((const struct datafile *)(uintptr_t)v)->size;
}

void dfstore_stats(const struct dfstore *ds, struct dfstore_stats *out)
{
    uint64_t n = 0, pos = 0, handle, v;

    while (u64map_next(&ds->files, &pos, &handle, &v))
        if (((const struct datafile *)(uintptr_t)v)->exists)
            n++;
    *out = (struct dfstore_stats){ n, ds->space.used_blocks, ds->space.total_blocks, ds->writes,
                                   ds->writes_gathered };
}

/* ---- open / close ---- */

/* The journal's records at open: every datafile, then every block. */
static int load_file(void *user, uint64_t handle, uint64_t size)
{
    struct dfstore *ds = user;
    struct datafile *df = df_get(ds, handle);

    if (!df)
        return -ENOMEM;
    df->size = size;
    df->exists = 1;
    return 0;
}

/* Rebuilds block maps and the bitmap; refuses a map that points outside
 * the volume or gives one block to two owners. */
static int load_block(void *user, uint64_t h, uint64_t fb, uint64_t vb)
{
    struct dfstore *ds = user;
    uint64_t d = u64map_get(&ds->files, h);
    int rc;

    if (d == DF_NO_BLOCK || vb >= ds->space.total_blocks || df_space_test(&ds->space, vb)) {
        log_error("dfstore: datafile %" PRIu64 " block %" PRIu64 " -> volume block %" PRIu64
                  ": %s", h, fb, vb, d == DF_NO_BLOCK ? "no such datafile" :
                  vb >= ds->space.total_blocks ? "past the volume's end" : "block used twice");
        return -EUCLEAN;
    }
    if ((rc = u64map_put(&((struct datafile *)(uintptr_t)d)->blocks, fb, vb)) < 0)
        return rc;
    df_space_set(&ds->space, vb);
    return 0;
}

static const struct df_journal_loader loader = { load_file, load_block };

static void free_files(struct dfstore *ds)
{
    uint64_t pos = 0, handle, v;

    while (u64map_next(&ds->files, &pos, &handle, &v)) {
        struct datafile *df = (struct datafile *)(uintptr_t)v;
        u64map_free(&df->blocks);
        free(df);
    }
    u64map_free(&ds->files);
}

int dfstore_open(struct evloop *loop, struct iraid_volume *vol, const char *dir,
                 struct dfstore **out)
{
    struct dfstore *ds;
    int rc;

    if (!loop || !vol || !dir || !out)
        return -EINVAL;
    if (DFSTORE_BLOCK % iraid_block_size(vol)) {
        log_error("dfstore: volume block %u does not divide %u", iraid_block_size(vol),
                  DFSTORE_BLOCK);
        return -EINVAL;
    }
    if (!(ds = calloc(1, sizeof(*ds))))
        return -ENOMEM;
    ds->loop = loop;
    ds->vol = vol;
    ds->vbs = iraid_block_size(vol);
    if ((rc = df_space_init(&ds->space, iraid_size(vol) / DFSTORE_BLOCK)) < 0)
        goto free_ds;
    ds->zeros = calloc(1, DFSTORE_BLOCK);
    ds->discard = malloc(ds->vbs);
    if (!ds->zeros || !ds->discard) {
        rc = -ENOMEM;
        goto free_buffers;
    }
    if ((rc = df_journal_open(&ds->journal, dir, &loader, ds)) < 0)
        goto free_files;
    if ((rc = df_commit_init(&ds->commit, loop, vol, &ds->journal, &ds->space,
                             commit_round_done, ds)) < 0)
        goto close_journal;
    log_info("dfstore: %s: %" PRIu64 " of %" PRIu64 " blocks in use", dir,
             ds->space.used_blocks, ds->space.total_blocks);
    *out = ds;
    return 0;

close_journal:
    df_journal_close(&ds->journal);
free_files:
    free_files(ds);
free_buffers:
    free(ds->discard);
    free(ds->zeros);
    df_space_fini(&ds->space);
free_ds:
    free(ds);
    return rc;
}

static void close_done(int status, uint64_t value, void *user)
{
    int *done = user;

    *done = status < 0 ? status : 1;
}

void dfstore_close(struct dfstore *ds)
{
    int done = 0;

    if (!ds)
        return;
    /* A final sync of everything: it runs after all that is in flight. */
    if (dfstore_sync(ds, 0, close_done, &done) < 0)
        log_error("dfstore: cannot queue the final sync: unsynced changes are lost");
    else
        while (done == 0 || ds->gfirst || ds->commit.state != COMMIT_IDLE)
            evloop_run_once(ds->loop, -1);
    if (done < 0)
        log_error("dfstore: final sync failed (%s): unsynced changes are lost",
                  strerror(-done));
    log_info("dfstore: %" PRIu64 " writes, %" PRIu64 " of them gathered into an earlier one's "
             "volume I/O", ds->writes, ds->writes_gathered);
    if (ds->deliver_timer)
        evloop_del_timer(ds->loop, ds->deliver_timer);
    df_commit_fini(&ds->commit);
    df_journal_close(&ds->journal);
    free_files(ds);
    free(ds->discard);
    free(ds->zeros);
    df_space_fini(&ds->space);
    free(ds);
}
