/* cache/: uCache, the two-level block cache of the iPVFS journal paper
 * (section 3: LRU in the I/O node, L1; an exclusive policy in its targets,
 * L2), as pure policy code: no I/O, no sockets, no clocks.  The live I/O
 * node and targets and the simulator ipvfs-cachesim link this same code.
 *
 * Blocks are CACHE_BLOCK_SIZE (64 KiB, the stripe unit) and named by a
 * 64-bit key, cache_key(object, block): the object is a datafile or a
 * volume, the block its 64 KiB block number.  One struct cache is one
 * level of one node (an I/O node's L1, one target's L2); which node a
 * block belongs to is the caller's business (striping, common/layout.h).
 *
 * Policies sit behind one operations table, struct cache_ops:
 *   "lru"     LRU.  The paper's L1, and the inclusive L2 baseline: a read
 *             from above is kept (the target's page cache does that),
 *             offers of clean evicted blocks are ignored.
 *   "demote"  Exclusive L2 (Wong and Wilkes, "My Cache or Yours? Making
 *             Storage more Exclusive", USENIX ATC 2002): a read marked
 *             CACHE_DPO ("do not retain", SBC's DPO bit) that hits gives
 *             the block up to L1 and drops it here, a miss is not kept;
 *             a clean block L1 evicts is demoted into L2 at its MRU end.
 *   "mq"      Multi-Queue (Zhou, Philbin and Li, "The Multi-Queue
 *             Replacement Algorithm for Second Level Buffer Caches",
 *             USENIX ATC 2001), inclusive: CACHE_MQ_QUEUES LRU queues by
 *             access frequency (queue floor(log2 f)), a block not accessed
 *             for CACHE_MQ_LIFETIME x capacity accesses falls one queue, and
 *             a history queue (Qout, as many entries as the cache has
 *             blocks) remembers the frequency of evicted blocks.
 *   "demote-mq"  Exclusive like "demote" (the same DPO reads and
 *             demotes), replacing like "mq": L2 learns a block's frequency
 *             from L1's misses (its history, 4 entries per cache block,
 *             keeps it while the block is up in L1), and admits a block
 *             offered down only if its queue is at least that of the block
 *             it would push out.  Our combination of the two papers above,
 *             in the spirit of the paper's frequency-based FBER.
 * The paper's own L2 policy, FBER (Ou et al., MASCOTS 2005), is not
 * described in the journal paper well enough to rebuild; not here.
 *
 * Every operation is O(1): a u64map from key to entry, intrusive doubly
 * linked lists of entry indices (MQ also looks at the head of each of its 8
 * queues per access).  All memory is allocated by cache_init(): entries
 * for capacity blocks (plus as many history entries for MQ) and a map
 * reserved for all of them, so no operation allocates or fails.
 * Metadata per cached block: CACHE_ENTRY_BYTES for the entry plus at most
 * 2 x 4/3 x 17 bytes of map slots (the table is the power of two above
 * 4/3 of the entries), 32 + 46 = 78 bytes at worst (0.12% of 64 KiB);
 * MQ doubles it for its history, DEMOTE-MQ multiplies it by 5.  The block data are the caller's.
 *
 * Contract of the operations (what the caller of a level does):
 *   access(c, key, flags, out)   a read, or with CACHE_DIRTY a write of the
 *       block at this level.  Returns 1 on a hit, 0 on a miss.  Whether a
 *       miss (and a hit) stays cached is the policy's: LRU and MQ keep
 *       both; DEMOTE with CACHE_DPO keeps neither.  A block that had to go
 *       to make room is reported in *out (out->valid).
 *   store(c, key, out)   a block written down from the level above (a
 *       write-back or write-through: the data come with it, so this is no
 *       hit or miss).  Every policy keeps it (clean: data below it are as
 *       durable as the level below makes them), but DEMOTE-MQ only when
 *       admitted as for a demote.
 *   demote(c, key, out)  a clean block the level above evicted is offered.
 *       Returns 1 if kept (DEMOTE; DEMOTE-MQ when admitted), 0 if ignored
 *       (LRU, MQ: the data need not even be sent).
 * out->valid = 0 when nothing was evicted.  At most one block is evicted
 * per operation.  Dirty state is tracked per block: CACHE_DIRTY on access
 * sets it, cache_set_clean() clears it (after a flush), and an evicted
 * dirty block comes out with out->dirty = 1 (the caller must write it
 * down). */
#ifndef IPVFS_CACHE_H
#define IPVFS_CACHE_H

#include <stdint.h>

#include "common/u64map.h"

#define CACHE_BLOCK_SIZE (64u << 10)
#define CACHE_BLOCK_SHIFT 16
/* Keys pack an object number below 2^24 and a block number below 2^40. */
#define CACHE_OBJECT_BITS 24
#define CACHE_BLOCK_BITS 40
#define CACHE_MQ_QUEUES 8
#define CACHE_MQ_LIFETIME 2
/* Bytes of one entry (checked by a static assertion in core.c). */
#define CACHE_ENTRY_BYTES 32
/* Lists an entry can be on: the MQ queues, MQ's history, the free list. */
#define CACHE_NLISTS (CACHE_MQ_QUEUES + 2)

/* access() flags */
#define CACHE_DIRTY 1u  /* a write: the block now differs from the level below */
#define CACHE_DPO 2u    /* a read that the level need not retain (SBC DPO) */

struct cache;

struct cache_victim {
    int valid;          /* 1 when a block was evicted */
    int dirty;          /* it was dirty: the caller writes it down */
    uint64_t key;
};

struct cache_ops {
    const char *name;
    unsigned history;   /* history entries kept per cache block (MQ: 1) */
    int (*access)(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out);
    void (*store)(struct cache *c, uint64_t key, struct cache_victim *out);
    int (*demote)(struct cache *c, uint64_t key, struct cache_victim *out);
};

/* Per-level counters (reads and writes through access(); stores; demotes). */
struct cache_stats {
    uint64_t hits, misses;          /* access() */
    uint64_t stores;                /* store() */
    uint64_t demotes_kept, demotes_ignored;
    uint64_t dropped;               /* DPO hits dropped (DEMOTE) */
    uint64_t evictions, dirty_evictions;
};

/* An intrusive list of entries, by index; CACHE_NIL ends it. */
#define CACHE_NIL UINT32_MAX
struct cache_list {
    uint32_t head, tail;            /* head: least recently used */
    uint64_t len;
};

/* One entry.  list is the list it is on (for MQ: its queue or history). */
struct cache_ent {
    uint64_t key;
    uint64_t expire;                /* MQ: access count when it falls a queue */
    uint32_t prev, next;
    uint32_t freq;                  /* MQ: accesses seen (kept in history) */
    uint8_t list;
    uint8_t dirty;
    uint16_t pad;
};

/* One cache level of one node.  Fields are for the policy files; callers
 * use the functions below and read stats, capacity and resident. */
struct cache {
    const struct cache_ops *ops;
    uint64_t capacity;              /* blocks */
    uint64_t resident;              /* blocks cached now */
    uint64_t clock;                 /* accesses so far (MQ's time) */
    uint32_t nents;                 /* capacity (+ history for MQ) */
    struct cache_ent *ents;
    struct cache_list lists[CACHE_NLISTS];
    struct u64map map;              /* key -> entry index */
    struct cache_stats stats;
};

/* The policy named name ("lru", "demote", "mq"), or NULL. */
const struct cache_ops *cache_policy_find(const char *name);
/* Names of all policies, NULL-terminated, in a fixed order. */
extern const char *const cache_policy_names[];

static inline uint64_t cache_key(uint32_t object, uint64_t block)
{
    return ((uint64_t)object << CACHE_BLOCK_BITS) | (block & ((1ull << CACHE_BLOCK_BITS) - 1));
}

/* Sets up c for ops over capacity blocks (> 0, below 2^31).  0, -EINVAL
 * for a bad capacity, -ENOMEM. */
int cache_init(struct cache *c, const struct cache_ops *ops, uint64_t capacity);
void cache_fini(struct cache *c);

/* Through the ops table (see the contract above). */
int cache_access(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out);
void cache_store(struct cache *c, uint64_t key, struct cache_victim *out);
int cache_demote(struct cache *c, uint64_t key, struct cache_victim *out);

/* 1 if key is cached (not merely remembered in MQ's history); touches
 * nothing. */
int cache_contains(const struct cache *c, uint64_t key);
/* 1 if key is cached and dirty. */
int cache_is_dirty(const struct cache *c, uint64_t key);
/* Marks a cached block clean (its data reached the level below). */
void cache_set_clean(struct cache *c, uint64_t key);
/* Forgets key (invalidation); its dirty data, if any, are the caller's. */
void cache_remove(struct cache *c, uint64_t key);

#endif
