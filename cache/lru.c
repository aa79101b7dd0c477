/* cache/lru.c: the LRU policies over one list (CACHE_LIST_LRU, head =
 * least recently used): "lru" (L1, and the inclusive L2 baseline) and
 * "demote" (the exclusive L2).  They differ only in what a DPO read and a
 * demote do; see cache.h. */
#include "cache/internal.h"

/* Puts key at the MRU end, evicting the LRU block when full.  Returns the
 * entry. */
static uint32_t lru_insert(struct cache *c, uint64_t key, struct cache_victim *out)
{
    uint32_t e = cache_find(c, key);

    if (e != CACHE_NIL) {
        cache_move(c, e, CACHE_LIST_LRU);
        return e;
    }
    if (c->resident == c->capacity)
        cache_evict_head(c, CACHE_LIST_LRU, out);
    c->resident++;
    return cache_take(c, key, CACHE_LIST_LRU);
}

static int lru_access(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out)
{
    int hit = cache_find(c, key) != CACHE_NIL;
    uint32_t e = lru_insert(c, key, out);

    if (flags & CACHE_DIRTY)
        c->ents[e].dirty = 1;
    return hit;
}

static void lru_store(struct cache *c, uint64_t key, struct cache_victim *out)
{
    lru_insert(c, key, out);
}

/* Inclusive: L1's clean victims are not wanted (L2 kept its own copy when
 * L1 read it). */
static int lru_demote(struct cache *c, uint64_t key, struct cache_victim *out)
{
    return 0;
}

/* A DPO read gives the block up: it is dropped on a hit and not kept on a
 * miss, since L1 now holds it.  A read without DPO (an initiator that does
 * not take part) is served as by LRU. */
static int demote_access(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out)
{
    uint32_t e = cache_find(c, key);

    if (!(flags & CACHE_DPO))
        return lru_access(c, key, flags, out);
    if (e == CACHE_NIL)
        return 0;
    c->stats.dropped++;
    c->resident--;
    cache_release(c, e);
    return 1;
}

static int demote_demote(struct cache *c, uint64_t key, struct cache_victim *out)
{
    lru_insert(c, key, out);
    return 1;
}

const struct cache_ops cache_ops_lru = {
    .name = "lru", .access = lru_access, .store = lru_store, .demote = lru_demote,
};

const struct cache_ops cache_ops_demote = {
    .name = "demote", .access = demote_access, .store = lru_store, .demote = demote_demote,
};
