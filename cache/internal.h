/* cache/ internals shared by the policy files: entry lists and the map.
 * core.c owns them; lru.c and mq.c call them; policy.c names the
 * policies.  Nothing here is API (see cache.h). */
#ifndef IPVFS_CACHE_INTERNAL_H
#define IPVFS_CACHE_INTERNAL_H

#include "cache/cache.h"

/* Which list of struct cache.lists an entry is on. */
#define CACHE_LIST_LRU 0                       /* lru, demote: the one LRU list */
#define CACHE_LIST_HISTORY CACHE_MQ_QUEUES     /* mq: Qout */
#define CACHE_LIST_FREE (CACHE_NLISTS - 1)

/* The entry index of key (cached or in history), or CACHE_NIL. */
uint32_t cache_find(const struct cache *c, uint64_t key);
/* Takes e off its list and puts it at the tail (MRU end) of list. */
void cache_move(struct cache *c, uint32_t e, uint8_t list);
/* A free entry for key, mapped and put at the tail of list; the caller made
 * sure one is free. */
uint32_t cache_take(struct cache *c, uint64_t key, uint8_t list);
/* Unmaps e and returns it to the free list. */
void cache_release(struct cache *c, uint32_t e);
/* Evicts the head of list (a resident block): reports it in out, counts
 * it, releases the entry. */
void cache_evict_head(struct cache *c, uint8_t list, struct cache_victim *out);

extern const struct cache_ops cache_ops_lru, cache_ops_demote, cache_ops_mq,
    cache_ops_demote_mq;

#endif
