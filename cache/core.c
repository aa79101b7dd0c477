/* cache/core.c: what every policy shares: the entry array, its intrusive
 * lists, the key map, and the public entry points that go through the
 * operations table.  Policies (lru.c, mq.c) only decide which list an
 * entry goes to and what to evict. */
#include "cache/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct cache_ent) == CACHE_ENTRY_BYTES, "CACHE_ENTRY_BYTES is stale");

static void list_unlink(struct cache *c, uint32_t e)
{
    struct cache_ent *x = &c->ents[e];
    struct cache_list *l = &c->lists[x->list];

    if (x->prev != CACHE_NIL)
        c->ents[x->prev].next = x->next;
    else
        l->head = x->next;
    if (x->next != CACHE_NIL)
        c->ents[x->next].prev = x->prev;
    else
        l->tail = x->prev;
    l->len--;
}

static void list_append(struct cache *c, uint32_t e, uint8_t list)
{
    struct cache_ent *x = &c->ents[e];
    struct cache_list *l = &c->lists[list];

    x->list = list;
    x->next = CACHE_NIL;
    x->prev = l->tail;
    if (l->tail != CACHE_NIL)
        c->ents[l->tail].next = e;
    else
        l->head = e;
    l->tail = e;
    l->len++;
}

uint32_t cache_find(const struct cache *c, uint64_t key)
{
    uint64_t v = u64map_get(&c->map, key);

    return v == U64MAP_NONE ? CACHE_NIL : (uint32_t)v;
}

void cache_move(struct cache *c, uint32_t e, uint8_t list)
{
    list_unlink(c, e);
    list_append(c, e, list);
}

uint32_t cache_take(struct cache *c, uint64_t key, uint8_t list)
{
    uint32_t e = c->lists[CACHE_LIST_FREE].head;

    list_unlink(c, e);
    c->ents[e].key = key;
    c->ents[e].dirty = 0;
    c->ents[e].freq = 0;
    c->ents[e].expire = 0;
    list_append(c, e, list);
    /* Cannot fail: cache_init() reserved the map for every entry. */
    (void)u64map_put(&c->map, key, e);
    return e;
}

void cache_release(struct cache *c, uint32_t e)
{
    u64map_del(&c->map, c->ents[e].key);
    cache_move(c, e, CACHE_LIST_FREE);
}

void cache_evict_head(struct cache *c, uint8_t list, struct cache_victim *out)
{
    uint32_t e = c->lists[list].head;

    out->valid = 1;
    out->key = c->ents[e].key;
    out->dirty = c->ents[e].dirty;
    c->stats.evictions++;
    c->stats.dirty_evictions += out->dirty;
    c->resident--;
    cache_release(c, e);
}

int cache_init(struct cache *c, const struct cache_ops *ops, uint64_t capacity)
{
    uint64_t n = capacity * (1 + ops->history);

    memset(c, 0, sizeof(*c));
    if (capacity == 0 || capacity >= (1ull << 31))
        return -EINVAL;
    c->ops = ops;
    c->capacity = capacity;
    c->nents = (uint32_t)n;
    for (int i = 0; i < CACHE_NLISTS; i++)
        c->lists[i] = (struct cache_list){ .head = CACHE_NIL, .tail = CACHE_NIL };
    c->ents = calloc(n, sizeof(*c->ents));
    if (!c->ents)
        return -ENOMEM;
    if (u64map_reserve(&c->map, n) < 0)
        goto free_ents;
    for (uint32_t e = 0; e < c->nents; e++)
        list_append(c, e, CACHE_LIST_FREE);
    return 0;

free_ents:
    free(c->ents);
    c->ents = NULL;
    return -ENOMEM;
}

void cache_fini(struct cache *c)
{
    u64map_free(&c->map);
    free(c->ents);
    memset(c, 0, sizeof(*c));
}

static void victim_none(struct cache_victim *out)
{
    *out = (struct cache_victim){ 0 };
}

int cache_access(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out)
{
    int hit;

    victim_none(out);
    c->clock++;
    hit = c->ops->access(c, key, flags, out);
    if (hit)
        c->stats.hits++;
    else
        c->stats.misses++;
    return hit;
}

void cache_store(struct cache *c, uint64_t key, struct cache_victim *out)
{
    victim_none(out);
    c->stats.stores++;
    c->ops->store(c, key, out);
}

int cache_demote(struct cache *c, uint64_t key, struct cache_victim *out)
{
    int kept;

    victim_none(out);
    kept = c->ops->demote(c, key, out);
    if (kept)
        c->stats.demotes_kept++;
    else
        c->stats.demotes_ignored++;
    return kept;
}

/* History entries (MQ's Qout) are mapped too but hold no data. */
static int resident_entry(const struct cache *c, uint32_t e)
{
    return e != CACHE_NIL && c->ents[e].list != CACHE_LIST_HISTORY;
}

int cache_contains(const struct cache *c, uint64_t key)
{
    return c->ents && resident_entry(c, cache_find(c, key));
}

int cache_is_dirty(const struct cache *c, uint64_t key)
{
    uint32_t e = c->ents ? cache_find(c, key) : CACHE_NIL;

    return resident_entry(c, e) && c->ents[e].dirty;
}

uint32_t cache_lru_oldest(const struct cache *c, uint32_t n, uint64_t *keys)
{
    uint32_t got = 0;

    if (!c->ents)
        return 0;
    for (uint32_t e = c->lists[CACHE_LIST_LRU].head; e != CACHE_NIL && got < n; e = c->ents[e].next)
        keys[got++] = c->ents[e].key;
    return got;
}

void cache_set_clean(struct cache *c, uint64_t key)
{
    uint32_t e = cache_find(c, key);

    if (resident_entry(c, e))
        c->ents[e].dirty = 0;
}

void cache_remove(struct cache *c, uint64_t key)
{
    uint32_t e = cache_find(c, key);

    if (e == CACHE_NIL)
        return;
    if (resident_entry(c, e))
        c->resident--;
    cache_release(c, e);
}
