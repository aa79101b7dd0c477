/* The L1's leaf helpers (l1cache.h, "internals"): the volume's shape,
 * byte copies between slots and iovecs, the write-back copy buffers, the
 * slots' memory and its loans, the read-ahead pool's list, the reads
 * waiting for a fill, the public queries of the L1's state, the trace and
 * the slot map.  They touch only the struct df_l1 they are given and call
 * nothing else of the L1, so l1cache.c, l1prefetch.c, l1writeback.c and
 * l1coalesce.c all use them without calling each other in a circle. */
#include "backend/dfstore/l1cache.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/dfstore.h"

/* A read waiting for the fill of its block (read-ahead set up).  ok: the
 * fill's bytes were copied to it; else it reads the volume itself. */
struct l1_wait {
    struct l1_wait *next;
    uint64_t off;               /* volume offset of the read */
    struct df_l1_loans *loans;  /* it may take the slot (l1_waiter_lend) */
    iraid_cb cb;
    void *user;
    int ok;
    int niov;
    struct iovec iov[];
};

/* The slots' memory (l1cache.h, "Loans"): the L1's while it is open,
 * then its last loan's. */
struct df_l1_lender {
    struct df_l1 *l1;           /* NULL once df_l1_fini ran */
    uint8_t *data;
    uint64_t nlent;             /* slots lent now */
};

/* ---- the volume's shape ---- */

void l1_volume_shape(const struct iraid_volume *vol, uint32_t *out_unit_blocks,
                     uint64_t *out_stream_grain)
{
    struct iraid_status *st = malloc(sizeof(*st));
    uint64_t data = 0;

    *out_unit_blocks = 0;
    *out_stream_grain = 0;
    if (!st || iraid_get_status(vol, st) != 0) {
        free(st);
        return;
    }
    /* a stripe's data */
    data = st->level == 5 ? st->chunk * (st->nmembers - 1)
           : st->level == 1 ? st->chunk : st->chunk * st->nmembers;
    *out_stream_grain = st->level == 5 ? data : 1;
    free(st);
    if (data && data % DFSTORE_BLOCK == 0 && data <= (uint64_t)L1_RUN_BLOCKS * DFSTORE_BLOCK)
        *out_unit_blocks =
            (uint32_t)((uint64_t)L1_RUN_BLOCKS * DFSTORE_BLOCK / data * data / DFSTORE_BLOCK);
}

/* ---- iovecs ---- */

uint64_t l1_iov_len(const struct iovec *iov, int niov)
{
    uint64_t n = 0;

    for (int i = 0; i < niov; i++)
        n += iov[i].iov_len;
    return n;
}

/* Copies src into the buffers of iov, in order, until they are full. */
void l1_copy_out(const struct iovec *iov, int niov, const uint8_t *src)
{
    for (int i = 0; i < niov; i++) {
        memcpy(iov[i].iov_base, src, iov[i].iov_len);
        src += iov[i].iov_len;
    }
}

/* Copies len bytes of the iov stream, from byte skip on, to dst. */
void l1_copy_in(uint8_t *dst, const struct iovec *iov, int niov, uint64_t skip, uint64_t len)
{
    for (int i = 0; i < niov && len > 0; i++) {
        uint64_t n = iov[i].iov_len;
        if (skip >= n) {
            skip -= n;
            continue;
        }
        n -= skip;
        if (n > len)
            n = len;
        memcpy(dst, (const uint8_t *)iov[i].iov_base + skip, n);
        dst += n;
        len -= n;
        skip = 0;
    }
}

/* ---- slots and loans ---- */

void l1_slot_free(struct df_l1 *l1, uint32_t slot)
{
    l1->slots[slot] = (struct l1_slot){ .state = SLOT_FREE };
    l1->free_slots[l1->nfree++] = slot;
}

int l1_lender_open(struct df_l1 *l1, uint64_t nslots)
{
    struct df_l1_lender *le = calloc(1, sizeof(*le));

    /* calloc: pages are committed as blocks are first used. */
    if (!le || !(le->data = calloc(nslots, DFSTORE_BLOCK))) {
        free(le);
        return -ENOMEM;
    }
    le->l1 = l1;
    l1->lender = le;
    l1->data = le->data;
    return 0;
}

static void lender_free(struct df_l1_lender *le)
{
    free(le->data);
    free(le);
}

void l1_lender_close(struct df_l1 *l1)
{
    struct df_l1_lender *le = l1->lender;

    if (!le)
        return;
    if (le->nlent)
        le->l1 = NULL;          /* the last loan given back frees it */
    else
        lender_free(le);
    l1->lender = NULL;
    l1->data = NULL;
}

int l1_lend(struct df_l1 *l1, uint32_t slot, const struct iovec *iov, int niov,
            struct df_l1_loans *loans)
{
    struct l1_slot *s = &l1->slots[slot];

    if (!loans || !s->ra || niov != 1 || iov[0].iov_len != DFSTORE_BLOCK ||
        l1->lender->nlent >= L1_LEND_MAX(l1) || (loans->lender && loans->lender != l1->lender))
        return 0;
    if (loans->n == loans->cap) {
        uint32_t cap = loans->cap ? 2 * loans->cap : 16;
        struct df_l1_loan *v = realloc(loans->v, cap * sizeof(*v));
        if (!v)
            return 0;
        loans->v = v;
        loans->cap = cap;
    }
    loans->v[loans->n++] = (struct df_l1_loan){ iov[0].iov_base, l1_slot_data(l1, slot), slot };
    loans->lender = l1->lender;
    l1->lender->nlent++;
    l1_ra_unlink(l1, slot, 1);
    u64map_del(&l1->slot_of, s->vb);
    s->state = SLOT_LENT;
    l1->stats.readahead_lent++;
    return 1;
}

void df_l1_loans_return(struct df_l1_loans *loans)
{
    struct df_l1_lender *le = loans->lender;

    for (uint32_t i = 0; i < loans->n; i++) {
        if (le->l1)
            l1_slot_free(le->l1, loans->v[i].slot);
        if (--le->nlent == 0 && !le->l1)
            lender_free(le);
    }
    free(loans->v);
    *loans = (struct df_l1_loans){ 0 };
}

void df_l1_loans_settle(struct df_l1_loans *loans)
{
    for (uint32_t i = 0; i < loans->n; i++)
        memcpy(loans->v[i].dst, loans->v[i].src, DFSTORE_BLOCK);
    df_l1_loans_return(loans);
}

/* ---- the read-ahead pool ---- */

/* Takes a slot out of the pool: used by a read (a readahead hit) or
 * dropped unread (wasted).  Nothing for a slot not in it. */
void l1_ra_unlink(struct df_l1 *l1, uint32_t slot, int used)
{
    struct l1_slot *s = &l1->slots[slot];

    if (!s->ra)
        return;
    if (s->ra_prev != UINT32_MAX)
        l1->slots[s->ra_prev].ra_next = s->ra_next;
    else
        l1->ra_head = s->ra_next;
    if (s->ra_next != UINT32_MAX)
        l1->slots[s->ra_next].ra_prev = s->ra_prev;
    else
        l1->ra_tail = s->ra_prev;
    s->ra = 0;
    l1->ra_held--;
    if (used)
        l1->stats.readahead_hits++;
    else
        l1->stats.readahead_wasted++;
}

/* ---- reads waiting for a fill ---- */

/* Queues a read of the block in slot (FILLING) behind its fill. */
int l1_wait_fill(struct df_l1 *l1, uint32_t slot, uint64_t off, const struct iovec *iov,
                 int niov, struct df_l1_loans *loans, iraid_cb cb, void *user)
{
    struct l1_wait *w = malloc(sizeof(*w) + (size_t)niov * sizeof(*iov));

    if (!w) {
        l1->stats.bypasses++;
        return iraid_readv(l1->vol, off, iov, niov, cb, user);
    }
    *w = (struct l1_wait){ .next = l1->waiters[slot], .off = off, .loans = loans, .cb = cb,
                           .user = user, .niov = niov };
    memcpy(w->iov, iov, (size_t)niov * sizeof(*iov));
    l1->waiters[slot] = w;
    return 0;
}

int l1_waiter_lend(struct df_l1 *l1, uint32_t slot, struct l1_wait **list)
{
    struct l1_wait *w = l1->waiters[slot];

    if (!w || w->next || !w->loans || !l1_lend(l1, slot, w->iov, w->niov, w->loans))
        return 0;
    l1->waiters[slot] = NULL;
    l1->stats.hits++;
    w->ok = 1;
    w->next = *list;
    *list = w;
    return 1;
}

/* The fill of slot completed: its waiters move onto list, each with the
 * bytes copied (valid) or marked to read the volume itself.  Copying now,
 * before any callback runs, since the slot may be freed and reused. */
struct l1_wait *l1_waiters_copy(struct df_l1 *l1, uint32_t slot, int valid,
                                struct l1_wait *list)
{
    struct l1_wait *w = l1->waiters ? l1->waiters[slot] : NULL, *next;

    if (w)
        l1->waiters[slot] = NULL;
    for (; w; w = next) {
        next = w->next;
        w->ok = valid;
        if (valid) {
            l1_copy_out(w->iov, w->niov, l1_slot_data(l1, slot) + w->off % DFSTORE_BLOCK);
            l1->stats.hits++;
        }
        w->next = list;
        list = w;
    }
    return list;
}

/* Completes the waiters of waiters_copy (from a volume callback, so cb
 * may run now). */
void l1_waiters_finish(struct df_l1 *l1, struct l1_wait *list)
{
    while (list) {
        struct l1_wait *w = list;
        int rc = 0;
        list = w->next;
        if (w->ok)
            w->cb(l1->vol, 0, w->user);
        else if ((l1->stats.bypasses++,
                  rc = iraid_readv(l1->vol, w->off, w->iov, w->niov, w->cb, w->user)) < 0)
            w->cb(l1->vol, rc, w->user);
        free(w);
    }
}

/* A buffer for the copy of n blocks: a spare one for a whole run.  64-byte
 * aligned: RAID-5 computes a stripe's parity straight from its chunks
 * only where they are 32-byte aligned (iraid/raid5.c chunk_src), else it
 * copies every chunk once more first; malloc gives 16. */
uint8_t *l1_copy_get(struct df_l1 *l1, uint32_t n)
{
    void *mem;

    if (n == L1_RUN_BLOCKS && l1->nspare_copies > 0)
        return l1->spare_copies[--l1->nspare_copies];
    if (posix_memalign(&mem, 64, (size_t)n * DFSTORE_BLOCK) != 0)
        return NULL;
    return mem;
}

void l1_copy_put(struct df_l1 *l1, uint8_t *copy, uint32_t n)
{
    if (copy && n == L1_RUN_BLOCKS && l1->nspare_copies < L1_SPARE_COPIES)
        l1->spare_copies[l1->nspare_copies++] = copy;
    else
        free(copy);
}

/* ---- queries (l1cache.h) ---- */

int df_l1_dirty_young(const struct df_l1 *l1)
{
    uint64_t now = evloop_now_ms();

    if (l1->ndirty == 0)
        return 0;
    for (uint32_t s = 0; s < l1->nslots; s++)
        if (l1->slots[s].dirty && now - l1->slots[s].dirty_ms >= L1_AGE_MS)
            return 0;
    return 1;
}

int df_l1_partial_young(const struct df_l1 *l1)
{
    uint64_t now = evloop_now_ms();
    int partial = 0;

    for (uint32_t s = 0; s < l1->nslots && l1->ndirty; s++) {
        if (!l1->slots[s].dirty)
            continue;
        if (now - l1->slots[s].dirty_ms >= L1_AGE_MS)
            return 0;
        partial |= cache_smap_any(&l1->slots[s].holes, 0, l1->nsect);
    }
    return partial;
}

void df_l1_get_stats(const struct df_l1 *l1, struct df_l1_stats *out)
{
    *out = l1->stats;
    out->resident = l1->policy.resident + l1->ra_held;
    out->dirty = l1->ndirty;
}

/* ---- the trace and the slot map (l1cache.h; shared by l1cache.c and
 * l1writeback.c) ---- */

void l1_trace(struct df_l1 *l1, const char *fmt, ...)
{
    va_list ap;

    if (!l1->trace)
        return;
    va_start(ap, fmt);
    /* The owner sees a failed write through ferror (l1cache.h). */
    (void)vfprintf(l1->trace, fmt, ap);
    va_end(ap);
}

uint64_t l1_slot_find(const struct df_l1 *l1, uint64_t vb)
{
    return u64map_get(&l1->slot_of, vb);
}

/* Takes a clean block out of the map and the policy.  Its slot is freed,
 * or, while a fill into it is in flight, left in state for the fill's
 * completion to free (ORPHAN: evicted; STALE: written meanwhile). */
void l1_block_forget(struct df_l1 *l1, uint64_t vb, uint8_t state)
{
    uint64_t s = l1_slot_find(l1, vb);

    if (s == U64MAP_NONE)
        return;
    l1_ra_unlink(l1, (uint32_t)s, 0);
    u64map_del(&l1->slot_of, vb);
    cache_remove(&l1->policy, vb);
    if (l1->slots[s].state == SLOT_FILLING)
        l1->slots[s].state = state;
    else
        l1_slot_free(l1, (uint32_t)s);
}
