/* cache/admit.c: admission of small-read fills (cache.h, struct
 * cache_admit).
 *
 * The ghost: a ring of the last cap keys refused, oldest first, and a map
 * from key to the sequence number of its ring entry.  A key admitted
 * leaves the map at once; its ring entry stays until the ring comes round
 * to it and is then passed over, since the map no longer names that
 * sequence number.
 *
 * The gate: fills are counted in epochs of CACHE_ADMIT_EPOCH; at the end
 * of each, the hits their blocks served in it decide whether the next
 * epoch admits every second miss (open) or one in CACHE_ADMIT_SAMPLE
 * (shut).  The hits of an epoch include some on blocks filled in the one
 * before; in a steady workload that evens out. */
#include "cache/cache.h"

#include <errno.h>
#include <stdlib.h>

int cache_admit_init(struct cache_admit *a, uint32_t cap)
{
    *a = (struct cache_admit){ .cap = cap };
    if (cap == 0)
        return -EINVAL;
    if (!(a->ring = calloc(cap, sizeof(*a->ring))))
        return -ENOMEM;
    if (u64map_reserve(&a->map, cap) < 0) {
        free(a->ring);
        a->ring = NULL;
        return -ENOMEM;
    }
    return 0;
}

void cache_admit_fini(struct cache_admit *a)
{
    u64map_free(&a->map);
    free(a->ring);
    a->ring = NULL;
}

/* Remembers key as refused; the oldest refusal goes when the ring is full. */
static void remember(struct cache_admit *a, uint64_t key)
{
    uint32_t at = (uint32_t)(a->seq % a->cap);

    if (a->seq >= a->cap) {
        uint64_t old = a->ring[at];
        if (u64map_get(&a->map, old) == a->seq - a->cap)
            u64map_del(&a->map, old);
    }
    a->ring[at] = key;
    (void)u64map_put(&a->map, key, a->seq);  /* reserved: never more than cap keys */
    a->seq++;
}

int cache_admit(struct cache_admit *a, uint64_t key)
{
    if (u64map_get(&a->map, key) == U64MAP_NONE) {
        remember(a, key);
        a->refused++;
        return 0;
    }
    u64map_del(&a->map, key);
    if (a->shut && ++a->sample % CACHE_ADMIT_SAMPLE != 0) {
        remember(a, key);   /* its next miss asks again */
        a->gated++;
        return 0;
    }
    return 1;
}

void cache_admit_filled(struct cache_admit *a)
{
    a->fills++;
    if (++a->epoch_fills < CACHE_ADMIT_EPOCH)
        return;
    a->shut = a->epoch_hits < CACHE_ADMIT_YIELD * CACHE_ADMIT_EPOCH;
    a->epoch_fills = a->epoch_hits = 0;
}

void cache_admit_hit(struct cache_admit *a)
{
    a->fill_hits++;
    a->epoch_hits++;
}
