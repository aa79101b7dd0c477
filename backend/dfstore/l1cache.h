/* The I/O node's L1 cache (uCache's L1, the journal paper's section 3): the
 * store's volume blocks (DFSTORE_BLOCK, 64 KiB) kept in memory, LRU
 * (cache/cache.h's "lru" policy), in front of the iRAID volume.  io.c sends
 * every volume read and write of the store through df_l1_readv/writev,
 * which have iraid_readv/writev's contract (see iraid/volume.h: 0 and cb
 * exactly once later from the loop, or a negative errno and no cb).
 *
 * Write-through for now: a write goes to the volume as before and
 * completes when the volume's write does, so durability is exactly what
 * it was (dfstore_sync still flushes the volume).  The cached copy is
 * updated when the write is submitted, full blocks not yet cached are
 * added, and a failed write drops the blocks it touched (the volume's
 * bytes are unknown then).  A read within one block that hits is copied
 * out (its completion deferred on the loop); a miss reads the whole block
 * into the cache (a fill) and copies the wanted bytes from it.
 *
 * Why updating at submission is safe: the store runs one operation per
 * datafile at a time and a volume block belongs to one datafile (freed
 * blocks are reused only after a commit), so no read of a block runs
 * while a write of it is in flight.  Defensively, a write that meets a
 * block being filled marks it stale and the fill is not kept.
 *
 * Slots (one 64 KiB buffer each, capacity of them, allocated by
 * df_l1_init) are FREE, FILLING (a volume read into it in flight), VALID,
 * or ORPHAN (FILLING, but the policy evicted its block: the slot returns
 * to FREE when the read completes).  A miss that finds no free slot (all
 * the rest orphans) bypasses the cache: a plain volume read.
 *
 * Memory: capacity x (64 KiB + the policy's 78 bytes at most + 17 bytes
 * of state and map) plus a context per request in flight. */
#ifndef IPVFS_DFSTORE_L1CACHE_H
#define IPVFS_DFSTORE_L1CACHE_H

#include <stdint.h>
#include <sys/uio.h>

#include "cache/cache.h"
#include "common/evloop.h"
#include "common/u64map.h"
#include "iraid/volume.h"

struct df_l1_stats {
    uint64_t capacity;          /* blocks; 0 = off */
    uint64_t resident;          /* blocks cached now */
    uint64_t hits, misses;      /* reads within one block */
    uint64_t bypasses;          /* reads not cached (spanning, no slot, no memory) */
    uint64_t evictions;
    uint64_t write_updates;     /* cached blocks a write updated or added */
};

struct df_l1 {
    struct evloop *loop;
    struct iraid_volume *vol;
    uint64_t capacity;          /* blocks; 0 = off */
    struct cache policy;
    uint8_t *data;              /* capacity x DFSTORE_BLOCK */
    uint64_t *slot_key;         /* volume block of each slot */
    uint8_t *slot_state;        /* enum in l1cache.c */
    uint32_t *free_slots;       /* stack */
    uint64_t nfree;
    struct u64map slot_of;      /* volume block -> slot (FILLING, VALID) */
    struct df_l1_stats stats;
};

/* Sets up l1 over vol with bytes of cache (rounded down to blocks; 0 =
 * off, every call passes through).  0, -EINVAL (more than 2^31 blocks),
 * -ENOMEM. */
int df_l1_init(struct df_l1 *l1, struct evloop *loop, struct iraid_volume *vol, uint64_t bytes);
/* Frees everything; no request may be in flight. */
void df_l1_fini(struct df_l1 *l1);
int df_l1_readv(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, iraid_cb cb,
                void *user);
int df_l1_writev(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, iraid_cb cb,
                 void *user);
void df_l1_get_stats(const struct df_l1 *l1, struct df_l1_stats *out);

#endif
