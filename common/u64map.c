/* u64 -> u64 hash map (see u64map.h). */
#include "common/u64map.h"

#include <errno.h>
#include <stdlib.h>

uint64_t u64map_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* The slot holding key, or the free slot ending its probe chain. */
static uint64_t u64map_slot(const struct u64map *m, uint64_t key)
{
    uint64_t i = u64map_hash(key) & (m->cap - 1);

    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

uint64_t u64map_get(const struct u64map *m, uint64_t key)
{
    uint64_t i;

    if (!m->cap)
        return U64MAP_NONE;
    i = u64map_slot(m, key);
    return m->used[i] ? m->vals[i] : U64MAP_NONE;
}

/* Stores into the slot for key; the table has room (callers grow first). */
static void u64map_set(struct u64map *m, uint64_t key, uint64_t val)
{
    uint64_t i = u64map_slot(m, key);

    if (!m->used[i])
        m->count++;
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = val;
}

static int u64map_grow(struct u64map *m)
{
    struct u64map n = { .cap = m->cap ? 2 * m->cap : 16 };

    n.keys = malloc(n.cap * sizeof(*n.keys));
    n.vals = malloc(n.cap * sizeof(*n.vals));
    n.used = calloc(n.cap, 1);
    if (!n.keys || !n.vals || !n.used) {
        free(n.keys);
        free(n.vals);
        free(n.used);
        return -ENOMEM;
    }
    for (uint64_t i = 0; i < m->cap; i++)
        if (m->used[i])
            u64map_set(&n, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = n;
    return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
    int rc;

    if ((m->count + 1) * 4 > m->cap * 3 && (rc = u64map_grow(m)) < 0)
        return rc;
    u64map_set(m, key, val);
    return 0;
}

int u64map_reserve(struct u64map *m, uint64_t n)
{
    int rc;

    while (n * 4 > m->cap * 3)
        if ((rc = u64map_grow(m)) < 0)
            return rc;
    return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void u64map_del(struct u64map *m, uint64_t key)
{
    uint64_t i, j;

    if (!m->cap || !m->used[i = u64map_slot(m, key)])
        return;
    m->used[i] = 0;
    m->count--;
    for (j = (i + 1) & (m->cap - 1); m->used[j]; j = (j + 1) & (m->cap - 1)) {
        uint64_t home = u64map_hash(m->keys[j]) & (m->cap - 1);
        /* j's entry may move to the hole i unless its home lies in (i, j]. */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->used[i] = 1;
            m->used[j] = 0;
            i = j;
        }
    }
}

void u64map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = (struct u64map){ 0 };
}

int u64map_next(const struct u64map *m, uint64_t *pos, uint64_t *key, uint64_t *val)
{
    while (*pos < m->cap) {
        uint64_t i = (*pos)++;
        if (m->used[i]) {
            *key = m->keys[i];
            *val = m->vals[i];
            return 1;
        }
    }
    return 0;
}
