/* The I/O node's L1 cache of volume blocks, write-back (see l1cache.h). */
#include "backend/dfstore/l1cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/dfstore.h"
#include "common/log.h"

_Static_assert(DFSTORE_BLOCK == CACHE_BLOCK_SIZE, "the L1 block is the store's block");

/* A completion without volume I/O (a read hit, an absorbed write),
 * deferred: the contract calls cb from the loop. */
struct done_ctx {
    struct df_l1 *l1;
    iraid_cb cb;
    void *user;
};

/* A fill: the whole block into slot, then the wanted bytes to the caller. */
struct fill_ctx {
    struct df_l1 *l1;
    uint32_t slot;
    uint32_t in;                /* offset of the read in the block */
    iraid_cb cb;
    void *user;
    int niov;
    struct iovec iov[];
};

/* A merge: the whole block read into buf, its bytes copied into the
 * slot's holes, then the wanted ones to the caller (l1cache.h). */
struct merge_ctx {
    struct df_l1 *l1;
    uint32_t slot, gen;
    uint64_t vb, off;           /* the block, and where the read starts */
    uint8_t *buf;
    iraid_cb cb;
    void *user;
    int niov;
    struct iovec iov[];
};

/* A write that went to the volume: a failure drops the clean blocks it
 * added (the volume does not hold their bytes). */
struct write_ctx {
    struct df_l1 *l1;
    uint64_t off, len;
    iraid_cb cb;
    void *user;
};


/* ---- set-up ---- */

int df_l1_init(struct df_l1 *l1, struct evloop *loop, struct iraid_volume *vol, uint64_t bytes)
{
    uint64_t n = bytes / DFSTORE_BLOCK, ns;

    memset(l1, 0, sizeof(*l1));
    l1->loop = loop;
    l1->vol = vol;
    if (n == 0)
        return 0;
    if (n >= (1ull << 31))
        return -EINVAL;
    /* Spares hold dirty blocks the policy evicted until they are written. */
    ns = n + n / 8 + 4;
    if (cache_init(&l1->policy, cache_policy_find("lru"), n) < 0)
        return -ENOMEM;
    if (cache_admit_init(&l1->admit, (uint32_t)n) < 0) {
        cache_fini(&l1->policy);
        return -ENOMEM;
    }
    l1->slots = calloc(ns, sizeof(*l1->slots));
    l1->free_slots = calloc(ns, sizeof(*l1->free_slots));
    if (l1_lender_open(l1, ns) < 0 || !l1->slots || !l1->free_slots ||
        u64map_reserve(&l1->slot_of, ns) < 0)
        goto free_all;
    for (uint64_t i = 0; i < ns; i++)
        l1->free_slots[i] = (uint32_t)(ns - 1 - i);
    l1->nfree = ns;
    l1->nslots = (uint32_t)ns;
    l1->capacity = l1->stats.capacity = n;
    l1_volume_shape(vol, &l1->unit_blocks, &l1->stream_grain);
    /* Sectors: the volume's block, when it divides the L1's into at most
     * CACHE_SECTORS_MAX; else the block is one sector (whole blocks). */
    l1->sect = iraid_block_size(vol);
    if (l1->sect < DFSTORE_BLOCK / CACHE_SECTORS_MAX || l1->sect > DFSTORE_BLOCK ||
        DFSTORE_BLOCK % l1->sect)
        l1->sect = DFSTORE_BLOCK;
    l1->nsect = DFSTORE_BLOCK / l1->sect;
    return 0;

free_all:
    df_l1_fini(l1);
    return -ENOMEM;
}

void df_l1_fini(struct df_l1 *l1)
{
    while (l1->nspare_copies > 0)
        free(l1->spare_copies[--l1->nspare_copies]);
    if (l1->ndirty)
        log_error("dfstore: L1 closed with %llu dirty blocks", (unsigned long long)l1->ndirty);
    if (l1->capacity)
        log_info("dfstore: L1 admission of small reads' fills: %llu filled (%llu hits on them), "
                 "%llu first misses and %llu low-yield ones read around; read-ahead: %llu "
                 "blocks prefetched, %llu read (%llu lent to replies), %llu dropped unread",
                 (unsigned long long)l1->admit.fills, (unsigned long long)l1->admit.fill_hits,
                 (unsigned long long)l1->admit.refused, (unsigned long long)l1->admit.gated,
                 (unsigned long long)l1->stats.readahead_blocks,
                 (unsigned long long)l1->stats.readahead_hits,
                 (unsigned long long)l1->stats.readahead_lent,
                 (unsigned long long)l1->stats.readahead_wasted);
    if (l1->stats_rq.volume_reads)
        log_info("dfstore: reads past the L1: %llu volume reads, %llu more reads coalesced "
                 "into them", (unsigned long long)l1->stats_rq.volume_reads,
                 (unsigned long long)l1->stats_rq.coalesced);
    u64map_free(&l1->rq_at);
    u64map_free(&l1->rq_end);
    cache_admit_fini(&l1->admit);
    cache_fini(&l1->policy);
    u64map_free(&l1->slot_of);
    free(l1->waiters);
    l1_lender_close(l1);
    free(l1->slots);
    free(l1->free_slots);
    memset(l1, 0, sizeof(*l1));
}

/* ---- trace (l1cache.h) ---- */

void df_l1_set_trace(struct df_l1 *l1, FILE *trace)
{
    l1->trace = trace;
}

/* ---- slots ---- */

/* Slot of vb if dirty with no write-back in flight, else U64MAP_NONE. */
static uint64_t wb_candidate(const struct df_l1 *l1, uint64_t vb)
{
    uint64_t s = l1_slot_find(l1, vb);

    return s != U64MAP_NONE && l1->slots[s].dirty && !l1->slots[s].wb ? s : U64MAP_NONE;
}

/* Writes back dirty vb with its dirty neighbours (inside its write-behind
 * unit, if any) in one request.  A dirty block reaches the LRU end when
 * the rest of its unit comes much later (files written at once interleave
 * on the volume, one writer runs ahead): alone it is part of a stripe,
 * which RAID-5 writes after reading the rest; its run is whole stripes. */
static void wb_around(struct df_l1 *l1, uint64_t vb)
{
    uint64_t ub = l1->unit_blocks, run = L1_RUN_BLOCKS, lo = vb, hi = vb;
    uint64_t first = ub ? vb / ub * ub : vb - (vb < run - 1 ? vb : run - 1);
    uint64_t last = ub ? first + ub - 1 : vb + run - 1;
    uint32_t slots[L1_RUN_BLOCKS], n = 0;

    while (lo > first && wb_candidate(l1, lo - 1) != U64MAP_NONE)
        lo--;
    while (hi < last && hi - lo + 1 < run && wb_candidate(l1, hi + 1) != U64MAP_NONE)
        hi++;
    for (uint64_t b = lo; b <= hi; b++)
        slots[n++] = (uint32_t)l1_slot_find(l1, b);
    l1_wb_issue(l1, slots, n);
}

/* The policy evicted vb: a dirty block stays mapped (EVICTING) until its
 * write-back completes; a clean one goes. */
static void victim_out(struct df_l1 *l1, uint64_t vb)
{
    uint64_t s = l1_slot_find(l1, vb);

    l1->stats.evictions++;
    if (s == U64MAP_NONE)
        return;
    if (l1->slots[s].dirty) {
        l1->slots[s].state = SLOT_EVICTING;
        if (!l1->slots[s].wb)
            wb_around(l1, vb);
        return;
    }
    /* A clean block goes down to the targets' L2 (exclusive caching): a
     * hint, whose failure costs only a later hit. */
    if (l1->slots[s].state == SLOT_VALID &&
        !cache_smap_any(&l1->slots[s].holes, 0, l1->nsect) &&
        iraid_demote(l1->vol, vb * DFSTORE_BLOCK, l1_slot_data(l1, s), DFSTORE_BLOCK) == 1)
        l1->stats.demotes++;
    l1_block_forget(l1, vb, SLOT_ORPHAN);
}

/* Makes vb resident (the policy may evict a block for it) and gives it a
 * slot in state; UINT32_MAX when no slot is free (vb is then not cached). */
static uint32_t block_add(struct df_l1 *l1, uint64_t vb, uint8_t state)
{
    struct cache_victim v;
    uint32_t slot;

    (void)cache_access(&l1->policy, vb, 0, &v);
    if (v.valid)
        victim_out(l1, v.key);
    if (l1->nfree == 0) {
        cache_remove(&l1->policy, vb);
        return UINT32_MAX;
    }
    slot = l1->free_slots[--l1->nfree];
    l1->slots[slot] = (struct l1_slot){ .vb = vb, .state = state, .gen = l1->slots[slot].gen + 1 };
    (void)u64map_put(&l1->slot_of, vb, slot);  /* reserved for every slot */
    return slot;
}

/* A cached block was used: the policy's MRU end (not while evicting). */
static void block_touch(struct df_l1 *l1, uint32_t slot)
{
    struct cache_victim v;

    if (l1->slots[slot].state == SLOT_VALID)
        (void)cache_access(&l1->policy, l1->slots[slot].vb, 0, &v);  /* a hit: no victim */
}

/* The slot took bytes the volume lacks (its dirty sectors: cache_sect_write). */
static void slot_dirty(struct df_l1 *l1, uint32_t slot)
{
    if (!l1->slots[slot].dirty) {
        l1->slots[slot].dirty = 1;
        l1->slots[slot].dirty_ms = evloop_now_ms();
        l1->ndirty++;
    }
    l1->slots[slot].latest_seq = ++l1->wseq;
}

/* ---- completions without volume I/O ---- */

static void done_run(struct evloop *loop, uint64_t id, void *user)
{
    struct done_ctx ctx = *(struct done_ctx *)user;

    free(user);
    ctx.l1->inflight--;
    ctx.cb(ctx.l1->vol, 0, ctx.user);
}

/* Queues cb(0) on the loop; NULL when out of memory (nothing queued). */
static struct done_ctx *done_later(struct df_l1 *l1, iraid_cb cb, void *user)
{
    struct done_ctx *ctx = malloc(sizeof(*ctx));

    if (!ctx)
        return NULL;
    *ctx = (struct done_ctx){ l1, cb, user };
    if (evloop_defer(l1->loop, done_run, ctx) == 0) {
        free(ctx);
        return NULL;
    }
    l1->inflight++;
    return ctx;
}

/* ---- read-ahead (the pool's list and the waiting reads: l1pool.c) ---- */

/* A read uses a prefetched block: it leaves the pool and becomes an
 * ordinary block at the policy's MRU end (only now may it evict one). */
void l1_ra_promote(struct df_l1 *l1, uint32_t slot)
{
    struct cache_victim v;

    l1_ra_unlink(l1, slot, 1);
    (void)cache_access(&l1->policy, l1->slots[slot].vb, 0, &v);
    if (v.valid)
        victim_out(l1, v.key);
}

/* A write drops the prefetched blocks it touches (see l1cache.h). */
static void ra_drop_range(struct df_l1 *l1, uint64_t off, uint64_t len)
{
    for (uint64_t vb = off / DFSTORE_BLOCK; vb * DFSTORE_BLOCK < off + len; vb++) {
        uint64_t s = l1_slot_find(l1, vb);
        if (s != U64MAP_NONE && l1->slots[s].ra)
            l1_block_forget(l1, vb, SLOT_STALE);
    }
}

/* ---- reads ---- */

static int bypass_read(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov,
                       iraid_cb cb, void *user)
{
    l1->stats.bypasses++;
    return l1_vol_readv(l1, off, iov, niov, cb, user);
}

static void fill_done(struct iraid_volume *vol, int status, void *user)
{
    struct fill_ctx *ctx = user;
    struct df_l1 *l1 = ctx->l1;
    iraid_cb cb = ctx->cb;
    void *cb_user = ctx->user;
    uint32_t slot = ctx->slot;
    struct l1_wait *w;

    l1->inflight--;
    l1_trace(l1, "V %u %d\n", slot, status == 0);
    if (status == 0)
        l1_copy_out(ctx->iov, ctx->niov, l1_slot_data(l1, slot) + ctx->in);
    w = l1_waiters_copy(l1, slot, status == 0 && l1->slots[slot].state != SLOT_STALE, NULL);
    if (l1->slots[slot].state != SLOT_FILLING) {
        l1_slot_free(l1, slot);            /* evicted or written meanwhile */
    } else if (status == 0) {
        l1->slots[slot].state = SLOT_VALID;
    } else {
        /* Out of the map (FILLING becomes STALE, not freed there), then
         * freed here. */
        l1_block_forget(l1, l1->slots[slot].vb, SLOT_STALE);
        l1_slot_free(l1, slot);
    }
    free(ctx);
    cb(vol, status, cb_user);
    l1_waiters_finish(l1, w);
}

/* admitted: the fill cache_admit allowed (its hits count for the yield). */
static int read_fill(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov,
                     int admitted, iraid_cb cb, void *user)
{
    struct fill_ctx *ctx = malloc(sizeof(*ctx) + (size_t)niov * sizeof(*iov));
    uint64_t vb = off / DFSTORE_BLOCK;
    struct iovec whole;
    uint32_t slot;
    int rc;

    if (!ctx)
        return bypass_read(l1, off, iov, niov, cb, user);
    if ((slot = block_add(l1, vb, SLOT_FILLING)) == UINT32_MAX) {
        free(ctx);
        return bypass_read(l1, off, iov, niov, cb, user);
    }
    if (admitted) {
        l1->slots[slot].admitted = 1;
        cache_admit_filled(&l1->admit);
    }
    *ctx = (struct fill_ctx){ .l1 = l1, .slot = slot, .in = (uint32_t)(off % DFSTORE_BLOCK),
                              .cb = cb, .user = user, .niov = niov };
    memcpy(ctx->iov, iov, (size_t)niov * sizeof(*iov));
    whole = (struct iovec){ l1_slot_data(l1, slot), DFSTORE_BLOCK };
    /* The L1 keeps the block: an exclusive L2 below may give it up. */
    if ((rc = iraid_readv_flags(l1->vol, vb * DFSTORE_BLOCK, &whole, 1, IRAID_READ_DPO,
                                fill_done, ctx)) < 0) {
        l1->slots[slot].state = SLOT_VALID;  /* nothing in flight: freed at once */
        l1_block_forget(l1, vb, SLOT_STALE);
        free(ctx);
        return rc;
    }
    l1->inflight++;
    l1->stats.misses++;
    return 0;
}

/* A hit: the bytes copied out (or the slot lent), the completion
 * deferred to the loop.  drop: a stream's read to the end of a prefetched
 * block, which then leaves the L1 (drop-behind, l1cache.h), lent to the
 * read when it asked for loans; else the block is touched. */
static int read_hit(struct df_l1 *l1, uint32_t slot, uint64_t off, const struct iovec *iov,
                    int niov, int drop, struct df_l1_loans *loans, iraid_cb cb, void *user)
{
    if (!done_later(l1, cb, user))
        return -ENOMEM;
    if (drop && l1_lend(l1, slot, iov, niov, loans)) {
        l1->stats.hits++;
        return 0;
    }
    l1_copy_out(iov, niov, l1_slot_data(l1, slot) + off % DFSTORE_BLOCK);
    if (drop) {
        l1_ra_unlink(l1, slot, 1);
        l1_block_forget(l1, l1->slots[slot].vb, SLOT_STALE);
    } else {
        block_touch(l1, slot);
    }
    if (l1->slots[slot].admitted)
        cache_admit_hit(&l1->admit);
    l1->stats.hits++;
    return 0;
}

static void merge_done(struct iraid_volume *vol, int status, void *user)
{
    struct merge_ctx *ctx = user;
    struct df_l1 *l1 = ctx->l1;
    struct l1_slot *sl = &l1->slots[ctx->slot];
    iraid_cb cb = ctx->cb;
    void *cb_user = ctx->user;
    uint32_t lo, hi, at = 0;
    int rc;

    l1->inflight--;
    if (status == 0 && sl->gen == ctx->gen && sl->vb == ctx->vb &&
        (sl->state == SLOT_VALID || sl->state == SLOT_EVICTING)) {
        /* Holes are never dirty and no write ran meanwhile (the store
         * runs a block's reads only beside reads): the volume's bytes of
         * them are the block's. */
        while (cache_smap_next_run(&sl->holes, l1->nsect, at, &lo, &hi)) {
            memcpy(l1_slot_data(l1, ctx->slot) + (size_t)lo * l1->sect,
                   ctx->buf + (size_t)lo * l1->sect, (size_t)(hi - lo) * l1->sect);
            at = hi;
        }
        memset(&sl->holes, 0, sizeof(sl->holes));
        l1_copy_out(ctx->iov, ctx->niov, l1_slot_data(l1, ctx->slot) + ctx->off % DFSTORE_BLOCK);
    } else if (status == 0) {
        /* The slot went (written back, then freed): the volume has it all. */
        if ((rc = iraid_readv(l1->vol, ctx->off, ctx->iov, ctx->niov, cb, cb_user)) == 0) {
            free(ctx->buf);
            free(ctx);
            return;
        }
        status = rc;
    }
    free(ctx->buf);
    free(ctx);
    cb(vol, status, cb_user);
}

/* A read of slot's block that needs some of its holes and some of its
 * dirty sectors: the whole block from the volume into a buffer, then
 * merge_done.  Out of memory: -ENOMEM (the store fails the read). */
static int read_merge(struct df_l1 *l1, uint32_t slot, uint64_t off, const struct iovec *iov,
                      int niov, iraid_cb cb, void *user)
{
    struct merge_ctx *ctx = malloc(sizeof(*ctx) + (size_t)niov * sizeof(*iov));
    uint8_t *buf = malloc(DFSTORE_BLOCK);
    struct iovec whole = { buf, DFSTORE_BLOCK };
    int rc = -ENOMEM;

    if (ctx && buf) {
        *ctx = (struct merge_ctx){ .l1 = l1, .slot = slot, .gen = l1->slots[slot].gen,
                                   .vb = l1->slots[slot].vb, .off = off, .buf = buf, .cb = cb,
                                   .user = user, .niov = niov };
        memcpy(ctx->iov, iov, (size_t)niov * sizeof(*iov));
        rc = iraid_readv_flags(l1->vol, ctx->vb * DFSTORE_BLOCK, &whole, 1, IRAID_READ_DPO,
                               merge_done, ctx);
    }
    if (rc < 0) {
        free(buf);
        free(ctx);
        return rc;
    }
    l1->inflight++;
    l1->stats.misses++;
    block_touch(l1, slot);
    return 0;
}

/* Whether any block of [off, off + len) holds bytes the volume lacks. */
static int range_dirty(const struct df_l1 *l1, uint64_t off, uint64_t len)
{
    for (uint64_t vb = off / DFSTORE_BLOCK; vb * DFSTORE_BLOCK < off + len; vb++) {
        uint64_t s = l1_slot_find(l1, vb);
        if (s != U64MAP_NONE && l1->slots[s].dirty)
            return 1;
    }
    return 0;
}

int df_l1_readv(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, unsigned how,
                struct df_l1_loans *loans, iraid_cb cb, void *user)
{
    uint64_t len = l1_iov_len(iov, niov), vb = off / DFSTORE_BLOCK, slot;
    int stream = (how & DF_L1_STREAM) != 0;
    /* a stream's read to the block's end drops a prefetched block (and may
     * take it: loans) */
    int drop = stream && (off + len) % DFSTORE_BLOCK == 0;
    /* A miss of less than the block would read more than asked for: it
     * fills only when admitted (cache/cache.h), unless a write needs the
     * block next; a whole block costs the fill nothing. */
    int gated = !stream && !(how & DF_L1_OLD) && len < DFSTORE_BLOCK;

    if (cb && len)
        l1_trace(l1, "%c %llu %llu\n", stream ? 'B' : (how & DF_L1_OLD) ? 'M' : 'R',
                    (unsigned long long)off, (unsigned long long)len);
    if (l1->capacity == 0 || !cb || len == 0)
        return l1_vol_readv(l1, off, iov, niov, cb, user);
    if ((off + len - 1) / DFSTORE_BLOCK != vb) {
        /* The store reads within one block; a read across blocks goes
         * around the cache, which only works while they are clean. */
        if (range_dirty(l1, off, len)) {
            log_error("dfstore: L1: a read across dirty blocks at %llu", (unsigned long long)off);
            return -EINVAL;
        }
        return bypass_read(l1, off, iov, niov, cb, user);
    }
    slot = l1_slot_find(l1, vb);
    /* A write's read of old edge sectors fills nothing: the write is
     * absorbed around them (holes, l1cache.h). */
    if (slot == U64MAP_NONE &&
        (stream || (how & DF_L1_OLD) || (gated && !cache_admit(&l1->admit, vb))))
        return bypass_read(l1, off, iov, niov, cb, user);
    if (slot == U64MAP_NONE)
        return read_fill(l1, off, iov, niov, gated, cb, user);
    if (l1->slots[slot].state == SLOT_FILLING && l1->waiters)
        return l1_wait_fill(l1, (uint32_t)slot, off, iov, niov, drop ? loans : NULL, cb, user);
    if (l1->slots[slot].state == SLOT_FILLING)
        return bypass_read(l1, off, iov, niov, cb, user);  /* clean: the volume has it */
    switch (cache_sect_read(&l1->slots[slot].holes, &l1->slots[slot].dmap, l1->sect,
                         off % DFSTORE_BLOCK, len)) {
    case CACHE_READ_AROUND: return bypass_read(l1, off, iov, niov, cb, user);
    case CACHE_READ_MERGE: return read_merge(l1, (uint32_t)slot, off, iov, niov, cb, user);
    case CACHE_READ_HIT: break;
    }
    if (l1->slots[slot].ra && drop)
        return read_hit(l1, (uint32_t)slot, off, iov, niov, 1, loans, cb, user);
    if (l1->slots[slot].ra)
        l1_ra_promote(l1, (uint32_t)slot);
    return read_hit(l1, (uint32_t)slot, off, iov, niov, 0, NULL, cb, user);
}

/* ---- writes ---- */

/* Whether a write of [off, off + len) can be absorbed: every block cached
 * (not being filled) or not, with a free slot for each of the latter
 * (block_add takes at most one each), and no sector of a hole written in
 * part (cache_sect_fits). */
static int absorbable(const struct df_l1 *l1, uint64_t off, uint64_t len)
{
    uint64_t need = 0;

    /* Adding its whole blocks must not evict its own cached ones (they are
     * touched first, so only a write of more than the cache could). */
    if ((off + len - 1) / DFSTORE_BLOCK - off / DFSTORE_BLOCK + 1 > l1->capacity / 2)
        return 0;
    for (uint64_t vb = off / DFSTORE_BLOCK; vb * DFSTORE_BLOCK < off + len; vb++) {
        uint64_t s = l1_slot_find(l1, vb);
        uint64_t in = vb * DFSTORE_BLOCK < off ? off - vb * DFSTORE_BLOCK : 0;
        uint64_t end = (vb + 1) * DFSTORE_BLOCK < off + len ? DFSTORE_BLOCK
                                                            : off + len - vb * DFSTORE_BLOCK;
        if (s != U64MAP_NONE && l1->slots[s].state == SLOT_FILLING)
            return 0;
        if (!cache_sect_fits(s == U64MAP_NONE ? NULL : &l1->slots[s].holes, l1->sect, in, end - in))
            return 0;
        if (s == U64MAP_NONE)
            need++;
    }
    return need <= l1->nfree;
}

/* Whether the blocks of [off, off + len) not cached fit into the policy's
 * free room, or evict only clean blocks for it (the policy's next
 * victims, clean and idle: forgetting them costs no volume I/O).  A dirty
 * victim would be one of the rows' own blocks, written back before all
 * its rows arrived (3 x 3 tiles of 8 KiB rows over 64 MiB of L1); with
 * only free room, though, a cache full of another file's clean blocks
 * (read, or synced) took no row at all, and every row went to the volume
 * as a command of its own (issue 27). */
static int fits_clean(const struct df_l1 *l1, uint64_t off, uint64_t len)
{
    uint64_t need = 0, room = l1->policy.capacity - l1->policy.resident, keys[L1_ABSORB_EVICT];
    uint32_t n;

    for (uint64_t vb = off / DFSTORE_BLOCK; vb * DFSTORE_BLOCK < off + len; vb++)
        if (l1_slot_find(l1, vb) == U64MAP_NONE)
            need++;
    if (need <= room)
        return 1;
    if (need - room > L1_ABSORB_EVICT)
        return 0;
    n = cache_lru_oldest(&l1->policy, (uint32_t)(need - room), keys);
    if (n < need - room)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t s = l1_slot_find(l1, keys[i]);
        if (s == U64MAP_NONE || l1->slots[s].state != SLOT_VALID || l1->slots[s].dirty ||
            l1->slots[s].wb)
            return 0;
    }
    return 1;
}

/* The bytes of a write into the cached blocks it touches.  absorb: every
 * block takes them and their sectors become valid and dirty (blocks not
 * cached are added, the rest of them holes).  Else the write goes to the
 * volume too: cached blocks take the bytes (the sectors it covers whole
 * are valid; dirty blocks stay dirty, with a new sequence, so that a
 * write-back in flight with older bytes is followed by one with these),
 * whole blocks are added clean, blocks being filled are forgotten. */
static void write_into(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov,
                       uint64_t len, int absorb, int add)
{
    /* Its cached blocks to the MRU end first, so that adding its whole
     * blocks evicts none of them (an absorbed write has nowhere else to
     * put their bytes). */
    for (uint64_t vb = off / DFSTORE_BLOCK; vb * DFSTORE_BLOCK < off + len; vb++) {
        uint64_t s = l1_slot_find(l1, vb);
        if (s != U64MAP_NONE && l1->slots[s].state == SLOT_VALID)
            block_touch(l1, (uint32_t)s);
    }
    for (uint64_t done = 0; done < len;) {
        uint64_t vb = (off + done) / DFSTORE_BLOCK, in = (off + done) % DFSTORE_BLOCK;
        uint64_t n = DFSTORE_BLOCK - in < len - done ? DFSTORE_BLOCK - in : len - done;
        uint64_t slot = l1_slot_find(l1, vb);

        if (slot != U64MAP_NONE && l1->slots[slot].state == SLOT_FILLING) {
            l1_block_forget(l1, vb, SLOT_STALE);
            slot = U64MAP_NONE;
        }
        if (slot != U64MAP_NONE) {
            block_touch(l1, (uint32_t)slot);
        } else if (add && (n == DFSTORE_BLOCK || absorb) &&
                   (slot = block_add(l1, vb, SLOT_VALID)) != UINT32_MAX) {
            cache_smap_set(&l1->slots[slot].holes, 0, l1->nsect);
        } else {
            slot = U64MAP_NONE;
        }
        if (slot != U64MAP_NONE) {
            struct l1_slot *sl = &l1->slots[slot];
            int dirty = absorb || sl->dirty;
            l1_copy_in(l1_slot_data(l1, (uint32_t)slot) + in, iov, niov, done, n);
            cache_sect_write(&sl->holes, &sl->dmap, l1->sect, in, n, dirty);
            if (dirty)
                slot_dirty(l1, (uint32_t)slot);
            l1->stats.write_updates++;
        }
        done += n;
    }
}

static void watermark_run(struct evloop *loop, uint64_t id, void *user)
{
    struct df_l1 *l1 = user;

    l1->watermark_pass = 0;
    l1->inflight--;
    l1_wb_pass(l1);
}

/* Over 3/4 dirty: write back everything dirty, from the loop. */
static void watermark_check(struct df_l1 *l1)
{
    if (l1->ndirty * 4 <= l1->capacity * 3 || l1->watermark_pass)
        return;
    if (evloop_defer(l1->loop, watermark_run, l1)) {
        l1->watermark_pass = 1;
        l1->inflight++;
    }
}

/* Write-behind: each unit the write touched that is now dirty in every
 * sector of every block, with no write-back of it in flight, goes out now as one
 * write-back of whole stripes (no reads of old data or parity).  A unit
 * written again later is dirty again and goes out again once whole, or
 * at the next flush. */
static void write_behind(struct df_l1 *l1, uint64_t off, uint64_t len)
{
    uint64_t ub = l1->unit_blocks;
    uint32_t slots[L1_RUN_BLOCKS];

    if (ub == 0)
        return;
    for (uint64_t u = off / DFSTORE_BLOCK / ub; u * ub * DFSTORE_BLOCK < off + len; u++) {
        uint64_t i;
        for (i = 0; i < ub; i++) {
            uint64_t s = l1_slot_find(l1, u * ub + i);
            if (s == U64MAP_NONE || !cache_smap_all(&l1->slots[s].dmap, 0, l1->nsect) ||
                l1->slots[s].wb)
                break;
            slots[i] = (uint32_t)s;
        }
        if (i == ub)
            l1_wb_issue(l1, slots, (uint32_t)ub);
    }
}

static void write_done(struct iraid_volume *vol, int status, void *user)
{
    struct write_ctx ctx = *(struct write_ctx *)user;

    free(user);
    ctx.l1->inflight--;
    if (status < 0)
        l1_trace(ctx.l1, "X %llu %llu\n", (unsigned long long)ctx.off,
                    (unsigned long long)ctx.len);
    /* The volume's bytes are unknown after a failed write: clean blocks of
     * it go; dirty ones keep theirs and are written back later. */
    for (uint64_t vb = ctx.off / DFSTORE_BLOCK; status < 0 && vb * DFSTORE_BLOCK < ctx.off + ctx.len;
         vb++) {
        uint64_t s = l1_slot_find(ctx.l1, vb);
        if (s != U64MAP_NONE && !ctx.l1->slots[s].dirty)
            l1_block_forget(ctx.l1, vb, SLOT_STALE);
    }
    ctx.cb(vol, status, ctx.user);
}

int df_l1_writev(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, int through,
                 int stream, iraid_cb cb, void *user)
{
    uint64_t len = l1_iov_len(iov, niov);
    struct write_ctx *ctx;
    int rc;

    /* a stream's piece of less than half a block (a row of a tile written
     * in one large request) is absorbed as any small write while the
     * cache has room for it, or evicts only clean blocks (l1cache.h) */
    stream = stream && (len >= DFSTORE_BLOCK / 2 || !fits_clean(l1, off, len)) &&
             l1->stream_grain && off % l1->stream_grain == 0 && len % l1->stream_grain == 0;
    if (cb && len)
        l1_trace(l1, "%c %llu %llu %d\n", stream ? 'U' : 'W', (unsigned long long)off,
                    (unsigned long long)len, through != 0);
    if (l1->capacity == 0 || !cb || len == 0)
        return iraid_writev(l1->vol, off, iov, niov, cb, user);
    if (l1->ra_held)
        ra_drop_range(l1, off, len);
    if (!through && !stream && absorbable(l1, off, len) && done_later(l1, cb, user)) {
        write_into(l1, off, iov, niov, len, 1, 1);
        l1->stats.writes_absorbed++;
        write_behind(l1, off, len);
        watermark_check(l1);
        return 0;
    }
    if (!(ctx = malloc(sizeof(*ctx))))
        return -ENOMEM;
    *ctx = (struct write_ctx){ l1, off, len, cb, user };
    if ((rc = iraid_writev(l1->vol, off, iov, niov, write_done, ctx)) < 0) {
        free(ctx);
        return rc;
    }
    l1->inflight++;
    write_into(l1, off, iov, niov, len, 0, !stream);
    return 0;
}

