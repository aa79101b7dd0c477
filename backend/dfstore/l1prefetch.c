/* The read-ahead pool's prefetching (see l1cache.h), apart from the
 * cache's own paths: it calls l1cache.c's slot functions, never the other
 * way round. */
#include "backend/dfstore/l1cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/dfstore/dfstore.h"
#include "common/log.h"

/* A prefetch of n adjacent volume blocks, straight into their slots. */
struct ra_ctx {
    struct df_l1 *l1;
    uint32_t n;
    uint32_t slot[L1_RUN_BLOCKS];
    struct iovec iov[L1_RUN_BLOCKS];
};

/* Milliseconds of CLOCK_MONOTONIC (0 if it cannot be read: the pool's
 * oldest block then counts as young, and a full pool waits for reads). */
static uint64_t now_ms(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Appends a prefetched slot to the pool's FIFO. */
static void ra_link(struct df_l1 *l1, uint32_t slot, uint64_t ms)
{
    struct l1_slot *s = &l1->slots[slot];

    s->ra = 1;
    s->ra_ms = ms;
    s->ra_prev = l1->ra_tail;
    s->ra_next = UINT32_MAX;
    if (l1->ra_tail != UINT32_MAX)
        l1->slots[l1->ra_tail].ra_next = slot;
    else
        l1->ra_head = slot;
    l1->ra_tail = slot;
    l1->ra_held++;
}

/* ---- read-ahead: prefetching ---- */

int df_l1_set_readahead(struct df_l1 *l1, uint64_t max_blocks)
{
    uint64_t cap = max_blocks < l1->capacity / 4 ? max_blocks : l1->capacity / 4;
    struct cache policy;

    if (l1->capacity == 0)
        return -EINVAL;
    if (l1->policy.resident || l1->inflight || l1->nfree != l1->nslots || l1->ra_cap)
        return -EBUSY;
    if (cap == 0)
        return 0;
    if (!(l1->waiters = calloc(l1->nslots, sizeof(*l1->waiters))))
        return -ENOMEM;
    /* The pool's blocks come out of the policy's: --cache-l1 bounds both. */
    if (cache_init(&policy, cache_policy_find("lru"), l1->capacity - cap) < 0) {
        free(l1->waiters);
        l1->waiters = NULL;
        return -ENOMEM;
    }
    cache_fini(&l1->policy);
    l1->policy = policy;
    l1->ra_cap = cap;
    l1->ra_head = l1->ra_tail = UINT32_MAX;
    return 0;
}

static void ra_done(struct iraid_volume *vol, int status, void *user)
{
    struct ra_ctx *ctx = user;
    struct df_l1 *l1 = ctx->l1;
    struct l1_wait *list = NULL;

    l1->inflight--;
    l1->ra_inflight -= ctx->n;
    for (uint32_t i = 0; i < ctx->n; i++) {
        uint32_t slot = ctx->slot[i];
        struct l1_slot *s = &l1->slots[slot];
        int waited = l1->waiters[slot] != NULL;

        if (status == 0 && s->state == SLOT_FILLING && l1_waiter_lend(l1, slot, &list))
            continue;           /* LENT to the stream's read that waited */
        list = l1_waiters_copy(l1, slot, status == 0 && s->state != SLOT_STALE, list);
        if (s->state != SLOT_FILLING) {
            l1_slot_free(l1, slot);        /* dropped or written meanwhile */
        } else if (status == 0) {
            s->state = SLOT_VALID;
            if (waited)
                l1_ra_promote(l1, slot);
        } else {
            l1_block_forget(l1, s->vb, SLOT_STALE);
            l1_slot_free(l1, slot);
        }
    }
    if (status < 0)
        log_warn("dfstore: L1: a prefetch of %u blocks failed: %s", ctx->n, strerror(-status));
    free(ctx);
    l1_waiters_finish(l1, list);
}

/* Sends one prefetch of the adjacent blocks in slots[0..n) (FILLING, in
 * the pool). */
static void ra_issue(struct df_l1 *l1, const uint32_t *slots, uint32_t n)
{
    struct ra_ctx *ctx = malloc(sizeof(*ctx));
    int rc = -ENOMEM;

    if (ctx) {
        ctx->l1 = l1;
        ctx->n = n;
        for (uint32_t i = 0; i < n; i++) {
            ctx->slot[i] = slots[i];
            ctx->iov[i] = (struct iovec){ l1_slot_data(l1, slots[i]), DFSTORE_BLOCK };
        }
        /* the L1 keeps the blocks: an exclusive L2 below may give them up */
        rc = iraid_readv_flags(l1->vol, l1->slots[slots[0]].vb * DFSTORE_BLOCK, ctx->iov,
                               (int)n, IRAID_READ_DPO, ra_done, ctx);
    }
    if (rc == 0) {
        l1->inflight++;
        l1->ra_inflight += n;
        l1->stats.readahead_blocks += n;
        return;
    }
    free(ctx);
    for (uint32_t i = 0; i < n; i++) {
        l1->slots[slots[i]].state = SLOT_VALID;     /* nothing in flight: freed at once */
        l1_block_forget(l1, l1->slots[slots[i]].vb, SLOT_STALE);
    }
}

/* Whether one more block may be prefetched now, besides the taken run of
 * k not yet issued: the in-flight bound, a free slot, and room in the pool
 * (its oldest unread block gives way). */
static int ra_room(struct df_l1 *l1, uint32_t k, uint64_t ms)
{
    if (l1->ra_inflight + k >= L1_RA_INFLIGHT)
        return 0;
    if (l1->ra_held >= l1->ra_cap) {
        uint32_t old = l1->ra_head;
        if (old == UINT32_MAX || l1->slots[old].state != SLOT_VALID ||
            ms < l1->slots[old].ra_ms + L1_RA_STALE_MS)
            return 0;
        l1_block_forget(l1, l1->slots[old].vb, SLOT_ORPHAN);
    }
    return l1->nfree > 0;
}

uint32_t df_l1_prefetch(struct df_l1 *l1, const uint64_t *vbs, uint32_t n)
{
    uint32_t run[L1_RUN_BLOCKS], k = 0, i;
    uint64_t ms = now_ms();

    if (l1->ra_cap == 0)
        return 0;
    for (i = 0; i < n; i++) {
        uint32_t slot;
        if (l1_slot_find(l1, vbs[i]) != U64MAP_NONE)
            continue;               /* cached, or being filled */
        if (k > 0 && (k == L1_RUN_BLOCKS || vbs[i] != l1->slots[run[k - 1]].vb + 1)) {
            ra_issue(l1, run, k);
            k = 0;
        }
        if (!ra_room(l1, k, ms))
            break;
        slot = l1->free_slots[--l1->nfree];
        l1->slots[slot] = (struct l1_slot){ .vb = vbs[i], .state = SLOT_FILLING };
        (void)u64map_put(&l1->slot_of, vbs[i], slot);  /* reserved for every slot */
        ra_link(l1, slot, ms);
        run[k++] = slot;
    }
    if (k > 0)
        ra_issue(l1, run, k);
    return i;
}
