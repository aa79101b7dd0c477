/* The L1's write-back (l1cache.h): gathered write-backs of dirty
 * blocks (runs of their dirty sectors), discards, and the flush rounds
 * that df_l1_flush waits on.  Split from l1cache.c, which keeps the
 * slots, reads and writes. */
#include "backend/dfstore/l1cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/dfstore.h"
#include "common/log.h"

/* A gathered write-back of n adjacent blocks, from a copy: writes may
 * change the slots meanwhile, and RAID-5 computes parity from the buffer
 * it is given, which must hold still until the write completes. */
struct wb_ctx {
    struct df_l1 *l1;
    uint32_t n;
    uint32_t slot[L1_RUN_BLOCKS];
    uint64_t seq[L1_RUN_BLOCKS];
    uint8_t *copy;
    uint32_t nios;              /* volume writes issued (runs of dirty sectors) */
    int pending;                /* of them in flight, + 1 while issuing */
    int status;                 /* the first error */
};

struct l1_flush {
    iraid_cb cb;
    void *user;
    struct l1_flush *next;
};

/* ---- write-back ---- */

/* A block of the running flush round is done: clean, or written back up
 * to the round's sequence, or failed (the round reports the error). */
static void round_count(struct df_l1 *l1, uint32_t slot, int status)
{
    struct l1_slot *s = &l1->slots[slot];

    if (!s->in_round)
        return;
    if (status < 0 && l1->round_status == 0)
        l1->round_status = status;
    if (status < 0 || !s->dirty || s->durable_seq >= l1->round_seq) {
        s->in_round = 0;
        l1->round_pending--;
    }
}

/* The write-back's volume writes are all done: each block written up to
 * its sequence is clean (its dirty sectors all went out). */
static void wb_finish(struct wb_ctx *ctx)
{
    struct df_l1 *l1 = ctx->l1;
    int status = ctx->status, again = 0;

    l1->inflight--;
    if (status < 0)
        log_error("dfstore: L1 write-back of %u blocks at volume block %llu failed: %s", ctx->n,
                  (unsigned long long)l1->slots[ctx->slot[0]].vb, strerror(-status));
    for (uint32_t i = 0; i < ctx->n; i++) {
        struct l1_slot *s = &l1->slots[ctx->slot[i]];
        l1_trace(l1, "C %u %d\n", ctx->slot[i], status == 0);
        s->wb = 0;
        if (status == 0) {
            if (ctx->seq[i] > s->durable_seq)
                s->durable_seq = ctx->seq[i];
            if (s->dirty && s->latest_seq == ctx->seq[i]) {   /* not discarded */
                s->dirty = 0;
                memset(&s->dmap, 0, sizeof(s->dmap));
                l1->ndirty--;
            }
            l1->stats.writebacks++;
        }
        round_count(l1, ctx->slot[i], status);
        if (s->state == SLOT_EVICTING && !s->dirty) {
            u64map_del(&l1->slot_of, s->vb);
            l1_slot_free(l1, ctx->slot[i]);
        } else if (s->dirty && status == 0 && (s->in_round || s->state == SLOT_EVICTING)) {
            again = 1;      /* written meanwhile: the newer bytes go out too */
        }
    }
    l1->stats.writeback_ios += ctx->nios;
    l1_copy_put(l1, ctx->copy, ctx->n);
    free(ctx);
    /* A failed block waits for the next round (within about a second). */
    if (again)
        l1_wb_pass(l1);
    l1_round_check(l1);
}

static void wb_done(struct iraid_volume *vol, int status, void *user)
{
    struct wb_ctx *ctx = user;

    (void)vol;
    if (status < 0 && ctx->status == 0)
        ctx->status = status;
    if (--ctx->pending == 0)
        wb_finish(ctx);
}

/* One volume write of bytes [a, b) of the copy. */
static void wb_write(struct wb_ctx *ctx, uint64_t a, uint64_t b)
{
    struct df_l1 *l1 = ctx->l1;
    struct iovec iov = { ctx->copy + a, b - a };
    int rc = iraid_writev(l1->vol, l1->slots[ctx->slot[0]].vb * DFSTORE_BLOCK + a, &iov, 1,
                          wb_done, ctx);

    if (rc < 0 && ctx->status == 0)
        ctx->status = rc;
    if (rc == 0) {
        ctx->pending++;
        ctx->nios++;
    }
}

/* Issues the volume writes of ctx's runs of dirty sectors, joined across
 * gaps of at most a block of clean cached sectors (cache_sect_bridge):
 * 0, or -ENOMEM (nothing issued). */
static int wb_runs(struct wb_ctx *ctx)
{
    struct df_l1 *l1 = ctx->l1;
    const struct cache_smap *maps[L1_RUN_BLOCKS], *holes[L1_RUN_BLOCKS];
    uint32_t max = ctx->n * (l1->nsect / 2 + 1), nruns;
    struct cache_run *runs = malloc((size_t)max * sizeof(*runs));

    if (!runs)
        return -ENOMEM;
    for (uint32_t i = 0; i < ctx->n; i++) {
        maps[i] = &l1->slots[ctx->slot[i]].dmap;
        holes[i] = &l1->slots[ctx->slot[i]].holes;
    }
    nruns = cache_sect_runs(maps, ctx->n, l1->nsect, l1->sect, runs, max);
    nruns = cache_sect_bridge(runs, nruns, holes, ctx->n, l1->sect, CACHE_WB_BRIDGE);
    for (uint32_t r = 0; r < nruns; r++)
        wb_write(ctx, runs[r].start, runs[r].end);
    free(runs);
    return 0;
}

/* Writes back slots[0..n) (adjacent volume blocks): from a copy of them,
 * each run of adjacent dirty sectors (across the blocks) in one volume
 * write, so blocks dirty in every sector go out as one. */
void l1_wb_issue(struct df_l1 *l1, const uint32_t *slots, uint32_t n)
{
    struct wb_ctx *ctx = calloc(1, sizeof(*ctx));
    int rc = -ENOMEM;

    if (ctx && (ctx->copy = l1_copy_get(l1, n))) {
        ctx->l1 = l1;
        ctx->n = n;
        ctx->pending = 1;       /* held while issuing */
        for (uint32_t i = 0; i < n; i++) {
            ctx->slot[i] = slots[i];
            ctx->seq[i] = l1->slots[slots[i]].latest_seq;
            memcpy(ctx->copy + (size_t)i * DFSTORE_BLOCK, l1_slot_data(l1, slots[i]), DFSTORE_BLOCK);
            l1->slots[slots[i]].wb = 1;
        }
        rc = wb_runs(ctx);
        if (rc == 0)
            rc = ctx->nios > 0 ? 0 : ctx->status;
    }
    if (rc == 0) {
        l1->inflight++;
        for (uint32_t i = 0; i < n; i++)
            l1_trace(l1, "S %u %u\n", slots[i], i);
        /* No dirty sector among them (all discarded): clean now. */
        if (--ctx->pending == 0)
            wb_finish(ctx);
        return;
    }
    log_error("dfstore: cannot start an L1 write-back: %s", strerror(-rc));
    for (uint32_t i = 0; i < n; i++) {
        l1->slots[slots[i]].wb = 0;
        round_count(l1, slots[i], rc);
    }
    if (ctx)
        l1_copy_put(l1, ctx->copy, n);
    free(ctx);
    l1_round_check(l1);
}

static int by_block(const void *a, const void *b, void *arg)
{
    const struct l1_slot *slots = arg;
    uint64_t x = slots[*(const uint32_t *)a].vb, y = slots[*(const uint32_t *)b].vb;

    return x < y ? -1 : x > y;
}

/* Writes back every dirty block without a write-back in flight, sorted
 * by volume block and gathered into runs of adjacent blocks, so that
 * RAID-5 sees whole stripes where the dirty blocks make them. */
void l1_wb_pass(struct df_l1 *l1)
{
    uint32_t *todo = malloc((size_t)l1->nslots * sizeof(*todo)), n = 0, start = 0;

    if (!todo) {
        log_error("dfstore: L1: no memory for a write-back pass; retried by the next flush");
        return;
    }
    for (uint32_t s = 0; s < l1->nslots; s++)
        if (l1->slots[s].dirty && !l1->slots[s].wb)
            todo[n++] = s;
    qsort_r(todo, n, sizeof(*todo), by_block, l1->slots);
    for (uint32_t i = 1; i <= n; i++) {
        if (i < n && i - start < L1_RUN_BLOCKS &&
            l1->slots[todo[i]].vb == l1->slots[todo[i - 1]].vb + 1)
            continue;
        l1_wb_issue(l1, todo + start, i - start);
        start = i;
    }
    free(todo);
}

void df_l1_discard(struct df_l1 *l1, uint64_t vb)
{
    uint64_t s = l1->capacity ? l1_slot_find(l1, vb) : U64MAP_NONE;
    struct l1_slot *sl;

    l1_trace(l1, "D %llu\n", (unsigned long long)vb);
    if (s == U64MAP_NONE)
        return;
    sl = &l1->slots[s];
    if (sl->dirty) {
        sl->dirty = 0;
        memset(&sl->dmap, 0, sizeof(sl->dmap));
        l1->ndirty--;
    }
    if (sl->in_round) {
        sl->in_round = 0;
        l1->round_pending--;
    }
    if (!sl->wb) {
        if (sl->state == SLOT_EVICTING) {
            u64map_del(&l1->slot_of, vb);
            l1_slot_free(l1, (uint32_t)s);
        } else {
            l1_block_forget(l1, vb, SLOT_STALE);
        }
    }
    /* else wb_done frees an EVICTING slot, or keeps a clean VALID one */
    l1_round_check(l1);
}

/* ---- flush rounds ---- */

static void round_start(struct df_l1 *l1);

static void round_flushed(struct iraid_volume *vol, int status, void *user)
{
    struct df_l1 *l1 = user;
    struct l1_flush *w = l1->round_waiters;

    l1->inflight--;
    if (l1->round_status < 0)
        status = l1->round_status;
    l1->round_waiters = NULL;
    l1->round_state = ROUND_IDLE;
    if (l1->next_waiters)
        round_start(l1);
    while (w) {
        struct l1_flush *next = w->next;
        w->cb(l1->vol, status, w->user);
        free(w);
        w = next;
    }
}

static void round_fail_run(struct evloop *loop, uint64_t id, void *user)
{
    struct df_l1 *l1 = user;

    round_flushed(l1->vol, l1->round_status, l1);
}

/* Once every block of the round is written back: the volume flush. */
void l1_round_check(struct df_l1 *l1)
{
    int rc;

    if (l1->round_state != ROUND_WRITING || l1->round_pending > 0)
        return;
    l1->round_state = ROUND_FLUSHING;
    l1->inflight++;             /* the flush, or the deferred report */
    if ((rc = iraid_flush(l1->vol, round_flushed, l1)) == 0)
        return;
    if (l1->round_status == 0)
        l1->round_status = rc;
    /* Never inside df_l1_flush: its caller expects cb later. */
    if (evloop_defer(l1->loop, round_fail_run, l1) == 0) {
        log_error("dfstore: L1: no memory to report a failed flush; reporting it now");
        round_flushed(l1->vol, rc, l1);
    }
}

/* Takes the waiting flushes and waits until every block dirty now is
 * written back up to the writes absorbed so far. */
static void round_start(struct df_l1 *l1)
{
    l1->round_waiters = l1->next_waiters;
    l1->next_waiters = NULL;
    l1->round_state = ROUND_WRITING;
    l1->round_seq = l1->wseq;
    l1->round_status = 0;
    l1->round_pending = 0;
    l1->stats.flushes++;
    for (uint32_t s = 0; s < l1->nslots; s++) {
        struct l1_slot *sl = &l1->slots[s];
        if (sl->dirty && sl->durable_seq < l1->round_seq) {
            sl->in_round = 1;
            l1->round_pending++;
        }
    }
    l1_wb_pass(l1);
    l1_round_check(l1);
}

int df_l1_flush(struct df_l1 *l1, iraid_cb cb, void *user)
{
    struct l1_flush *w, **tail;

    if (l1->capacity == 0 || !cb)
        return iraid_flush(l1->vol, cb, user);
    if (!(w = malloc(sizeof(*w))))
        return -ENOMEM;
    *w = (struct l1_flush){ cb, user, NULL };
    for (tail = &l1->next_waiters; *tail; tail = &(*tail)->next)
        ;
    *tail = w;
    if (l1->round_state == ROUND_IDLE)
        round_start(l1);
    return 0;
}

int df_l1_busy(const struct df_l1 *l1)
{
    return l1->inflight > 0 || l1->round_state != ROUND_IDLE || l1->next_waiters ||
           l1->rq_inflight > 0 || l1->rq_head;
}
