/* Datafile store: operations from submission to delivery, and the
 * metadata they change (see dfstore.h for the contract and internal.h
 * for the model and how the files of the folder divide the work; open.c
 * opens and closes the store).
 *
 * An operation starts when it reaches the head of its datafile's FIFO
 * (reads also behind a running read: df_start_ready), or, for
 * dfstore_sync(0), the head of the global list; reads and
 * writes run their volume I/O in rounds through io.c, writes planned by
 * plan.c; a write-like operation then records its blocks and size in
 * memory and in the journal's pending log (op_finish_write); a sync waits
 * for the first commit round issued after it became ready (commit.c
 * reports each finished round to df_commit_round_done).  A finished
 * operation is queued and delivered from a zero-delay timer, which also
 * starts the next one of its datafile. */
#include "backend/dfstore/dfstore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/internal.h"
#include "backend/dfstore/io.h"
#include "backend/dfstore/plan.h"
#include "common/log.h"

/* ---- operation delivery ---- */

static void op_start(struct df_op *op);
static void df_start_ready(struct datafile *df);

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
    if (!ds->deliver_timer && !(ds->deliver_timer = evloop_defer(ds->loop, deliver, ds)))
        log_error("dfstore: out of memory deferring completions; they go out with the next "
                  "completion");
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
    df_plan_drop_runs(ds, df, 0);    /* a failed first write may have reserved one */
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
        if (df->head && df->head->finished)
            deliver_one(ds, df->head);   /* a read that finished early, now in turn */
        else if (df->head)
            df_start_ready(df);
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
        /* A read that finished before an earlier one of its datafile
         * waits for it: completions keep submission order. */
        if (op->df && op->df->head != op)
            op->finished = 1;
        else
            deliver_one(ds, op);
    }
    global_kick(ds);
}

/* ---- operation bodies ---- */

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
        df_io_round(op, DF_IO_WRITE, ios_done);
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
        if ((rc = df_journal_add(&ds->journal, LOG_UNMAP, df->handle, victims[i], vb, 0)) == 0) {
            u64map_del(m, victims[i]);
            df_l1_discard(&ds->l1, vb);     /* its bytes are dead: never written back */
        }
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
        rmw |= df_plan_needs_rmw(op->ds, &op->ios[i]);
    op->started = rmw ? PHASE_RMW_READ : PHASE_WRITE;
    df_io_round(op, rmw ? DF_IO_RMW_READ : DF_IO_WRITE, ios_done);
}

static void write_start(struct df_op *op)
{
    int rc;

    if ((rc = df_plan_write(op)) < 0)
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
    df_plan_drop_runs(ds, df, (size + DFSTORE_BLOCK - 1) / DFSTORE_BLOCK);
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
        rc = df_plan_alloc(op->ds, op, nnew);
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

    if (rc == 0)
        df_plan_drop_runs(ds, df, 0);
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
    case OP_READ:
        /* its own blocks first; the op lives until delivered (a timer) */
        df_io_round(op, DF_IO_READ, ios_done);
        df_ra_read(op->ds, op->df, op->pairs, op->npairs, op->ra_max);
        break;
    case OP_WRITE: write_start(op); break;
    case OP_TRUNCATE: truncate_start(op); break;
    case OP_PREALLOC: prealloc_start(op); break;
    case OP_REMOVE: remove_start(op); break;
    case OP_SYNC: sync_start(op); break;
    }
}

/* Starts what may run now at the head of df's FIFO: the head, and when it
 * is a read, every read queued right behind it (reads change nothing, so
 * they may overlap; the first other operation waits for all of them, and
 * they still complete in order, see deliver()).  Without this, clients
 * reading one shared file took turns at each I/O node, one read's volume
 * I/O at a time. */
static void df_start_ready(struct datafile *df)
{
    struct df_op *op = df->head;

    if (op && !op->started)
        op_start(op);
    if (!op || op->kind != OP_READ)
        return;
    for (op = op->next; op && op->kind == OP_READ; op = op->next)
        if (!op->started) {
            op->ds->reads_overlapped++;
            op_start(op);
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
int df_commit_round_done(void *user, int status)
{
    struct dfstore *ds = user;

    syncs_wake(ds, status);
    return syncs_waiting(ds);
}

/* ---- submission ---- */

struct datafile *df_get(struct dfstore *ds, uint64_t handle)
{
    uint64_t v = u64map_get(&ds->files, handle);
    struct datafile *df;

    if (v != U64MAP_NONE)
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
    if (df->head == op || (kind == OP_READ && df->head->kind == OP_READ))
        df_start_ready(df);
    return 0;
}

static int check_pairs(const struct ipvfs_pair *pairs, uint32_t npairs, const void *buf,
                       uint64_t *out_total)
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
    *out_total = total;
    return total && !buf ? -EINVAL : 0;
}

int dfstore_write(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                  uint32_t npairs, const void *data, dfstore_cb cb, void *user)
{
    uint64_t total;
    int rc;

    if (!ds || !handle || !cb)
        return -EINVAL;
    if ((rc = check_pairs(pairs, npairs, data, &total)) < 0)
        return rc;
    rc = submit(ds, handle, OP_WRITE, (struct df_op){ .pairs = pairs, .npairs = npairs,
                                                       .stream = total >= DF_L1_STREAM_MIN,
                                                       .wdata = data, .cb = cb, .user = user });
    if (rc == 0)
        ds->writes++;
    return rc;
}

int dfstore_read_lend(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                      uint32_t npairs, uint64_t ra_max, void *out, struct df_l1_loans *loans,
                      dfstore_cb cb, void *user)
{
    uint64_t total;
    int rc;

    if (!ds || !handle || !cb)
        return -EINVAL;
    if ((rc = check_pairs(pairs, npairs, out, &total)) < 0)
        return rc;
    if (ra_max == DFSTORE_RA_DEFAULT || ds->ra_default == 0)
        ra_max = ds->ra_default;    /* a server without read-ahead takes no hint */
    return submit(ds, handle, OP_READ, (struct df_op){ .pairs = pairs, .npairs = npairs,
                                                        .stream = total >= DF_L1_STREAM_MIN,
                                                        .ra_max = ra_max, .rdata = out,
                                                        .loans = loans, .cb = cb,
                                                        .user = user });
}

int dfstore_read_ra(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                    uint32_t npairs, uint64_t ra_max, void *out, dfstore_cb cb, void *user)
{
    return dfstore_read_lend(ds, handle, pairs, npairs, ra_max, out, NULL, cb, user);
}

int dfstore_read(struct dfstore *ds, uint64_t handle, const struct ipvfs_pair *pairs,
                 uint32_t npairs, void *out, dfstore_cb cb, void *user)
{
    return dfstore_read_ra(ds, handle, pairs, npairs, DFSTORE_RA_DEFAULT, out, cb, user);
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
