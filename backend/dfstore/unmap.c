/* Discards of the datafile store (see unmap.h). */
#include "backend/dfstore/unmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/dfstore.h"
#include "backend/dfstore/space.h"
#include "common/log.h"

#define UNMAP_MAX_INFLIGHT 4
#define UNMAP_MAX_RUN 512                /* blocks: 32 MiB */

/* One iraid_unmap in flight: the blocks it holds used until it ends. */
struct unmap_run {
    struct df_unmap *u;
    uint64_t lo, hi;
};

void df_unmap_init(struct df_unmap *u, struct iraid_volume *vol, struct df_space *space)
{
    *u = (struct df_unmap){ .vol = vol, .space = space, .gran = 1 };
}

void df_unmap_fini(struct df_unmap *u)
{
    free(u->queued);
    u->queued = NULL;
}

int df_unmap_busy(const struct df_unmap *u)
{
    return u->inflight > 0 || u->first < u->nqueued;
}

int df_unmap_queue(struct df_unmap *u, uint64_t vblock)
{
    if (u->nqueued == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 256;
        uint64_t *q = realloc(u->queued, cap * sizeof(*q));
        if (!q) {
            df_space_clear(u->space, vblock);
            return -ENOMEM;
        }
        u->queued = q;
        u->cap = cap;
    }
    u->queued[u->nqueued++] = vblock;
    return 0;
}

void df_unmap_widen(uint64_t lo, uint64_t hi, uint64_t gran, uint64_t total,
                    int (*is_free)(const void *ctx, uint64_t b), const void *ctx,
                    uint64_t *out_lo, uint64_t *out_hi)
{
    uint64_t a = gran > 1 ? lo / gran * gran : lo;
    uint64_t b = gran > 1 ? (hi + gran - 1) / gran * gran : hi;

    *out_lo = lo;
    *out_hi = hi;
    for (uint64_t x = a; x < lo && is_free(ctx, x); x++)
        if (x + 1 == lo)
            *out_lo = a;
    for (uint64_t x = hi; b <= total && x < b && is_free(ctx, x); x++)
        if (x + 1 == b)
            *out_hi = b;
}

static int block_free(const void *ctx, uint64_t b)
{
    return !df_space_test(ctx, b);
}

static void run_release(struct unmap_run *r)
{
    for (uint64_t b = r->lo; b < r->hi; b++)
        df_space_clear(r->u->space, b);
}

static void unmap_pump(struct df_unmap *u);

static void run_done(struct iraid_volume *vol, int status, void *user)
{
    struct unmap_run *r = user;
    struct df_unmap *u = r->u;

    if (status < 0 && status != -ECANCELED)
        log_warn("dfstore: discarding volume blocks %" PRIu64 "-%" PRIu64 " failed (%s); "
                 "they stay allocated on the targets", r->lo, r->hi - 1, strerror(-status));
    run_release(r);
    free(r);
    u->inflight--;
    unmap_pump(u);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Sends [lo, hi) (bits set: the run's own, and the free blocks it grew
 * over, claimed here) to the volume; frees it at once if that fails. */
static void run_send(struct df_unmap *u, uint64_t lo, uint64_t hi, uint64_t gran)
{
    struct unmap_run *r = malloc(sizeof(*r));
    uint64_t wlo, whi;
    int rc = -ENOMEM;

    df_unmap_widen(lo, hi, gran, u->space->total_blocks, block_free, u->space, &wlo, &whi);
    for (uint64_t b = wlo; b < lo; b++)
        df_space_set(u->space, b);
    for (uint64_t b = hi; b < whi; b++)
        df_space_set(u->space, b);
    if (r) {
        *r = (struct unmap_run){ .u = u, .lo = wlo, .hi = whi };
        rc = iraid_unmap(u->vol, wlo * DFSTORE_BLOCK, (whi - wlo) * DFSTORE_BLOCK, run_done, r);
    }
    if (rc == 0) {
        u->inflight++;
        u->blocks_unmapped += whi - wlo;
        return;
    }
    if (rc != -EOPNOTSUPP)
        log_warn("dfstore: cannot discard volume blocks %" PRIu64 "-%" PRIu64 ": %s", wlo,
                 whi - 1, strerror(-rc));
    if (r)
        free(r);
    for (uint64_t b = wlo; b < whi; b++)
        df_space_clear(u->space, b);
}

/* Sends runs of the queue, at most UNMAP_MAX_INFLIGHT at a time, each
 * at most about UNMAP_MAX_RUN blocks (cut where the granularity allows,
 * so no stripe is split between two runs): a large remove neither floods
 * the members with commands nor the volume with stripe ops. */
static void unmap_pump(struct df_unmap *u)
{
    while (u->inflight < UNMAP_MAX_INFLIGHT && u->first < u->nqueued) {
        size_t i = u->first, j = i + 1;

        while (j < u->nqueued && u->queued[j] == u->queued[j - 1] + 1 &&
               (j - i < UNMAP_MAX_RUN || u->queued[j] % u->gran != 0))
            j++;
        u->first = j;
        run_send(u, u->queued[i], u->queued[j - 1] + 1, u->gran);
    }
    if (u->first == u->nqueued)
        u->first = u->nqueued = 0;
}

void df_unmap_start(struct df_unmap *u)
{
    uint64_t gran = iraid_unmap_granularity(u->vol);

    if (u->first == u->nqueued)
        return;
    if (gran == 0) {
        for (size_t i = u->first; i < u->nqueued; i++)
            df_space_clear(u->space, u->queued[i]);
        u->first = u->nqueued = 0;
        return;
    }
    /* in blocks; a stripe that is no multiple of a block is not widened */
    u->gran = gran % DFSTORE_BLOCK == 0 ? gran / DFSTORE_BLOCK : 1;
    memmove(u->queued, u->queued + u->first, (u->nqueued - u->first) * sizeof(*u->queued));
    u->nqueued -= u->first;
    u->first = 0;
    qsort(u->queued, u->nqueued, sizeof(*u->queued), cmp_u64);
    unmap_pump(u);
}
