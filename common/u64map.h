/* Map of 64-bit keys to 64-bit values: open addressing with linear
 * probing, no tombstones (deletion shifts the rest of a probe chain back).
 *
 * A zeroed struct u64map is an empty map; u64map_free() makes it empty
 * again.  The table is a power of two and doubles (rehashing every entry)
 * when an insert would fill more than three quarters of it.  The value
 * U64MAP_NONE is what u64map_get() returns for a missing key, so storing
 * it makes the key look missing.
 *
 * The fields are visible so that the map can be embedded; read them, but
 * change the map only through these functions. */
#ifndef IPVFS_U64MAP_H
#define IPVFS_U64MAP_H

#include <stdint.h>

#define U64MAP_NONE UINT64_MAX

struct u64map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    uint64_t cap, count;               /* cap is a power of two or 0 */
};

/* The value of key, or U64MAP_NONE. */
uint64_t u64map_get(const struct u64map *m, uint64_t key);
/* Inserts or replaces; 0, or -ENOMEM with the map unchanged. */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Grows the table now so that it holds n keys without growing again (a
 * later put of up to n keys in all cannot fail); 0 or -ENOMEM. */
int u64map_reserve(struct u64map *m, uint64_t n);
/* Removes key if present. */
void u64map_del(struct u64map *m, uint64_t key);
void u64map_free(struct u64map *m);

/* Iteration in table order: start with *pos = 0; returns 1 with the next
 * entry, 0 at the end.  Any put or del invalidates the position (entries
 * move); collect keys first to delete while iterating. */
int u64map_next(const struct u64map *m, uint64_t *pos, uint64_t *key, uint64_t *val);

/* The mixing function that picks a key's home slot (hash & (cap - 1));
 * public for tests that need keys sharing a home slot. */
uint64_t u64map_hash(uint64_t key);

#endif
